// SPDX-License-Identifier: Apache-2.0
/* Protection of latency-sensitive containers (agent/protect/protection.h): the
 * objective, the controller's step once per sampling window, and the
 * levers it pulls. */
#include "agent/protect/protection.h"

#include <linux/magic.h>
#include <math.h>
#include <string.h>
#include <sys/statfs.h>

#include "agent/protect/budget.h"
#include "agent/store/profiles.h"
#include "common/loop.h"
#include "agent/protect/protect.h"
#include "common/cleanup.h"
#include "common/log.h"
#include "common/xalloc.h"

void agent_protection_init(struct agent_protection *p, struct agent_adm *adm,
                           struct agent_restore *restore, struct agent_profiles *profiles,
                           const char *root, const struct agent_protection_ops *ops, void *user) {
  *p = (struct agent_protection){.adm = adm, .profiles = profiles, .ops = ops, .user = user};
  struct agent_protect_cfg pc;
  agent_protect_cfg_default(&pc);
  agent_protect_init(&p->ctl, &pc);
  agent_caps_init(&p->caps, adm, restore, root);
  agent_freezer_init(&p->freezer, adm, restore, root);
  agent_ioprio_init(&p->ioprio, restore, root);
}

bool agent_ctr_is_batch(const struct agent_ctr *c) {
  return c->kind == AGENT_KIND_JOB && !c->plan.protect && agent_ctr_plan_class(c) != BATCH_IDLE;
}

bool agent_ctr_protect_target(const struct agent_protection *p, const struct agent_ctr *c) {
  if (!agent_ctr_is_batch(c))
    return false;
  if (p->ctl.cfg.scope == AGENT_PROTECT_ALL)
    return true;
  /* Readers (declared, learned or detected) run free; unknown and mixed
   * containers may write. */
  enum batch_class cls = agent_ctr_plan_class(c);
  return cls != BATCH_SEQ_READ && cls != BATCH_RAND_READ;
}

bool agent_ctr_over_budget(const struct agent_protection *p, const struct agent_ctr *c,
                           uint64_t now) {
  if (!agent_ctr_is_batch(c))
    return false;
  return agent_budget_spent(&p->ctl.cfg, c, now);
}

bool agent_ctr_protect_limited(const struct agent_protection *p, const struct agent_ctr *c,
                               uint64_t now) {
  return agent_ctr_protect_target(p, c) && !agent_ctr_over_budget(p, c, now);
}

bool agent_ctr_freeze_candidate(const struct agent_protection *p, const struct agent_ctr *c,
                                uint64_t now) {
  if (c->state != AGENT_RUNNING || c->plan.protect || c->kind != AGENT_KIND_JOB || c->freeze.done)
    return false;
  if (c->freeze.frozen)
    return !agent_budget_spent(&p->ctl.cfg, c, now);
  /* Not before its first I/O: until then runc may still be starting it,
   * and a frozen init never reads the exec FIFO, so Start would wait for
   * a thaw (seen in the VM). */
  if (!c->sample.first_io)
    return false;
  return agent_ctr_protect_limited(p, c, now);
}

bool agent_ctr_free_for_good(const struct agent_protection *p, const struct agent_ctr *c,
                             uint64_t now) {
  return c->budget.spent ||
         (agent_ctr_over_budget(p, c, now) && c->budget.source != AGENT_BUDGET_UNKNOWN);
}

bool agent_ctr_ioprio_candidate(const struct agent_protection *p, const struct agent_ctr *c,
                                uint64_t now) {
  return c->state == AGENT_RUNNING && agent_ctr_protect_target(p, c) &&
         !agent_ctr_free_for_good(p, c, now);
}

/* C's expected runtime, for its budget (agent/protect/budget.h). */
static void budget_expect(const struct agent_protection *p, struct agent_ctr *c, uint64_t now) {
  agent_budget_expect(c, &p->ctl.cfg, p->profiles, agent_ctr_tenant(c),
                      (int)agent_ctr_plan_class(c), now);
}

/* Whether running job C's cap bound its rate in the last window. */
static bool cap_binds(const struct agent_ctr *c) {
  return c->state == AGENT_RUNNING && !c->freeze.frozen &&
         agent_protect_cap_binds(c->sample.read_bps + c->sample.write_bps, c->caps.bps);
}

