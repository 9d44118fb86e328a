// SPDX-License-Identifier: Apache-2.0
#include "agent/protect/protect.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "common/cleanup.h"
#include "common/xalloc.h"

void agent_protect_cfg_default(struct agent_protect_cfg *cfg) {
  cfg->min_share = 0.85;
  cfg->max_stall_ratio = 1.25;
  cfg->cap_start_bps = 64.0 * 1024 * 1024;
  cfg->cap_floor_bps = 16.0 * 1024 * 1024;
  cfg->cap_max_bps = 2048.0 * 1024 * 1024;
  cfg->raise = 1.25;
  cfg->cut = 0.5;
  cfg->scope = AGENT_PROTECT_WRITERS;
  cfg->hold_at_floor = true;
  cfg->batch_budget = 1.5;
  cfg->unknown_delay_s = PROTECT_UNKNOWN_DELAY_S;
  cfg->freeze = true;
  cfg->freeze_after = PROTECT_FREEZE_AFTER;
  cfg->evidence = true;
}

bool agent_protect_limiting(const struct agent_protect *p) {
  if (!p->active)
    return false;
  return p->objective ? p->level_bps > 0 || p->short_ : true;
}

const char *agent_protect_scope_name(int scope) {
  switch (scope) {
  case AGENT_PROTECT_WRITERS:
    return "writers";
  case AGENT_PROTECT_ALL:
    return "all";
  }
  return "invalid";
}

static void evidence_reset(struct agent_protect_evidence *e) {
  memset(e, 0, sizeof(*e));
  e->ratio = -1;
}

void agent_protect_init(struct agent_protect *p, const struct agent_protect_cfg *cfg) {
  memset(p, 0, sizeof(*p));
  p->cfg = *cfg;
  evidence_reset(&p->ev);
}

/* The concurrency lever (protect.h, PROTECT_FREEZE_AFTER) after a busy
 * window: MISS with the cap NEAR_FLOOR or not, SLACK.  The counts are
 * leaky, not "in a row": a window's p99 is noisy, and one lucky window
 * must not undo what several misses showed. */
static void freeze_update(struct agent_protect *p, bool miss, bool near_floor, bool slack) {
  unsigned after = p->cfg.freeze_after ? p->cfg.freeze_after : 1;
  if (!p->cfg.freeze || p->batch_n == 0) {
    p->io_limit = 0;
    p->floor_misses = p->freeze_slack = 0;
    return;
  }
  if (miss) {
    p->freeze_slack = 0;
    if (near_floor || p->io_limit)
      p->floor_misses++;
  } else {
    p->floor_misses = p->floor_misses ? p->floor_misses - 1 : 0;
    p->freeze_slack += slack;
  }
  if (p->floor_misses >= after) {
    p->floor_misses = 0;
    if (p->io_limit == 0 && p->batch_n > PROTECT_FREEZE_MIN)
      p->io_limit = p->batch_n - 1;
    else if (p->io_limit > PROTECT_FREEZE_MIN)
      p->io_limit--;
  } else if (p->io_limit && p->freeze_slack >= after) {
    p->freeze_slack = 0;
    p->io_limit++;
  }
  if (p->io_limit >= p->batch_n)
    p->io_limit = 0;
}

/* Missed windows per byte of batch I/O in evidence state S (protect.h). */
static double per_byte(const struct agent_protect_evidence *e, int s) {
  return (e->misses[s] + 0.5) / (e->bytes[s] > 1 ? e->bytes[s] : 1);
}

/* Counts a busy window with batch I/O that MISSED or not, under the
 * levers the last update left, and judges them (protect.h,
 * PROTECT_EVIDENCE_PULLED).  Returns true while every lever is to be
 * released. */
