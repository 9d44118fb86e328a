// SPDX-License-Identifier: Apache-2.0
/* iobatchd: the pieces of the daemon and how they meet on one event loop
 * (docs/ARCHITECTURE.md, "The agent's parts": who owns what, and the ops
 * each part calls back through).  Every file of agent/ but main.c:
 *
 *   server.c     ttrpc API (Register, Admit, Cancel, Exited, Status, Plan)
 *   plan_async.c the Plan RPC solved on a thread, answered from the loop
 *   requests.c   each request's decoded step
 *   admission.c  who waits and who runs; asks the batcher
 *   ctr.c        a container's tenant and plan class, read by every part
 *   pidwatch.c   a pidfd per registered pid: the container ends with it
 *   sampler.c    io.stat, v1 blkio, /proc/PID/io or the BPF map: deltas
 *                -> rates -> class
 *   latency.c    per-container block I/O latency (BPF or io.pressure);
 *                lathist.c its histograms' arithmetic
 *   weights.c    io.weight / io.bfq.weight where something enforces them;
 *                weighttree.c where they must be written
 *   protection.c protection: objectives, controller, the plan's hold, and
 *                its levers (caps.c, freeze.c, ioprio.c); protect.c its
 *                arithmetic, budget.c the batch's budget per container
 *   restore.c    the journal of what weights, caps, freezes and I/O
 *                priorities replaced, put back at exit or after a crash
 *   profiles.c   learned classes and solo durations by workload key
 *   learning.c   what runs and samples teach the profiles, what a profile
 *                says applied at registration, both stores saved
 *   penalties.c  slowdowns per class pair measured online
 *   statesave.c  profiles.json and penalties.json written off the loop
 *                (for learning.c)
 *   headroom.c   the node's measured I/O headroom each window
 *   kubepods.c   the containers under the kubelet's cgroup tree
 *   kube.c       what the kubelet's tree and the pods' metadata say,
 *                applied: found containers registered and removed, the
 *                pod rules applied at each change
 *   podmeta.c    pods' names, uids and labels from the node's CRI (cri/),
 *                polled on a thread
 *   podrules.c   pod_rule lines: parser and matcher
 *   metrics.c    the counters and the Prometheus text; metrics_server.c
 *                the endpoint
 *   config.c     iobatchd.conf, and the batcher settings it gives
 *   lock.c       one agent per state directory
 *   fdlimit.c    RLIMIT_NOFILE raised to fit at start, open fds counted
 *   daemon.c     the hub: setup, timers, signals, the configuration (one
 *                apply_config for start and reload), shutdown, and the
 *                ops the parts above call back through;
 *                no part calls into daemon.c (tests/cycles.sh) */
#ifndef IOB_AGENT_DAEMON_H
#define IOB_AGENT_DAEMON_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/plan/admission.h"
#include "agent/config.h"
#include "agent/sample/headroom.h"
#include "agent/kube/kube.h"
#include "agent/kube/kubepods.h"
#include "agent/plan/learning.h"
#include "agent/serve/metrics.h"
#include "agent/plan/penalties.h"
#include "agent/serve/pidwatch.h"
#include "agent/kube/podmeta.h"
#include "agent/store/profiles.h"
#include "agent/protect/protection.h"
#include "agent/store/restore.h"
#include "agent/sample/sampler.h"
#include "agent/serve/server.h"
#include "agent/weights/weights.h"
#include "batcher/batcher.h"
#include "common/error.h"
#include "common/loop.h"
#include "wcd/wcd.h"

struct ttrpc_call;
struct iob_timer;

#include "agent/serve/requests.h"
#include "client/api.h"
#include "iobatch/agent.pb-c.h"

