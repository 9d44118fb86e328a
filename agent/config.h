// SPDX-License-Identifier: Apache-2.0
/* iobatchd's configuration file (default /etc/iobatch/iobatchd.conf).
 *
 * One `key = value` per line; '#' starts a comment; blank lines are ignored.
 * Durations take a unit (ms, s, m; a bare number is milliseconds).
 *
 *   socket           = /run/iobatch/iobatchd.sock
 *   state_dir        = /var/lib/iobatch        learned profiles live here
 *   sample_period    = 1s                      io.stat sampling period
 *   batch_window     = 200ms                   arrivals gathered before planning
 *   max_concurrency  = 4                       L (batcher's max_batch)
 *   max_hold         = 5m                      default deadline of a pending container
 *   policy           = predictive | paper
 *   alpha            = 0.5                     weight of Tp in the paper's objective
 *   fairness         = 4                       stretch bound (predictive policy:
 *                                               turnaround / solo of any job)
 *   matrix           = /etc/iobatch/matrix.conf  batcher config / penalty matrix file
 *   detector         = /etc/iobatch/wcd.conf     detector thresholds (wcd_config_parse)
 *   cgroup_root      = /sys/fs/cgroup           where registered cgroup paths live
 *                                               (default: the cgroup2 mount)
 *   sampler          = auto | io.stat | procfs | bpf  what each sample reads: auto = bpf
 *                                               where the cgroup2 root has the io and
 *                                               memory controllers (writeback charged
 *                                               to the writer's cgroup) and the BPF
 *                                               program is loaded, else io.stat where
 *                                               it has io (saying why not bpf), else
 *                                               v1 blkio or /proc/PID/io of the
 *                                               cgroup's processes; io.stat forces it
 *                                               (a cgroup without io.stat then
 *                                               cannot be sampled: fixtures, tests);
 *                                               procfs forces the fallback; bpf
 *                                               takes bytes and requests from the BPF
 *                                               latency program's map, reading no
 *                                               file (auto's choice when it is not
 *                                               loaded).  Read at start (SIGHUP
 *                                               keeps the running one)
 *   latency_source   = auto | bpf | pressure | off  where each container's block
 *                                               I/O latency per window comes from
 *                                               (agent/sample/latency.h): auto = the BPF
 *                                               program on the block tracepoints
 *                                               where it loads, else io.pressure
 *                                               stall time (approximate; one log
 *                                               line says why); bpf: BPF or the
 *                                               agent does not start.  Read at start
 *   metrics          = unix:/run/iobatch/metrics.sock | 127.0.0.1:PORT |
 *                      [::1]:PORT | localhost:PORT  Prometheus text endpoint
 *                                               (agent/serve/metrics.h); absent: off
 *   metrics_group    = GID                     a numeric group that may scrape the
 *                                               unix metrics socket: the socket is
 *                                               made 0660 and its directory 0750,
 *                                               both of group GID; that directory
 *                                               must not be the API socket's
 *                                               (agent/serve/metrics_server.h).  Absent:
 *                                               0600 / 0700, root only
 *   protect          = declared | detected     which latency-sensitive containers
 *                                               batch containers yield to: those
 *                                               declared io.iobatch.class=latency, or
 *                                               also those the detector finds
 *   protect_share    = 0.85                    a protected container's target: this
 *                                               share of its rate alone
 *   protect_signal   = auto | rate | pressure  how its share is measured: its I/O
 *                                               rate against its rate alone, or its
 *                                               io.pressure (the time none of its
 *                                               tasks stalled on I/O against that
 *                                               alone); auto: pressure where its
 *                                               cgroup2 directory has io.pressure
 *   protect_scope    = writers | all           batch containers capped and held
 *                                               while protecting: those that write
 *                                               or may write, or all of them
 *   protect_cap_start = 64M                    first cap per batch container (bytes/s)
 *   protect_cap_floor = 16M                    lowest cap
 *   protect_raise    = 1.25                    cap x this per window with slack
 *   protect_cut      = 0.5                     cap x this per window short of target
 *   protect_objective = auto | declared | off  latency objectives: declared, else
 *                                               learned; declared only; none
 *                                               (protection by share alone)
 *   protect_batch_budget = 1.5                 protection may add (this - 1) x a
 *                                               batch job's expected runtime to its
 *                                               run: time held by protection, frozen,
 *                                               and lost under a cap (agent/protect/protect.h,
 *                                               its protection debt); past that it
 *                                               runs free for good (0: no bound)
 *   protect_unknown_delay = 60s                the most protection may add to a job
 *                                               whose runtime is unknown (no profile,
 *                                               no typical runtime of its class); less
 *                                               while it has run free less: (budget -
 *                                               1) x that (PROTECT_UNKNOWN_DELAY_S)
 *   protect_hold     = floor | short           hold new batch containers only while
 *                                               a victim is short with the cap at its
 *                                               floor (the last resort), or whenever
 *                                               a victim is short
 *   protect_gap      = 2s                      batch containers start this far apart
 *                                               while protecting (default: two
 *                                               sample periods; 0: no spacing)
 *   protect_freeze   = auto | true | false     the concurrency lever: while a
 *                                               protected container misses its
 *                                               objective with the cap at its floor,
 *                                               freeze all but K batch containers
 *                                               (agent/protect/protect.h, agent/protect/freeze.c);
 *                                               auto: only with cgroup v2's freezer
 *                                               (a task frozen by v1's freezer.state
 *                                               cannot die, so a kill would wait)
 *   protect_freeze_after = 3                   windows missed at the floor before
 *                                               each step down of K
 *   protect_evidence = true | false            keep the levers only while the
 *                                               protected container's windows show
 *                                               they help: fewer missed windows per
 *                                               byte of batch I/O pulled than free
 *                                               (agent/protect/protect.h); else release them
 *                                               all for a while
 *   protect_ioprio   = idle | be7 | off        the first lever: while a protected
 *                                               container misses or nears its
 *                                               objective, the I/O priority class of
 *                                               every task of the batch containers
 *                                               protection limits (agent/protect/ioprio.h),
 *                                               on disks under mq-deadline or bfq;
 *                                               the old class put back after
 *   protect_cpu      = true | false            while protecting, batch containers
 *                                               run at the least CPU weight
 *                                               (cpu.weight 1 / cpu.shares 2), put
 *                                               back when no victim runs
 *   trust_declared   = all | none | NS[,NS...]  whose io.iobatch.class and .kind are
 *                                               taken as said: a container's namespace
 *                                               is its pod's (io.kubernetes.pod.namespace),
 *                                               else its containerd namespace.  An
 *                                               untrusted class is a hint until the
 *                                               detector has measured the container
 *                                               (agent/plan/admission.h, agent_adm_declare);
 *                                               an untrusted kind service or sandbox is
 *                                               ignored: a job (agent_ctr_set_kind)
 *   profiles_per_namespace = 512               learned profiles kept per namespace (1 to
 *                                               4096): a namespace whose workload keys
 *                                               change every run evicts only its own
 *                                               oldest (agent/store/profiles.h)
 *   kubepods         = auto | off             discover and sample every container under
 *                                               the kubelet's cgroup tree (kubepods/ or
 *                                               kubepods.slice/, agent/kube/kubepods.h); auto:
 *                                               when the tree exists.  They are capped and
 *                                               weighted, never held
 *   kubepods_root    = /                       the kubelet's --cgroup-root (the cgroup
 *                                               the kubepods tree is under)
 *   pod_rule         = NAME: [namespace=NS] [qos=QOS] [label:K=V...] -> [kind=K]
 *                      [class=C] [latency-target=D]   repeatable; first match decides
 *                                               (agent/kube/podrules.h; a rule by label
 *                                               protects only in trusted namespaces)
 *   cri_endpoint     = auto | off | unix:///PATH  the node's CRI (agent/kube/podmeta.h),
 *                                               for pods' names, uids and labels:
 *                                               auto = the first of
 *                                               /run/containerd/containerd.sock and
 *                                               /run/crio/crio.sock that answers the
 *                                               CRI (none: nothing, quietly)
 *   cri_poll         = 10s                     how often the CRI is listed
 *   cri_timeout      = 2s                      bound on each CRI call
 *   debug            = false
 *
 * Keys given here win over the same settings in the matrix file, which is
 * parsed by the batcher (batch_config_parse).  A key given twice is an
 * error: two values for one setting are a mistake, not a wish. */
