// SPDX-License-Identifier: Apache-2.0
/* libFuzzer: io.pressure parser. */
#include <stddef.h>
#include <stdint.h>

#include "cgroupv2/pressure.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct iob_error *err = NULL;
  struct cg2_pressure p;
  if (cg2_pressure_parse((const char *)data, size, &p, &err) < 0) {
    iob_error_release(&err);
    return 0;
  }
  if (!(p.some.avg10 >= 0 && p.some.avg10 <= 100 && p.some.avg300 <= 100))
    __builtin_trap();
  return 0;
}
