// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target: the batcher's config parser (penalty matrix and policy
 * settings; outside input written by an administrator or by calibrate).
 * Beyond not crashing, a config that parses must be one the solver and the
 * planner accept: every value finite and in range. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "batcher/batcher.h"
#include "common/cleanup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct batch_config c;
  batch_config_default(&c);
  cleanup_error struct iob_error *err = NULL;
  if (batch_config_parse(&c, "fuzz.conf", (const char *)data, size, &err) < 0) {
    if (err == NULL || err->msg == NULL)
      abort(); /* a failure must say why */
    return 0;
  }
  for (int i = 0; i < BATCH_NCLASS; i++)
    for (int j = 0; j < BATCH_NCLASS; j++)
      if (!(c.s[i][j] >= 0 && c.s[i][j] <= BATCH_PENALTY_MAX))
        abort();
  if (!(c.alpha >= 0 && c.alpha <= 1) || c.max_batch < 1 || c.max_batch > BATCH_MAX_BATCH ||
      c.ncpu < 1 || !isfinite(c.fairness) || !isfinite(c.exact_limit))
    abort();
  /* and a small instance solves under it */
  enum batch_class cls[6] = {BATCH_SEQ_READ, BATCH_RAND_WRITE, BATCH_MIXED,
                             BATCH_UNKNOWN,  BATCH_SEQ_WRITE,  BATCH_IDLE};
  struct batch_solution s;
  if (batch_solve(&c, cls, 6, BATCH_SOLVE_AUTO, &s, &err) < 0)
    abort();
  batch_solution_free(&s);
  return 0;
}
