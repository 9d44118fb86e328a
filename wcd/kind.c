// SPDX-License-Identifier: Apache-2.0
/* Annotation keys, checked in the sources of each runtime manager:
 *
 * - containerd's CRI plugin (pkg/cri/annotations, v1.6):
 *   io.kubernetes.cri.container-type is "sandbox" on a pod's sandbox
 *   (pause) container and "container" on the others; sandbox-name and
 *   sandbox-namespace are the pod's, on both; container-name only on the
 *   containers.
 * - CRI-O (internal/annotations): io.kubernetes.cri-o.ContainerType,
 *   same values.  CRI-O copies the kubelet's labels into the annotations
 *   (io.kubernetes.pod.name, .pod.namespace, io.kubernetes.container.name,
 *   kubelet pkg/types/labels.go) and fills them itself on a sandbox
 *   (container name "POD").
 * - nerdctl has no pods and marks nothing as a sandbox: the
 *   "io.cri-containerd.kind" it knows is a containerd label that the CRI
 *   plugin sets on its own containers, not an OCI annotation, so it never
 *   reaches config.json.  nerdctl users say io.iobatch.kind with
 *   --annotation.
 *
 * Who can set the CRI's type key: containerd's CRI plugin writes it itself
 * on every container it creates, and a pod's annotations reach config.json
 * only through the runtime handler's pod_annotations / container_annotations
 * patterns (packaging/containerd: "io.iobatch.*"), so a pod author cannot
 * set it through the CRI: the kubelet's runtime decides it.  Only a
 * direct containerd client (ctr, nerdctl, the Go client; containerd's
 * socket is root's) can write that key, and such a client may as well pick
 * another runtime and bypass iobatch altogether.  So the agent trusts the
 * type key from any namespace, and io.iobatch.kind only where
 * trust_declared says (agent_ctr_set_kind). */
#include "wcd/kind.h"

#include <stdlib.h>
#include <string.h>

#include "client/annotations.h"

#define CRI_TYPE "io.kubernetes.cri.container-type"
#define CRIO_TYPE "io.kubernetes.cri-o.ContainerType"
#define TYPE_SANDBOX "sandbox"

/* containerd's key first, then the kubelet's label as CRI-O passes it. */
static const char *const pod_name_keys[] = {"io.kubernetes.cri.sandbox-name",
                                            "io.kubernetes.pod.name"};
static const char *const pod_ns_keys[] = {"io.kubernetes.cri.sandbox-namespace",
                                          "io.kubernetes.pod.namespace"};
static const char *const ctr_name_keys[] = {"io.kubernetes.cri.container-name",
                                            "io.kubernetes.container.name"};

static const char *value(wcd_annotation_fn get, void *ctx, const char *key) {
  const char *v = get(ctx, key);
  return v && *v ? v : NULL;
}

/* A name Kubernetes could have made: not too long, printable. */
static int name_ok(const char *s) {
  size_t n = 0;
  for (; s[n]; n++)
    if ((unsigned char)s[n] < 0x20 || s[n] == 0x7f || n >= WCD_NAME_MAX)
      return 0;
  return 1;
}

static const char *name(wcd_annotation_fn get, void *ctx, const char *const keys[2]) {
  for (int i = 0; i < 2; i++) {
    const char *v = value(get, ctx, keys[i]);
    if (v && name_ok(v))
      return v;
  }
  return NULL;
}

int wcd_kind_from_annotations(wcd_annotation_fn get, void *ctx, struct wcd_kind *out,
                              struct iob_error **err) {
  memset(out, 0, sizeof(*out));
  out->pod_name = name(get, ctx, pod_name_keys);
  out->pod_namespace = name(get, ctx, pod_ns_keys);
  out->container_name = name(get, ctx, ctr_name_keys);
  const char *k = value(get, ctx, IOB_ANN_KIND);
  if (k) {
    if (iob_ann_kind_parse(k, &out->kind, err) < 0)
      return -1;
    out->source = IOB_ANN_KIND;
  }
  /* The CRI's sandbox wins (wcd/kind.h says why). */
  static const char *const types[] = {CRI_TYPE, CRIO_TYPE};
  for (size_t i = 0; i < 2; i++) {
    const char *t = value(get, ctx, types[i]);
    if (t && strcmp(t, TYPE_SANDBOX) == 0) {
      out->kind = TYPE_SANDBOX;
      out->source = types[i];
      out->runtime = true;
      break;
    }
  }
  return 0;
}
