// SPDX-License-Identifier: Apache-2.0
/* stdio URIs: a FIFO path, file://, binary://. */
#ifndef SHIM_URI_H
#define SHIM_URI_H

#include "common/error.h"

enum shim_uri_kind { SHIM_URI_FIFO, SHIM_URI_FILE, SHIM_URI_BINARY };
struct shim_uri {
  enum shim_uri_kind kind;
  char *path;
  char **args; /* binary://: k, v, k, v ... NULL-terminated */
};
int shim_uri_parse(const char *s, struct shim_uri *u, struct iob_error **err);
void shim_uri_release(struct shim_uri *u);

#endif
