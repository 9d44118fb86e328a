/* One timestamped I/O sample of a cgroup, from the best source the host
 * has: io.stat (exact, block layer) or the procfs fallback (lower fidelity,
 * see procio.h).  This is what the hook takes as a baseline and what the
 * workload character detector consumes. */
#ifndef IOB_CG2_SAMPLE_H
#define IOB_CG2_SAMPLE_H

#include <stdint.h>

#include "cgroupv2/iostat.h"
#include "cgroupv2/pressure.h"
#include "common/error.h"

enum cg2_source {
  CG2_SOURCE_IOSTAT = 1, /* io.stat summed over devices */
  CG2_SOURCE_PROCIO = 2, /* /proc/PID/io summed over cgroup.procs: rios/wios are syscalls */
};

struct cg2_sample {
  uint64_t t_ns; /* CLOCK_MONOTONIC */
  enum cg2_source source;
  /* For CG2_SOURCE_PROCIO: rbytes/wbytes = read_bytes/write_bytes,
   * rios/wios = syscr/syscw, dbytes/dios = 0. */
  struct cg2_io_counters io;
  int has_pressure; /* io.pressure exists (v2 cgroups, also on hybrid hosts) */
  struct cg2_pressure pressure;
  uint64_t npids; /* pids summed (PROCIO only) */
  /* PROCIO only: bytes moved by read/write syscalls.  When the block bytes
   * exceed them, the syscall counts do not describe the requests (async
   * engines, mmap): see wcd_classify. */
  uint64_t rchar, wchar;
};

/* Sample CGDIR with SOURCE.  ROOT prefixes /proc for the procfs source. */
int cg2_sample_take(const char *root, const char *cgdir, enum cg2_source source,
                    struct cg2_sample *out, struct iob_error **err);

/* "io.stat" or "procfs" */
const char *cg2_source_name(enum cg2_source source);

#endif
