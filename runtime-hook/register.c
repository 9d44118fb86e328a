/* Registration with iobatchd over its ttrpc API (proto/iobatch/agent.proto):
 * one blocking Register call with the baseline taken before the workload
 * runs.  Fail open (docs/DESIGN.md): an agent that is absent, down, slow or
 * answering with an error never stops a container; the agent re-learns
 * containers from the shim when it comes back. */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "common/cleanup.h"
#include "common/log.h"
#include "iobatch/agent.pb-c.h"
#include "runtime-hook/hook.h"
#include "ttrpc/ttrpc.h"
#include "wcd/kind.h"

#include "agent/api.h"
/* runc gives a hook no deadline unless the spec sets one; ours stays short
 * so a wedged agent cannot stall container creation. */
#define REGISTER_TIMEOUT_MS 2000

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

static const char *state_annotation(void *st, const char *key) {
  return hook_annotation(st, key);
}

int hook_register(const struct hook_options *opt, const struct hook_state *st,
                  const struct hook_result *res, struct iob_error **err) {
  const char *socket_path = opt->socket;
  if (strlen(socket_path) >= sizeof(((struct sockaddr_un *)0)->sun_path))
    return iob_error(err, ENAMETOOLONG, "invalid agent socket '%s'", socket_path);
  struct stat sb;
  if (stat(socket_path, &sb) < 0 && errno == ENOENT) {
    iob_debug("no agent at '%s': container '%s' not registered", socket_path, st->id);
    return 0;
  }
  cleanup_error struct iob_error *cerr = NULL;
  struct ttrpc_client *c = NULL;
  if (ttrpc_client_connect(socket_path, &c, &cerr) < 0) {
    iob_debug("%s: container '%s' not registered", cerr->msg, st->id);
    return 0;
  }
  char ns[256];
  if (opt->ns && *opt->ns)
    snprintf(ns, sizeof(ns), "%s", opt->ns);
  else
    bundle_namespace(st->bundle, ns, sizeof(ns));

  Iobatch__Agent__V1__IOSample base = IOBATCH__AGENT__V1__IOSAMPLE__INIT;
  base.rbytes = res->baseline.io.rbytes;
  base.wbytes = res->baseline.io.wbytes;
  base.rios = res->baseline.io.rios;
  base.wios = res->baseline.io.wios;
  base.monotonic_ns = res->baseline.t_ns;
  Iobatch__Agent__V1__RegisterRequest req = IOBATCH__AGENT__V1__REGISTER_REQUEST__INIT;
  req.id = st->id;
  req.namespace_ = ns;
  req.pid = st->pid > 0 ? (uint32_t)st->pid : 0;
  req.cgroup = res->cgroup ? res->cgroup : "";
  req.bundle = st->bundle ? st->bundle : "";
  req.declared_class = res->declared ? (char *)wcd_class_name(res->cls) : "";
  req.workload_key = res->workload ? res->workload : "";
  req.source = "hook";
  /* Fail open as above: the shim refuses a bad io.iobatch.kind at Create;
   * under another runtime the agent just does not hear the kind. */
  struct wcd_kind kind;
  if (wcd_kind_from_annotations(state_annotation, (void *)st, &kind, &cerr) < 0) {
    iob_debug("container '%s': %s", st->id, cerr->msg);
    iob_error_release(&cerr);
  }
  req.kind = (char *)(kind.kind ? kind.kind : "");
  req.pod_name = (char *)(kind.pod_name ? kind.pod_name : "");
  req.pod_namespace = (char *)(kind.pod_namespace ? kind.pod_namespace : "");
  req.container_name = (char *)(kind.container_name ? kind.container_name : "");
  req.baseline = &base;
  ProtobufCMessage *resp = NULL;
  if (ttrpc_client_call(c, AGENT_SERVICE, "Register", &req.base,
                        &iobatch__agent__v1__register_response__descriptor, &resp,
                        REGISTER_TIMEOUT_MS, NULL, 0, &cerr) < 0) {
    iob_debug("agent at '%s' did not register '%s': %s", socket_path, st->id, cerr->msg);
  } else {
    const Iobatch__Agent__V1__RegisterResponse *r = (const void *)resp;
    iob_debug("registered '%s' (namespace '%s') with the agent: class %s, io.weight %u", st->id,
              ns, r->class_, r->io_weight);
    protobuf_c_message_free_unpacked(resp, NULL);
  }
  ttrpc_client_free(c);
  return 0;
}
