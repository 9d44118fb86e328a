// SPDX-License-Identifier: Apache-2.0
#include "common/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Noreturn void iob_oom(void) {
  static const char msg[] = "out of memory\n";
  /* write(2): stdio may need the memory there is not. */
  ssize_t r = write(STDERR_FILENO, msg, sizeof(msg) - 1);
  (void)r;
  abort();
}

void *xmalloc(size_t size) {
  void *p = malloc(size ? size : 1);
  if (p == NULL)
    iob_oom();
  return p;
}

void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (p == NULL)
    iob_oom();
  return p;
}

void *xrealloc(void *p, size_t size) {
  void *q = realloc(p, size ? size : 1);
  if (q == NULL)
    iob_oom();
  return q;
}

char *xstrdup(const char *s) {
  char *r = strdup(s);
  if (r == NULL)
    iob_oom();
  return r;
}

char *xstrndup(const char *s, size_t n) {
  char *r = strndup(s, n);
  if (r == NULL)
    iob_oom();
  return r;
}

char *xasprintf(const char *fmt, ...) {
  char *r;
  va_list ap;
  va_start(ap, fmt);
  int n = vasprintf(&r, fmt, ap);
  va_end(ap);
  if (n < 0)
    iob_oom();
  return r;
}
