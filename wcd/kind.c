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

#include "batcher/kind.h"
#include "client/annotations.h"

#define CRI_TYPE "io.kubernetes.cri.container-type"
#define CRIO_TYPE "io.kubernetes.cri-o.ContainerType"
#define TYPE_SANDBOX "sandbox"

/* Where the names are, by who made config.json.  containerd's CRI plugin
 * writes its own keys, and a pod's annotations reach config.json there only
 * through the handler's pod_annotations patterns ("io.iobatch.*").  CRI-O
 * never writes containerd's keys, but it copies a pod's annotations into
 * its sandbox's config.json (sandbox_run: every kubeAnnotation, then its
 * own keys over them), so under CRI-O a containerd key is the tenant's
 * word, a namespace of its choosing ("kube-system").  There the names come
 * from CRI-O's own keys and the kubelet's labels (io.kubernetes.pod.*,
 * which the kubelet writes over the pod's labels of the same name, and
 * which CRI-O adds after the annotations).  Neither CRI (ctr, nerdctl,
 * podman): whoever made the container wrote all of them; containerd's
 * first. */
#define MAX_KEYS 2
static const char *const containerd_pod_name[MAX_KEYS] = {"io.kubernetes.cri.sandbox-name"};
static const char *const containerd_pod_ns[MAX_KEYS] = {"io.kubernetes.cri.sandbox-namespace"};
static const char *const containerd_ctr_name[MAX_KEYS] = {"io.kubernetes.cri.container-name"};
static const char *const crio_pod_name[MAX_KEYS] = {"io.kubernetes.pod.name"};
static const char *const crio_pod_ns[MAX_KEYS] = {"io.kubernetes.pod.namespace",
                                                  "io.kubernetes.cri-o.Namespace"};
static const char *const crio_ctr_name[MAX_KEYS] = {"io.kubernetes.container.name"};
static const char *const any_pod_name[MAX_KEYS] = {"io.kubernetes.cri.sandbox-name",
                                                   "io.kubernetes.pod.name"};
static const char *const any_pod_ns[MAX_KEYS] = {"io.kubernetes.cri.sandbox-namespace",
                                                 "io.kubernetes.pod.namespace"};
static const char *const any_ctr_name[MAX_KEYS] = {"io.kubernetes.cri.container-name",
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

static const char *name(wcd_annotation_fn get, void *ctx, const char *const keys[MAX_KEYS]) {
  for (int i = 0; i < MAX_KEYS && keys[i]; i++) {
    const char *v = value(get, ctx, keys[i]);
    if (v && name_ok(v))
      return v;
  }
  return NULL;
}

int wcd_kind_from_annotations(wcd_annotation_fn get, void *ctx, struct wcd_kind *out,
                              struct iob_error **err) {
  memset(out, 0, sizeof(*out));
  if (value(get, ctx, CRIO_TYPE)) {
    out->pod_name = name(get, ctx, crio_pod_name);
    out->pod_namespace = name(get, ctx, crio_pod_ns);
    out->container_name = name(get, ctx, crio_ctr_name);
  } else if (value(get, ctx, CRI_TYPE)) {
    out->pod_name = name(get, ctx, containerd_pod_name);
    out->pod_namespace = name(get, ctx, containerd_pod_ns);
    out->container_name = name(get, ctx, containerd_ctr_name);
  } else {
    out->pod_name = name(get, ctx, any_pod_name);
    out->pod_namespace = name(get, ctx, any_pod_ns);
    out->container_name = name(get, ctx, any_ctr_name);
  }
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
      out->kind = batch_kind_name(BATCH_KIND_SANDBOX);
      out->source = types[i];
      out->runtime = true;
      break;
    }
  }
  return 0;
}
