// SPDX-License-Identifier: Apache-2.0
/* Registration with iobatchd over its ttrpc API (proto/iobatch/agent.proto):
 * one blocking Register call with the baseline taken before the workload
 * runs; under a hooks.d engine also Admit (prestart) and Exited
 * (poststop).  Every wait is bounded (connect and calls by timeout_ms,
 * Admit by max_wait_ms), and every agent trouble comes back as an error
 * of code UNAVAILABLE, which main turns into fail open (docs/DESIGN.md) unless
 * told to fail closed. */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "client/client.h"
#include "common/cleanup.h"
#include "common/log.h"
#include "google/protobuf/empty.pb-c.h"
#include "iobatch/agent.pb-c.h"
#include "runtime-hook/hook.h"
#include "ttrpc/ttrpc.h"
#include "wcd/kind.h"

#include "client/api.h"

static int timeout_of(const struct hook_options *opt) {
  return opt->timeout_ms > 0 ? opt->timeout_ms : HOOK_DEFAULT_TIMEOUT_MS;
}

/* containerd's bundles are <state>/io.containerd.runtime.v2.task/<ns>/<id>:
 * the namespace is the bundle's parent directory.  Anything else (runc run,
 * podman) has no namespace; "default" is what containerd would use. */
static void bundle_namespace(const char *bundle, char *out, size_t n) {
  static const char marker[] = "/io.containerd.runtime.v2.task/";
  snprintf(out, n, "default");
  const char *m = bundle ? strstr(bundle, marker) : NULL;
  if (m == NULL)
    return;
  const char *ns = m + sizeof(marker) - 1;
  const char *slash = strchr(ns, '/');
  if (slash == NULL || slash == ns || (size_t)(slash - ns) >= n)
    return;
  memcpy(out, ns, (size_t)(slash - ns));
  out[slash - ns] = '\0';
}

bool hook_agent_forbidden(const struct hook_options *opt) {
  struct stat sb;
  return stat(opt->socket, &sb) < 0 && (errno == EACCES || errno == EPERM);
}

