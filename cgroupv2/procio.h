// SPDX-License-Identifier: Apache-2.0
/* Fallback sampler for hosts whose io controller is not in cgroup v2 (v1 or
 * hybrid hierarchies, like Debian 12 hosts with the legacy layout): sums
 * /proc/PID/io over the pids of a cgroup.
 *
 * LOWER FIDELITY than io.stat, and callers must say so wherever they show it:
 *  - read_bytes is counted when a bio is submitted; write_bytes when a page is
 *    dirtied (buffered) or a direct write is issued, not when it reaches the
 *    device;
 *  - syscr/syscw count read/write *system calls*, not block requests: 4 KiB
 *    reads served from the page cache count, io_submit/io_uring do not;
 *  - counts of processes that already exited are gone, so the sum can go
 *    down (cg2_counters_delta reports that as a reset);
 *  - a pid that exits between cgroup.procs and /proc/PID/io is skipped. */
#ifndef IOB_CG2_PROCIO_H
#define IOB_CG2_PROCIO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"

struct cg2_procio {
  uint64_t rchar, wchar, syscr, syscw, read_bytes, write_bytes, cancelled_write_bytes;
};

/* Parse the text of one /proc/PID/io.  Every key above is required. */
int cg2_procio_parse(const char *buf, size_t len, struct cg2_procio *out, struct iob_error **err);

/* Read ROOT/proc/PID/io. */
int cg2_procio_read_pid(const char *root, pid_t pid, struct cg2_procio *out,
                        struct iob_error **err);

/* Sum ROOT/proc/PID/io over the pids in CGDIR/cgroup.procs (a v1 or v2
 * cgroup directory).  *npids gets how many pids were summed, *vanished how
 * many exited in between (both may be NULL). */
int cg2_procio_sample(const char *root, const char *cgdir, struct cg2_procio *out, size_t *npids,
                      size_t *vanished, struct iob_error **err);

#endif
