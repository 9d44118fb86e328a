/* libFuzzer: reading the grouping annotations of an OCI config.json, and
 * the stdio URI parser. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "shim/args.h"
#include "shim/runc.h"
#include "shim/uri.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct iob_error *err = NULL;
  char *group = NULL;
  if (shim_config_group((const char *)data, size, "c1", &group, &err) == 0)
    free(group);
  iob_error_release(&err);
  char *s = malloc(size + 1);
  if (s == NULL)
    return 0;
  memcpy(s, data, size);
  s[size] = '\0';
  struct shim_uri u;
  if (shim_uri_parse(s, &u, &err) == 0)
    shim_uri_release(&u);
  iob_error_release(&err);
  char *log = shim_runc_last_error(s, size);
  free(log);
  free(s);
  return 0;
}
