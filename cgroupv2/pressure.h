// SPDX-License-Identifier: Apache-2.0
/* io.pressure (PSI): share of wall time in which some / all non-idle tasks of
 * the cgroup were stalled on I/O. */
#ifndef IOB_CG2_PRESSURE_H
#define IOB_CG2_PRESSURE_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

struct cg2_psi {
  double avg10, avg60, avg300; /* percent, 0..100 */
  uint64_t total;              /* cumulative stall time, microseconds */
};

struct cg2_pressure {
  struct cg2_psi some, full;
  int has_full; /* kernels before 5.13 print no "full" line for the root cpu file */
};

/* Parse "some avg10=.. avg60=.. avg300=.. total=..\nfull ...".  "some" is
 * required; every key must appear once; averages must lie in [0, 100]. */
int cg2_pressure_parse(const char *buf, size_t len, struct cg2_pressure *out,
                       struct iob_error **err);
/* Read CGDIR/io.pressure. */
int cg2_pressure_read(const char *cgdir, struct cg2_pressure *out, struct iob_error **err);

#endif
