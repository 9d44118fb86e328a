// SPDX-License-Identifier: Apache-2.0
/* Error objects in the style of crun: a fallible function returns < 0 and
 * fills *err, or returns >= 0 and leaves it alone.  Errors travel up and are
 * reported once at the boundary (RPC reply, main, the daemon loop). */
#ifndef IOB_ERROR_H
#define IOB_ERROR_H

#include <stdarg.h>

/* gRPC status codes as used on the ttrpc wire (google.rpc.Code). */
enum iob_code {
  IOB_CODE_OK = 0,
  IOB_CODE_CANCELED = 1,
  IOB_CODE_UNKNOWN = 2,
  IOB_CODE_INVALID_ARGUMENT = 3,
  IOB_CODE_DEADLINE_EXCEEDED = 4,
  IOB_CODE_NOT_FOUND = 5,
  IOB_CODE_ALREADY_EXISTS = 6,
  IOB_CODE_PERMISSION_DENIED = 7,
  IOB_CODE_RESOURCE_EXHAUSTED = 8,
  IOB_CODE_FAILED_PRECONDITION = 9,
  IOB_CODE_ABORTED = 10,
  IOB_CODE_OUT_OF_RANGE = 11,
  IOB_CODE_UNIMPLEMENTED = 12,
  IOB_CODE_INTERNAL = 13,
  IOB_CODE_UNAVAILABLE = 14,
  IOB_CODE_DATA_LOSS = 15,
  IOB_CODE_UNAUTHENTICATED = 16,
};

struct iob_error {
  int errno_; /* 0 when the failure is not a system call's */
  int code;   /* enum iob_code, for replies over ttrpc */
  char *msg;  /* "cannot open 'x': No such file or directory" */
};

/* Fill *err (if err is not NULL) and return -1.  When errno_ != 0 the
 * strerror text is appended after ": ".  The code is derived from errno_
 * (ENOENT -> NOT_FOUND, EINVAL -> INVALID_ARGUMENT, ...) or INTERNAL. */
int iob_error(struct iob_error **err, int errno_, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Like iob_error, with an explicit gRPC code and no errno. */
int iob_error_code(struct iob_error **err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prepend "prefix: " to an existing error's message; returns -1. */
int iob_error_prefix(struct iob_error **err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Free *err and set it to NULL (safe on NULL and on *err == NULL). */
void iob_error_release(struct iob_error **err);

/* Print "PROG: msg" to stderr and release the error. */
void iob_error_print(const char *prog, struct iob_error **err);

int iob_code_from_errno(int errno_);

#endif
