// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target: job files of `iobatchctl plan` (text and JSON). */
#include <stddef.h>
#include <stdint.h>

#include "batcher/jobfile.h"
#include "common/cleanup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct agent_plan_jobs j;
  cleanup_error struct iob_error *err = NULL;
  if (agent_plan_parse_jobs("fuzz.jobs", (const char *)data, size, &j, &err) == 0)
    agent_plan_jobs_release(&j);
  return 0;
}
