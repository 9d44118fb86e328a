// SPDX-License-Identifier: Apache-2.0
#include "common/error.h"
#include "common/log.h"
#include "common/xalloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int iob_code_from_errno(int e) {
  switch (e) {
  case 0:
    return IOB_CODE_INTERNAL;
  case ENOENT:
  case ESRCH:
    return IOB_CODE_NOT_FOUND;
  case EEXIST:
    return IOB_CODE_ALREADY_EXISTS;
  case EINVAL:
  case ENAMETOOLONG:
    return IOB_CODE_INVALID_ARGUMENT;
  case EPERM:
  case EACCES:
    return IOB_CODE_PERMISSION_DENIED;
  case ENOMEM:
  case ENOSPC:
  case EMSGSIZE:
  case E2BIG:
    return IOB_CODE_RESOURCE_EXHAUSTED;
  case ETIMEDOUT:
    return IOB_CODE_DEADLINE_EXCEEDED;
  case ENOSYS:
  case EOPNOTSUPP:
    return IOB_CODE_UNIMPLEMENTED;
  case ECANCELED:
    return IOB_CODE_CANCELED;
  case ECONNREFUSED:
  case EAGAIN:
    return IOB_CODE_UNAVAILABLE;
  default:
    return IOB_CODE_INTERNAL;
  }
}

static int fill(struct iob_error **err, int errno_, int code, const char *fmt, va_list ap) {
  if (err == NULL)
    return -1;
  struct iob_error *e = xcalloc(1, sizeof(*e));
  char *m = NULL;
  if (vasprintf(&m, fmt, ap) < 0)
    iob_oom();
  if (errno_ != 0) {
    char *full = xasprintf("%s: %s", m, strerror(errno_));
    free(m);
    m = full;
  }
  e->errno_ = errno_;
  e->code = code;
  e->msg = m;
  if (*err)
    iob_error_release(err);
  *err = e;
  return -1;
}

int iob_error(struct iob_error **err, int errno_, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fill(err, errno_, iob_code_from_errno(errno_), fmt, ap);
  va_end(ap);
  return -1;
}

int iob_error_code(struct iob_error **err, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fill(err, 0, code, fmt, ap);
  va_end(ap);
  return -1;
}

int iob_error_prefix(struct iob_error **err, const char *fmt, ...) {
  if (err == NULL || *err == NULL)
    return -1;
  va_list ap;
  char *p = NULL, *full = NULL;
  va_start(ap, fmt);
  if (vasprintf(&p, fmt, ap) < 0)
    iob_oom();
  va_end(ap);
  full = xasprintf("%s: %s", p, (*err)->msg);
  free(p);
  free((*err)->msg);
  (*err)->msg = full;
  return -1;
}

void iob_error_release(struct iob_error **err) {
  if (err == NULL || *err == NULL)
    return;
  free((*err)->msg);
  free(*err);
  *err = NULL;
}

void iob_error_print(const char *prog, struct iob_error **err) {
  if (err == NULL || *err == NULL)
    return;
  fprintf(stderr, "%s%s: %s\n", iob_log_prefix(IOB_LOG_ERROR), prog, (*err)->msg);
  iob_error_release(err);
}
