// SPDX-License-Identifier: Apache-2.0
/* The workload classes' names (batcher/class.h). */
#include "batcher/class.h"

#include <string.h>

static const char *const class_names[BATCH_NCLASS_ALL] = {
    [BATCH_SEQ_READ] = "seq-read",   [BATCH_RAND_READ] = "rand-read",
    [BATCH_SEQ_WRITE] = "seq-write", [BATCH_RAND_WRITE] = "rand-write",
    [BATCH_MIXED] = "mixed",         [BATCH_IDLE] = "idle",
    [BATCH_UNKNOWN] = "unknown",     [BATCH_LATENCY] = "latency",
};

const char *batch_class_name(enum batch_class c) {
  if ((unsigned)c >= BATCH_NCLASS_ALL)
    return "invalid";
  return class_names[c];
}

int batch_class_parse(const char *name, enum batch_class *out) {
  for (unsigned i = 0; i < BATCH_NCLASS_ALL; i++)
    if (strcmp(name, class_names[i]) == 0) {
      *out = (enum batch_class)i;
      return 0;
    }
  return -1;
}

bool batch_class_names_latency(const char *name) {
  enum batch_class c;
  return name && batch_class_parse(name, &c) == 0 && c == BATCH_LATENCY;
}

int batch_class_from_name(const char *name) {
  enum batch_class c;
  if (batch_class_parse(name, &c) < 0 || c >= BATCH_NCLASS)
    return -1;
  return (int)c;
}

bool batch_class_does_io(enum batch_class c) {
  return c == BATCH_SEQ_READ || c == BATCH_RAND_READ || c == BATCH_SEQ_WRITE ||
         c == BATCH_RAND_WRITE || c == BATCH_MIXED;
}

bool batch_class_is_seq(enum batch_class c) {
  return c == BATCH_SEQ_READ || c == BATCH_SEQ_WRITE;
}
