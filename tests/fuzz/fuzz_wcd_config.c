// SPDX-License-Identifier: Apache-2.0
/* libFuzzer: the detector's thresholds config file. */
#include <stddef.h>
#include <stdint.h>

#include "wcd/wcd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct iob_error *err = NULL;
  struct wcd_config c;
  wcd_config_default(&c);
  if (wcd_config_parse((const char *)data, size, "fuzz.conf", &c, &err) < 0) {
    iob_error_release(&err);
    return 0;
  }
  if (c.rand_max_bytes >= c.seq_min_bytes || c.dir_share <= 0.5 || c.dir_share > 1)
    __builtin_trap();
  return 0;
}
