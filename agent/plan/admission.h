// SPDX-License-Identifier: Apache-2.0
/* The admission state machine of iobatchd: which containers are known,
 * which wait (pending) and which run, and when to ask the batcher again.
 *
 *   Register ─▶ created ──Admit──▶ pending ──plan admits──▶ running
 *                                     │ Cancel / caller gone     │ Exited / cgroup gone
 *                                     ▼                          ▼
 *                                  removed                    removed
 *
 * No I/O and no clock of its own: every entry point takes `now` in
 * milliseconds (CLOCK_MONOTONIC in the daemon, a fake clock in the tests),
 * and the owner calls agent_adm_tick() at agent_adm_next_wake().  Answering
 * the callers (ttrpc) and writing weights is the owner's job, through the
 * `admitted` callback and the fields of struct agent_ctr. */
#ifndef IOB_AGENT_ADMISSION_H
#define IOB_AGENT_ADMISSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/ctr/ctr.h"
#include "batcher/batcher.h"
#include "common/error.h"

/* What Register (or an Admit for an unknown container) says. */
struct agent_ctr_info {
  const char *id, *ns;
  const char *workload_key, *cgroup, *bundle, *source;
  const char *declared_class; /* "" or NULL: none */
  const char *kind;           /* "job", "service", "sandbox"; "" or NULL: not said */
  const char *pod_name, *pod_namespace, *container_name; /* CRI names, may be NULL */
  uint32_t pid;
  uint32_t max_hold_ms;   /* 0: the agent's default */
  bool running;           /* re-registration of a container already started */
  bool kind_from_runtime; /* kind_source RUNTIME: the CRI's type; else io.iobatch.kind */
};

struct agent_adm;
struct agent_adm_ops {
  /* ctr was admitted (state is now RUNNING); answer ctr->serve.waiter if any. */
  void (*admitted)(struct agent_adm *adm, struct agent_ctr *ctr, void *user);
  /* Whether classes and kinds declared in namespace NS are trusted (the
   * config's trust_declared); NULL: all are. */
  bool (*trusts)(const char *ns, void *user);
};

struct agent_penalties;
struct agent_profiles;
struct agent_protection;
struct agent_adm {
  struct batch_config bcfg;
  const struct agent_penalties *pen; /* measured pairs applied before each plan; may be NULL */
  uint64_t batch_window_ms;
  uint64_t default_hold_ms;
  struct agent_ctr *list; /* in registration order */
  size_t n;
  uint64_t next_handle;
  uint64_t plan_due_ms; /* UINT64_MAX: no plan scheduled */
  uint64_t wake_ms;     /* earliest deadline of a held container, UINT64_MAX: none */
  uint64_t settle_ms;   /* no plan before this, deadlines aside (agent_adm_settle) */
  uint64_t plans;       /* how many times the batcher ran */
  uint64_t admissions, forced_admissions;
  const struct agent_adm_ops *ops;
  void *user;
  /* Asked by each plan about the pending containers the batcher would
   * start (agent_protection_ask); NULL: protection holds nothing. */
  struct agent_protection *protection;
  /* Measured start path: seconds from an admission to the container's
   * first I/O (the shim starts it, runc creates the process, the program
   * opens its files), a running average over start_n containers.  Once
   * there are AGENT_START_MIN_SAMPLES of them, a larger value replaces the
   * batcher's start_s, which is what holding costs a held job once more:
   * on a node whose starts are slow, holding pays less. */
  double start_s;
  uint32_t start_n;
  /* The end of the batch window of the last arrival or admission by a
   * plan: an arrival before it is planned then, not at once. */
  uint64_t window_end_ms;
  /* Measuring alone.  Penalties are learned only for victims whose solo
   * rate is known, and a job started beside others is never seen alone:
   * on a disk whose measured penalties already show harm (a pair more
   * than AGENT_MEASURE_HARM times slower), a pending container of a
   * workload whose solo rate is not known starts alone when nothing else
   * runs, and the rest wait for it until it exits, for at most measure_ms
   * of it and measure_wait_ms of their own wait (each container's max
   * hold still bounds both).  measuring: the handle of the one alone, 0 none. */
  uint64_t measure_ms, measure_wait_ms;
  uint64_t measuring, measure_until_ms;
  uint64_t measured_alone; /* how many started alone to be measured */
};