static bool evidence(struct agent_protect *p, bool missed) {
  struct agent_protect_evidence *e = &p->ev;
  if (!p->cfg.evidence)
    return false;
  int s = p->level_bps > 0 || p->io_limit > 0 || p->short_;
  e->windows[s]++;
  e->misses[s] += missed;
  e->bytes[s] += p->batch_bytes > 0 ? p->batch_bytes : 0;
  if (e->release > 0 && --e->release > 0)
    return true;
  unsigned need = e->need ? e->need : PROTECT_EVIDENCE_PULLED;
  if (e->windows[1] < need)
    return false;
  if (e->windows[0] < PROTECT_EVIDENCE_FREE) {
    e->release = PROTECT_EVIDENCE_FREE - (unsigned)e->windows[0];
    e->probing = true;
    return true;
  }
  e->ratio = per_byte(e, 1) / per_byte(e, 0);
  e->judged++;
  e->probing = false;
  e->windows[1] = e->misses[1] = e->bytes[1] = 0;
  e->windows[0] /= 2;
  e->misses[0] /= 2;
  e->bytes[0] /= 2;
  if (e->ratio <= PROTECT_EVIDENCE_HELP) {
    e->need = need * 2 < PROTECT_EVIDENCE_PULLED_MAX ? need * 2 : PROTECT_EVIDENCE_PULLED_MAX;
    return false;
  }
  e->let_go++;
  e->need = 0;
  e->release = PROTECT_LET_GO;
  return true;
}

/* agent_protect_update for victims with a latency objective (protect.h). */
static bool objective_update(struct agent_protect *p, const struct agent_protect_obs *obs,
                             size_t n) {
  double before = p->level_bps;
  double worst = 0;
  const char *who = NULL;
  bool busy = false;
  for (size_t i = 0; i < n; i++) {
    if (obs[i].idle)
      continue;
    busy = true;
    if (obs[i].lat_target <= 0 || obs[i].lat < 0)
      continue;
    double r = obs[i].lat / obs[i].lat_target;
    if (who == NULL || r > worst) {
      worst = r;
      who = obs[i].id;
    }
  }
  /* Judged by an objective from now on: a cap the share left (its first
   * cap, say) goes; only a miss of the objective caps. */
  if (!p->objective)
    p->level_bps = 0;
  p->active = true;
  p->objective = true;
  p->worst_share = -1;
  snprintf(p->victim, sizeof(p->victim), "%s", who ? who : obs[0].id);
  if (!busy) {
    /* Nothing to protect in this window: no limit. */
    p->missed = false;
    p->worst_lat_ratio = 0;
    p->level_bps = 0;
    p->short_ = false;
    p->slack_windows++;
    /* The lever holds for a few idle windows: a victim starved of
     * completions for a window looks idle too. */
    if (++p->idle_windows >= PROTECT_FREEZE_IDLE) {
      p->io_limit = 0;
      p->floor_misses = p->freeze_slack = 0;
    }
    return before != 0;
  }
  p->idle_windows = 0;
  p->worst_lat_ratio = who ? worst : 0;
  if (!p->batch_io) {
    /* The victim alone: a miss is reported (status, pressure), but no
     * lever acts on it. */
    p->missed = who != NULL && worst > 1;
    if (p->batch_n == 0 || !p->cfg.freeze) {
      p->io_limit = 0;
      p->floor_misses = p->freeze_slack = 0;
    }
    if (p->batch_n == 0)
      p->level_bps = 0;
    p->slack_windows++;
    p->short_ = p->short_ && p->slack_windows < PROTECT_SLACK_WINDOWS;
    return before != p->level_bps;
  }
  bool miss = who != NULL && worst > 1;
  p->missed = miss;
  if (evidence(p, miss)) {
    p->level_bps = 0;
    p->io_limit = 0;
    p->floor_misses = p->freeze_slack = 0;
    p->short_ = false;
    p->slack_windows = miss ? 0 : p->slack_windows + 1;
    return before != 0;
  }
  bool at_floor = p->level_bps > 0 && p->level_bps <= p->cfg.cap_floor_bps;
  p->slack_windows = miss ? 0 : p->slack_windows + 1;
  if (miss) {
    double f = 1 / worst;
    f = f > PROTECT_OBJ_CUT_MAX ? PROTECT_OBJ_CUT_MAX : f;
    f = f < p->cfg.cut ? p->cfg.cut : f;
    double from = p->level_bps > 0   ? p->level_bps
                  : p->batch_bps > 0 ? p->batch_bps
                                     : p->cfg.cap_start_bps;
    double l = from * f;
    p->level_bps = l > p->cfg.cap_floor_bps ? l : p->cfg.cap_floor_bps;
  }
  bool slack = who != NULL && worst <= PROTECT_OBJ_SLACK;
  bool was_limited = p->io_limit > 0;
  bool near_floor = before > 0 && before <= p->cfg.cap_floor_bps * PROTECT_FREEZE_NEAR;
  freeze_update(p, miss, near_floor, slack);
  /* The cap rises only once nothing is frozen (the reverse order). */
  if (!miss && slack && !was_limited && p->level_bps > 0) {
    double l = p->level_bps * p->cfg.raise;
    p->level_bps = l > p->cfg.cap_max_bps ? 0 : l;
  }
  bool now_short = miss && (!p->cfg.hold_at_floor || at_floor);
  p->short_ = now_short || (p->short_ && p->slack_windows < PROTECT_SLACK_WINDOWS);
  return before != p->level_bps;
}

