// SPDX-License-Identifier: Apache-2.0
/* libFuzzer: io.stat parser, then sum and delta against itself. */
#include <stddef.h>
#include <stdint.h>

#include "cgroupv2/iostat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct iob_error *err = NULL;
  struct cg2_iostat s, d;
  if (cg2_iostat_parse((const char *)data, size, &s, &err) < 0) {
    iob_error_release(&err);
    return 0;
  }
  struct cg2_io_counters sum;
  cg2_iostat_sum(&s, &sum);
  for (size_t i = 0; i < s.n; i++)
    if (cg2_iostat_find(&s, s.dev[i].major, s.dev[i].minor) == NULL)
      __builtin_trap();
  struct cg2_iostat empty = {0};
  if (cg2_iostat_delta(&s, &s, &d) != 0) /* nothing changed: no reset */
    __builtin_trap();
  cg2_iostat_release(&d);
  if (cg2_iostat_delta(&empty, &s, &d) != 0) /* devices only in cur: no reset */
    __builtin_trap();
  cg2_iostat_release(&d);
  cg2_iostat_release(&s);
  return 0;
}
