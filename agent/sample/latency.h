// SPDX-License-Identifier: Apache-2.0
/* Where per-container block I/O latency comes from (config key
 * latency_source): the BPF program agent/sample/bpf/blklat.bpf.c on the block
 * layer's issue and completion tracepoints, keyed by the request's
 * cgroup, or, where it cannot load, each container's io.pressure stall
 * time (approximate; agent/sample/sampler.c).  This file loads the program and
 * reads its map; the arithmetic is in agent/sample/lathist.c. */
#ifndef IOB_AGENT_LATENCY_H
#define IOB_AGENT_LATENCY_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/sample/bpf/blklat.h"
#include "agent/sample/lathist.h"
#include "common/error.h"

struct blklat; /* the bpftool skeleton */

struct agent_latency {
  int mode;  /* enum agent_lathist_mode */
  char *why; /* why not BPF (mode other than BPF), or NULL */
  struct blklat *skel;
  /* The program counts the pages each cgroup's tasks dirty (blklat_val's
   * dirtied, druns); dirty_why: asked for and not loaded, why. */
  bool dirty;
  char *dirty_why;
  int map_fd;                     /* the `lat` map, -1 without BPF */
  int watch_fd, gone_fd;          /* the `watch` and `gone` maps, -1 without BPF */
  struct agent_lathist_snap snap; /* the `lat` map at the last agent_latency_snapshot */
  bool no_batch;                  /* the kernel has no batched map reads: one lookup per cgroup */
  uint64_t *gone_ids;             /* agent_latency_gone's result (kept between windows) */
  size_t gone_cap;
};

/* Choose the source for pref (enum agent_lathist_pref): load and attach the
 * program when pref allows it, with its dirty-page counter when dirty
 * (l->dirty says whether it runs).  Fails only when pref is bpf and it
 * cannot load; otherwise l->why says why BPF is not used. */
int agent_latency_open(struct agent_latency *l, int pref, bool dirty, struct iob_error **err);
void agent_latency_close(struct agent_latency *l);
/* Read the whole `lat` map with batched lookups (a few system calls
 * whatever the number of cgroups), for agent_latency_read until the next
 * call.  Without batched lookups (kernels before 5.6) nothing is read and
 * agent_latency_read looks each cgroup up. */
int agent_latency_snapshot(struct agent_latency *l, struct iob_error **err);
/* Forget the snapshot: agent_latency_read looks up the map again. */
void agent_latency_snapshot_drop(struct agent_latency *l);
/* Read cgroup cgid's counters: 1 found, 0 none yet (*out zeroed; the
 * program counts only cgroups with an entry, so one is made), < 0 an
 * error. */
int agent_latency_read(struct agent_latency *l, uint64_t cgid, struct blklat_val *out,
                       struct iob_error **err);
/* Drop cgid's counters (its container left). */
void agent_latency_forget(const struct agent_latency *l, uint64_t cgid);
/* Watch the removal of the directory of inode ino (a cgroup), or stop. */
int agent_latency_watch(const struct agent_latency *l, uint64_t ino, struct iob_error **err);
void agent_latency_unwatch(const struct agent_latency *l, uint64_t ino);
/* The watched cgroup directories removed since the last call (the
 * program's `gone` map, emptied): *ids (owned by l, valid until the next
 * call) and *n. */
int agent_latency_gone(struct agent_latency *l, const uint64_t **ids, size_t *n,
                       struct iob_error **err);

#endif
