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

#include "agent/lathist.h"
#include "agent/protect.h"
#include "batcher/batcher.h"
#include "batcher/kind.h"
#include "common/error.h"

#define AGENT_MAX_CONTAINERS 4096 /* far above what one node runs */
#define AGENT_ID_MAX 256          /* bytes of an id or a namespace */
#define AGENT_TEXT_MAX 4096       /* bytes of a cgroup path, bundle or workload key */

enum agent_state {
  AGENT_CREATED = 0, /* registered, not asking to start yet */
  AGENT_PENDING,     /* asked to start; held */
  AGENT_RUNNING,     /* admitted (or was already running when registered) */
};
const char *agent_state_name(enum agent_state s);

enum agent_class_source {
  AGENT_CLASS_NONE = 0, /* unknown: no declaration, profile or sample yet */
  AGENT_CLASS_DECLARED, /* annotation io.iobatch.class: detection is skipped */
  AGENT_CLASS_PROFILE,  /* learned from earlier runs of the workload key */
  AGENT_CLASS_DETECTED, /* the detector, from this run's samples */
  /* Declared from a namespace trust_declared does not trust: it stands
   * until a profile or the detector says otherwise. */
  AGENT_CLASS_HINT,
};
const char *agent_class_source_name(enum agent_class_source s);

/* What a container is to the batcher (RegisterRequest.kind): the kinds of
 * batcher/kind.h, under the agent's names (agent/protection.c uses these;
 * the values are batch_kind's). */
enum agent_kind {
  AGENT_KIND_JOB = BATCH_KIND_JOB,
  AGENT_KIND_SERVICE = BATCH_KIND_SERVICE,
  AGENT_KIND_SANDBOX = BATCH_KIND_SANDBOX,
};
const char *agent_kind_name(enum agent_kind k);
/* "" or NULL -> job; returns -1 for an unknown name (batch_kind_parse). */
int agent_kind_from_name(const char *name);

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

/* Bytes and operations read and written, summed over sampling windows
 * (agent_sampler_io_total_add, agent/sampler.h). */
struct agent_io_total {
  uint64_t rbytes, wbytes, rios, wios;
};

/* A container, as every part of the agent sees it.  Grouped by the part
 * that writes each field (others read them): nested where one file owns
 * them (caps, freeze), in sections named by their owners otherwise. */
struct agent_ctr {
  /* --- admission.c: who it is, its state and the batcher's view --- */
  struct agent_ctr *next;
  uint64_t handle; /* unique for the daemon's lifetime */
  char *id, *ns, *workload_key, *cgroup, *bundle, *source;
  uint32_t pid;
  enum agent_state state;
  enum agent_kind kind;
  /* What io.iobatch.kind said ("" none, or the kind is the runtime's), and
   * whether its namespace is trusted; kind_ignored: it said service or
   * sandbox untrusted, and the container is a job (kind_logged: said once,
   * by requests.c). */
  char declared_kind[8];
  bool kind_untrusted, kind_ignored, kind_logged;

  enum batch_class cls;
  double confidence;
  enum agent_class_source class_source;
  /* What io.iobatch.class said ("" none; a class name or "latency"), and
   * whether it came from an untrusted namespace; overruled: the
   * measurement disagreed (logged once). */
  char declared[16];
  bool declared_untrusted;
  bool profile_untrusted; /* class_source PROFILE, taught by an untrusted namespace */
  bool overruled;
  /* The last class detected in this run that says something about the
   * workload (not idle, not unknown): what a finished run teaches.  The
   * current class may be "idle" at the end of a run (killed, exiting). */
  int run_cls; /* enum batch_class, -1 none */
  double run_confidence;

  uint64_t registered_ms, arrival_ms, admitted_ms, deadline_ms;
  uint32_t max_hold_ms; /* io.iobatch.max-hold-ms as declared (0: none) */
  /* hold_ignored: it was declared from an untrusted namespace and not used
   * (agent_adm_hold_ms); hold_logged: said once (requests.c). */
  bool hold_ignored, hold_logged;
  int reason;                  /* enum batch_reason of the last decision, -1 none */
  char conflict[AGENT_ID_MAX]; /* id of the container it conflicts with */
  bool forced;                 /* admitted at its deadline */
  bool shared;                 /* ran beside another container doing I/O at some point */
  double solo_s, solo_bps;     /* from the learned profile (0: unknown; daemon.c) */
  unsigned weight;             /* what batch_weights asks for (100 = default) */
  /* Latency-sensitive (declared io.iobatch.class=latency, or detected):
   * batch containers yield to it (agent/protect.h).  Planned as a service. */
  bool protect;
  bool protect_declared; /* by a trusted declaration */

