// SPDX-License-Identifier: Apache-2.0
/* The one place a RegisterRequest is filled (client/client.h): the shim's
 * client, the hook, iobatchctl and the bench fixture all send this. */
#include "client/client.h"

static char *str(const char *s) {
  return (char *)(s ? s : "");
}

Iobatch__Agent__V1__KindSource client_kind_source(const char *kind, bool from_runtime) {
  if (kind == NULL || *kind == '\0')
    return IOBATCH__AGENT__V1__KIND_SOURCE__KIND_SOURCE_UNSPECIFIED;
  return from_runtime ? IOBATCH__AGENT__V1__KIND_SOURCE__KIND_SOURCE_RUNTIME
                      : IOBATCH__AGENT__V1__KIND_SOURCE__KIND_SOURCE_ANNOTATION;
}

void client_register_request(const struct client_container *ctr, const char *source,
                             Iobatch__Agent__V1__RegisterRequest *out) {
  Iobatch__Agent__V1__RegisterRequest m = IOBATCH__AGENT__V1__REGISTER_REQUEST__INIT;
  m.id = str(ctr->id);
  m.namespace_ = str(ctr->ns);
  m.pid = ctr->pid;
  m.cgroup = str(ctr->cgroup);
  m.bundle = str(ctr->bundle);
  m.declared_class = str(ctr->declared_class);
  m.workload_key = str(ctr->workload_key);
  m.source = str(source);
  m.max_hold_ms = ctr->max_hold_ms;
  m.latency_target_us = ctr->lat_target_us;
  m.running = ctr->running;
  m.kind = str(ctr->kind);
  m.kind_source = client_kind_source(ctr->kind, ctr->kind_from_runtime);
  m.pod_name = str(ctr->pod_name);
  m.pod_namespace = str(ctr->pod_namespace);
  m.container_name = str(ctr->container_name);
  *out = m;
}
