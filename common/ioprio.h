// SPDX-License-Identifier: Apache-2.0
/* A task's I/O priority (ioprio_get(2), ioprio_set(2)): glibc has no
 * wrapper, so the calls go through syscall(2).  The values are the
 * kernel's (include/uapi/linux/ioprio.h): the class in the bits from 13
 * up, its level below.  Named in words for journals and logs: "none",
 * "rtN", "beN" (N 0 to 7) and "idle". */
#ifndef IOB_COMMON_IOPRIO_H
#define IOB_COMMON_IOPRIO_H

#include <stddef.h>

#include "common/error.h"

#define IOB_IOPRIO_CLASS_SHIFT 13
#define IOB_IOPRIO_CLASS_NONE 0
#define IOB_IOPRIO_CLASS_RT 1
#define IOB_IOPRIO_CLASS_BE 2
#define IOB_IOPRIO_CLASS_IDLE 3
#define IOB_IOPRIO_WHO_PROCESS 1
#define IOB_IOPRIO_VALUE(cls, level) (((cls) << IOB_IOPRIO_CLASS_SHIFT) | (level))
#define IOB_IOPRIO_CLASS(v) (((v) >> IOB_IOPRIO_CLASS_SHIFT) & 7)
#define IOB_IOPRIO_LEVEL(v) ((v)&7)

#define IOB_IOPRIO_IDLE IOB_IOPRIO_VALUE(IOB_IOPRIO_CLASS_IDLE, 0)
#define IOB_IOPRIO_BE7 IOB_IOPRIO_VALUE(IOB_IOPRIO_CLASS_BE, 7)

/* Thread TID's priority into *PRIO / set to PRIO (IOPRIO_WHO_PROCESS: one
 * thread, not its process). */
int iob_ioprio_get(int tid, int *prio, struct iob_error **err);
int iob_ioprio_set(int tid, int prio, struct iob_error **err);

/* PRIO in words (at least 8 bytes); "" for a value outside the classes. */
void iob_ioprio_name(int prio, char *out, size_t size);
/* The words back to a value: 0, or -1 for anything else. */
int iob_ioprio_parse(const char *s, int *prio);

#endif
