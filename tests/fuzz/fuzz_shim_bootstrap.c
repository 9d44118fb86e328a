// SPDX-License-Identifier: Apache-2.0
/* libFuzzer: the stdin of `shim start` (BootstrapParams or a legacy Any),
 * and the flag parser on the same bytes split into arguments. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "shim/args.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct shim_bootstrap b;
  struct iob_error *err = NULL;
  if (shim_bootstrap_parse(data, size, "c1", "default", &b, &err) == 0)
    shim_bootstrap_release(&b);
  iob_error_release(&err);
  /* The same bytes as NUL-separated command-line arguments. */
  char *copy = malloc(size + 1);
  if (copy == NULL)
    return 0;
  memcpy(copy, data, size);
  copy[size] = '\0';
  char *argv[34] = {"shim"};
  int argc = 1;
  for (char *p = copy; p < copy + size && argc < 33; p += strlen(p) + 1)
    argv[argc++] = p;
  argv[argc] = NULL;
  struct shim_args a;
  shim_args_parse(&a, argc, argv, &err);
  iob_error_release(&err);
  free(copy);
  return 0;
}
