// SPDX-License-Identifier: Apache-2.0
/* The requests a model has answered, by the time they are due (model.h:
 * struct sd_heap); apart from model.c, which makes the models that use it. */
#include <stdlib.h>

#include "common/xalloc.h"
#include "simdisk/model.h"

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
