// SPDX-License-Identifier: Apache-2.0
#include "agent/protect/budget.h"

#include <math.h>

#include "agent/plan/admission.h"
#include "agent/store/profiles.h"
#include "agent/protect/protect.h"

/* Weight of a new window in the reference rate: the last few windows
 * before a cap say what it was getting, one odd window does not. */
#define REF_RATE 0.5

const char *agent_budget_source_name(int source) {
  switch (source) {
  case AGENT_BUDGET_PROFILE:
    return "profile";
  case AGENT_BUDGET_CLASS:
    return "class";
  }
  return "unknown";
}

double agent_budget_debt(const struct agent_ctr *c, uint64_t now) {
  double held = c->budget.held_s;
  if (c->budget.held_since_ms && now > c->budget.held_since_ms)
    held += (double)(now - c->budget.held_since_ms) / 1000;
  uint64_t frozen = c->freeze.frozen_ms;
  if (c->freeze.frozen && c->freeze.since_ms && now > c->freeze.since_ms)
    frozen += now - c->freeze.since_ms;
  return held + (double)frozen / 1000 + c->budget.capped_s;
}

/* Its expected runtime: its own profile's, else what was looked up. */
static double expected_s(const struct agent_ctr *c) {
  return c->profile.solo_s > 0 ? c->profile.solo_s : c->budget.expected_s;
}

/* Its bound, and whether it is final: one that can still grow (a job of
 * unknown runtime that has run free for less than it takes to earn
 * protect_unknown_delay) does not mark the job spent for good. */
static double bound(const struct agent_protect_cfg *cfg, const struct agent_ctr *c, bool *final) {
  double e = expected_s(c);
  double b = agent_protect_budget_s(cfg->batch_budget, e, cfg->unknown_delay_s);
  *final = true;
  if (e > 0 || !isfinite(b))
    return b;
  /* Its runtime unknown: protection may add (budget - 1) x the time it
   * ran free so far, up to protect_unknown_delay in all.  Whatever it
   * turns out to be, its run then takes at most budget x what it would
   * have taken unprotected. */
  double r = cfg->batch_budget > 1 ? (cfg->batch_budget - 1) * c->budget.free_s : 0;
  if (r >= b)
    return b;
  *final = false;
  return r;
}

double agent_budget_bound(const struct agent_protect_cfg *cfg, const struct agent_ctr *c) {
  bool final;
  return bound(cfg, c, &final);
}

/* Over its bound for good: the bound cannot grow any more. */
static bool spent_for_good(const struct agent_protect_cfg *cfg, const struct agent_ctr *c,
                           uint64_t now) {
  bool final;
  double b = bound(cfg, c, &final);
  return cfg->batch_budget > 0 && final && agent_protect_over_budget(agent_budget_debt(c, now), b);
}

bool agent_budget_spent(const struct agent_protect_cfg *cfg, const struct agent_ctr *c,
                        uint64_t now) {
  /* No budget at all (0) frees nobody, not even one marked before. */
  if (!(cfg->batch_budget > 0))
    return false;
  return c->budget.spent ||
         agent_protect_over_budget(agent_budget_debt(c, now), agent_budget_bound(cfg, c));
}

uint64_t agent_budget_at(const struct agent_protect_cfg *cfg, const struct agent_ctr *c,
                         uint64_t now) {
  if (!(cfg->batch_budget > 0))
    return UINT64_MAX;
  if (c->budget.spent)
    return now;
  return agent_protect_budget_at(now, agent_budget_debt(c, now), agent_budget_bound(cfg, c));
}

void agent_budget_expect(struct agent_ctr *c, const struct agent_protect_cfg *cfg,
                         const struct agent_profiles *profiles, const char *ns, int cls,
                         uint64_t now) {
  /* Spent under the bound it had: a longer one learned since does not
   * put protection back on a job it let go. */
  if (spent_for_good(cfg, c, now))
    c->budget.spent = true;
  if (c->profile.solo_s > 0) {
    c->budget.expected_s = c->profile.solo_s;
    c->budget.source = AGENT_BUDGET_PROFILE;
    return;
  }
  uint64_t gen = profiles ? profiles->gen + 1 : 0;
  if (c->budget.source != AGENT_BUDGET_PROFILE && c->budget.gen == gen && c->budget.cls == cls)
    return;
  c->budget.gen = gen;
  c->budget.cls = cls;
  double t =
      profiles ? agent_profiles_class_typical(profiles, ns, batch_class_name((enum batch_class)cls))
               : 0;
  c->budget.expected_s = t;
  c->budget.source = t > 0 ? AGENT_BUDGET_CLASS : AGENT_BUDGET_UNKNOWN;
}

void agent_budget_hold(struct agent_ctr *c, uint64_t now, bool by_protection) {
  if (by_protection && c->budget.held_since_ms == 0) {
    c->budget.held_since_ms = now ? now : 1;
    return;
  }
  if (!by_protection && c->budget.held_since_ms) {
    if (now > c->budget.held_since_ms)
      c->budget.held_s += (double)(now - c->budget.held_since_ms) / 1000;
    c->budget.held_since_ms = 0;
  }
}

void agent_budget_window(struct agent_ctr *c, const struct agent_protect_cfg *cfg, uint64_t now,
                         double window_s, double spare_bps) {
  if (c->state != AGENT_RUNNING || c->freeze.frozen)
    return; /* a frozen window is counted as frozen time */
  double rate = c->sample.read_bps + c->sample.write_bps, added = 0;
  if (c->caps.bps > 0) {
    double ref = c->budget.ref_bps > 0 ? c->budget.ref_bps : c->profile.solo_bps;
    /* The rate it had before the cap is stale once its neighbours leave:
     * what the disk has shown it can do and no longer does was its to
     * take. */
    if (spare_bps > 0 && rate + spare_bps > ref)
      ref = rate + spare_bps;
    added = agent_protect_cap_debt(window_s, rate, c->caps.bps, ref);
    c->budget.capped_s += added;
  } else if (c->sample.io_now && rate > 0) {
    double r = c->budget.ref_bps;
    c->budget.ref_bps = r > 0 ? r + REF_RATE * (rate - r) : rate;
  }
  if (window_s > added)
    c->budget.free_s += window_s - added;
  if (spent_for_good(cfg, c, now))
    c->budget.spent = true;
}