#ifndef IOB_AGENT_CONFIG_H
#define IOB_AGENT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/kube/podrules.h"
#include "client/api.h" /* AGENT_DEFAULT_SOCKET */
#include "common/error.h"

#define AGENT_CONFIG_MAX_BYTES (64 * 1024)
#define AGENT_CONFIG_MAX_LINE 1024

#define AGENT_DEFAULT_CONFIG "/etc/iobatch/iobatchd.conf"
#define AGENT_DEFAULT_STATE_DIR "/var/lib/iobatch"

enum agent_sampler_pref {
  AGENT_SAMPLER_AUTO = 0,
  AGENT_SAMPLER_IOSTAT,
  AGENT_SAMPLER_PROCFS,
  AGENT_SAMPLER_BPF, /* the latency program's byte and request counts (agent/sample/latency.h) */
};
/* "auto", "io.stat", "procfs"; "invalid" otherwise. */
const char *agent_config_sampler_pref_name(int pref);

/* protect_freeze = auto: on where containers sit under cgroup v2's freezer. */
#define AGENT_FREEZE_AUTO (-1)

struct agent_config {
  char *socket_path;
  char *state_dir;
  char *matrix_file;      /* NULL: the batcher's built-in matrix */
  char *cgroup_root;      /* NULL: the cgroup2 mount found at start */
  char *detector_file;    /* NULL: the detector's default thresholds */
  char *metrics;          /* NULL: no metrics endpoint (agent_metrics_server_addr_parse) */
  unsigned metrics_group; /* gid that may read the metrics socket; 0: none (root only) */
  uint64_t sample_period_ms;
  uint64_t batch_window_ms;
  uint64_t max_hold_ms;
  /* Batcher settings; "not set" (0 or < 0) keeps the matrix file's value
   * or the batcher's default. */
  unsigned max_concurrency;
  int policy;            /* enum batch_policy (batcher/batcher.h); < 0: not set */
  double alpha;          /* < 0: not set */
  double fairness;       /* < 0: not set */
  int sampler;           /* enum agent_sampler_pref */
  int latency_source;    /* enum agent_lathist_pref (agent/sample/lathist.h) */
  bool protect_detected; /* protect = detected */
  double protect_share;  /* a protected container's target share of its rate alone */
  int protect_signal;    /* enum agent_protect_signal (agent/protect/protect.h) */
  int protect_scope;     /* enum agent_protect_scope (agent/protect/protect.h) */
  uint64_t protect_cap_start, protect_cap_floor; /* bytes/s */
  double protect_raise, protect_cut;
  double protect_batch_budget;       /* x its expected runtime; 0: none */
  uint64_t protect_unknown_delay_ms; /* the bound of a job of unknown runtime */
  int protect_objective;             /* enum agent_protect_objective (agent/protect/protect.h) */
  bool protect_hold_at_floor;        /* protect_hold = floor */
  uint64_t protect_gap_ms;           /* UINT64_MAX: two sample periods */
  bool protect_cpu;                  /* batch containers at the least CPU weight while protecting */
  bool protect_evidence;         /* levers that do not help are let go (agent/protect/protect.h) */
  int protect_ioprio;            /* enum agent_ioprio_mode (agent/protect/ioprio.h) */
  int protect_freeze;            /* the concurrency lever: AGENT_FREEZE_AUTO, 0 off, 1 on */
  unsigned protect_freeze_after; /* windows missed at the cap floor per step */
  /* trust_declared: NULL = all (the default), "" = none, else the
   * namespaces as ",ns1,ns2," (agent_config_trusts). */
  char *trust_declared;
  bool trust_declared_set;         /* the key was in a file: no notice at start */
  unsigned profiles_per_namespace; /* agent_profiles.per_ns_max */
  /* kubepods = auto | off: discover the containers under the kubelet's
   * cgroup tree (agent/kube/kubepods.h); kubepods_root: the kubelet's
   * --cgroup-root under which kubepods/ or kubepods.slice/ is (NULL: "/"). */
  bool kubepods_off;
  char *kubepods_root;
  /* pod_rule lines, in order (agent/kube/podrules.h). */
  struct agent_pod_rules {
    struct agent_pod_rule *v;
    size_t n;
  } pod_rules;
  /* cri_endpoint: NULL = auto (the default), "" = off, else the socket's
   * path; cri_poll and cri_timeout in ms (agent/kube/podmeta.h). */
  char *cri_endpoint;
  uint64_t cri_poll_ms, cri_timeout_ms;
  bool debug;
};

