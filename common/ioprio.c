// SPDX-License-Identifier: Apache-2.0
#include "common/ioprio.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int iob_ioprio_get(int tid, int *prio, struct iob_error **err) {
  long v = syscall(SYS_ioprio_get, IOB_IOPRIO_WHO_PROCESS, tid);
  if (v < 0)
    return iob_error(err, errno, "cannot read the I/O priority of thread %d", tid);
  *prio = (int)v;
  return 0;
}

int iob_ioprio_set(int tid, int prio, struct iob_error **err) {
  if (syscall(SYS_ioprio_set, IOB_IOPRIO_WHO_PROCESS, tid, prio) < 0)
    return iob_error(err, errno, "cannot set the I/O priority of thread %d", tid);
  return 0;
}

void iob_ioprio_name(int prio, char *out, size_t size) {
  int level = IOB_IOPRIO_LEVEL(prio);
  /* Bits beside the class and level (hints, kernel 6.6 and later) are
   * not named: such a value is not ours to put back in words. */
  if (prio < 0 || (prio & ~IOB_IOPRIO_VALUE(7, 7)) != 0) {
    snprintf(out, size, "%s", "");
    return;
  }
  switch (IOB_IOPRIO_CLASS(prio)) {
  case IOB_IOPRIO_CLASS_NONE:
    snprintf(out, size, "%s", level ? "" : "none");
    break;
  case IOB_IOPRIO_CLASS_RT:
    snprintf(out, size, "rt%d", level);
    break;
  case IOB_IOPRIO_CLASS_BE:
    snprintf(out, size, "be%d", level);
    break;
  case IOB_IOPRIO_CLASS_IDLE:
    snprintf(out, size, "%s", level ? "" : "idle");
    break;
  default:
    snprintf(out, size, "%s", "");
  }
}

int iob_ioprio_parse(const char *s, int *prio) {
  if (strcmp(s, "none") == 0) {
    *prio = IOB_IOPRIO_VALUE(IOB_IOPRIO_CLASS_NONE, 0);
    return 0;
  }
  if (strcmp(s, "idle") == 0) {
    *prio = IOB_IOPRIO_IDLE;
    return 0;
  }
  if (strlen(s) == 3 && s[2] >= '0' && s[2] <= '7' &&
      (strncmp(s, "rt", 2) == 0 || strncmp(s, "be", 2) == 0)) {
    int cls = s[0] == 'r' ? IOB_IOPRIO_CLASS_RT : IOB_IOPRIO_CLASS_BE;
    *prio = IOB_IOPRIO_VALUE(cls, s[2] - '0');
    return 0;
  }
  return -1;
}
