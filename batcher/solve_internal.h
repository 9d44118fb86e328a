// SPDX-License-Identifier: Apache-2.0
/* Shared between the offline solver and the online `paper` policy. */
#ifndef IOB_BATCHER_SOLVE_INTERNAL_H
#define IOB_BATCHER_SOLVE_INTERNAL_H

#include "batcher/batcher.h"

/* The objective reduced to per-batch costs: each non-empty batch costs
 * a * Tp(batch) + w, plus a constant -w * Nz_min. */
struct batch_norm {
  double p[BATCH_NCLASS][BATCH_NCLASS]; /* pair cost s[i][j] + s[j][i] */
  double a, w;                          /* alpha/Tp_max, (1-alpha)/(N-Nz_min) */
  double tp_max;
  unsigned nz_min, L;
  size_t n;
};

void batch_norm_init(struct batch_norm *nm, const struct batch_config *cfg,
                     const size_t count[BATCH_NCLASS]);

/* Tp of one batch given by class counts. */
double batch_tp_counts(const struct batch_norm *nm, const unsigned x[BATCH_NCLASS]);

/* A partition as class-count vectors, one per batch (batch 0 first). */
struct batch_counts {
  unsigned nb;
  unsigned (*b)[BATCH_NCLASS];
};

/* Partition `count`, with batch 0 holding at least `fixed0` (those may not
 * leave it) and at most cap0 jobs; the other batches hold at most L.
 * fixed0 NULL: no pinned batch.  exact: the count-vector DP (returns -1 with
 * *err when beyond the state limit) or the heuristic.  *optimal is set when
 * the result is proven. */
int batch_partition_counts(const struct batch_norm *nm, const size_t count[BATCH_NCLASS],
                           const unsigned fixed0[BATCH_NCLASS], unsigned cap0, bool exact,
                           struct batch_counts *out, struct iob_error **err);

/* The exact solver's work estimate for these counts (HUGE_VAL when over
 * BATCH_EXACT_MAX_STATES). */
double batch_work_counts(unsigned L, const size_t count[BATCH_NCLASS]);

#endif
