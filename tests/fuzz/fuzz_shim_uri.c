// SPDX-License-Identifier: Apache-2.0
/* libFuzzer: the stdio URI parser (shim_uri_parse) and the last error of
 * runc's log (shim_runc_last_error).  config.json is fuzz_oci_config's. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "shim/runc.h"
#include "shim/uri.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct iob_error *err = NULL;
  char *s = xstrndup((const char *)data, size);
  struct shim_uri u;
  if (shim_uri_parse(s, &u, &err) == 0)
    shim_uri_release(&u);
  iob_error_release(&err);
  char *log = shim_runc_last_error(s, size);
  free(log);
  free(s);
  return 0;
}
