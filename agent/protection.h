// SPDX-License-Identifier: Apache-2.0
/* Protection of latency-sensitive containers, in one part: the objective
 * of each protected container, the controller that judges the victims'
 * last window (agent/protect.h, its arithmetic), and every lever it pulls
 * on batch containers: the cap (caps.c: io.max or blkio.throttle), the
 * CPU weight (caps.c), the freezer (freeze.c), the hold of a batch
 * container the batcher would start, and the budget that bounds what all
 * of them may cost a job (budget.c).  The levers are called from here
 * only.
 *
 * What the rest of the agent sees:
 *   - agent_protection_window, once after each sampling window (the
 *     daemon's sample timer);
 *   - the plan's question about each pending container: may it start
 *     now, and until when must it wait;
 *   - a view of its state, for status and metrics.
 * and, at a container's edges, bind (it registered with a pid), admitted,
 * forget (it leaves) and release (the agent stops).
 *
 * A new lever goes here: its state beside caps and freezer in struct
 * agent_protection, written from agent_protection_window after the
 * controller's update (next to apply_levers in protection.c), taken off in
 * forget and release, its settings in agent_protection_configure.  The
 * kernel's I/O priority (ioprio_set on each task of a batch container, or
 * io.prio.class / blkio.prio.class where the kernel has it) is the next
 * one, and the first to pull: it costs the batch nothing while the victim
 * is idle.  Nothing outside this part changes for it. */
#ifndef IOB_AGENT_PROTECTION_H
#define IOB_AGENT_PROTECTION_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/admission.h"
#include "agent/caps.h"
#include "agent/config.h"
#include "agent/freeze.h"

struct agent_profiles;
struct agent_restore;

struct agent_protection_ops {
  /* A protected container's learned objective went into its workload's
   * profile: the owner saves the profiles soon (a crash must not lose it). */
  void (*learned)(void *user);
};

struct agent_protection {
  struct agent_adm *adm;           /* the containers (adm->list) and the controller's state */
  struct agent_profiles *profiles; /* learned objectives go there */
  struct agent_caps caps;          /* lever: the cap and the CPU weight */
  struct agent_freezer freezer;    /* lever: the cgroup freezer */
  int objective;                   /* protect_objective (enum agent_protect_objective) */
  const struct agent_protection_ops *ops;
  void *user;
};

/* ADM, RESTORE and PROFILES outlive the part; ROOT prefixes /proc and the
 * mounts (NULL on a real system).  Nothing is written until a window. */
void agent_protection_init(struct agent_protection *p, struct agent_adm *adm,
                           struct agent_restore *restore, struct agent_profiles *profiles,
                           const char *root, const struct agent_protection_ops *ops, void *user);
/* The protection settings of CFG (at start and on reload; the level in
 * force is kept).  SAMPLE_PERIOD_MS: the default gap between two batch
 * containers started while protecting is two of them. */
void agent_protection_configure(struct agent_protection *p, const struct agent_config *cfg);

/* A sampling window of WINDOW_S seconds ended at NOW (the sampler has
 * measured every container): each protected container's objective, the
 * controller's update, each batch job's budget, then the levers.  Returns
 * true when batch containers held by protection may start now (the
 * caller plans again). */
bool agent_protection_window(struct agent_protection *p, uint64_t now, double window_s);

/* A protected container's last window, from the sampler's raw facts: its
 * I/O rate RATE (bytes/s), its io.pressure stall share STALL (< 0
 * unknown) and NB, how many others did I/O in it.  Alone (NB 0) the
 * window teaches its pace alone; shared, its share of that pace
 * (c->share, by SIGNAL, enum agent_protect_signal). */
void agent_protection_observe(struct agent_ctr *c, int signal, double rate, double stall,
                              size_t nb);

/* C was admitted: capped (and its CPU weight lowered) from the start while
 * protection limits batch containers. */
void agent_protection_admitted(struct agent_protection *p, struct agent_ctr *c);
/* C registered (with its pid): resolve its lever targets once. */
void agent_protection_bind(struct agent_protection *p, struct agent_ctr *c);
/* C leaves: thawed and its cap and CPU weight put back, if the levers
 * touched it. */
void agent_protection_forget(struct agent_protection *p, struct agent_ctr *c);
/* The agent stops: every lever lifted, what was there put back. */
void agent_protection_release(struct agent_protection *p);

#endif
