// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target: iobatchd's config parser (outside input: a file an
 * administrator writes, possibly by a tool). */
#include <stddef.h>
#include <stdint.h>

#include "agent/config.h"
#include "common/cleanup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct agent_config c;
  agent_config_default(&c);
  cleanup_error struct iob_error *err = NULL;
  (void)agent_config_parse(&c, "fuzz.conf", (const char *)data, size, &err);
  agent_config_release(&c);
  return 0;
}
