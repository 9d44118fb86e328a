// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target: the agent's profile file (state on disk that a crash,
 * a full disk or a human can corrupt). */
#include <stddef.h>
#include <stdint.h>

#include "agent/store/profiles.h"
#include "common/cleanup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct agent_profiles p = {0};
  cleanup_error struct iob_error *err = NULL;
  (void)agent_profiles_parse(&p, "fuzz.json", (const char *)data, size, &err);
  agent_profiles_release(&p);
  return 0;
}