void agent_protection_budget_window(struct agent_protection *p, uint64_t now, double window_s) {
  /* The disk's peak aggregate rate, decayed, against the window's: what
   * it left unused the capped jobs could have had, in equal shares. */
  double total = 0;
  int binding = 0;
  for (const struct agent_ctr *c = p->adm->list; c; c = c->next) {
    if (c->sample.io_now)
      total += c->sample.read_bps + c->sample.write_bps;
    binding += agent_ctr_is_batch(c) && cap_binds(c);
  }
  if (window_s > 0)
    p->peak_bps *= exp2(-window_s / PROTECT_PEAK_HALF_LIFE_S);
  if (total > p->peak_bps)
    p->peak_bps = total;
  double spare = binding ? (p->peak_bps - total) / binding : 0;
  for (struct agent_ctr *c = p->adm->list; c; c = c->next)
    if (agent_ctr_is_batch(c)) {
      budget_expect(p, c, now);
      agent_budget_window(c, &p->ctl.cfg, now, window_s, cap_binds(c) && spare > 0 ? spare : 0);
    }
}

/* Whether containers here are frozen through cgroup v2's cgroup.freeze:
 * the unified hierarchy is mounted at the cgroup root (no v1 freezer
 * hierarchy beside it).  A task frozen by v1's freezer.state cannot act on
 * a SIGKILL until thawed, so `protect_freeze = auto` stays off there. */
