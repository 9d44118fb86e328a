// SPDX-License-Identifier: Apache-2.0
/* A client of the Kubernetes Container Runtime Interface: gRPC over
 * HTTP/2 without TLS (h2c with prior knowledge, as the kubelet talks to
 * containerd's and CRI-O's unix sockets), with nghttp2 for HTTP/2 and
 * protobuf-c for the messages of proto/cri/api.proto.
 *
 * Calls block, each bounded by the client's timeout (poll on the socket,
 * CLOCK_MONOTONIC deadline); iobatchd makes them on a thread of its own
 * (agent/kube/podmeta.c).  Every error names the endpoint and the method, and
 * a failed call carries the server's grpc-status as its code. */
#ifndef IOB_CRI_H
#define IOB_CRI_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>

#include "common/error.h"
/* The CRI's messages have fields named `linux`, which GNU C predefines as
 * 1 (cri/module.mk undefines it for the generated code too). */
#undef linux
#include "cri/api.pb-c.h"

/* The largest response read (ListContainers on a node of some thousand
 * containers is well under it); a larger one fails RESOURCE_EXHAUSTED. */
#define CRI_RESPONSE_MAX (16u * 1024 * 1024)
/* The most pods or containers taken from one listing. */
#define CRI_LIST_MAX 65536

/* The sockets `cri_endpoint = auto` tries, in order. */
#define CRI_CONTAINERD_SOCKET "/run/containerd/containerd.sock"
#define CRI_CRIO_SOCKET "/run/crio/crio.sock"

struct cri_client;

/* "unix:///path" or "/path" -> the socket's path (at most 107 bytes).
 * Returns < 0 on anything else. */
int cri_endpoint_path(const char *spec, char *path, size_t n);

/* Connect to ENDPOINT (see cri_endpoint_path); every later call on the
 * client gives up after timeout_ms. */
int cri_client_open(const char *endpoint, unsigned timeout_ms, struct cri_client **out,
                    struct iob_error **err);
void cri_client_free(struct cri_client *c);

/* RuntimeService/Version, as runtime.v1 and, where that is UNIMPLEMENTED,
 * as runtime.v1alpha2 (containerd before 1.6 serves only that; its
 * messages are v1's, field for field): later calls use the version that
 * answered.  *out is freed with protobuf_c_message_free_unpacked. */
int cri_client_version(struct cri_client *c, Runtime__V1__VersionResponse **out,
                       struct iob_error **err);
/* "runtime.v1" or "runtime.v1alpha2". */
const char *cri_client_api(const struct cri_client *c);

/* One unary call of RuntimeService: METHOD ("ListPodSandbox"), the
 * request and the response's type. */
int cri_client_call(struct cri_client *c, const char *method, const ProtobufCMessage *req,
                    const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **out,
                    struct iob_error **err);

/* Which pod labels a listing keeps.  A pod may carry megabytes of labels
 * (the API server bounds each value, not their number) and every one of
 * its containers would get a copy: only labels whose key is in KEYS[0..N)
 * (sorted by strcmp; the agent's are the keys its pod rules name) are
 * kept, at most CRI_META_LABELS_MAX per pod (the first in key order), each
 * "key=value" shorter than CRI_META_LABEL_MAX bytes (a longer one is
 * dropped: no pod rule can name it, agent/kube/podrules.h). */
#define CRI_META_LABELS_MAX 16
#define CRI_META_LABEL_MAX 320
struct cri_label_keys {
  const char *const *v;
  size_t n;
};

/* What iobatchd wants to know of a container (or of a pod sandbox: then
 * container_name is NULL): its pod's names, uid and the labels kept
 * ("key=value", sorted). */
struct cri_meta {
  char *id;
  char *pod_namespace, *pod_name, *pod_uid;
  char *container_name;
  char **labels;
  size_t n_labels;
};

struct cri_meta_list {
  struct cri_meta *v; /* sorted by id */
  size_t n;
};

/* ListPodSandbox and ListContainers, joined by sandbox id; the labels
 * KEEP names (NULL: any key, within the same bounds; a tool's listing). */
int cri_meta_list_read(struct cri_client *c, const struct cri_label_keys *keep,
                       struct cri_meta_list *out, struct iob_error **err);
/* The join alone (what cri_meta_list_read does with the two answers). */
void cri_meta_list_build(const Runtime__V1__ListPodSandboxResponse *pods,
                         const Runtime__V1__ListContainersResponse *ctrs,
                         const struct cri_label_keys *keep, struct cri_meta_list *out);
const struct cri_meta *cri_meta_find(const struct cri_meta_list *l, const char *id);
void cri_meta_list_release(struct cri_meta_list *l);

#endif
