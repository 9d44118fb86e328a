// SPDX-License-Identifier: Apache-2.0
/* libFuzzer: JOURNAL_STREAM ("DEV:INO", from the environment) as
 * common/log.c reads it.  Whatever it accepts must be two decimal numbers
 * around one colon, and they must be the ones asked about. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (s == NULL)
    abort();
  memcpy(s, data, size);
  s[size] = '\0';
  if (iob_log_journal_stream_is(s, 8, 1234)) {
    size_t a = strspn(s, "0123456789");
    if (a == 0 || s[a] != ':' || strspn(s + a + 1, "0123456789") != strlen(s + a + 1) ||
        s[a + 1] == '\0' || strtoull(s, NULL, 10) != 8 || strtoull(s + a + 1, NULL, 10) != 1234)
      __builtin_trap();
  }
  free(s);
  return 0;
}
