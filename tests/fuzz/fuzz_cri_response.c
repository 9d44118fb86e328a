// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target: a CRI server's answer as the client reads it
 * (cri/grpc.c, cri/meta.c).  Input: header lines "name: value\n" up to an
 * empty line (the response's headers and trailers), then the DATA bytes.
 * The body is read as a ListPodSandbox and a ListContainers answer, and
 * what decodes is joined as the agent would. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "cri/cri.h"
#include "cri/grpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t headers(struct cri_grpc_status *st, const uint8_t *d, size_t n) {
  size_t off = 0;
  while (off < n) {
    const uint8_t *nl = memchr(d + off, '\n', n - off);
    size_t len = nl ? (size_t)(nl - (d + off)) : n - off;
    if (len == 0)
      return off + 1;
    const uint8_t *colon = memchr(d + off, ':', len > 0 ? len : 1);
    if (colon == d + off && len > 1) /* ":status: 200" */
      colon = memchr(d + off + 1, ':', len - 1);
    if (colon) {
      size_t nlen = (size_t)(colon - (d + off));
      size_t vs = nlen + 1 < len && colon[1] == ' ' ? nlen + 2 : nlen + 1;
      cri_grpc_status_header(st, d + off, nlen, d + off + vs, len > vs ? len - vs : 0);
    }
    off += len + (nl != NULL);
  }
  return off;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct cri_grpc_status st = {0};
  size_t off = headers(&st, data, size);
  const uint8_t *body = data + off;
  size_t len = size - off;
  ProtobufCMessage *pods = NULL, *ctrs = NULL;
  cleanup_error struct iob_error *e1 = NULL, *e2 = NULL;
  int r1 = cri_grpc_response("fuzz", &st, body, len, 1 << 20,
                             &runtime__v1__list_pod_sandbox_response__descriptor, &pods, &e1);
  int r2 = cri_grpc_response("fuzz", &st, body, len, 1 << 20,
                             &runtime__v1__list_containers_response__descriptor, &ctrs, &e2);
  if ((r1 < 0) != (pods == NULL) || (r2 < 0) != (ctrs == NULL) || (r1 < 0 && e1 == NULL))
    abort();
  /* Once with the keys a pod rule might name and once with any key: the
   * labels kept stay within their bounds either way. */
  static const char *const keys[] = {"app", "team", "tier"};
  const struct cri_label_keys some = {.v = keys, .n = 3};
  for (int pass = 0; pass < 2; pass++) {
    struct cri_meta_list l = {0};
    cri_meta_list_build((Runtime__V1__ListPodSandboxResponse *)pods,
                        (Runtime__V1__ListContainersResponse *)ctrs, pass ? NULL : &some, &l);
    for (size_t i = 0; i < l.n; i++) {
      if (cri_meta_find(&l, l.v[i].id) == NULL || l.v[i].n_labels > CRI_META_LABELS_MAX)
        abort();
      for (size_t k = 0; k < l.v[i].n_labels; k++)
        if (strlen(l.v[i].labels[k]) >= CRI_META_LABEL_MAX ||
            (!pass && strncmp(l.v[i].labels[k], "app=", 4) &&
             strncmp(l.v[i].labels[k], "team=", 5) && strncmp(l.v[i].labels[k], "tier=", 5)))
          abort();
    }
    cri_meta_list_release(&l);
  }
  if (pods)
    protobuf_c_message_free_unpacked(pods, NULL);
  if (ctrs)
    protobuf_c_message_free_unpacked(ctrs, NULL);
  return 0;
}
