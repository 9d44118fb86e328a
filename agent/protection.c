// SPDX-License-Identifier: Apache-2.0
/* Protection of latency-sensitive containers (agent/protection.h): the
 * objective, the controller's step once per sampling window, and the
 * levers it pulls. */
#include "agent/protection.h"

#include <linux/magic.h>
#include <math.h>
#include <string.h>
#include <sys/statfs.h>

#include "agent/profiles.h"
#include "agent/protect.h"
#include "common/cleanup.h"
#include "common/log.h"
#include "common/xalloc.h"

void agent_protection_init(struct agent_protection *p, struct agent_adm *adm,
                           struct agent_restore *restore, struct agent_profiles *profiles,
                           const char *root, const struct agent_protection_ops *ops, void *user) {
  *p = (struct agent_protection){.adm = adm, .profiles = profiles, .ops = ops, .user = user};
  agent_caps_init(&p->caps, adm, restore, root);
  agent_freezer_init(&p->freezer, adm, restore, root);
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
  struct agent_protect_cfg *pc = &p->adm->prot.cfg;
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
  p->adm->protect_gap_ms =
      cfg->protect_gap_ms == UINT64_MAX ? 2 * cfg->sample_period_ms : cfg->protect_gap_ms;
  p->caps.cpu = cfg->protect_cpu;
  p->objective = cfg->protect_objective;
}

/* A protected container's latency in the last window, in its objective's
 * unit (admission.h): < 0 unknown. */
static double lat_signal(const struct agent_ctr *c) {
  if (!c->lat.valid)
    return -1;
  return c->lat.approx ? c->lat.stall : c->lat.p99_us;
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
  if (!batch_io && c->io_now && lat >= 0)
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

/* Did a protected container do I/O in the window: by its rate, or by the
 * requests the block layer completed for it (a victim starved down to a
 * few requests a window is below the rate that counts as I/O, and must
 * not look idle: that would lift every limit on what starves it). */
static bool protected_busy(const struct agent_ctr *c) {
  return c->io_now || (c->lat.valid && !c->lat.approx && c->lat.count > 0);
}

/* What the controller's update changed, in the log: the level, the hold
 * and the concurrency lever, each when it starts and when it ends. */
static void log_update(const struct agent_protect *p, size_t k, bool was_short, double level_before,
                       unsigned limit_before) {
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
  else if (p->objective && p->level_bps == 0 && level_before > 0)
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

/* The levers, after the controller's update: caps and CPU weight, then
 * the freezer. */
static void apply_levers(struct agent_protection *p, uint64_t now) {
  agent_caps_apply(&p->caps);
  agent_freeze_apply(&p->freezer, now);
}

bool agent_protection_window(struct agent_protection *p, uint64_t now, double window_s) {
  struct agent_adm *adm = p->adm;
  size_t n = 0;
  bool batch_io = false;
  double batch_bps = 0;
  for (struct agent_ctr *c = adm->list; c; c = c->next) {
    if (c->state != AGENT_RUNNING)
      continue;
    n += c->protect;
    if (!c->protect && agent_ctr_is_batch(c) && c->io_now) {
      batch_io = true;
      double r = c->read_bps + c->write_bps;
      if (agent_ctr_protect_target(adm, c) && r > batch_bps)
        batch_bps = r;
    }
  }
  cleanup_free struct agent_protect_obs *obs = xcalloc(n + 1, sizeof(*obs));
  size_t k = 0;
  for (struct agent_ctr *c = adm->list; c && k < n; c = c->next)
    if (c->protect && c->state == AGENT_RUNNING) {
      lat_objective(c, batch_io, p->objective);
      keep_objective(p, c);
      obs[k++] = (struct agent_protect_obs){.id = c->id,
                                            .share = c->share,
                                            .stall = -1,
                                            .lat = lat_signal(c),
                                            .lat_target = c->lat.target,
                                            .idle = !protected_busy(c)};
    }
  struct agent_protect *ctl = &adm->prot;
  agent_adm_budget_window(adm, now, window_s);
  ctl->batch_bps = batch_bps;
  ctl->batch_n = agent_freeze_candidates(&p->freezer, now);
  unsigned limit_before = ctl->io_limit;
  bool was_short = ctl->short_;
  double level_before = ctl->level_bps;
  agent_protect_update(ctl, obs, k);
  log_update(ctl, k, was_short, level_before, limit_before);
  apply_levers(p, now);
  /* Held batch containers may start once the victims have slack. */
  return !ctl->short_ && was_short;
}

void agent_protection_observe(struct agent_ctr *c, int signal, double rate, double stall,
                              size_t nb) {
  if (c->alone_bps <= 0 && c->solo_bps > 0)
    c->alone_bps = c->solo_bps;
  double rshare = -1;
  c->stall = stall;
  c->share = -1;
  if (c->io_now && nb == 0) {
    /* running mean and variance of its rate alone */
    if (c->alone_bps > 0) {
      double dev = rate - c->alone_bps;
      c->alone_var = 0.7 * (c->alone_var + 0.3 * dev * dev);
    }
    c->alone_bps = c->alone_bps > 0 ? c->alone_bps + 0.3 * (rate - c->alone_bps) : rate;
    if (stall >= 0)
      c->stall_alone =
          c->stall_alone >= 0 ? c->stall_alone + 0.3 * (stall - c->stall_alone) : stall;
    return;
  }
  if (nb == 0)
    return;
  if (c->alone_bps > 0)
    rshare = rate / c->alone_bps;
  double cv = c->alone_bps > 0 && c->alone_var > 0 ? sqrt(c->alone_var) / c->alone_bps : -1;
  c->share = agent_protect_share(signal, rshare, cv, stall, c->stall_alone);
  iob_debug("protect '%s': rate %.1f MiB/s (alone %.1f, cv %.2f: share %.2f), io stall %.0f%% "
            "(alone %.0f%%: share %.2f) -> %.2f, %zu neighbours doing I/O",
            c->id, rate / (1024 * 1024), c->alone_bps / (1024 * 1024), cv, rshare, stall * 100,
            c->stall_alone * 100,
            agent_protect_share(AGENT_PROTECT_SIGNAL_PRESSURE, rshare, cv, stall, c->stall_alone),
            c->share, nb);
}

void agent_protection_admitted(struct agent_protection *p, struct agent_ctr *c) {
  const struct agent_protect *ctl = &p->adm->prot;
  if ((ctl->level_bps > 0 || (p->caps.cpu && agent_protect_limiting(ctl))) && agent_ctr_is_batch(c))
    agent_caps_apply(&p->caps);
}

void agent_protection_bind(struct agent_protection *p, struct agent_ctr *c) {
  agent_caps_bind(&p->caps, c);
  agent_freeze_bind(&p->freezer, c);
}

void agent_protection_forget(struct agent_protection *p, struct agent_ctr *c) {
  agent_freeze_forget(&p->freezer, c); /* thawed, if the lever froze it */
  agent_caps_forget(&p->caps, c);      /* put back what its cap replaced, if its cgroup is there */
}

void agent_protection_release(struct agent_protection *p) {
  agent_freeze_release(&p->freezer);
  agent_caps_release(&p->caps);
}
