// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target: the io.iobatch.* annotation parsers
 * (client/annotations.c).  The input is lines of KEY=VALUE, the
 * annotations of one container; a line without '=' is a value for every
 * key in turn.  Values come from a pod's author: anything goes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client/annotations.h"
#include "common/cleanup.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_LINES 16

struct kv {
  char *key[MAX_LINES], *value[MAX_LINES];
  size_t n;
};

static const char *get(void *ctx, const char *key) {
  const struct kv *a = ctx;
  for (size_t i = 0; i < a->n; i++)
    if (a->key[i] && strcmp(a->key[i], key) == 0)
      return a->value[i];
  return NULL;
}

static void each_key(const char *value) {
  for (size_t k = 0; k < iob_ann_defs_len; k++) {
    struct iob_ann a;
    memset(&a, 0, sizeof(a));
    cleanup_error struct iob_error *err = NULL;
    if (iob_ann_defs[k].parse(value, &a, &err) < 0 && (err == NULL || err->msg == NULL))
      abort(); /* a failure always says why */
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *buf = malloc(size + 1);
  if (buf == NULL)
    return 0;
  memcpy(buf, data, size);
  buf[size] = '\0';
  struct kv a = {.n = 0};
  char *save = NULL;
  for (char *line = strtok_r(buf, "\n", &save); line && a.n < MAX_LINES;
       line = strtok_r(NULL, "\n", &save)) {
    char *eq = strchr(line, '=');
    if (eq == NULL) {
      each_key(line);
      continue;
    }
    *eq = '\0';
    a.key[a.n] = line;
    a.value[a.n++] = eq + 1;
  }
  struct iob_ann out;
  cleanup_error struct iob_error *err = NULL;
  if (iob_ann_parse(get, &a, 0, &out, &err) == 0) {
    if (out.cls && batch_class_parse(out.cls, &out.cls_value) < 0)
      abort(); /* a class taken is a class */
    if (out.lat_target_us > IOB_ANN_LATENCY_TARGET_MAX_US ||
        (out.workload && strlen(out.workload) > IOB_ANN_WORKLOAD_MAX))
      abort(); /* within bounds */
  }
  free(buf);
  return 0;
}
