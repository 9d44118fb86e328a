// SPDX-License-Identifier: Apache-2.0
/* The disk models behind simdisk (README.md states them and their limits).
 * A model is a discrete-event simulation driven by the daemon's device
 * thread: requests are submitted in arrival order, and the thread asks for
 * whatever has completed by "now".  Times are model nanoseconds; the
 * device thread maps them to CLOCK_MONOTONIC (times the scale factor), so
 * a model never reads a clock and replays the same way for the same
 * request sequence (the unit test drives one without a clock at all). */
#ifndef SD_MODEL_H
#define SD_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "simdisk/opts.h"

#define SD_NEVER INT64_MAX

enum sd_op { SD_READ, SD_WRITE, SD_FLUSH, SD_TRIM };

struct sd_req {
  uint64_t off, len;
  enum sd_op op;
  int64_t arrival; /* model ns, never earlier than the previous request's */
  int64_t done;    /* model ns, set by the model */
  void *cookie;    /* the daemon's (the FUSE request) */
};

struct sd_model;

struct sd_model_ops {
  void (*submit)(struct sd_model *m, struct sd_req *r);
  /* A request completed by now (the model lets go of it), or NULL with
   * *next the time of the next completion (SD_NEVER when idle). */
  struct sd_req *(*complete)(struct sd_model *m, int64_t now, int64_t *next);
  void (*destroy)(struct sd_model *m);
};

struct sd_model {
  const struct sd_model_ops *ops;
};

/* The model o->model for a disk of o->size bytes; -1 with *err when the
 * size does not suit it. */
int sd_model_new(const struct sd_opts *o, struct sd_model **out, struct iob_error **err);

static inline void sd_model_submit(struct sd_model *m, struct sd_req *r) {
  m->ops->submit(m, r);
}
static inline struct sd_req *sd_model_complete(struct sd_model *m, int64_t now, int64_t *next) {
  return m->ops->complete(m, now, next);
}
void sd_model_free(struct sd_model *m);

int sd_hdd_new(uint64_t size, bool write_cache, struct sd_model **out, struct iob_error **err);
int sd_ssd_new(uint64_t size, struct sd_model **out, struct iob_error **err);
int sd_pass_new(struct sd_model **out);

/* A binary min-heap of requests by done time (ties: submission order),
 * for the models that know a request's completion when it arrives. */
struct sd_heap {
  struct sd_heap_ent {
    int64_t done;
    uint64_t seq;
    struct sd_req *r;
  } * v;
  size_t n, cap;
  uint64_t seq;
};
void sd_heap_push(struct sd_heap *h, struct sd_req *r);
struct sd_req *sd_heap_pop_due(struct sd_heap *h, int64_t now, int64_t *next);
void sd_heap_free(struct sd_heap *h);

#endif