static bool update_once(struct agent_protect *p, const struct agent_protect_obs *obs, size_t n) {
  double before = p->level_bps;
  for (size_t i = 0; i < n; i++)
    if (obs[i].lat_target > 0)
      return objective_update(p, obs, n);
  p->objective = false;
  p->worst_lat_ratio = 0;
  p->missed = false;
  p->io_limit = 0; /* the concurrency lever serves an objective only */
  p->floor_misses = p->freeze_slack = 0;
  if (n == 0) {
    /* What the levers did for the victims gone says nothing of the next. */
    evidence_reset(&p->ev);
    p->active = p->short_ = false;
    p->level_bps = 0;
    p->worst_share = 0;
    p->victim[0] = '\0';
    return before != 0;
  }
  bool was_active = p->active;
  p->active = true;
  bool short_ = false, known = false;
  double worst = 1e9;
  const char *who = NULL;
  for (size_t i = 0; i < n; i++) {
    double s = obs[i].share;
    bool low = s >= 0 && s < p->cfg.min_share;
    bool slow = obs[i].stall >= 0 && obs[i].stall > p->cfg.max_stall_ratio;
    short_ = short_ || low || slow;
    known = known || s >= 0 || obs[i].stall >= 0;
    if (s >= 0 && s < worst) {
      worst = s;
      who = obs[i].id;
    }
  }
  p->worst_share = who ? worst : -1;
  snprintf(p->victim, sizeof(p->victim), "%s", who ? who : obs[0].id);
  /* Hysteresis: held batch containers start after PROTECT_SLACK_WINDOWS
   * windows in a row with slack, not on one lucky window. */
  p->slack_windows = short_ ? 0 : p->slack_windows + 1;
  p->missed = short_;
  bool at_floor = was_active && p->level_bps > 0 && p->level_bps <= p->cfg.cap_floor_bps;
  if (!was_active) {
    p->level_bps = p->cfg.cap_start_bps; /* batch jobs start capped */
  } else if (short_) {
    double l = (p->level_bps > 0 ? p->level_bps : p->cfg.cap_max_bps) * p->cfg.cut;
    p->level_bps = l > p->cfg.cap_floor_bps ? l : p->cfg.cap_floor_bps;
  } else if (p->level_bps > 0 && known) {
    /* Raised only on measured slack: a victim alone (no batch I/O beside
     * it, share unknown) says nothing about the cap. */
    double l = p->level_bps * p->cfg.raise;
    p->level_bps = l > p->cfg.cap_max_bps ? 0 : l; /* 0: lifted */
  }
  /* With hold_at_floor a victim short while the cap was already at its
   * floor holds; otherwise any victim short does. */
  bool now_short = short_ && (!p->cfg.hold_at_floor || at_floor);
  bool hold = now_short || (p->short_ && p->slack_windows < PROTECT_SLACK_WINDOWS);
  p->short_ = hold;
  return before != p->level_bps;
}