/* A pair slower than this is harm no fair share explains: two streams
 * served by turns each run 2x slower, and take as long as one after the
 * other. */
#define AGENT_MEASURE_HARM 3.0
/* Defaults: five sampling windows and a start (a rate needs a full
 * window after the start, and a job ends in a part one), then room for
 * three workloads measured one after another. */
#define AGENT_MEASURE_MS 6000
#define AGENT_MEASURE_WAIT_MS (3 * AGENT_MEASURE_MS)

#define AGENT_START_MIN_SAMPLES 3
#define AGENT_START_MAX_S 10.0 /* a later first I/O is the workload's, not the start's */

/* A container's first I/O came `s` seconds after its admission.  True
 * when this observation makes the measured start path count. */
bool agent_adm_observe_start(struct agent_adm *adm, double s);

/* Whether ctr can be held: it asks to start and waits for the answer
 * (registered by the shim, the hooks.d hook, or iobatchctl acting as
 * one).  A container found under the kubelet's cgroup tree (source
 * "kubepods") runs already: it is capped and weighted, never held. */
bool agent_ctr_holdable(const struct agent_ctr *c);

void agent_adm_init(struct agent_adm *adm, const struct batch_config *bcfg,
                    uint64_t batch_window_ms, uint64_t default_hold_ms,
                    const struct agent_adm_ops *ops, void *user);

/* Create the container or update what is known about it (a hook and a shim
 * both register; after an agent restart they register again).  The kind
 * (agent_ctr_set_kind) and a declared class (agent_adm_declare) are
 * applied trusted or not by ops->trusts on the container's tenant, after
 * this registration's names are merged.  info->running puts a new
 * container straight into RUNNING (it was started while the agent was away). */
int agent_adm_register(struct agent_adm *adm, const struct agent_ctr_info *info, uint64_t now,
                       struct agent_ctr **out, struct iob_error **err);

/* The container asks to start.  Returns 1 when it is already running or is
 * a pod sandbox (admitted at once, never planned: the caller answers at
 * once), 0 when it is pending now: it is planned after
 * the batch window (at once when nothing else is pending, starting or
 * arrived within the window: the window gathers arrivals that come
 * together, a lone one needs no company; within the window of another's
 * arrival or admission, when that window ends), and
 * admitted at the latest at min(now + max hold,
 * cap_ms) (cap_ms 0: no cap), the caller's own deadline. */
int agent_adm_admit(struct agent_adm *adm, struct agent_ctr *ctr, uint32_t max_hold_ms,
                    uint64_t cap_ms, uint64_t now);

/* A declared hold is never shorter than this (nor than the batch window),
 * unless the agent's own max_hold is: a hold that ends before the batch
 * window's plan and the first sample of what runs (sample_period, 1 s by
 * default) is no deadline but a way around the planner and the
 * protection hold. */
#define AGENT_MIN_HOLD_MS 1000
/* The hold of a container that declared io.iobatch.max-hold-ms DECLARED
 * (0: none): the agent's default when none, or when its namespace is not
 * TRUSTED (an untrusted declaration never lowers a hold; a longer one
 * only costs the tenant, but is not taken either: one rule), else the
 * declaration, at least AGENT_MIN_HOLD_MS and the batch window (but never
 * above the default). */
uint64_t agent_adm_hold_ms(const struct agent_adm *adm, uint32_t declared, bool trusted);

/* Take the container out (exited, cancelled, caller gone, cgroup vanished)
 * and plan again at once: what it held back may start now.  The caller owns
 * the container afterwards (learns from it, answers its waiter, frees it). */
void agent_adm_detach(struct agent_adm *adm, struct agent_ctr *ctr, uint64_t now);

/* Whether ctr's declarations are trusted (ops->trusts on its tenant). */
bool agent_adm_trusted(const struct agent_adm *adm, const struct agent_ctr *ctr);