static int agent_dial(const struct hook_options *opt, struct ttrpc_client **out,
                      struct iob_error **err) {
  const char *socket_path = opt->socket;
  if (strlen(socket_path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid agent socket '%s'", socket_path);
  struct stat sb;
  if (stat(socket_path, &sb) < 0 && errno == ENOENT)
    return iob_error_code(err, IOB_CODE_UNAVAILABLE, "no agent at '%s'", socket_path);
  cleanup_error struct iob_error *cerr = NULL;
  if (ttrpc_client_connect_timeout(socket_path, timeout_of(opt), out, &cerr) < 0)
    return iob_error_code(err, IOB_CODE_UNAVAILABLE, "agent not reached: %s", cerr->msg);
  /* Only root's agent (or our own); anything else fails open: a socket
   * another user made is not the agent, and gets no container's state. */
  if (ttrpc_client_check_server_uid(*out, &cerr) < 0) {
    ttrpc_client_free(*out);
    *out = NULL;
    return iob_error_code(err, IOB_CODE_UNAVAILABLE, "agent socket '%s': %s", socket_path,
                          cerr->msg);
  }
  return 0;
}

void hook_agent_preconnect(const struct hook_options *opt, struct hook_agent *a) {
  memset(a, 0, sizeof(*a));
  /* A user the agent's directory shuts out has nothing to connect to
   * (hook_invoke says nothing then). */
  if (hook_agent_forbidden(opt))
    return;
  if (agent_dial(opt, &a->c, &a->err) < 0)
    a->c = NULL;
}

void hook_agent_release(struct hook_agent *a) {
  if (a->c)
    ttrpc_client_free(a->c);
  iob_error_release(&a->err);
}

/* The connection made before confinement, else (unit tests) a new one.
 * The caller frees the client. */
static int agent_connect(const struct hook_options *opt, struct ttrpc_client **out,
                         struct iob_error **err) {
  struct hook_agent *a = opt->agent;
  if (a == NULL)
    return agent_dial(opt, out, err);
  if (a->err) {
    *err = steal_ptr(&a->err);
    return -1;
  }
  if (a->c == NULL)
    return iob_error_code(err, IOB_CODE_UNAVAILABLE, "no agent connection left for this hook");
  *out = steal_ptr(&a->c);
  return 0;
}

static void namespace_of(const struct hook_options *opt, const struct hook_state *st, char *ns,
                         size_t n) {
  if (opt->ns && *opt->ns)
    snprintf(ns, n, "%s", opt->ns);
  else
    bundle_namespace(st->bundle, ns, n);
}

/* Wait for the agent's word, at most max_wait_ms. */
static int admit(const struct hook_options *opt, struct ttrpc_client *c,
                 const struct hook_state *st, const struct hook_result *res, const char *ns,
                 struct iob_error **err) {
  Iobatch__Agent__V1__AdmitRequest req = IOBATCH__AGENT__V1__ADMIT_REQUEST__INIT;
  req.id = st->id;
  req.namespace_ = (char *)ns;
  req.declared_class = res->declared ? (char *)batch_class_name(res->cls) : "";
  req.workload_key = res->workload ? res->workload : "";
  req.latency_target_us = res->lat_target_us;
  /* No max_hold_ms: that field is io.iobatch.max-hold-ms, a declaration
   * the agent takes only from trusted namespaces (agent_adm_hold_ms).  The
   * hook's own wait reaches the agent as this call's timeout, which bounds
   * the hold with a margin for our answer (agent/requests.c). */
  int wait = opt->max_wait_ms;
  ProtobufCMessage *resp = NULL;
  cleanup_error struct iob_error *cerr = NULL;
  if (ttrpc_client_call(c, AGENT_SERVICE, "Admit", &req.base,
                        &iobatch__agent__v1__admit_response__descriptor, &resp, wait, NULL, 0,
                        &cerr) < 0)
    return iob_error_code(err, IOB_CODE_UNAVAILABLE, "agent at '%s' did not admit '%s': %s",
                          opt->socket, st->id, cerr->msg);
  const Iobatch__Agent__V1__AdmitResponse *r = (const void *)resp;
  int rc = 0;
  if (!r->admitted)
    rc = iob_error_code(err, IOB_CODE_UNAVAILABLE, "agent at '%s' did not admit '%s': %s",
                        opt->socket, st->id, r->reason ? r->reason : "");
  else
    iob_debug("agent admitted '%s' after %llu ms: %s", st->id, (unsigned long long)r->held_ms,
              r->reason);
  protobuf_c_message_free_unpacked(resp, NULL);
  return rc;
}

int hook_register(const struct hook_options *opt, const struct hook_state *st,
                  struct hook_result *res, struct iob_error **err) {
  struct ttrpc_client *c = NULL;
  if (agent_connect(opt, &c, err) < 0)
    return -1;
  char ns[256];
  namespace_of(opt, st, ns, sizeof(ns));

  /* Fail open as above: the shim refuses a bad io.iobatch.kind at Create;
   * under another runtime the agent just does not hear the kind. */
  struct wcd_kind kind;
  cleanup_error struct iob_error *kerr = NULL;
  if (wcd_kind_from_annotations(hook_annotation_get, (void *)st, &kind, &kerr) < 0)
    iob_debug("container '%s': %s", st->id, kerr->msg);
  struct client_container ctr = {.id = st->id,
                                 .ns = ns,
                                 .pid = st->pid > 0 ? (uint32_t)st->pid : 0,
                                 .cgroup = res->b.cgroup,
                                 .bundle = st->bundle,
                                 .declared_class =
                                     res->declared ? batch_class_name(res->cls) : NULL,
                                 .workload_key = res->workload,
                                 .kind = kind.kind,
                                 .kind_from_runtime = kind.runtime,
                                 .pod_name = kind.pod_name,
                                 .pod_namespace = kind.pod_namespace,
                                 .container_name = kind.container_name,
                                 .lat_target_us = res->lat_target_us};
  Iobatch__Agent__V1__RegisterRequest req;
  client_register_request(&ctr, "hook", &req);
  Iobatch__Agent__V1__IOSample base;
  client_birth_request(&res->b, &base, &req);
  ProtobufCMessage *resp = NULL;
  cleanup_error struct iob_error *cerr = NULL;
  int rc = 0;
  if (ttrpc_client_call(c, AGENT_SERVICE, "Register", &req.base,
                        &iobatch__agent__v1__register_response__descriptor, &resp, timeout_of(opt),
                        NULL, 0, &cerr) < 0) {
    rc = iob_error_code(err, IOB_CODE_UNAVAILABLE, "agent at '%s' did not register '%s': %s",
                        opt->socket, st->id, cerr->msg);
  } else {
    const Iobatch__Agent__V1__RegisterResponse *r = (const void *)resp;
    iob_debug("registered '%s' (namespace '%s') with the agent: class %s, io.weight %u%s", st->id,
              ns, r->class_, r->io_weight,
              req.hook_weight && !r->hook_weight_journalled ? "; the hook's weight refused" : "");
    res->b.weight_journalled = r->hook_weight_journalled;
    protobuf_c_message_free_unpacked(resp, NULL);
    if (opt->max_wait_ms > 0)
      rc = admit(opt, c, st, res, ns, err);
  }
  ttrpc_client_free(c);
  return rc;
}

int hook_exited(const struct hook_options *opt, const struct hook_state *st,
                struct iob_error **err) {
  struct ttrpc_client *c = NULL;
  if (agent_connect(opt, &c, err) < 0)
    return -1;
  char ns[256];
  namespace_of(opt, st, ns, sizeof(ns));
  Iobatch__Agent__V1__ExitedRequest req = IOBATCH__AGENT__V1__EXITED_REQUEST__INIT;
  req.id = st->id;
  req.namespace_ = ns;
  ProtobufCMessage *resp = NULL;
  cleanup_error struct iob_error *cerr = NULL;
  int rc = 0;
  if (ttrpc_client_call(c, AGENT_SERVICE, "Exited", &req.base, &google__protobuf__empty__descriptor,
                        &resp, timeout_of(opt), NULL, 0, &cerr) < 0)
    rc = iob_error_code(err, IOB_CODE_UNAVAILABLE, "agent at '%s' not told that '%s' exited: %s",
                        opt->socket, st->id, cerr->msg);
  else
    protobuf_c_message_free_unpacked(resp, NULL);
  ttrpc_client_free(c);
  return rc;
}