const char *agent_protect_signal_name(int signal) {
  switch (signal) {
  case AGENT_PROTECT_SIGNAL_AUTO:
    return "auto";
  case AGENT_PROTECT_SIGNAL_RATE:
    return "rate";
  case AGENT_PROTECT_SIGNAL_PRESSURE:
    return "pressure";
  }
  return "invalid";
}

double agent_protect_share(int signal, double rate_share, double rate_cv, double stall,
                           double stall_alone) {
  double pshare = -1;
  if (stall >= 0 && stall_alone >= 0)
    pshare = (1 - stall) /
             (1 - (stall_alone < PROTECT_STALL_ALONE_MAX ? stall_alone : PROTECT_STALL_ALONE_MAX));
  switch (signal) {
  case AGENT_PROTECT_SIGNAL_RATE:
    return rate_share;
  case AGENT_PROTECT_SIGNAL_PRESSURE:
    return pshare;
  default:
    /* A steady rate alone is the better measure (it sees CPU taken by
     * neighbours too); so is it for a container that stalls most of the
     * time even alone (an I/O-bound one has little unstalled time to
     * lose). */
    if (pshare >= 0 && rate_cv > PROTECT_RATE_CV_MAX && stall_alone <= PROTECT_PRESSURE_AUTO_MAX)
      return pshare;
    return rate_share >= 0 ? rate_share : pshare;
  }
}