/* What io.iobatch.class says (DECLARED: a class name or "latency", checked
 * by the caller; NULL or "": nothing).  Trusted, a class wins over
 * anything else and "latency" protects the container.  Untrusted
 * (trust_declared), it is a hint: the class stands until a profile or the
 * detector measures otherwise (source AGENT_CLASS_HINT), and "latency"
 * never protects it (only `protect = detected` and its measured I/O can:
 * agent_adm_measured).  Either way ctr->decl.declared records it, for Status. */
void agent_adm_declare(struct agent_adm *adm, struct agent_ctr *ctr, const char *declared,
                       bool trusted, uint64_t now);

/* What a measurement did (agent_adm_measured), for the caller's log. */
enum {
  AGENT_MEASURED_PROTECTED = 1u << 0,   /* it is protected from now on */
  AGENT_MEASURED_OVERRULED = 1u << 1,   /* it disagreed with an untrusted declaration (once) */
  AGENT_MEASURED_UNPROTECTED = 1u << 2, /* protected by measurement, it no longer earns it */
};
/* The detector classified ctr as CLS (LATENCY_LIKE: its I/O looks
 * latency-sensitive).  The measurement wins over anything but a trusted
 * declaration (the caller does not measure those): the class becomes CLS
 * (AGENT_CLASS_DETECTED).  It protects the container when it looks
 * latency-sensitive, PROTECT_DETECTED (protect = detected) and it is a
 * job; an untrusted declared latency adds nothing (it would let a tenant
 * throttle everyone else).  A container protected by measurement loses it
 * at the first measurement of I/O that is not latency-like.  Returns
 * AGENT_MEASURED_* flags. */
unsigned agent_adm_measured(struct agent_adm *adm, struct agent_ctr *ctr, enum batch_class cls,
                            double confidence, bool latency_like, bool protect_detected,
                            uint64_t now);

/* What RegisterRequest.kind (or AdmitRequest.kind) says: KIND ("job",
 * "service" or "sandbox", checked by the caller; NULL or "": nothing).
 * From the runtime (FROM_RUNTIME: the CRI's container type, which only
 * says "sandbox") or from a trusted namespace (TRUSTED: agent_adm_trusted)
 * the kind stands.
 * io.iobatch.kind from an untrusted namespace is anybody's to write and
 * would let a batch job escape the batcher ("service": never held, no
 * slot; "sandbox": never planned), so "service" and "sandbox" are ignored
 * there: the container is a job (kind_ignored).  Only the declaration is
 * ignored: a job that runs far past its learned bytes is still planned as
 * open-ended (agent_adm_job), which is measured, not declared. */
void agent_ctr_set_kind(struct agent_ctr *ctr, const char *kind, bool from_runtime, bool trusted);

/* Set the class; a change re-plans at once (a container may have turned
 * out to be harmless, or harmful).  A declared class is never replaced. */
void agent_adm_set_class(struct agent_adm *adm, struct agent_ctr *ctr, enum batch_class cls,
                         double confidence, enum agent_class_source src, uint64_t now);

/* Plan nothing before `until` unless a held container's deadline comes
 * first: a (re)started agent knows nothing of what runs until the shims
 * have registered their containers again. */
void agent_adm_settle(struct agent_adm *adm, uint64_t until);

/* Plan again at `at` (or earlier if already due earlier). */
void agent_adm_schedule(struct agent_adm *adm, uint64_t at);

/* When agent_adm_tick() must run next (UINT64_MAX: nothing scheduled). */
uint64_t agent_adm_next_wake(const struct agent_adm *adm);
/* Plan if a plan or a deadline is due.  Returns 1 if the batcher ran. */
int agent_adm_tick(struct agent_adm *adm, uint64_t now, struct iob_error **err);
/* Ask the batcher now: admits what it admits (calling ops->admitted),
 * records reasons and conflicts of the held ones, and computes weights. */
int agent_adm_plan(struct agent_adm *adm, uint64_t now, struct iob_error **err);

/* The batcher's view of a container at `now` (what a plan is given):
 * a service (declared, or past open_ended_factor x its learned bytes) is
 * open-ended; the work left comes from progress, bytes done against the
 * learned bytes (solo_bps x solo_s). */
void agent_adm_job(const struct agent_adm *adm, const struct agent_ctr *c, uint64_t now,
                   struct batch_job *j);

#endif
