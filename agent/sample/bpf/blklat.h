// SPDX-License-Identifier: Apache-2.0
/* What agent/sample/bpf/blklat.bpf.c keeps per cgroup and the agent reads: the
 * value of its `lat` hash map, keyed by the cgroup id of the request's
 * blkcg (the cgroup directory's inode: the v1 blkio cgroup on a hybrid
 * host, the v2 cgroup on a unified one).  Shared by the BPF program and
 * agent/sample/latency.c, so plain fixed-size types only. */
#ifndef IOB_AGENT_BPF_BLKLAT_H
#define IOB_AGENT_BPF_BLKLAT_H

/* Issue-to-completion latency in microseconds, 4 buckets per power of
 * two (agent/sample/lathist.h has the bucket bounds): buckets 0-3 hold 0-3 us,
 * then 4 per octave; the last is everything from 2^24 + 3 2^22 us (29.4 s)
 * up. */
#define BLKLAT_SUB_BITS 2
#define BLKLAT_BUCKETS 96
/* Requests in flight that the program tracks at once (per request
 * pointer); one that finds the table full is not counted. */
#define BLKLAT_MAX_INFLIGHT 16384
/* Cgroups it keeps counters for.  It counts only cgroups that have an
 * entry, which the agent makes (zeroed) for each container it samples and
 * removes when the container leaves: the host's other cgroups cost the
 * agent nothing and cannot fill the map. */
#define BLKLAT_MAX_CGROUPS 8192
/* Directories whose removal the agent watches (`watch`, by inode, the
 * directory it samples each container's cgroup by), and removals not yet
 * read (`gone`): the sampler learns that a cgroup vanished without a
 * system call per container and window (agent/sample/sampler.c). */
#define BLKLAT_MAX_WATCH 8192
/* Removals kept until the agent reads them (each window); one beyond is
 * found by the sampler's periodic look at every directory instead. */
#define BLKLAT_MAX_GONE 1024

/* 64 bits either way; uint64_t in the agent (unsigned long on x86-64),
 * where the BPF program has no <stdint.h>. */
#ifdef __bpf__
typedef unsigned long long blklat_u64;
#else
#include <stdint.h>
typedef uint64_t blklat_u64;
#endif

struct blklat_val {
  blklat_u64 hist[BLKLAT_BUCKETS];
  blklat_u64 rbytes, wbytes, rios, wios;
  /* Where the block layer does not charge buffered writeback to the
   * writer (a v1 blkio hierarchy), the pages its tasks dirtied, counted
   * when they are dirtied (writeback_dirty_folio, where /proc/PID/io counts
   * write_bytes): bytes, and runs of contiguous pages in one file (what
   * writeback would merge into requests).  dirty_mapping and dirty_next
   * (the file and the page after the last run) are the program's own. */
  blklat_u64 dirtied, druns;
  blklat_u64 dirty_mapping, dirty_next;
};

#endif
