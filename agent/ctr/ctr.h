// SPDX-License-Identifier: Apache-2.0
/* The container record of iobatchd (struct agent_ctr): what every part
 * of the agent knows of a container, a small core every part reads and
 * one section per part that writes it; what every part reads of it
 * alike, and the table of them (agent/ctr/ctr.c). */
#ifndef IOB_AGENT_CTR_H
#define IOB_AGENT_CTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/sample/lathist.h"
#include "agent/protect/protect.h"
#include "batcher/batcher.h"
#include "batcher/kind.h"

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
 * batcher/kind.h, under the agent's names (agent/protect/protection.c uses these;
 * the values are batch_kind's). */
enum agent_kind {
  AGENT_KIND_JOB = BATCH_KIND_JOB,
  AGENT_KIND_SERVICE = BATCH_KIND_SERVICE,
  AGENT_KIND_SANDBOX = BATCH_KIND_SANDBOX,
};
const char *agent_kind_name(enum agent_kind k);
/* "" or NULL -> job; returns -1 for an unknown name (batch_kind_parse). */
int agent_kind_from_name(const char *name);

/* Bytes and operations read and written, summed over sampling windows
 * (agent_sampler_io_total_add, agent/sample/sampler.h). */
struct agent_io_total {
  uint64_t rbytes, wbytes, rios, wios;
};

/* A container, as every part of the agent sees it: a small core, then
 * one nested section per part that writes it, named for its owner (the
 * others only read it). */
struct agent_ctr {
  /* --- the core, admission.c (agent_ctr_new makes it): who it is, its
   * state and the batcher's view --- */
  struct agent_ctr *next;
  uint64_t handle; /* unique for the daemon's lifetime */
  char *id, *ns, *workload_key, *cgroup, *bundle, *source;
  uint32_t pid;
  enum agent_state state;
  enum agent_kind kind;
  enum batch_class cls;
  double confidence;
  enum agent_class_source class_source;
  void *pid_watch; /* pidwatch.c: the pidfd that ends it when its pid exits */

  /* --- admission.c: what it declared, and whether its namespace is
   * trusted --- */
  struct agent_ctr_decl {
    /* What io.iobatch.kind said ("" none, or the kind is the runtime's), and
     * whether its namespace is trusted; kind_ignored: it said service or
     * sandbox untrusted, and the container is a job. */
    char declared_kind[8];
    bool kind_untrusted, kind_ignored;
    /* What io.iobatch.class said ("" none; a class name or "latency"), and
     * whether it came from an untrusted namespace; overruled: the
     * measurement disagreed (logged once). */
    char declared[16];
    bool declared_untrusted;
    bool profile_untrusted; /* class_source PROFILE, taught by an untrusted namespace */
    bool overruled;
    uint32_t max_hold_ms; /* io.iobatch.max-hold-ms as declared (0: none) */
    /* hold_ignored: it was declared from an untrusted namespace and not used
     * (agent_adm_hold_ms). */
    bool hold_ignored;
  } decl;

  /* --- admission.c: its plans --- */
  struct agent_ctr_plan {
    uint64_t registered_ms, arrival_ms, admitted_ms, deadline_ms;
    int reason;                  /* enum batch_reason of the last decision, -1 none */
    char conflict[AGENT_ID_MAX]; /* id of the container it conflicts with */
    bool forced;                 /* admitted at its deadline */
    unsigned weight;             /* what batch_weights asks for (100 = default) */
    /* The last predictive decision's forecasts (batch_decision), for the
     * debug log of an admission: s from then, 0 when none was run. */
    double makespan_admit, makespan_hold;
    /* Latency-sensitive (declared io.iobatch.class=latency, or detected):
     * batch containers yield to it (agent/protect/protect.h).  Planned as a service. */
    bool protect;
    bool protect_declared; /* by a trusted declaration */
  } plan;

  /* --- learning.c: from the learned profile (0: unknown) --- */
  struct agent_ctr_profile {
    double solo_s, solo_bps;
  } profile;

  /* --- Kubernetes' view: podmeta.c (names and labels, from
   * the node's CRI, or the annotations at Register), kubepods.c (uid and
   * QoS class, from the cgroup path), kube.c (the pod rule).  NULL or
   * empty when not known: the pod's labels as "key=value" strings, its uid
   * and QoS class ("guaranteed", "burstable", "besteffort"; "" unknown),
   * and the rule that decided its kind/class (agent config; "" none). --- */
  struct agent_ctr_kube {
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
  } kube;

  /* --- sampler.c: the last sampling window --- */
  struct agent_ctr_sample {
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
    bool shared;   /* ran beside another container doing I/O at some point */
    /* The last class detected in this run that says something about the
     * workload (not idle, not unknown): what a finished run teaches.  The
     * current class may be "idle" at the end of a run (killed, exiting). */
    int run_cls; /* enum batch_class, -1 none */
    double run_confidence;
    void *sampler_state; /* the sampler's per-container state */
  } sample;

