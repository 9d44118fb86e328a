// SPDX-License-Identifier: Apache-2.0
/* cri-list [--timeout MS] ENDPOINT: what iobatchd's CRI client (cri/)
 * learns from ENDPOINT, without the agent: the Version answer, then one
 * JSON object per line for each sandbox and container id.  Exit 1 with
 * the client's error on stderr. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "cri/cri.h"

static json_t *labels_json(const struct cri_meta *m) {
  json_t *a = json_array();
  for (size_t i = 0; i < m->n_labels; i++)
    json_array_append_new(a, json_string(m->labels[i]));
  return a;
}

static int list(const char *endpoint, unsigned timeout_ms, struct iob_error **err) {
  struct cri_client *c = NULL;
  Runtime__V1__VersionResponse *v = NULL;
  struct cri_meta_list l = {0};
  if (cri_client_open(endpoint, timeout_ms, &c, err) < 0)
    return -1;
  if (cri_client_version(c, &v, err) < 0 || cri_meta_list_read(c, NULL, &l, err) < 0) {
    if (v)
      protobuf_c_message_free_unpacked(&v->base, NULL);
    cri_client_free(c);
    return -1;
  }
  json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "api", cri_client_api(c), "runtime_name",
                        v->runtime_name, "runtime_version", v->runtime_version,
                        "runtime_api_version", v->runtime_api_version);
  json_dumpf(o, stdout, JSON_COMPACT);
  putchar('\n');
  json_decref(o);
  for (size_t i = 0; i < l.n; i++) {
    const struct cri_meta *m = &l.v[i];
    o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o}", "id", m->id, "kind",
                  m->container_name ? "container" : "sandbox", "pod_namespace", m->pod_namespace,
                  "pod_name", m->pod_name, "pod_uid", m->pod_uid, "labels", labels_json(m));
    if (m->container_name)
      json_object_set_new(o, "container_name", json_string(m->container_name));
    json_dumpf(o, stdout, JSON_COMPACT);
    putchar('\n');
    json_decref(o);
  }
  cri_meta_list_release(&l);
  protobuf_c_message_free_unpacked(&v->base, NULL);
  cri_client_free(c);
  return 0;
}

int main(int argc, char **argv) {
  unsigned timeout_ms = 5000;
  int i = 1;
  if (argc > 2 && strcmp(argv[1], "--timeout") == 0) {
    timeout_ms = (unsigned)strtoul(argv[2], NULL, 10);
    i = 3;
  }
  if (argc != i + 1) {
    fprintf(stderr, "usage: cri-list [--timeout MS] unix:///PATH\n");
    return 2;
  }
  struct iob_error *err = NULL;
  if (list(argv[i], timeout_ms, &err) < 0) {
    iob_error_print("cri-list", &err);
    return 1;
  }
  return 0;
}
