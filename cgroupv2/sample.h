/* One timestamped I/O sample of a cgroup, from the best source the host
 * has: io.stat (exact, block layer), the v1 blkio statistics with procfs
 * for buffered writes (hybrid/v1 hosts, see blkio.h), or the procfs
 * fallback (lower fidelity, see procio.h).  This is what the hook takes as a baseline and what the
 * workload character detector consumes. */
#ifndef IOB_CG2_SAMPLE_H
#define IOB_CG2_SAMPLE_H

#include <stdint.h>
#include <sys/types.h>

#include "cgroupv2/iostat.h"
#include "cgroupv2/pressure.h"
#include "common/error.h"

enum cg2_source {
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

/* Sample CGDIR with SOURCE.  ROOT prefixes /proc for the procfs source. */
int cg2_sample_take(const char *root, const char *cgdir, enum cg2_source source,
                    struct cg2_sample *out, struct iob_error **err);

/* "io.stat", "procfs" or "blkio-v1" */
const char *cg2_source_name(enum cg2_source source);

struct cg2_mount;

/* The source and directory to sample the container of PID with, the same
 * rule for the hook (its baseline) and the agent, so that both sample
 * alike.  Never a hierarchy's root, which holds the whole host:
 *  1. io.stat in PID's v2 cgroup, when M has the io controller and that
 *     cgroup is not "/";
 *  2. BLKIO_V1 in PID's v1 blkio cgroup, when a blkio hierarchy is mounted,
 *     that cgroup is not "/" and has the statistics files;
 *  3. procfs over PID's v2 cgroup when it is not "/", else over its v1
 *     pids, memory or blkio cgroup that is not "/".
 * NOT_FOUND when the container has no cgroup of its own.  *cgdir is
 * malloc'd (ROOT + mount + cgroup).  BLKIO_V1 counts only on disks where
 * blk-throttle is active (cg2_blkio_activate): ALLOW_BLKIO 0 skips step 2. */
int cg2_source_pick(const char *root, pid_t pid, const struct cg2_mount *m, int allow_blkio,
                    enum cg2_source *source, char **cgdir, struct iob_error **err);

#endif
