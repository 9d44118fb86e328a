// SPDX-License-Identifier: Apache-2.0
/* libFuzzer: freezer.state / cgroup.freeze parser. */
#include <stddef.h>
#include <stdint.h>

#include "cgroupv2/freeze.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  for (int mech = CG_FREEZE_NONE; mech <= CG_FREEZE_V2_FREEZE; mech++) {
    struct iob_error *err = NULL;
    bool frozen = false;
    if (cg_freeze_parse((enum cg_freeze_mech)mech, "f", (const char *)data, size, &frozen, &err) <
        0)
      iob_error_release(&err);
  }
  return 0;
}
