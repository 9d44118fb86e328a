// SPDX-License-Identifier: Apache-2.0
/* Allocation that does not fail, as crun's xmalloc (src/libcrun/utils.c):
 * out of memory prints one line and aborts.  A daemon that cannot
 * allocate a few hundred bytes cannot answer, log or clean up either, and
 * an ENOMEM path per allocation is code that never runs.  Where an
 * allocation is sized by outside input, check the size against a limit
 * first (docs/STYLE.md), then allocate with these. */
#ifndef IOB_XALLOC_H
#define IOB_XALLOC_H

#include <stddef.h>

/* Print "out of memory" on stderr and abort. */
_Noreturn void iob_oom(void);

void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