void agent_protect_learn_add(struct agent_protect_learn *l, double lat) {
  if (!(lat >= 0) || isinf(lat))
    return;
  l->lat[l->next] = lat;
  l->next = (l->next + 1) % PROTECT_LEARN_KEEP;
  if (l->n < PROTECT_LEARN_KEEP)
    l->n++;
  l->seen++;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double agent_protect_learn_target(const struct agent_protect_learn *l) {
  if (l->seen < PROTECT_LEARN_WINDOWS || l->n == 0)
    return 0;
  double v[PROTECT_LEARN_KEEP];
  memcpy(v, l->lat, l->n * sizeof(v[0]));
  qsort(v, l->n, sizeof(v[0]), cmp_double);
  /* nearest rank: the ceil(q n)-th smallest */
  unsigned k = (unsigned)ceil(PROTECT_LEARN_QUANTILE * l->n);
  return PROTECT_LEARN_FACTOR * v[k > 0 ? k - 1 : 0];
}

double agent_protect_budget_s(double budget, double expected_s, double unknown_s) {
  if (!(budget > 0))
    return INFINITY;
  if (expected_s > 0)
    return budget > 1 ? (budget - 1) * expected_s : 0;
  return unknown_s > 0 ? unknown_s : 0;
}

bool agent_protect_cap_binds(double rate, double cap) {
  return cap > 0 && rate >= PROTECT_CAP_BINDS * cap;
}

double agent_protect_cap_debt(double window_s, double rate, double cap, double ref) {
  if (!(window_s > 0) || !agent_protect_cap_binds(rate, cap))
    return 0;
  if (!(ref > 0))
    return window_s;
  return rate < ref ? window_s * (1 - rate / ref) : 0;
}

bool agent_protect_over_budget(double debt_s, double bound_s) {
  return debt_s >= bound_s;
}

uint64_t agent_protect_budget_at(uint64_t now_ms, double debt_s, double bound_s) {
  if (isinf(bound_s) || isnan(bound_s))
    return UINT64_MAX;
  double left = bound_s - debt_s;
  return now_ms + (uint64_t)(left > 0 ? ceil(left * 1000) : 0);
}

const char *agent_lat_target_source_name(int source) {
  switch (source) {
  case AGENT_LAT_TARGET_DECLARED:
    return "declared";
  case AGENT_LAT_TARGET_LEARNED:
    return "learned";
  case AGENT_LAT_TARGET_PROFILE:
    return "profile";
  }
  return "none";
}

const char *agent_protect_objective_name(int v) {
  switch (v) {
  case AGENT_PROTECT_OBJECTIVE_AUTO:
    return "auto";
  case AGENT_PROTECT_OBJECTIVE_DECLARED:
    return "declared";
  case AGENT_PROTECT_OBJECTIVE_OFF:
    return "off";
  }
  return "invalid";
}

bool agent_protect_update(struct agent_protect *p, const struct agent_protect_obs *obs, size_t n) {
  bool changed = update_once(p, obs, n);
  p->miss_windows = p->missed ? p->miss_windows + 1 : 0;
  p->ok_windows = p->missed ? 0 : p->ok_windows + 1;
  if (n == 0)
    p->pressure = false;
  else if (p->pressure)
    p->pressure = p->ok_windows < PROTECT_PRESSURE_OFF;
  else
    p->pressure = p->miss_windows >= PROTECT_PRESSURE_ON;
  return changed;
}

/* Is A to run before B: rank of the running ones to keep (the longest
 * running first). */
static bool senior(const struct agent_freeze_cand *a, const struct agent_freeze_cand *b) {
  return a->since_ms != b->since_ms ? a->since_ms < b->since_ms : strcmp(a->id, b->id) < 0;
}

/* Of the candidates frozen in FR, the one that waited longest (frozen
 * before this pick for at least MIN windows when MIN > 0); -1 none. */
static ssize_t longest_frozen(const struct agent_freeze_cand *c, const bool *fr, size_t n,
                              unsigned min) {
  ssize_t best = -1;
  for (size_t i = 0; i < n; i++) {
    if (!fr[i] || (min > 0 && (!c[i].frozen || c[i].windows < min)))
      continue;
    if (best < 0 || c[i].windows > c[best].windows ||
        (c[i].windows == c[best].windows && senior(&c[i], &c[best])))
      best = (ssize_t)i;
  }
  return best;
}

/* Of the candidates running in FR, the one started most recently (that
 * ran before this pick for at least MIN windows when MIN > 0); -1 none. */
static ssize_t newest_running(const struct agent_freeze_cand *c, const bool *fr, size_t n,
                              unsigned min) {
  ssize_t best = -1;
  for (size_t i = 0; i < n; i++) {
    if (fr[i] || (min > 0 && (c[i].frozen || c[i].windows < min)))
      continue;
    if (best < 0 || senior(&c[best], &c[i]))
      best = (ssize_t)i;
  }
  return best;
}

size_t agent_protect_freeze_pick(struct agent_freeze_cand *c, size_t n, unsigned limit) {
  cleanup_free bool *fr = xcalloc(n + 1, sizeof(*fr));
  size_t running = 0;
  for (size_t i = 0; i < n; i++) {
    fr[i] = limit > 0 && c[i].frozen;
    running += !fr[i];
  }
  if (limit > 0) {
    /* Rotation: the longest frozen for the newest that ran a quantum. */
    for (;;) {
      ssize_t in = longest_frozen(c, fr, n, PROTECT_FREEZE_QUANTUM);
      ssize_t out = newest_running(c, fr, n, PROTECT_FREEZE_QUANTUM);
      if (in < 0 || out < 0)
        break;
      fr[in] = false;
      fr[out] = true;
    }
    for (ssize_t i; running > limit && (i = newest_running(c, fr, n, 0)) >= 0; running--)
      fr[i] = true;
    for (ssize_t i; running < limit && (i = longest_frozen(c, fr, n, 0)) >= 0; running++)
      fr[i] = false;
  }
  size_t frozen = 0;
  for (size_t i = 0; i < n; i++) {
    c[i].windows = fr[i] == c[i].frozen ? c[i].windows + 1 : 1;
    c[i].frozen = fr[i];
    frozen += fr[i];
  }
  return frozen;
}