void agent_config_default(struct agent_config *cfg);
void agent_config_release(struct agent_config *cfg);
/* *dst = a deep copy of *src (its strings and pod rules its own). */
void agent_config_copy(struct agent_config *dst, const struct agent_config *src);
/* What cannot change at runtime, kept in NEXT from the running RUN with a
 * warning for each that differs (a reload, agent_daemon_reload): the
 * socket and the state directory (moving them under running shims would
 * strand them), the kubelet's tree, and what the sampler chose at start. */
void agent_config_keep_restart_only(struct agent_config *next, const struct agent_config *run);

/* Parse the contents of a config file over *cfg (name is for messages:
 * "'iobatchd.conf' line 3: unknown key 'foo'").  On error *cfg is
 * untouched. */
int agent_config_parse(struct agent_config *cfg, const char *name, const char *buf, size_t len,
                       struct iob_error **err);

/* Read and parse PATH.  A missing file is an error only when must_exist. */
int agent_config_load(struct agent_config *cfg, const char *path, bool must_exist,
                      struct iob_error **err);

/* Where the configuration comes from: a file (which must exist when named
 * on the command line; the default one may be missing) and command-line
 * overrides.  Kept by the daemon so that SIGHUP can read it again. */
struct agent_options {
  const char *config_path; /* NULL: AGENT_DEFAULT_CONFIG, may be missing */
  const char *socket_path; /* overrides, NULL: none */
  const char *state_dir;
  bool debug;
};

/* Defaults, then the file, then the overrides. */
int agent_config_from_options(struct agent_config *cfg, const struct agent_options *o,
                              struct iob_error **err);

/* The batcher settings CFG gives: the built-in defaults, then the matrix
 * file (a batcher config), then what CFG says explicitly.  SOURCE
 * (SOURCE_LEN bytes): "defaults" or the matrix file's path. */
struct batch_config;
int agent_config_batch(const struct agent_config *cfg, struct batch_config *b, char *source,
                       size_t source_len, struct iob_error **err);

/* The warning iobatchd logs at start when no file set trust_declared (an
 * upgrade that kept an older, edited iobatchd.conf runs trusting every
 * namespace): NULL when one did. */
const char *agent_config_trust_notice(const struct agent_config *cfg);
/* Whether a class or kind declared by a container of namespace NS (its
 * pod's namespace, else its containerd namespace) is trusted. */
bool agent_config_trusts(const struct agent_config *cfg, const char *ns);

/* "1500ms", "2s", "5m", "300" (ms) -> milliseconds.  Returns < 0 on a bad
 * value. */
int agent_config_parse_duration(const char *s, uint64_t *ms);

#endif
