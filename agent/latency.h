/* Where per-container block I/O latency comes from (config key
 * latency_source): the BPF program agent/bpf/blklat.bpf.c on the block
 * layer's issue and completion tracepoints, keyed by the request's
 * cgroup, or, where it cannot load, each container's io.pressure stall
 * time (approximate; agent/sampler.c).  This file loads the program and
 * reads its map; the arithmetic is in agent/lathist.c. */
#ifndef IOB_AGENT_LATENCY_H
#define IOB_AGENT_LATENCY_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/bpf/blklat.h"
#include "agent/lathist.h"
#include "common/error.h"

struct blklat; /* the bpftool skeleton */

struct agent_latency {
  int mode;  /* enum agent_lat_mode */
  char *why; /* why not BPF (mode other than BPF), or NULL */
  struct blklat *skel;
  int map_fd; /* the `lat` map, -1 without BPF */
};

/* Choose the source for pref (enum agent_lat_pref): load and attach the
 * program when pref allows it.  Fails only when pref is bpf and it
 * cannot load; otherwise l->why says why BPF is not used. */
int agent_latency_open(struct agent_latency *l, int pref, struct iob_error **err);
void agent_latency_close(struct agent_latency *l);
/* Read cgroup cgid's counters: 1 found, 0 none yet (*out zeroed), < 0 an
 * error. */
int agent_latency_read(const struct agent_latency *l, uint64_t cgid, struct blklat_val *out,
                       struct iob_error **err);
/* Drop cgid's counters (its container left). */
void agent_latency_forget(const struct agent_latency *l, uint64_t cgid);

#endif
