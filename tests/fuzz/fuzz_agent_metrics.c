// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target: iobatchd's metrics endpoint request-head parser
 * (outside input: whatever connects to the socket or the loopback port),
 * fed whole and in two pieces as a slow client would send it, and the
 * address parser (the `metrics` config value). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/metrics_server.h"
#include "common/cleanup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct agent_http_request req;
  int status = 0;
  int r = agent_http_parse_request((const char *)data, size, &req, &status);
  if (r < 0 && status != 400 && status != 414 && status != 431 && status != 505)
    abort();
  if (r == 1 && strlen(req.path) >= AGENT_METRICS_PATH_MAX)
    abort();
  if (size > 0)
    (void)agent_http_parse_request((const char *)data, size / 2, &req, &status);
  if (size < 256) {
    char spec[256];
    memcpy(spec, data, size);
    spec[size] = '\0';
    struct agent_metrics_addr a;
    cleanup_error struct iob_error *err = NULL;
    (void)agent_metrics_addr_parse(spec, &a, &err);
  }
  return 0;
}
