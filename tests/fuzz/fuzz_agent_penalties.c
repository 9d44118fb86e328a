// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target: the agent's measured-penalties file (state on disk
 * that a crash, a full disk or a human can corrupt). */
#include <stddef.h>
#include <stdint.h>

#include "agent/plan/penalties.h"
#include "common/cleanup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct agent_penalties p;
  cleanup_error struct iob_error *err = NULL;
  (void)agent_penalties_init(&p, NULL, &err);
  (void)agent_penalties_parse(&p, "fuzz.json", (const char *)data, size, &err);
  agent_penalties_release(&p);
  return 0;
}
