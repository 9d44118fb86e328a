// SPDX-License-Identifier: Apache-2.0
/* Protection's I/O priority lever (agent/protect/ioprio.c), pulled by
 * agent/protect/protection.c only, and first: the idle class (or best-effort 7)
 * for every task of the batch containers it is given.  Where the kernel
 * has blk-ioprio (v2 io.prio.class, v1 blkio.prio.class) one write per
 * cgroup does it and covers threads started later; elsewhere
 * ioprio_set(2) per thread of the cgroup's task list, new threads
 * followed each window.  Only on disks whose scheduler honours priority
 * (mq-deadline, bfq): with none or kyber a class changes nothing, and the
 * lever says so.  What was there is journalled first (agent/store/restore.h)
 * and put back.  ioprio.c decides nothing: it is told whom to hold. */
#ifndef IOB_AGENT_IOPRIO_H
#define IOB_AGENT_IOPRIO_H

#include <stdbool.h>
#include <stddef.h>

#include "agent/plan/admission.h"

struct agent_restore;
struct agent_ioprio_ctr;

/* protect_ioprio (agent/config.h) */
enum agent_ioprio_mode {
  AGENT_IOPRIO_OFF = 0,
  AGENT_IOPRIO_IDLE, /* IOPRIO_CLASS_IDLE: served when no other class waits */
  AGENT_IOPRIO_BE7,  /* best-effort, the lowest level */
};
const char *agent_ioprio_mode_name(int mode);

struct agent_ioprio {
  struct agent_restore *restore; /* what was there, journalled before each write */
  const char *root;              /* prefixes /proc, /sys and the mounts; NULL on a real system */
  int mode;                      /* enum agent_ioprio_mode */
  struct agent_ioprio_ctr *v;    /* per bound container */
  size_t n, cap;
  /* The last set: containers held, threads held one by one, and why a
   * container given was not held ("" none). */
  unsigned ctrs, tasks;
  char why[160];
};

void agent_ioprio_init(struct agent_ioprio *io, struct agent_restore *restore, const char *root);
/* Resolve CTR's cgroup once, from its pid at registration, to a
 * directory and its inode (nothing without a pid; nothing again once
 * done): the lever writes there only while it is that inode. */
void agent_ioprio_bind(struct agent_ioprio *io, const struct agent_ctr *ctr);
/* Hold the N containers WHO at the mode's class (new threads too) and put
 * back every other one held before. */
void agent_ioprio_set(struct agent_ioprio *io, const struct agent_ctr *const *who, size_t n);
/* CTR leaves: put back what it had, forget it. */
void agent_ioprio_forget(struct agent_ioprio *io, const struct agent_ctr *ctr);
/* The agent stops: everything put back. */
void agent_ioprio_release(struct agent_ioprio *io);
/* Whether CTR is held now, and how many of its threads one by one. */
bool agent_ioprio_held(const struct agent_ioprio *io, const struct agent_ctr *ctr, size_t *tasks);

#endif
