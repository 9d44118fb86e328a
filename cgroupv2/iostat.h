// SPDX-License-Identifier: Apache-2.0
/* io.stat: cumulative per-device block I/O counters of a cgroup v2 cgroup.
 * Counters include descendants, and a device without I/O has no line, so a
 * missing line reads as zeros. */
#ifndef IOB_CG2_IOSTAT_H
#define IOB_CG2_IOSTAT_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define CG2_IOSTAT_MAX_DEVS 4096 /* device lines accepted from one io.stat */
#define CG2_IOSTAT_LINE_MAX 4096 /* bytes in one io.stat line */

struct cg2_io_counters {
  uint64_t rbytes, wbytes, rios, wios, dbytes, dios;
};

struct cg2_iostat_dev {
  unsigned major, minor;
  struct cg2_io_counters c;
};

struct cg2_iostat {
  size_t n;
  struct cg2_iostat_dev *dev; /* sorted by (major, minor), no duplicates */
};

/* Parse the text of an io.stat file.  Unknown keys (iocost's cost.*,
 * io.latency's depth/avg_lat/...) are skipped; a base key given twice, a
 * device given twice, a number that does not fit in 64 bits or a token
 * without "=" is an error. */
int cg2_iostat_parse(const char *buf, size_t len, struct cg2_iostat *out, struct iob_error **err);
/* Read CGDIR/io.stat. */
int cg2_iostat_read(const char *cgdir, struct cg2_iostat *out, struct iob_error **err);
void cg2_iostat_release(struct cg2_iostat *s);

/* Counters of one device, NULL when it has no line (all zeros). */
const struct cg2_io_counters *cg2_iostat_find(const struct cg2_iostat *s, unsigned major,
                                              unsigned minor);
/* Sum over all devices. */
void cg2_iostat_sum(const struct cg2_iostat *s, struct cg2_io_counters *out);

/* cur - prev per key.  A key that went down means the counters restarted
 * (the cgroup or device was recreated, or, for the procfs fallback, a
 * process exited and took its counts along): the delta is then cur itself,
 * counted from the restart, and the function returns 1; otherwise 0. */
int cg2_counters_delta(const struct cg2_io_counters *prev, const struct cg2_io_counters *cur,
                       struct cg2_io_counters *out);

/* Per-device delta; devices only in cur count from zero, devices only in
 * prev count as a reset (their counters went to zero).  Returns the number
 * of devices with a reset. */
int cg2_iostat_delta(const struct cg2_iostat *prev, const struct cg2_iostat *cur,
                     struct cg2_iostat *out);

#endif