struct agent_daemon {
  struct agent_config cfg;
  struct batch_config bcfg;
  char matrix_source[4200]; /* "defaults" or the matrix file's path */
  struct iob_loop *loop;
  struct agent_server server; /* agent/serve/server.h: given server_ops */
  struct agent_adm adm;
  struct agent_profiles profiles;
  struct agent_penalties penalties; /* measured online, STATE_DIR/penalties.json */
  /* Learning into profiles, applying them, saving both stores
   * (agent/plan/learning.h): given profiles, penalties and adm. */
  struct agent_learn learn;
  struct agent_sampler sampler; /* agent/sample/sampler.h: given adm, penalties and sampler_ops */
  struct agent_weights weights; /* agent/weights/weights.h: given sampler, restore and metrics */
  /* Values of the cgroup files weights.c and caps.c wrote, to put back
   * (journal STATE_DIR/restore.json; none when headless). */
  struct agent_restore restore;
  /* Protection and its levers (agent/protect/protection.h): given adm, restore,
   * profiles and protection_ops. */
  struct agent_protection protect;
  struct agent_pidwatch pidwatch; /* agent/serve/pidwatch.h: given the loop and pidwatch_ops */
  struct iob_timer *plan_timer;
  uint64_t plan_timer_at;
  struct iob_timer *sample_timer;
  struct agent_options opts; /* to read the configuration again on SIGHUP */
  int sigfd;
  bool stopping;
  int exit_signal;
  char *live_mark;                /* "<socket>.live" while we run, or stopped leaving containers */
  struct agent_metrics metrics;   /* counters for the metrics endpoint */
  struct agent_headroom headroom; /* the node's I/O headroom, each sampling window */
  struct agent_metrics_server *metrics_server; /* NULL: config key 'metrics' not set */
  /* Containers under the kubelet's cgroup tree (kubepods = auto), found
   * each sampling window it is due (agent/kube/kubepods.h). */
  struct agent_kubepods kubepods;
  bool kubepods_on;
  /* What the kubelet's tree and the pods' metadata say, applied to the
   * containers (agent/kube/kube.h): given adm, the pod rules, protect, sampler,
   * metrics and kube_ops. */
  struct agent_kube kube;
  bool headless; /* agent_daemon_init_headless: state not saved */
  /* STATE_DIR/iobatchd.lock (agent/store/lock.h), held while we run; -1: not
   * held (headless, or another agent has it: nothing is saved then). */
  int lock_fd;
  /* Pods' names, uids and labels from the node's CRI (agent/kube/podmeta.h). */
  struct agent_podmeta podmeta;
  /* What the request steps read and call (agent/serve/requests.h): pointers
   * into the above, and api_ops. */
  struct agent_api api;
  /* Idle windows (no container: daemon.c, idle_window): the first after
   * a full one was taken, and the seconds of those since. */
  bool idle_settled;
  double idle_s;
};

int agent_daemon_init(struct agent_daemon *d, const struct agent_config *cfg,
                      const struct agent_options *opts, struct iob_error **err);
/* The daemon's state without a loop, sockets, signals or a sampler (no
 * cgroup is read): admission, the matrix, profiles and penalties in
 * cfg->state_dir.  For tests and fuzzing (agent/serve/requests.h); time passes
 * only through agent_adm_tick(&d->adm, now, ...), called by the caller. */
int agent_daemon_init_headless(struct agent_daemon *d, const struct agent_config *cfg,
                               struct iob_error **err);
/* Serve until SIGTERM/SIGINT; the socket is unlinked on the way out. */
int agent_daemon_run(struct agent_daemon *d, struct iob_error **err);
void agent_daemon_release(struct agent_daemon *d);
/* SIGHUP's work: read the configuration again (d->opts) and apply it as
 * at start; what takes a restart stays, with a warning.  On error nothing
 * changed. */
int agent_daemon_reload(struct agent_daemon *d, struct iob_error **err);

/* After anything that may change the plan: run due plans, write weights,
 * re-arm the plan timer. */
void agent_daemon_changed(struct agent_daemon *d);
/* A container leaves (exited, cancelled, caller gone, cgroup vanished):
 * learn from its run, answer its waiter with `why`, free it. */
void agent_daemon_remove(struct agent_daemon *d, struct agent_ctr *ctr, const char *why,
                         uint64_t now);

#endif
