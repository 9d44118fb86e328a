// SPDX-License-Identifier: Apache-2.0
#include "simdisk/model.h"

#include <stdlib.h>

#include "common/xalloc.h"

int sd_model_new(const struct sd_opts *o, struct sd_model **out, struct iob_error **err) {
  switch (o->model) {
  case SD_MODEL_HDD:
    return sd_hdd_new(o->size, o->write_cache, out, err);
  case SD_MODEL_SSD:
    return sd_ssd_new(o->size, out, err);
  case SD_MODEL_PASS:
    return sd_pass_new(out);
  }
  return iob_error(err, 0, "unknown model %d", (int)o->model);
}

void sd_model_free(struct sd_model *m) {
  if (m)
    m->ops->destroy(m);
}

static bool before(const struct sd_heap_ent *a, const struct sd_heap_ent *b) {
  return a->done < b->done || (a->done == b->done && a->seq < b->seq);
}

void sd_heap_push(struct sd_heap *h, struct sd_req *r) {
  if (h->n == h->cap) {
    h->cap = h->cap ? 2 * h->cap : 64;
    h->v = xrealloc(h->v, h->cap * sizeof(*h->v));
  }
  size_t i = h->n++;
  struct sd_heap_ent e = {r->done, h->seq++, r};
  while (i > 0 && before(&e, &h->v[(i - 1) / 2])) {
    h->v[i] = h->v[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h->v[i] = e;
}

struct sd_req *sd_heap_pop_due(struct sd_heap *h, int64_t now, int64_t *next) {
  if (h->n == 0) {
    *next = SD_NEVER;
    return NULL;
  }
  if (h->v[0].done > now) {
    *next = h->v[0].done;
    return NULL;
  }
  struct sd_req *r = h->v[0].r;
  struct sd_heap_ent last = h->v[--h->n];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= h->n)
      break;
    if (c + 1 < h->n && before(&h->v[c + 1], &h->v[c]))
      c++;
    if (!before(&h->v[c], &last))
      break;
    h->v[i] = h->v[c];
    i = c;
  }
  if (h->n > 0)
    h->v[i] = last;
  return r;
}

void sd_heap_free(struct sd_heap *h) {
  free(h->v);
  h->v = NULL;
  h->n = h->cap = 0;
}

/* pass: every request completes when it arrives, so a run on it measures
 * what FUSE, the loop device and this daemon cost by themselves. */
struct pass {
  struct sd_model m;
  struct sd_heap h;
};

static void pass_submit(struct sd_model *m, struct sd_req *r) {
  struct pass *p = (struct pass *)m;
  r->done = r->arrival;
  sd_heap_push(&p->h, r);
}

static struct sd_req *pass_complete(struct sd_model *m, int64_t now, int64_t *next) {
  return sd_heap_pop_due(&((struct pass *)m)->h, now, next);
}

static void pass_destroy(struct sd_model *m) {
  struct pass *p = (struct pass *)m;
  sd_heap_free(&p->h);
  free(p);
}

static const struct sd_model_ops pass_ops = {pass_submit, pass_complete, pass_destroy};

int sd_pass_new(struct sd_model **out) {
  struct pass *p = xcalloc(1, sizeof(*p));
  p->m.ops = &pass_ops;
  *out = &p->m;
  return 0;
}
