// SPDX-License-Identifier: Apache-2.0
/* One timestamped I/O sample of a cgroup, from the best source the host
 * has: io.stat (exact, block layer), the v1 blkio statistics with procfs
 * for buffered writes (hybrid/v1 hosts, see blkio.h), or the procfs
 * fallback (lower fidelity, see procio.h).  This is what the hook takes as a baseline and what the
 * workload character detector consumes. */
#ifndef IOB_CG2_SAMPLE_H
#define IOB_CG2_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroupv2/iostat.h"
#include "cgroupv2/pressure.h"
#include "common/error.h"

enum cg2_source {
  CG2_SOURCE_NONE = 0,   /* not said (an IOSample from an older hook), or: pick by the host */
  CG2_SOURCE_IOSTAT = 1, /* io.stat summed over devices */
  CG2_SOURCE_PROCIO = 2, /* /proc/PID/io summed over cgroup.procs: rios/wios are syscalls */
  /* A v1 blkio cgroup: blkio.throttle.io_service_bytes / io_serviced summed
   * over devices, and /proc/PID/io over its cgroup.procs for what v1 does not
   * charge to the container (buffered writeback):
   *   rbytes, rios, dbytes, dios  = blkio's Read and Discard;
   *   wbytes = max(blkio Write bytes, procfs write_bytes - cancelled_write_bytes)
   *   wios   = max(blkio Write ios, procfs syscw).
   * Each is a lower bound of what the container wrote: blkio sees its direct
   * writes and the writeback it issues itself (fsync), procfs its direct
   * writes and the pages it dirtied (at dirty time, not at the device; gone
   * with a process that exits unreaped).  Both count a direct write, so
   * taking the larger never counts it twice; the max of two growing
   * counters grows.  Reads are blkio's alone (exact). */
  CG2_SOURCE_BLKIO_V1 = 3,
  /* Block-layer counters of the agent's BPF program (agent/sample/latency.h: its
   * map, by the cgroup of each request's blkcg), filled by the agent
   * (sampler = bpf); nothing here reads them: cg2_sample_take refuses. */
  CG2_SOURCE_BPF = 4,
};

struct cg2_sample {
  uint64_t t_ns; /* CLOCK_MONOTONIC */
  enum cg2_source source;
  /* For CG2_SOURCE_PROCIO: rbytes/wbytes = read_bytes/write_bytes,
   * rios/wios = syscr/syscw, dbytes/dios = 0. */
  struct cg2_io_counters io;
  int has_pressure; /* io.pressure exists (v2 cgroups, also on hybrid hosts) */
  struct cg2_pressure pressure;
  uint64_t npids; /* pids summed (PROCIO and BLKIO_V1) */
  /* PROCIO only: bytes moved by read/write syscalls.  When the block bytes
   * exceed them, the syscall counts do not describe the requests (async
   * engines, mmap): see wcd_classify. */
  uint64_t rchar, wchar;
};

/* A sample source, as crun's libcrun_cgroup_manager is a cgroup manager:
 * what the rest of the code needs to know of one, and its reader.  Each
 * reader file has its own (iostat.c, procio.c, blkio.c). */
struct cg2_source_ops {
  enum cg2_source source;
  const char *name;    /* "io.stat", "procfs", "blkio-v1": logs, records, IOSample.source */
  bool lower_fidelity; /* say so wherever it is shown (procio.h) */
  bool counts_pids;    /* npids is known: an emptied cgroup is a container gone */
  /* It reads a v1 hierarchy's directory, where PSI never puts io.pressure:
   * cg2_sample_take does not look for it there (a failed open per
   * container and window otherwise). */
  bool v1_dir;
  /* Fill S->io (and npids, rchar, wchar) from CGDIR; ROOT prefixes /proc. */
  int (*read)(const char *root, const char *cgdir, struct cg2_sample *s, struct iob_error **err);
};

extern const struct cg2_source_ops cg2_source_iostat, cg2_source_procio, cg2_source_blkio_v1,
    cg2_source_bpf;

/* The ops of SOURCE, NULL for CG2_SOURCE_NONE and values that are none. */
const struct cg2_source_ops *cg2_source_ops(enum cg2_source source);

/* Sample CGDIR with SOURCE.  ROOT prefixes /proc for the procfs source. */
int cg2_sample_take(const char *root, const char *cgdir, enum cg2_source source,
                    struct cg2_sample *out, struct iob_error **err);

/* B - A: the counters (cg2_counters_delta: 1 when they restarted, else 0)
 * and the seconds between them (<= 0 when B is not later).  Samples of two
 * sources count different things (a procfs baseline against io.stat would
 * read as a burst or a reset), so that is an error, and the caller starts
 * its window anew. */
int cg2_sample_delta(const struct cg2_sample *a, const struct cg2_sample *b,
                     struct cg2_io_counters *d, double *seconds, struct iob_error **err);

/* "io.stat", "procfs" or "blkio-v1"; "unknown" otherwise. */
const char *cg2_source_name(enum cg2_source source);
/* The source of a name (cg2_source_name), or -1. */
int cg2_source_from_name(const char *name);

struct cg2_mount;

/* What the container to sample is known by, and what the caller samples
 * with (the hook: the host decides; the agent: its `sampler` choice). */
struct cg2_pick {
  const char *root;          /* prefixes /proc and v1 mount points (tests); NULL: none */
  const struct cg2_mount *m; /* where v2 cgroup paths live (the agent's cgroup_root)
                                and whether io.stat counts there; may be NULL */
  /* NONE or BLKIO_V1: by the host (below); IOSTAT or PROCIO: that one. */
  enum cg2_source source;
  pid_t pid;          /* 0: not known */
  const char *cgroup; /* the v2 cgroup registered for it (under M); NULL, "" or "/": none */
};

/* The source and directory to sample a container with: the one rule of the
 * hook (its baseline) and the agent, so that both sample alike.  Never a
 * hierarchy's root, which holds the whole host.
 * By the host, when the pid is known:
 *  1. io.stat in PID's v2 cgroup, when M has the io controller and that
 *     cgroup is not "/";
 *  2. BLKIO_V1 in PID's v1 blkio cgroup, when a blkio hierarchy is mounted,
 *     that cgroup is not "/" and has the statistics files;
 *  3. procfs over PID's v2 cgroup when it is not "/", else over its v1
 *     pids, memory or blkio cgroup that is not "/".
 * Otherwise the source given (by the host without a pid: io.stat where M
 * has io, else procfs) over the registered cgroup, else over PID's v2
 * cgroup; a container in the v2 root gets procfs over a v1 cgroup of its
 * own (3.), and no io.stat at all.
 * NOT_FOUND when the container has no cgroup of its own.  *cgdir is
 * malloc'd (ROOT + mount + cgroup).  BLKIO_V1 counts only on disks where
 * blk-throttle is active (cg2_blkio_activate). */
int cg2_source_pick(const struct cg2_pick *p, enum cg2_source *source, char **cgdir,
                    struct iob_error **err);

#endif
