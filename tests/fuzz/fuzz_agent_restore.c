// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target: the agent's restore journal (state on disk that a
 * crash, a full disk or a human can corrupt, and from which root writes
 * cgroup files). */
#include <stddef.h>
#include <stdint.h>

#include "agent/store/restore.h"
#include "common/cleanup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct agent_restore r = {0};
  cleanup_error struct iob_error *err = NULL;
  (void)agent_restore_parse(&r, "fuzz.json", (const char *)data, size, &err);
  agent_restore_release(&r);
  return 0;
}
