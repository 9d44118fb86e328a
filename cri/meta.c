// SPDX-License-Identifier: Apache-2.0
/* What iobatchd keeps of the CRI's listings: per container (and per pod
 * sandbox) id, its pod's namespace, name, uid and labels. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "cri/cri.h"

static char *dup_s(const char *s) {
  return xstrdup(s ? s : "");
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_meta(const void *a, const void *b) {
  return strcmp(((const struct cri_meta *)a)->id, ((const struct cri_meta *)b)->id);
}

typedef Runtime__V1__PodSandbox__LabelsEntry label_entry;

static int cmp_entry(const void *a, const void *b) {
  const label_entry *x = *(const label_entry *const *)a, *y = *(const label_entry *const *)b;
  int r = strcmp(x->key, y->key);
  return r ? r : strcmp(x->value ? x->value : "", y->value ? y->value : "");
}

/* Whether entry E is one KEEP names, and small enough. */
static bool keeps(const struct cri_label_keys *keep, const label_entry *e) {
  if (e == NULL || e->key == NULL || *e->key == '\0')
    return false;
  size_t klen = strnlen(e->key, CRI_META_LABEL_MAX);
  size_t vlen = e->value ? strnlen(e->value, CRI_META_LABEL_MAX) : 0;
  if (klen + 1 + vlen >= CRI_META_LABEL_MAX)
    return false;
  if (keep == NULL)
    return true;
  const char *k = e->key;
  return keep->n && bsearch(&k, keep->v, keep->n, sizeof(*keep->v), cmp_str) != NULL;
}

/* P's labels that KEEP names, at most CRI_META_LABELS_MAX of them: the
 * first by key (and value: a map may repeat a key on the wire). */
static void fill_labels(struct cri_meta *m, const Runtime__V1__PodSandbox *p,
                        const struct cri_label_keys *keep) {
  const label_entry **v = xcalloc(p->n_labels + 1, sizeof(*v));
  size_t n = 0;
  for (size_t i = 0; i < p->n_labels; i++)
    if (keeps(keep, p->labels[i]))
      v[n++] = p->labels[i];
  qsort(v, n, sizeof(*v), cmp_entry);
  if (n > CRI_META_LABELS_MAX)
    n = CRI_META_LABELS_MAX;
  m->labels = xcalloc(n + 1, sizeof(*m->labels));
  for (size_t i = 0; i < n; i++)
    m->labels[m->n_labels++] = xasprintf("%s=%s", v[i]->key, v[i]->value ? v[i]->value : "");
  free(v);
  qsort(m->labels, m->n_labels, sizeof(*m->labels), cmp_str);
}

static void fill_pod(struct cri_meta *m, const Runtime__V1__PodSandbox *p,
                     const struct cri_label_keys *keep) {
  const Runtime__V1__PodSandboxMetadata *md = p->metadata;
  m->pod_namespace = dup_s(md ? md->namespace_ : NULL);
  m->pod_name = dup_s(md ? md->name : NULL);
  m->pod_uid = dup_s(md ? md->uid : NULL);
  fill_labels(m, p, keep);
}

static int cmp_pod(const void *a, const void *b) {
  return strcmp((*(const Runtime__V1__PodSandbox *const *)a)->id,
                (*(const Runtime__V1__PodSandbox *const *)b)->id);
}

static const Runtime__V1__PodSandbox *pod_of(const Runtime__V1__PodSandbox **idx, size_t n,
                                             const char *id) {
  Runtime__V1__PodSandbox key = {.id = (char *)(id ? id : "")};
  const Runtime__V1__PodSandbox *k = &key;
  const Runtime__V1__PodSandbox **p = bsearch(&k, idx, n, sizeof(*idx), cmp_pod);
  return p ? *p : NULL;
}