  /* --- Kubernetes' view: podmeta.c (names and labels, from
   * the node's CRI, or the annotations at Register), kubepods.c (uid and
   * QoS class, from the cgroup path), daemon.c (the pod rule).  NULL or
   * empty when not known: the pod's labels as "key=value" strings, its uid
   * and QoS class ("guaranteed", "burstable", "besteffort"; "" unknown),
   * and the rule that decided its kind/class (agent config; "" none). --- */
  char *pod_name, *pod_namespace, *container_name; /* "" when not known */
  char **pod_labels;
  size_t n_pod_labels;
  char *pod_uid;
  char qos[12];
  char rule[64];
  /* The rule matched by label in a namespace trust_declared does not
   * trust: what it grants (protection, a latency target, kind service)
   * was not applied. */
  bool rule_untrusted;

  /* --- sampler.c: the last sampling window --- */
  double read_bps, write_bps, read_iops, write_iops;
  /* Bytes and operations since it was registered, the metrics' counters
   * (agent_sampler_io_total_add): they never go down. */
  struct agent_io_total io_total;
  double bytes_run; /* bytes moved since admission (learned throughput) */
  /* Solo-seconds of work done since admission: each sampling window adds
   * its length divided by the slowdown measured (solo rate / rate) or,
   * without a learned rate, predicted while it shared the disk; equal to
   * the elapsed time when it ran alone.  What a shared run teaches. */
  double solo_equiv_s;
  /* ... and whether some shared window's slowdown was a guess (no solo
   * rate measured: the matrix's prediction), which a solo rate must not
   * be learnt from. */
  bool equiv_guessed;
  /* Seconds and bytes of its windows alone on the disk (no neighbour doing
   * I/O in the window or the one before, its own I/O under way): its solo
   * rate, measured while it ran. */
  double alone_s, alone_bytes;
  bool io_now;   /* did I/O in the last sampling window */
  bool first_io; /* did I/O in some window since its admission */
  /* Protected: its pace alone and against it (agent/protect.h). */
  double alone_bps; /* its rate in windows with no other I/O (running average) */
  double alone_var; /* ... and its running variance */
  double share;     /* rate / alone_bps in the last shared window, -1 unknown */
  /* The share of time some of its tasks stalled on I/O (io.pressure
   * "some") in the last window and in windows alone (running average);
   * < 0 unknown. */
  double stall, stall_alone;
  void *sampler_state; /* the sampler's per-container state */

  /* --- block I/O latency: measured by sampler.c, the objective set by
   * daemon.c's protection step (requests.c: a declared target) --- */
  struct agent_ctr_lat {
    /* The last window (agent/latency.h), once valid: requests completed
     * and their p50 and p99 from the BPF histogram, or with approx from
     * io.pressure (agent/sampler.c: requests counted by the sampler, p50 =
     * p99 = stall time per request) and stall (the window's stall share,
     * < 0 unknown). */
    bool valid, approx;
    uint64_t count, windows; /* windows: windows measured so far */
    double p50_us, p99_us, stall;
    /* Every window since it was registered, for the metrics. */
    struct agent_lathist_hist hist;
    /* Protected: its latency objective (agent/protect.h), in its
     * signal's unit: the p99 in us, or with approx the stall share.
     * Declared (target_declared_us, io.iobatch.latency-target, trusted
     * namespaces only; 0 none) or learned from its quiet windows (learn;
     * learn_approx: it holds stall shares). */
    struct agent_protect_learn learn;
    bool learn_approx;
    double target_declared_us;
    bool target_ignored; /* declared untrusted: said once */
    double target;       /* in force; 0 none yet (protection by share) */
    /* The objective its workload's profile kept (agent/profiles.h), in
     * force until it learns its own; 0 none.  learned_saved: its own
     * learned one went into the profile. */
    double profile_target;
    bool profile_approx, learned_saved;
    int target_source; /* enum agent_lat_target_source */
  } lat;

  /* --- caps.c (agent/caps.h): a batch container's cap --- */
  struct agent_ctr_caps {
    double bps;         /* the cap last written for it, 0 none */
    bool budget_logged; /* 'reached its budget' said once */
    void *state;        /* caps.c's (its throttle and CPU targets) */
  } caps;

  /* --- budget.c (agent/budget.h): what protection added to a batch job
   * (agent/protect.h, its protection debt) and its bound --- */
  struct agent_ctr_budget {
    double held_s;          /* held by protection, holds that ended */
    uint64_t held_since_ms; /* held by protection now since, 0 not */
    double capped_s;        /* what its caps took, summed over windows */
    /* Its rate in windows it did I/O uncapped and not frozen (running
     * average; 0 none yet): what a cap is measured against. */
    double ref_bps;
    /* Its expected runtime (s; 0 unknown) and where it came from (enum
     * agent_budget_source), for the class typical: the class and the
     * profiles' generation it was looked up at. */
    double expected_s;
    int source, cls;
    uint64_t gen;
    /* Seconds it ran free of protection: its running windows, less what
     * its caps took of them (frozen windows are debt, not free). */
    double free_s;
    bool spent; /* reached a bound that cannot grow: free from protection for good */
  } budget;

