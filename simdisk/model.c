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