static bool freezer_v2(void) {
  struct statfs sf;
  return statfs("/sys/fs/cgroup", &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC;
}

void agent_protection_configure(struct agent_protection *p, const struct agent_config *cfg) {
  struct agent_protect_cfg *pc = &p->ctl.cfg;
  pc->min_share = cfg->protect_share;
  pc->scope = cfg->protect_scope;
  pc->cap_start_bps = (double)cfg->protect_cap_start;
  pc->cap_floor_bps = (double)cfg->protect_cap_floor;
  if (pc->cap_floor_bps > pc->cap_start_bps)
    pc->cap_floor_bps = pc->cap_start_bps;
  pc->raise = cfg->protect_raise;
  pc->cut = cfg->protect_cut;
  pc->hold_at_floor = cfg->protect_hold_at_floor;
  pc->batch_budget = cfg->protect_batch_budget;
  pc->unknown_delay_s = (double)cfg->protect_unknown_delay_ms / 1000;
  pc->freeze = cfg->protect_freeze == AGENT_FREEZE_AUTO ? freezer_v2() : cfg->protect_freeze;
  pc->freeze_after = cfg->protect_freeze_after;
  pc->evidence = cfg->protect_evidence;
  p->gap_ms = cfg->protect_gap_ms == UINT64_MAX ? 2 * cfg->sample_period_ms : cfg->protect_gap_ms;
  p->caps.cpu = cfg->protect_cpu;
  p->ioprio.mode = cfg->protect_ioprio;
  p->objective = cfg->protect_objective;
}

/* A protected container's latency in the last window, in its objective's
 * unit (admission.h): < 0 unknown. */
static double lat_signal(const struct agent_ctr *c) {
  if (!c->lat.valid)
    return -1;
  return c->lat.approx ? c->lat.stall : c->lat.p99_us;
}

/* Is C starved: stalled on I/O (io.pressure "some") for at least
 * PROTECT_STARVED_STALL of the window, with no request completed in it. */
static bool starved(const struct agent_ctr *c) {
  return c->protect.stall >= PROTECT_STARVED_STALL && !(c->lat.valid && c->lat.count > 0);
}

/* Its latency in the window as the objective judges it: a starved one
 * has no completion to measure, but the first request it stalled on in
 * the window was still in flight at its end, so it has waited at least
 * the stalled share of the window (WINDOW_S). */
static double lat_judged(const struct agent_ctr *c, double window_s) {
  if (starved(c) && !c->lat.approx && window_s > 0)
    return c->protect.stall * window_s * 1e6;
  return lat_signal(c);
}

/* Its objective: declared (a p99, so only with the block layer's
 * latency), else learned from the windows in which it did I/O and no
 * batch container did (BATCH_IO false). */
static void lat_objective(struct agent_ctr *c, bool batch_io, int which) {
  if (c->lat.valid && c->lat.learn_approx != c->lat.approx) {
    /* The signal changed its unit: what was learned does not apply. */
    memset(&c->lat.learn, 0, sizeof(c->lat.learn));
    c->lat.learn_approx = c->lat.approx;
  }
  double lat = lat_signal(c);
  if (!batch_io && c->sample.io_now && lat >= 0)
    agent_protect_learn_add(&c->lat.learn, lat);
  double before = c->lat.target;
  if (which == AGENT_PROTECT_OBJECTIVE_OFF) {
    c->lat.target = 0;
    c->lat.target_source = AGENT_LAT_TARGET_NONE;
  } else if (c->lat.target_declared_us > 0 && c->lat.valid && !c->lat.approx) {
    c->lat.target = c->lat.target_declared_us;
    c->lat.target_source = AGENT_LAT_TARGET_DECLARED;
  } else if (which == AGENT_PROTECT_OBJECTIVE_DECLARED) {
    c->lat.target = 0;
    c->lat.target_source = AGENT_LAT_TARGET_NONE;
  } else {
    double t = agent_protect_learn_target(&c->lat.learn);
    if (t > 0 && c->lat.learn_approx && t < PROTECT_LEARN_STALL_MIN)
      t = PROTECT_LEARN_STALL_MIN;
    c->lat.target = t;
    c->lat.target_source = t > 0 ? AGENT_LAT_TARGET_LEARNED : AGENT_LAT_TARGET_NONE;
    /* Not learned yet: what its workload learned before, in the same
     * unit (no ten quiet windows again). */
    if (t == 0 && c->lat.profile_target > 0 && c->lat.valid &&
        c->lat.profile_approx == c->lat.approx) {
      c->lat.target = c->lat.profile_target;
      c->lat.target_source = AGENT_LAT_TARGET_PROFILE;
    }
  }
  if (c->lat.target > 0 && before == 0)
    iob_info("'%s' has a latency objective (%s): %s %.*f%s", c->id,
             agent_lat_target_source_name(c->lat.target_source),
             c->lat.learn_approx ? "an I/O stall share of" : "a block I/O p99 of",
             c->lat.learn_approx ? 3 : 0, c->lat.target, c->lat.learn_approx ? "" : " us");
}

/* A container's own learned objective goes into its workload's profile,
 * written soon (a crash must not lose it). */
static void keep_objective(struct agent_protection *p, struct agent_ctr *c) {
  if (c->lat.target_source != AGENT_LAT_TARGET_LEARNED || c->lat.learned_saved)
    return;
  c->lat.learned_saved = true;
  cleanup_error struct iob_error *err = NULL;
  if (c->workload_key == NULL || c->workload_key[0] == '\0' || p->profiles == NULL ||
      agent_profiles_learn_objective(p->profiles, agent_ctr_tenant(c), c->workload_key,
                                     c->lat.target, c->lat.learn_approx, &err) < 0)
    return;
  if (p->ops && p->ops->learned)
    p->ops->learned(p->user);
}

/* Did a protected container do I/O in the window: by its rate, by the
 * requests the block layer completed for it, or by its stall with none
 * completed (a victim starved down to a few requests a window, or to
 * none, is below the rate that counts as I/O, and must not look idle:
 * that would lift every limit on what starves it). */
static bool protected_busy(const struct agent_ctr *c) {
  return c->sample.io_now || (c->lat.valid && !c->lat.approx && c->lat.count > 0) || starved(c);
}

/* What the controller's update changed, in the log: the level, the hold
 * and the concurrency lever, each when it starts and when it ends. */
static void log_update(const struct agent_protect *p, size_t k, bool was_short, double level_before,
                       unsigned limit_before, const struct agent_protect_evidence *evb) {
  const struct agent_protect_evidence *e = &p->ev;
  if (e->judged != evb->judged)
    iob_info("protect: with its levers pulled '%s' missed %.2f x as often per byte of batch I/O "
             "as without: %s",
             p->victim, e->ratio,
             e->release ? "every lever released (first, do no harm)" : "they help, kept");
  else if (e->release && !evb->release)
    iob_info("protect: every lever released for %u windows with batch I/O, to measure '%s' "
             "without them",
             e->release, p->victim);
  if (k > 0 && p->objective)
    iob_debug("protect: worst latency %.2f x its objective ('%s'), %s, batch cap %.1f MiB/s",
              p->worst_lat_ratio, p->victim, p->short_ ? "holding" : "not holding",
              p->level_bps / (1024 * 1024));
  else if (k > 0)
    iob_debug("protect: worst share %.2f ('%s'), %s, batch cap %.1f MiB/s", p->worst_share,
              p->victim, p->short_ ? "holding" : "not holding", p->level_bps / (1024 * 1024));
  if (p->objective && p->level_bps > 0 && level_before == 0)
    iob_info("protecting '%s': its latency at %.2f x its objective; batch containers capped at "
             "%.1f MiB/s",
             p->victim, p->worst_lat_ratio, p->level_bps / (1024 * 1024));
  else if (p->objective && p->level_bps == 0 && level_before > 0 && !e->release)
    iob_info("'%s' meets its latency objective: batch containers run uncapped", p->victim);
  if (p->short_ && !was_short && p->objective)
    iob_info("protecting '%s': its latency at %.2f x its objective with batch containers at the "
             "floor cap (%.1f MiB/s): new ones held",
             p->victim, p->worst_lat_ratio, p->level_bps / (1024 * 1024));
  else if (p->short_ && !was_short)
    iob_info("protecting '%s': at %.2f of its rate alone (target %.2f); batch containers capped "
             "at %.1f MiB/s and new ones held",
             p->victim, p->worst_share, p->cfg.min_share, p->level_bps / (1024 * 1024));
  else if (!p->short_ && was_short && k == 0)
    iob_info("no protected container runs any more: batch containers may start");
  else if (!p->short_ && was_short && p->worst_share >= 0)
    iob_info("'%s' has slack again (%.2f of its rate alone): batch containers may start", p->victim,
             p->worst_share);
  else if (!p->short_ && was_short)
    iob_info("'%s' has slack again: batch containers may start", p->victim);
  if (p->io_limit && !limit_before)
    iob_info("protecting '%s': its latency at %.2f x its objective with batch containers at the "
             "floor cap for %u windows: at most %u of %u do I/O at once (the others frozen)",
             p->victim, p->worst_lat_ratio, p->cfg.freeze_after, p->io_limit, p->batch_n);
  else if (p->io_limit != limit_before && p->io_limit)
    iob_info("protecting '%s': at most %u of %u batch containers do I/O at once", p->victim,
             p->io_limit, p->batch_n);
  else if (limit_before && !p->io_limit)
    iob_info("batch containers may all do I/O again (%s)",
             k == 0 || !p->active ? "no protected container"
             : p->idle_windows    ? "no protected container did I/O"
                                  : "the objective is met");
}

void agent_protection_caps(struct agent_protection *p, uint64_t now) {
  double level = p->ctl.level_bps;
  bool limiting = agent_protect_limiting(&p->ctl);
  for (struct agent_ctr *c = p->adm->list; c; c = c->next) {
    bool running = c->state == AGENT_RUNNING;
    bool over = running && agent_ctr_over_budget(p, c, now);
    /* Said once it is free for good: a job of unknown runtime is over its
     * growing bound whenever it has not run free long enough, and not for
     * good. */
    if (over && limiting && c->budget.spent && !c->caps.budget_logged) {
      iob_info("'%s' reached its budget: protection added %.1f s to it (its bound %.1f s, "
               "runtime %s): no longer capped, frozen, held or slowed",
               c->id, agent_budget_debt(c, now), agent_budget_bound(&p->ctl.cfg, c),
               agent_budget_source_name(c->budget.source));
      c->caps.budget_logged = true;
    }
    bool capped = running && !over && agent_ctr_protect_target(p, c);
    /* CPU weight: every batch container (readers too) while protection
     * limits, except those past their budget. */
    agent_caps_set(&p->caps, c, capped && level > 0 ? level : 0,
                   p->caps.cpu && limiting && running && !over && agent_ctr_is_batch(c));
  }
}

/* How many batch containers the concurrency lever may act on now. */
static unsigned freeze_candidates(const struct agent_protection *p, uint64_t now) {
  unsigned n = 0;
  for (struct agent_ctr *c = p->adm->list; c; c = c->next)
    n += agent_ctr_freeze_candidate(p, c, now);
  return n;
}

void agent_protection_freeze(struct agent_protection *p, uint64_t now) {
  unsigned limit = p->ctl.active ? p->ctl.io_limit : 0;
  size_t n = 0;
  for (struct agent_ctr *c = p->adm->list; c; c = c->next) {
    if (agent_ctr_freeze_candidate(p, c, now)) {
      n++;
      continue;
    }
    if (c->freeze.frozen) {
      bool over = agent_ctr_over_budget(p, c, now) || c->state != AGENT_RUNNING;
      c->freeze.done = c->freeze.done || over;
      agent_freeze_thaw(&p->freezer, c, now,
                        over ? "it reached its budget: never frozen again" : "no longer batch");
    }
    c->freeze.windows = 0;
  }
  cleanup_free struct agent_ctr **who = xcalloc(n + 1, sizeof(*who));
  size_t k = 0;
  for (struct agent_ctr *c = p->adm->list; c && k < n; c = c->next)
    if (agent_ctr_freeze_candidate(p, c, now))
      who[k++] = c;
  agent_freeze_set(&p->freezer, who, k, limit, now);
}

void agent_protection_ioprio(struct agent_protection *p, uint64_t now) {
  bool limiting = agent_protect_limiting(&p->ctl);
  size_t n = 0;
  for (struct agent_ctr *c = p->adm->list; c; c = c->next)
    n++;
  cleanup_free const struct agent_ctr **who = xcalloc(n + 1, sizeof(*who));
  size_t k = 0;
  for (struct agent_ctr *c = p->adm->list; c && limiting; c = c->next)
    if (agent_ctr_ioprio_candidate(p, c, now))
      who[k++] = c;
  agent_ioprio_set(&p->ioprio, who, k);
}

/* The levers, after the controller's update: the I/O priority first (the
 * batch loses nothing by it while the victim is idle), caps and CPU
 * weight, then the freezer. */
static void apply_levers(struct agent_protection *p, uint64_t now) {
  agent_protection_ioprio(p, now);
  agent_protection_caps(p, now);
  agent_protection_freeze(p, now);
}

bool agent_protection_window(struct agent_protection *p, uint64_t now, double window_s) {
  struct agent_adm *adm = p->adm;
  size_t n = 0;
  bool batch_io = false;
  double batch_bps = 0, batch_bytes = 0;
  for (struct agent_ctr *c = adm->list; c; c = c->next) {
    if (c->state != AGENT_RUNNING)
      continue;
    n += c->plan.protect;
    if (!c->plan.protect && agent_ctr_is_batch(c) && c->sample.io_now) {
      batch_io = true;
      double r = c->sample.read_bps + c->sample.write_bps;
      batch_bytes += r * window_s;
      if (agent_ctr_protect_target(p, c) && r > batch_bps)
        batch_bps = r;
    }
  }
  cleanup_free struct agent_protect_obs *obs = xcalloc(n + 1, sizeof(*obs));
  size_t k = 0;
  for (struct agent_ctr *c = adm->list; c && k < n; c = c->next)
    if (c->plan.protect && c->state == AGENT_RUNNING) {
      lat_objective(c, batch_io, p->objective);
      keep_objective(p, c);
      obs[k++] = (struct agent_protect_obs){.id = c->id,
                                            .share = c->protect.share,
                                            .stall = -1,
                                            .lat = lat_judged(c, window_s),
                                            .lat_target = c->lat.target,
                                            .idle = !protected_busy(c)};
    }
  struct agent_protect *ctl = &p->ctl;
  agent_protection_budget_window(p, now, window_s);
  ctl->batch_bps = batch_bps;
  ctl->batch_io = batch_io;
  ctl->batch_bytes = batch_bytes;
  ctl->batch_n = freeze_candidates(p, now);
  unsigned limit_before = ctl->io_limit;
  bool was_short = ctl->short_;
  double level_before = ctl->level_bps;
  struct agent_protect_evidence ev_before = ctl->ev;
  agent_protect_update(ctl, obs, k);
  log_update(ctl, k, was_short, level_before, limit_before, &ev_before);
  apply_levers(p, now);
  /* Held batch containers may start once the victims have slack. */
  return !ctl->short_ && was_short;
}

void agent_protection_observe(struct agent_ctr *c, int signal, double rate, double stall,
                              size_t nb) {
  if (c->protect.alone_bps <= 0 && c->profile.solo_bps > 0)
    c->protect.alone_bps = c->profile.solo_bps;
  double rshare = -1;
  c->protect.stall = stall;
  c->protect.share = -1;
  if (c->sample.io_now && nb == 0) {
    /* running mean and variance of its rate alone */
    if (c->protect.alone_bps > 0) {
      double dev = rate - c->protect.alone_bps;
      c->protect.alone_var = 0.7 * (c->protect.alone_var + 0.3 * dev * dev);
    }
    c->protect.alone_bps = c->protect.alone_bps > 0
                               ? c->protect.alone_bps + 0.3 * (rate - c->protect.alone_bps)
                               : rate;
    if (stall >= 0)
      c->protect.stall_alone = c->protect.stall_alone >= 0
                                   ? c->protect.stall_alone + 0.3 * (stall - c->protect.stall_alone)
                                   : stall;
    return;
  }
  if (nb == 0)
    return;
  if (c->protect.alone_bps > 0)
    rshare = rate / c->protect.alone_bps;
  double cv = c->protect.alone_bps > 0 && c->protect.alone_var > 0
                  ? sqrt(c->protect.alone_var) / c->protect.alone_bps
                  : -1;
  c->protect.share = agent_protect_share(signal, rshare, cv, stall, c->protect.stall_alone);
  iob_debug(
      "protect '%s': rate %.1f MiB/s (alone %.1f, cv %.2f: share %.2f), io stall %.0f%% "
      "(alone %.0f%%: share %.2f) -> %.2f, %zu neighbours doing I/O",
      c->id, rate / (1024 * 1024), c->protect.alone_bps / (1024 * 1024), cv, rshare, stall * 100,
      c->protect.stall_alone * 100,
      agent_protect_share(AGENT_PROTECT_SIGNAL_PRESSURE, rshare, cv, stall, c->protect.stall_alone),
      c->protect.share, nb);
}

void agent_protection_admitted(struct agent_protection *p, struct agent_ctr *c) {
  const struct agent_protect *ctl = &p->ctl;
  if ((ctl->level_bps > 0 || (p->caps.cpu && agent_protect_limiting(ctl))) && agent_ctr_is_batch(c))
    agent_protection_caps(p, iob_now_ms());
}

/* Whether pending container C, which the batcher would start at NOW, is
 * held; *UNTIL: when to ask again.  FIRST: it is the oldest of those
 * protection limits. */
static bool hold(struct agent_protection *p, struct agent_ctr *c, bool first, uint64_t now,
                 uint64_t *until) {
  const struct agent_protect *ctl = &p->ctl;
  /* Protecting: none while a victim is short of its target, and one at a
   * time otherwise (oldest first: the plan's FIFO order). */
  uint64_t next = p->last_ms + p->gap_ms;
  bool spaced = p->last_ms == 0 || now >= next;
  /* By a latency objective only the miss holds (at the floor cap): one
   * that is met costs the batch no spacing either. */
  bool spacing = !ctl->objective && (!spaced || !first);
  if (!ctl->short_ && !spacing) {
    p->last_ms = now;
    return false;
  }
  p->holds++;
  uint64_t w = c->plan.deadline_ms;
  if (!ctl->short_ && spaced)
    w = now + 1; /* the next one in line: right after this one */
  else if (!ctl->short_ && next < w)
    w = next;
  /* ... and no later than it reaches its budget (held, its debt grows a
   * second a second) */
  uint64_t b = agent_budget_at(&ctl->cfg, c, now);
  if (b < w)
    w = b > now ? b : now + 1;
  *until = w;
  return true;
}

const char *agent_protection_ask(struct agent_protection *p, struct agent_protect_q *q, size_t n,
                                 uint64_t now) {
  for (size_t i = 0; i < n; i++)
    budget_expect(p, q[i].c, now); /* its bound, before the first sample */
  /* The oldest batch container the plan admits: the one that may start
   * while protecting. */
  long first = -1;
  for (size_t i = 0; i < n; i++)
    if (q[i].admit && agent_ctr_protect_limited(p, q[i].c, now) &&
        (first < 0 || q[i].c->plan.arrival_ms < q[first].c->plan.arrival_ms))
      first = (long)i;
  for (size_t i = 0; i < n; i++) {
    struct agent_protect_q *a = &q[i];
    a->hold = false;
    a->until_ms = UINT64_MAX;
    /* A victim short of its target: no new batch container, unless its
     * max hold or fairness bound forces it in. */
    if (a->admit && agent_ctr_protect_limited(p, a->c, now) && !a->forced && p->ctl.active)
      a->hold = hold(p, a->c, (long)i == first, now, &a->until_ms);
    agent_budget_hold(a->c, now, a->hold);
  }
  return p->ctl.victim;
}

void agent_protection_view(const struct agent_protection *p, struct agent_protection_view *v) {
  const struct agent_protect *ctl = &p->ctl;
  *v = (struct agent_protection_view){.active = ctl->active,
                                      .objective = ctl->active && ctl->objective,
                                      .holding = ctl->short_,
                                      .pressure = ctl->pressure,
                                      .missed = ctl->missed,
                                      .ok_windows = ctl->ok_windows,
                                      .level_bps = ctl->level_bps,
                                      .worst_lat_ratio =
                                          ctl->active && ctl->objective ? ctl->worst_lat_ratio : 0,
                                      .io_limit = ctl->active ? ctl->io_limit : 0,
                                      .batch_n = ctl->batch_n,
                                      .help_ratio = ctl->ev.ratio,
                                      .released = ctl->ev.release,
                                      .released_why = !ctl->ev.release  ? ""
                                                      : ctl->ev.probing ? "probe"
                                                                        : "let go",
                                      .victim = ctl->active ? ctl->victim : "",
                                      .holds = p->holds};
  for (const struct agent_ctr *c = p->adm ? p->adm->list : NULL; c; c = c->next)
    v->frozen += c->freeze.frozen;
  const struct agent_ioprio *io = &p->ioprio;
  v->ioprio = io->mode == AGENT_IOPRIO_OFF ? "off" : io->ctrs ? "on" : "ready";
  v->ioprio_why = io->mode == AGENT_IOPRIO_OFF ? "protect_ioprio = off" : io->why;
  v->ioprio_ctrs = io->ctrs;
  v->ioprio_tasks = io->tasks;
}

void agent_protection_debt(const struct agent_protection *p, const struct agent_ctr *c,
                           uint64_t now, struct agent_protection_debt *out) {
  *out = (struct agent_protection_debt){.bound_s = INFINITY, .source = ""};
  if (!agent_ctr_is_batch(c))
    return;
  out->batch = true;
  out->debt_s = agent_budget_debt(c, now);
  out->bound_s = agent_budget_bound(&p->ctl.cfg, c);
  out->source = agent_budget_source_name(c->budget.source);
  out->spent = agent_ctr_free_for_good(p, c, now);
  out->held_s = c->budget.held_s;
  if (c->budget.held_since_ms && now > c->budget.held_since_ms)
    out->held_s += (double)(now - c->budget.held_since_ms) / 1000;
  out->capped_s = c->budget.capped_s;
}

void agent_protection_bind(struct agent_protection *p, struct agent_ctr *c) {
  agent_ioprio_bind(&p->ioprio, c);
  agent_caps_bind(&p->caps, c);
  agent_freeze_bind(&p->freezer, c);
}

void agent_protection_forget(struct agent_protection *p, struct agent_ctr *c) {
  agent_freeze_forget(&p->freezer, c); /* thawed, if the lever froze it */
  agent_caps_forget(&p->caps, c);      /* put back what its cap replaced, if its cgroup is there */
  agent_ioprio_forget(&p->ioprio, c);  /* its tasks' old class, if held */
}

void agent_protection_release(struct agent_protection *p) {
  agent_freeze_release(&p->freezer);
  agent_caps_release(&p->caps);
  agent_ioprio_release(&p->ioprio);
}
