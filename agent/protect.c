#include "agent/protect.h"

#include <stdio.h>
#include <string.h>

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

void agent_protect_init(struct agent_protect *p, const struct agent_protect_cfg *cfg) {
  memset(p, 0, sizeof(*p));
  p->cfg = *cfg;
}

bool agent_protect_update(struct agent_protect *p, const struct agent_protect_obs *obs, size_t n) {
  double before = p->level_bps;
  if (n == 0) {
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
