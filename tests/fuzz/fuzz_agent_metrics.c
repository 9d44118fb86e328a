// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target: iobatchd's metrics endpoint request-head parser
 * (outside input: whatever connects to the socket or the loopback port),
 * fed whole and in two pieces as a slow client would send it, and the
 * address parser (the `metrics` config value); and the exposition of a
 * container whose names (tenant strings: any bytes) are the input, which
 * must read as the text format (tests/fuzz/expo_check.h). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/plan/admission.h"
#include "agent/serve/metrics.h"
#include "agent/serve/metrics_server.h"
#include "common/cleanup.h"
#include "tests/fuzz/expo_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The input cut at NULs into a container's names; rendered, read back. */
static void render_names(const uint8_t *data, size_t size) {
  cleanup_free char *copy = malloc(size + 1);
  if (copy == NULL)
    return;
  memcpy(copy, data, size);
  copy[size] = '\0';
  char *f[6] = {"", "", "", "", "", ""};
  char *p = copy;
  for (size_t i = 0; i < 6 && p <= copy + size; i++) {
    f[i] = p;
    p += strlen(p) + 1;
  }
  struct agent_ctr c = {.ns = f[0],
                        .id = f[1],
                        .kube.pod_namespace = f[2],
                        .kube.pod_name = f[3],
                        .kube.container_name = f[4],
                        .state = AGENT_RUNNING,
                        .plan.protect = true,
                        .lat.valid = true,
                        .lat.target = 1000,
                        .caps.bps = 1};
  snprintf(c.kube.qos, sizeof(c.kube.qos), "%s", f[5]);
  struct agent_metrics m = {0};
  struct agent_metrics_view v = {.policy = f[5], .matrix = f[0], .sampler = f[1]};
  agent_metrics_view_count(&v, &c, 0);
  v.latency_source = f[2];
  cleanup_free char *out = NULL;
  size_t len = 0;
  cleanup_error struct iob_error *err = NULL;
  agent_metrics_render(&m, &v, &out, &len, &err);
  if (expo_check(out, len) <= 0)
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4096)
    render_names(data, size);
  struct agent_metrics_server_request req;
  int status = 0;
  int r = agent_metrics_server_parse_request((const char *)data, size, &req, &status);
  if (r < 0 && status != 400 && status != 414 && status != 431 && status != 505)
    abort();
  if (r == 1 && strlen(req.path) >= AGENT_METRICS_PATH_MAX)
    abort();
  if (size > 0)
    (void)agent_metrics_server_parse_request((const char *)data, size / 2, &req, &status);
  if (size < 256) {
    char spec[256];
    memcpy(spec, data, size);
    spec[size] = '\0';
    struct agent_metrics_addr a;
    cleanup_error struct iob_error *err = NULL;
    (void)agent_metrics_server_addr_parse(spec, &a, &err);
  }
  return 0;
}