  /* --- protection.c: protected, its pace alone and against it
   * (agent/protect/protect.h) --- */
  struct agent_ctr_protect {
    double alone_bps; /* its rate in windows with no other I/O (running average) */
    double alone_var; /* ... and its running variance */
    double share;     /* rate / alone_bps in the last shared window, -1 unknown */
    /* The share of time some of its tasks stalled on I/O (io.pressure
     * "some") in the last window and in windows alone (running average);
     * < 0 unknown. */
    double stall, stall_alone;
  } protect;

  /* --- block I/O latency: measured by sampler.c, the objective set by
   * daemon.c's protection step (requests.c: a declared target) --- */
  struct agent_ctr_lat {
    /* The last window (agent/sample/latency.h), once valid: requests completed
     * and their p50 and p99 from the BPF histogram, or with approx from
     * io.pressure (agent/sample/sampler.c: requests counted by the sampler, p50 =
     * p99 = stall time per request) and stall (the window's stall share,
     * < 0 unknown). */
    bool valid, approx;
    uint64_t count, windows; /* windows: windows measured so far */
    double p50_us, p99_us, stall;
    /* Every window since it was registered, for the metrics. */
    struct agent_lathist_hist hist;
    /* Protected: its latency objective (agent/protect/protect.h), in its
     * signal's unit: the p99 in us, or with approx the stall share.
     * Declared (target_declared_us, io.iobatch.latency-target, trusted
     * namespaces only; 0 none) or learned from its quiet windows (learn;
     * learn_approx: it holds stall shares). */
    struct agent_protect_learn learn;
    bool learn_approx;
    double target_declared_us;
    bool target_ignored; /* declared untrusted: said once */
    double target;       /* in force; 0 none yet (protection by share) */
    /* The objective its workload's profile kept (agent/store/profiles.h), in
     * force until it learns its own; 0 none.  learned_saved: its own
     * learned one went into the profile. */
    double profile_target;
    bool profile_approx, learned_saved;
    int target_source; /* enum agent_lat_target_source */
  } lat;

  /* --- caps.c (agent/protect/caps.h): a batch container's cap --- */
  struct agent_ctr_caps {
    double bps;         /* the cap last written for it, 0 none */
    bool budget_logged; /* 'reached its budget' said once */
    void *state;        /* caps.c's (its throttle and CPU targets) */
  } caps;

  /* --- budget.c (agent/protect/budget.h): what protection added to a batch job
   * (agent/protect/protect.h, its protection debt) and its bound --- */
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

  /* --- weights.c: what was written (plan.weight is what is asked) --- */
  struct agent_ctr_weights {
    unsigned weight_written; /* what was last written (0: nothing yet) */
    bool weight_effective;   /* a mechanism (iocost/BFQ) enforces it */
    char weight_note[128];   /* why a weight is not effective, for Status */
  } weights;

  /* --- server.c and requests.c: its callers --- */
  struct agent_ctr_serve {
    void *waiter; /* server.c: the pending Admit call */
    /* server.c: the connection that registered or admitted it last
     * (ttrpc_call_conn_id, 0: none, e.g. found by the kubepods walk) and
     * its peer's pid, for the refusal's message. */
    uint64_t owner_conn;
    int owner_pid;
    /* requests.c: an ignored io.iobatch.kind (decl.kind_ignored) and an
     * ignored io.iobatch.max-hold-ms (decl.hold_ignored) said once. */
    bool kind_logged, hold_logged;
  } serve;
};

/* The class plans and protection go by (agent/ctr/ctr.c): the class, except that a hint
 * (an untrusted io.iobatch.class, AGENT_CLASS_HINT) counts only when it
 * is a writing class (seq-write, rand-write, mixed), which can only get
 * the container itself held or capped; a hint of idle, a reader or unknown
 * would let it skip a hold or a cap, and is planned as unknown (a probe,
 * measured within a sample or two). */
enum batch_class agent_ctr_plan_class(const struct agent_ctr *c);

/* The namespace a container's declarations and profiles belong to: its
 * pod's namespace when known, else its containerd namespace (agent/ctr/ctr.c). */
const char *agent_ctr_tenant(const struct agent_ctr *ctr);

/* The table of containers the admission state holds (struct agent_adm:
 * list, in registration order, n, next_handle; the parts walk adm->list
 * directly).  No I/O. */
struct agent_adm;
struct agent_ctr *agent_ctr_find(const struct agent_adm *adm, const char *ns, const char *id);
size_t agent_ctr_count(const struct agent_adm *adm, enum agent_state s);
/* A new container, not in the table yet: its handle and the values a
 * record starts with (class unknown, weight 100, shares and stalls
 * unknown), registered at NOW. */
struct agent_ctr *agent_ctr_new(struct agent_adm *adm, uint64_t now);
/* Put C at the end of the table / take it out (it stays allocated). */
void agent_ctr_append(struct agent_adm *adm, struct agent_ctr *c);
void agent_ctr_unlink(struct agent_adm *adm, struct agent_ctr *c);
void agent_ctr_free(struct agent_ctr *ctr);
/* Frees every container; their waiters must have been answered. */
void agent_ctr_free_all(struct agent_adm *adm);

#endif
