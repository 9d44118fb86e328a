// SPDX-License-Identifier: Apache-2.0
/* Protection of latency-sensitive containers, in one part: the objective
 * of each protected container, the controller that judges the victims'
 * last window (agent/protect/protect.h, its arithmetic), and every lever it pulls
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
 * io.prio.class / blkio.prio.class where the kernel has it) is such a
 * one (ioprio.c), and the first to pull: it costs the batch nothing while
 * the victim is idle. */
#ifndef IOB_AGENT_PROTECTION_H
#define IOB_AGENT_PROTECTION_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/plan/admission.h"
#include "agent/protect/caps.h"
#include "agent/config.h"
#include "agent/protect/freeze.h"
#include "agent/protect/ioprio.h"
#include "agent/protect/protect.h"

struct agent_profiles;
struct agent_restore;

struct agent_protection_ops {
  /* A protected container's learned objective went into its workload's
   * profile: the owner saves the profiles soon (a crash must not lose it). */
  void (*learned)(void *user);
};

struct agent_protection {
  struct agent_protect ctl;        /* the controller: the victims' slack and the batch cap level */
  struct agent_adm *adm;           /* the containers (adm->list) */
  struct agent_profiles *profiles; /* learned objectives go there; expected runtimes */
  struct agent_caps caps;          /* lever: the cap and the CPU weight */
  struct agent_freezer freezer;    /* lever: the cgroup freezer */
  struct agent_ioprio ioprio;      /* lever: the tasks' I/O priority class (the first pulled) */
  int objective;                   /* protect_objective (enum agent_protect_objective) */
  /* While protecting, batch containers start one at a time, this far
   * apart, so that each one's effect on the victims is measured before the
   * next (protect_gap; by default two sampling periods). */
  uint64_t gap_ms;
  uint64_t last_ms; /* when the last batch container started while protecting */
  uint64_t holds;   /* admissions held back to protect a victim */
  double peak_bps;  /* the disk's peak aggregate rate, decayed (budget pricing) */
  const struct agent_protection_ops *ops;
  void *user;
};

/* Half-life (s) of the peak aggregate rate a cap's cost is priced
 * against: long enough to span a batch job's run, short enough that a
 * peak another mix of classes reached fades. */
#define PROTECT_PEAK_HALF_LIFE_S 600.0

/* ADM, RESTORE and PROFILES outlive the part; RESTORE and PROFILES may be
 * NULL (nothing journalled, nothing learned), and ADM too for a part that
 * is only asked whom it targets.  ROOT prefixes /proc and the mounts
 * (NULL on a real system).  The controller starts with the defaults of
 * agent_protect_cfg_default; nothing is written until a window. */
void agent_protection_init(struct agent_protection *p, struct agent_adm *adm,
                           struct agent_restore *restore, struct agent_profiles *profiles,
                           const char *root, const struct agent_protection_ops *ops, void *user);
/* The protection settings of CFG (at start and on reload; the level in
 * force is kept).  With protect_gap unset, batch containers started while
 * protecting are two of CFG's sample periods apart. */
void agent_protection_configure(struct agent_protection *p, const struct agent_config *cfg);

/* A sampling window of WINDOW_S seconds ended at NOW (the sampler has
 * measured every container): each protected container's objective,
 * each batch job's budget, the controller's update, then the levers.  Returns
 * true when batch containers held by protection may start now (the
 * caller plans again). */
bool agent_protection_window(struct agent_protection *p, uint64_t now, double window_s);

/* A protected container's last window, from the sampler's raw facts: its
 * I/O rate RATE (bytes/s), its io.pressure stall share STALL (< 0
 * unknown) and NB, how many others did I/O in it.  Alone (NB 0) the
 * window teaches its pace alone; shared, its share of that pace
 * (c->protect.share, by SIGNAL, enum agent_protect_signal). */
void agent_protection_observe(struct agent_ctr *c, int signal, double rate, double stall,
                              size_t nb);

/* The plan's question about one pending container (agent_protection_ask). */
struct agent_protect_q {
  struct agent_ctr *c;
  bool admit;        /* in: the batcher would start it now */
  bool forced;       /* in: ... because its max hold or fairness bound came */
  bool hold;         /* out: protection holds it back */
  uint64_t until_ms; /* out, held: when to ask again (its turn, its deadline or its budget) */
};
/* The plan asks, for each of the N pending containers Q at NOW (in the
 * plan's order): may it start now, and until when must it wait.  While a
 * protected container runs, a batch container protection limits that the
 * batcher would start is held while a victim is short of its target and,
 * judged by share, started one at a time gap_ms apart (the oldest first);
 * never one the batcher forces in, nor one past its budget, which is
 * counted here as well (held by protection, its debt grows).  Returns the
 * victim the held ones wait for (for their conflict). */