  /* --- freeze.c: the concurrency lever on a batch container --- */
  struct agent_ctr_freeze {
    /* Frozen, windows in a row in its present state (frozen or not,
     * while the lever acts), time frozen in all and since when (0: not
     * frozen), times frozen (freeze events); done: past its budget or
     * not freezable, never frozen again. */
    bool frozen, done;
    unsigned windows, freezes;
    uint64_t frozen_ms, since_ms;
    void *state; /* freeze.c's */
  } freeze;

  /* --- weights.c: what was written (weight above is what is asked) --- */
  unsigned weight_written; /* what was last written (0: nothing yet) */
  bool weight_effective;   /* a mechanism (iocost/BFQ) enforces it */
  char weight_note[128];   /* why a weight is not effective, for Status */

  void *waiter; /* server.c: the pending Admit call */
  /* server.c: the connection that registered or admitted it last
   * (ttrpc_call_conn_id, 0: none, e.g. found by the kubepods walk) and
   * its peer's pid, for the refusal's message. */
  uint64_t owner_conn;
  int owner_pid;
  void *pid_watch; /* pidwatch.c: the pidfd that ends it when its pid exits */
};

struct agent_adm;
struct agent_adm_ops {
  /* ctr was admitted (state is now RUNNING); answer ctr->waiter if any. */
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
};

#define AGENT_START_MIN_SAMPLES 3
#define AGENT_START_MAX_S 10.0 /* a later first I/O is the workload's, not the start's */

/* A container's first I/O came `s` seconds after its admission.  True
 * when this observation makes the measured start path count. */
bool agent_adm_observe_start(struct agent_adm *adm, double s);

/* The class plans and protection go by (agent/ctr.c): the class, except that a hint
 * (an untrusted io.iobatch.class, AGENT_CLASS_HINT) counts only when it
 * is a writing class (seq-write, rand-write, mixed), which can only get
 * the container itself held or capped; a hint of idle, a reader or unknown
 * would let it skip a hold or a cap, and is planned as unknown (a probe,
 * measured within a sample or two). */
enum batch_class agent_ctr_plan_class(const struct agent_ctr *c);

/* Whether ctr can be held: it asks to start and waits for the answer
 * (registered by the shim, the hooks.d hook, or iobatchctl acting as
 * one).  A container found under the kubelet's cgroup tree (source
 * "kubepods") runs already: it is capped and weighted, never held. */
bool agent_ctr_holdable(const struct agent_ctr *c);

void agent_adm_init(struct agent_adm *adm, const struct batch_config *bcfg,
                    uint64_t batch_window_ms, uint64_t default_hold_ms,
                    const struct agent_adm_ops *ops, void *user);
/* Frees every container; their waiters must have been answered. */
void agent_adm_release(struct agent_adm *adm);

struct agent_ctr *agent_adm_find(const struct agent_adm *adm, const char *ns, const char *id);

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
void agent_ctr_free(struct agent_ctr *ctr);

/* The namespace a container's declarations and profiles belong to: its
 * pod's namespace when known, else its containerd namespace (agent/ctr.c). */
const char *agent_ctr_tenant(const struct agent_ctr *ctr);
/* Whether ctr's declarations are trusted (ops->trusts on its tenant). */
bool agent_adm_trusted(const struct agent_adm *adm, const struct agent_ctr *ctr);

/* What io.iobatch.class says (DECLARED: a class name or "latency", checked
 * by the caller; NULL or "": nothing).  Trusted, a class wins over
 * anything else and "latency" protects the container.  Untrusted
 * (trust_declared), it is a hint: the class stands until a profile or the
 * detector measures otherwise (source AGENT_CLASS_HINT), and "latency"
 * never protects it (only `protect = detected` and its measured I/O can:
 * agent_adm_measured).  Either way ctr->declared records it, for Status. */
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

size_t agent_adm_count(const struct agent_adm *adm, enum agent_state s);

/* The batcher's view of a container at `now` (what a plan is given):
 * a service (declared, or past open_ended_factor x its learned bytes) is
 * open-ended; the work left comes from progress, bytes done against the
 * learned bytes (solo_bps x solo_s). */
void agent_adm_job(const struct agent_adm *adm, const struct agent_ctr *c, uint64_t now,
                   struct batch_job *j);

#endif
