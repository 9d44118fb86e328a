// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target: simdisk's command line (simdisk/opts.c): the input is
 * the arguments, one per line. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "simdisk/opts.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096)
    return 0;
  cleanup_free char *buf = malloc(size + 1);
  if (buf == NULL)
    return 0;
  memcpy(buf, data, size);
  buf[size] = '\0';
  char *argv[34] = {"simdisk"};
  int argc = 1;
  for (char *p = buf; argc < 33;) {
    argv[argc++] = p;
    char *nl = memchr(p, '\n', (size_t)(buf + size - p));
    if (nl == NULL)
      break;
    *nl = '\0';
    p = nl + 1;
  }
  argv[argc] = NULL;
  struct sd_opts o;
  cleanup_error struct iob_error *err = NULL;
  (void)sd_opts_parse(argc, argv, &o, &err);
  return 0;
}