const char *agent_protection_ask(struct agent_protection *p, struct agent_protect_q *q, size_t n,
                                 uint64_t now);

/* What status and metrics show of protection (agent_protection_view). */
struct agent_protection_view {
  bool active;    /* a protected container runs */
  bool objective; /* judged by a latency objective */
  bool holding;   /* new batch containers are held */
  /* I/O pressure (iobatchctl check io-pressure): a victim missed its
   * objective (or was short of its rate alone) for windows in a row;
   * missed: in the last one; ok_windows: windows in a row without. */
  bool pressure, missed;
  unsigned ok_windows;
  double level_bps;       /* the cap on each batch container; 0 none */
  double worst_lat_ratio; /* the worst victim's latency / its objective; 0 none */
  unsigned io_limit;      /* batch containers that may do I/O at once; 0 no limit */
  unsigned batch_n;       /* batch containers under the concurrency lever */
  unsigned frozen;        /* ... frozen now */
  /* The I/O priority lever: "off" (protect_ioprio = off), "ready"
   * (nothing to hold now), "on" (holding); why: why a batch container
   * protection limits is not held ("" none: every one is). */
  const char *ioprio;
  const char *ioprio_why;
  unsigned ioprio_ctrs;  /* batch containers held at the class */
  unsigned ioprio_tasks; /* ... threads held one by one (no blk-ioprio file) */
  /* The levers' evidence (agent/protect/protect.h): the last judgement's misses
   * per byte pulled / free (< 0 none); windows with batch I/O left
   * released, and why: "probe", "let go" ("" none). */
  double help_ratio;
  unsigned released;
  const char *released_why;
  const char *victim; /* the victim furthest from its target; "" none */
  uint64_t holds;     /* admissions held back so far */
};
void agent_protection_view(const struct agent_protection *p, struct agent_protection_view *v);

/* A batch job's protection debt and its bound at NOW. */
struct agent_protection_debt {
  bool batch;    /* a batch container: the rest is meaningful */
  double debt_s; /* what protection added to its run: held, frozen, capped */
  double held_s, capped_s;
  double bound_s;     /* what it may add; INFINITY: no bound (protect_batch_budget 0) */
  const char *source; /* where its expected runtime came from (enum agent_budget_source) */
  bool spent;         /* it reached a bound that cannot grow: free for good */
};
void agent_protection_debt(const struct agent_protection *p, const struct agent_ctr *c,
                           uint64_t now, struct agent_protection_debt *out);

/* Which containers protection acts on (the levers and the plan's question
 * ask these; status and the tests too):
 *   - a batch container: a job, not protected, that does or may do I/O;
 *   - a target: a batch container it caps and holds, every one with scope
 *     `all`, else those that write or may write (not a reader);
 *   - over budget at NOW: a batch container whose protection debt reached
 *     its bound (agent/protect/budget.h): never capped, held, frozen or slowed
 *     again;
 *   - limited: a target not over budget;
 *   - free for good: over a bound that can no longer grow (a job of
 *     unknown runtime earns more by running free until its bound reaches
 *     protect_unknown_delay);
 *   - an I/O priority candidate: a running target not free for good.  The
 *     class costs the batch no measured time (the scheduler serves idle
 *     requests whenever nothing else waits, and ages them), so it is not
 *     priced into the debt, and a job at a bound that still grows keeps it;
 *   - a freeze candidate: running, a job protection limits (frozen
 *     already: whatever its class looks like while frozen), never a
 *     protected or service container, not done with freezing. */
bool agent_ctr_is_batch(const struct agent_ctr *c);
bool agent_ctr_protect_target(const struct agent_protection *p, const struct agent_ctr *c);
bool agent_ctr_over_budget(const struct agent_protection *p, const struct agent_ctr *c,
                           uint64_t now);
bool agent_ctr_protect_limited(const struct agent_protection *p, const struct agent_ctr *c,
                               uint64_t now);
bool agent_ctr_freeze_candidate(const struct agent_protection *p, const struct agent_ctr *c,
                                uint64_t now);
bool agent_ctr_free_for_good(const struct agent_protection *p, const struct agent_ctr *c,
                             uint64_t now);
bool agent_ctr_ioprio_candidate(const struct agent_protection *p, const struct agent_ctr *c,
                                uint64_t now);

/* The steps of agent_protection_window, for tests that drive one alone:
 * each batch job's expected runtime looked up again and the window
 * priced into its debt; the I/O priority class of the batch containers
 * protection limits while it limits (agent_protect_limiting); the cap
 * level and CPU weight written on every container; the freezer set to
 * the controller's io_limit. */
void agent_protection_budget_window(struct agent_protection *p, uint64_t now, double window_s);
void agent_protection_ioprio(struct agent_protection *p, uint64_t now);
void agent_protection_caps(struct agent_protection *p, uint64_t now);
void agent_protection_freeze(struct agent_protection *p, uint64_t now);

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