void cri_meta_list_build(const Runtime__V1__ListPodSandboxResponse *pods,
                         const Runtime__V1__ListContainersResponse *ctrs,
                         const struct cri_label_keys *keep, struct cri_meta_list *out) {
  size_t np = pods ? pods->n_items : 0, nc = ctrs ? ctrs->n_containers : 0;
  if (np > CRI_LIST_MAX)
    np = CRI_LIST_MAX;
  if (nc > CRI_LIST_MAX)
    nc = CRI_LIST_MAX;
  out->v = xcalloc(np + nc + 1, sizeof(*out->v));
  out->n = 0;
  const Runtime__V1__PodSandbox **idx = xcalloc(np + 1, sizeof(*idx));
  size_t ni = 0;
  for (size_t i = 0; i < np; i++) {
    const Runtime__V1__PodSandbox *p = pods->items[i];
    if (p->id == NULL || *p->id == '\0')
      continue;
    idx[ni++] = p;
    struct cri_meta *m = &out->v[out->n++];
    m->id = xstrdup(p->id);
    fill_pod(m, p, keep);
  }
  qsort(idx, ni, sizeof(*idx), cmp_pod);
  for (size_t i = 0; i < nc; i++) {
    const Runtime__V1__Container *c = ctrs->containers[i];
    const Runtime__V1__PodSandbox *p = pod_of(idx, ni, c->pod_sandbox_id);
    if (c->id == NULL || *c->id == '\0' || p == NULL)
      continue; /* a container of a pod removed between the two listings */
    struct cri_meta *m = &out->v[out->n++];
    m->id = xstrdup(c->id);
    fill_pod(m, p, keep);
    m->container_name = dup_s(c->metadata ? c->metadata->name : NULL);
  }
  free(idx);
  qsort(out->v, out->n, sizeof(*out->v), cmp_meta);
}

const struct cri_meta *cri_meta_find(const struct cri_meta_list *l, const char *id) {
  if (l->n == 0)
    return NULL;
  struct cri_meta key = {.id = (char *)id};
  return bsearch(&key, l->v, l->n, sizeof(*l->v), cmp_meta);
}

static void meta_release(struct cri_meta *m) {
  free(m->id);
  free(m->pod_namespace);
  free(m->pod_name);
  free(m->pod_uid);
  free(m->container_name);
  for (size_t i = 0; i < m->n_labels; i++)
    free(m->labels[i]);
  free(m->labels);
}

void cri_meta_list_release(struct cri_meta_list *l) {
  for (size_t i = 0; i < l->n; i++)
    meta_release(&l->v[i]);
  free(l->v);
  l->v = NULL;
  l->n = 0;
}

int cri_meta_list_read(struct cri_client *c, const struct cri_label_keys *keep,
                       struct cri_meta_list *out, struct iob_error **err) {
  Runtime__V1__ListPodSandboxRequest preq = RUNTIME__V1__LIST_POD_SANDBOX_REQUEST__INIT;
  Runtime__V1__ListContainersRequest creq = RUNTIME__V1__LIST_CONTAINERS_REQUEST__INIT;
  ProtobufCMessage *pods = NULL, *ctrs = NULL;
  /* Sandboxes first: a container created between the two calls has no
   * pod in the first listing and waits for the next poll. */
  if (cri_client_call(c, "ListPodSandbox", &preq.base,
                      &runtime__v1__list_pod_sandbox_response__descriptor, &pods, err) < 0)
    return -1;
  if (cri_client_call(c, "ListContainers", &creq.base,
                      &runtime__v1__list_containers_response__descriptor, &ctrs, err) < 0) {
    protobuf_c_message_free_unpacked(pods, NULL);
    return -1;
  }
  cri_meta_list_build((Runtime__V1__ListPodSandboxResponse *)pods,
                      (Runtime__V1__ListContainersResponse *)ctrs, keep, out);
  protobuf_c_message_free_unpacked(pods, NULL);
  protobuf_c_message_free_unpacked(ctrs, NULL);
  return 0;
}
