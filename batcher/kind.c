// SPDX-License-Identifier: Apache-2.0
/* The kinds' names (batcher/kind.h). */
#include "batcher/kind.h"

#include <string.h>

static const char *const kind_names[BATCH_NKIND] = {
    [BATCH_KIND_JOB] = "job",
    [BATCH_KIND_SERVICE] = "service",
    [BATCH_KIND_SANDBOX] = "sandbox",
};

const char *batch_kind_name(enum batch_kind k) {
  if ((unsigned)k >= BATCH_NKIND)
    return "invalid";
  return kind_names[k];
}

int batch_kind_parse(const char *name, enum batch_kind *out) {
  if (name == NULL)
    return -1;
  for (unsigned i = 0; i < BATCH_NKIND; i++)
    if (strcmp(name, kind_names[i]) == 0) {
      *out = (enum batch_kind)i;
      return 0;
    }
  return -1;
}
