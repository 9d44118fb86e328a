// SPDX-License-Identifier: Apache-2.0
/* Scope-bound cleanup (gnu11 __attribute__((cleanup))), as in crun/systemd.
 * Hand a resource off by stealing it: steal_ptr(&p) / steal_fd(&fd). */
#ifndef IOB_CLEANUP_H
#define IOB_CLEANUP_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/error.h"

static inline void iob_freep(void *p) {
  free(*(void **)p);
}
static inline void iob_closep(int *fd) {
  if (*fd >= 0) {
    int saved = errno;
    close(*fd);
    errno = saved;
  }
}
static inline void iob_fclosep(FILE **f) {
  if (*f)
    fclose(*f);
}
static inline void iob_strvfreep(char ***v) {
  if (*v) {
    for (char **p = *v; *p; p++)
      free(*p);
    free(*v);
  }
}

#define cleanup_free __attribute__((cleanup(iob_freep)))
#define cleanup_close __attribute__((cleanup(iob_closep)))
#define cleanup_file __attribute__((cleanup(iob_fclosep)))
#define cleanup_strv __attribute__((cleanup(iob_strvfreep)))
#define cleanup_error __attribute__((cleanup(iob_error_release)))

static inline void *iob_steal_ptr(void *pp) {
  void **p = (void **)pp;
  void *r = *p;
  *p = NULL;
  return r;
}
static inline int iob_steal_fd(int *fd) {
  int r = *fd;
  *fd = -1;
  return r;
}
#define steal_ptr(pp) iob_steal_ptr(pp)
#define steal_fd(pfd) iob_steal_fd(pfd)

#define IOB_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
