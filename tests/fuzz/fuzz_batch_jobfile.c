// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target: job files of `iobatchctl plan` (text and JSON). */
#include <stddef.h>
#include <stdint.h>

#include "batcher/jobfile.h"
#include "common/cleanup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct batch_jobfile j;
  cleanup_error struct iob_error *err = NULL;
  if (batch_jobfile_parse("fuzz.jobs", (const char *)data, size, &j, &err) == 0)
    batch_jobfile_release(&j);
  return 0;
}
