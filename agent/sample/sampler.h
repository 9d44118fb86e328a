// SPDX-License-Identifier: Apache-2.0
/* The sampler of iobatchd: a sample of every registered container's
 * cgroup per period, rates from the last two, the class from a short
 * window of them (wcd), what the window teaches (the start path, pair
 * penalties, a protected container's share) and the cgroup's
 * disappearance as the container's end (a shim that died cannot tell us).
 *
 * It owns how it samples (the cgroup mounts, the source, the detector's
 * settings) and each container's sample ring (agent_ctr.sample.sampler_state).
 * What it needs of the rest is given at init (struct agent_sampler_env):
 * the admission state whose containers it samples, which takes measured
 * classes and start delays (agent_adm_measured, agent_adm_observe_start);
 * the store of measured penalties (agent_penalties_observe); and an ops
 * table for what its owner does: end a container, learn a profile. */
#ifndef IOB_AGENT_SAMPLER_H
#define IOB_AGENT_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/plan/admission.h"
#include "agent/config.h"
#include "agent/sample/latency.h"
#include "agent/plan/penalties.h"
#include "agent/store/profiles.h"
#include "cgroupv2/sample.h"
#include "common/error.h"
#include "wcd/wcd.h"

struct agent_sampler_ops {
  /* c's cgroup vanished or emptied: the owner ends c (and frees it). */
  void (*gone)(struct agent_ctr *c, const char *why, uint64_t now, void *user);
  /* A class measured for c's workload key (u->cls, u->confidence): the
   * owner's profile store learns it. */
  void (*learn)(const struct agent_ctr *c, const struct agent_profile_update *u, void *user);
};

/* What the sampler is given by its owner; all outlive it. */
struct agent_sampler_env {
  struct agent_adm *adm;       /* the containers (adm->list) and where measurements go */
  struct agent_penalties *pen; /* measured pair penalties go here */
  const struct agent_sampler_ops *ops;
  void *user;
};

/* How the daemon samples: io.stat in cgroup v2 when the io controller is
 * there; on hybrid/v1 hosts the v1 blkio statistics of a container's blkio
 * cgroup (with procfs for buffered writes), else /proc/PID/io over the
 * cgroup's pids. */
struct agent_sampler {
  char *cgroup_root; /* where registered cgroup paths are rooted */
  bool has_mount;    /* a cgroup2 mount was found */
  bool has_io;       /* its root offers the io controller */
  int source;        /* enum cg2_source; BLKIO_V1: per container, see sampler.c */
  char *blkio_mount; /* v1 blkio hierarchy counting statistics (hybrid hosts), or NULL */
  /* The v1 blkio mount, whatever it counts, where the BPF program finds the
   * cgroup of a container sampled with procfs (sampler.c, lat_key_dir):
   * looked up once (blkio_looked), NULL when there is none. */
  char *blkio_keys;
  bool blkio_looked;
  struct wcd_config wcd;
  /* The config's protect_detected and protect_signal (the owner updates
   * them, and wcd, on a reload). */
  bool protect_detected;
  int protect_signal;
  /* Per-container block I/O latency (latency_source, read at start). */
  struct agent_latency lat;
  /* sampler = bpf with the program loaded: bytes and requests come from
   * its map (CG2_SOURCE_BPF), no file is read; `source` stays the file
   * source that finds each container's cgroup directory. */
  bool bpf_counters;
  /* The cgroup2 root has the io and memory controllers: buffered
   * writeback is charged to the cgroup that dirtied the pages, so the
   * BPF map counts what io.stat does (bench/results/sampler-v2.md). */
  bool writeback_v2;
  char *name;     /* agent_sampler_name when sampler = auto said why, or NULL */
  uint64_t round; /* windows sampled (passes of agent_sampler_run) */
  /* Containers sampled, in those passes and at registration: each a read
   * of its cgroup's counter files (or of the BPF program's map). */
  uint64_t samples;
  /* io.pressure files read beside those samples (pressure_beside): the
   * system calls that grow with the containers found, told apart from
   * the samples so that a window's reads can be counted, not timed. */
  uint64_t pressure_reads;
  bool resumed; /* agent_sampler_idle was called since the last pass */
  /* Every container's windows since the agent started, the node's
   * counters in the metrics: a container that leaves takes nothing away. */
  struct agent_io_total node_io;
  uint64_t now_ns; /* CLOCK_MONOTONIC at the start of this window */
  struct agent_sampler_env env;
};

/* Add a window's increase d to t; nothing when reset (the counters went
 * down: a cgroup made anew, or procfs' sum losing an exited process, so
 * what they show now is not all new), so that t never goes down. */
void agent_sampler_io_total_add(struct agent_io_total *t, const struct cg2_io_counters *d,
                                bool reset);

int agent_sampler_init(struct agent_sampler *s, const struct agent_config *cfg,
                       const struct agent_sampler_env *env, struct iob_error **err);
/* A sampler that reads no cgroup (the headless daemon: tests, fuzzing):
 * the detector's defaults, and no container's cgroup is known. */
void agent_sampler_init_headless(struct agent_sampler *s, const struct agent_config *cfg,
                                 const struct agent_sampler_env *env);
void agent_sampler_release(struct agent_sampler *s);
const char *agent_sampler_name(const struct agent_sampler *s);
/* sampler = auto's choice: the BPF program's map (true) where the program
 * is loaded (lat_mode, enum agent_lathist_mode; lat_why: why it is not)
 * and sees every write of a container: buffered writeback is charged to
 * the writer's cgroup (writeback_v2: the cgroup2 root has io and memory),
 * or the program counts the pages its tasks dirty (dirty; dirty_why: why
 * it does not).  Never for fixture cgroups (cgroup_root set); else the
 * cgroup files.  *why (allocated) says why, for the log and status. */
bool agent_sampler_auto_bpf(bool writeback_v2, bool fixture, int lat_mode, const char *lat_why,
                            bool dirty, const char *dirty_why, char **why);
/* Sample every registered container once; classify the running ones;
 * end the vanished (ops->gone); account the window. */
void agent_sampler_run(struct agent_sampler *s);
/* A window with nothing registered: no pass.  The next pass looks for
 * disks attached meanwhile (v1 blkio) at once. */
void agent_sampler_idle(struct agent_sampler *s);
/* Start sampling a container that just registered (again: nothing): the
 * caller's own sample as the baseline (the hook takes one before the
 * workload runs; t_ns 0: none; source CG2_SOURCE_NONE: not said, an older
 * hook), else one taken now, also when the caller's counts another source
 * than the agent's. */
void agent_sampler_add(struct agent_sampler *s, struct agent_ctr *ctr,
                       const struct cg2_sample *base);
/* ctr leaves: the co-run it was in ends, and teaches what it measured
 * (its last window, in which it ended, left out). */
void agent_sampler_finish(struct agent_sampler *s, struct agent_ctr *ctr);
/* Drop what the sampler keeps for ctr (it leaves). */
void agent_sampler_forget(struct agent_ctr *ctr);
/* The container's cgroup directory, NULL when not known. */
const char *agent_sampler_cgdir(struct agent_sampler *s, struct agent_ctr *ctr);
/* Whether ctr's I/O stall is wanted in the next window (its io.pressure
 * read beside a sample that lacks it), not counting protection's and
 * latency_source = pressure's own reasons. */
bool agent_sampler_watches_stall(const struct agent_ctr *ctr);

#endif
