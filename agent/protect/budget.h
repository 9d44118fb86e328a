// SPDX-License-Identifier: Apache-2.0
/* The batch's budget, per container (agent/protect/protect.h says what it is):
 * each batch job's protection debt (held by protection, frozen, capped
 * below the rate it was getting), its bound ((protect_batch_budget - 1) x
 * its expected runtime; with none known, x the time it has run free so
 * far, at most protect_unknown_delay), and the mark that it reached a
 * bound that cannot grow, which never goes: from then on protection
 * leaves it alone (agent_ctr_over_budget).  No I/O, and nothing called back: protection
 * (agent/protect/protection.c) hands each job over, once per sample before the
 * caps and the freezer act (agent_protection_budget_window), and at each
 * plan with its holds (agent_protection_ask). */
#ifndef IOB_AGENT_BUDGET_H
#define IOB_AGENT_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

struct agent_ctr;
struct agent_profiles;
struct agent_protect_cfg;

/* Where a job's expected runtime comes from. */
enum agent_budget_source {
  AGENT_BUDGET_UNKNOWN = 0, /* neither: bounded by protect_unknown_delay */
  AGENT_BUDGET_PROFILE,     /* its workload's profile (solo_s) */
  AGENT_BUDGET_CLASS,       /* its class's typical runtime in its namespace */
};
/* "unknown", "profile", "class". */
const char *agent_budget_source_name(int source);

/* Its protection debt at NOW (s): held, frozen and capped. */
double agent_budget_debt(const struct agent_ctr *c, uint64_t now);
/* Its bound (s; INFINITY: no budget) under CFG. */
double agent_budget_bound(const struct agent_protect_cfg *cfg, const struct agent_ctr *c);
/* Has it reached its bound (now or before: that stays). */
bool agent_budget_spent(const struct agent_protect_cfg *cfg, const struct agent_ctr *c,
                        uint64_t now);
/* When its debt reaches its bound if it grows one second a second from NOW
 * on (held or frozen): UINT64_MAX never. */
uint64_t agent_budget_at(const struct agent_protect_cfg *cfg, const struct agent_ctr *c,
                         uint64_t now);

/* Look its expected runtime up again (its profile's runtime; else the
 * typical runtime of class CLS (enum batch_class) in namespace NS from
 * PROFILES, which may be NULL), marking it spent first if it is. */
void agent_budget_expect(struct agent_ctr *c, const struct agent_protect_cfg *cfg,
                         const struct agent_profiles *profiles, const char *ns, int cls,
                         uint64_t now);
/* Protection answered the plan about pending C at NOW: held by it or not. */
void agent_budget_hold(struct agent_ctr *c, uint64_t now, bool by_protection);
/* A sampling window of WINDOW_S seconds ended at NOW for running batch job
 * C: its rates (sampler.c) against the cap it ran under (caps.c) add to
 * its debt, and it is marked spent at its bound.  SPARE_BPS is its share
 * of what the disk was seen to do and did not in the window (0 none):
 * had it run uncapped it could have had that too.  Protection calls it
 * for each (agent_protection_budget_window). */
void agent_budget_window(struct agent_ctr *c, const struct agent_protect_cfg *cfg, uint64_t now,
                         double window_s, double spare_bps);

#endif
