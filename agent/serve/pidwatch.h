// SPDX-License-Identifier: Apache-2.0
/* A registered container ends when its pid does (agent/serve/pidwatch.c): a
 * pidfd per registered pid on the daemon's loop, for containers whose exit
 * nobody reports (the hook alone, its poststop not run).  Nothing on
 * kernels without pidfd_open.  The owner (daemon.c) is told through
 * ops->ended and ends the entry as if Exited; pidwatch.c calls nothing
 * else of the agent's. */
#ifndef IOB_AGENT_PIDWATCH_H
#define IOB_AGENT_PIDWATCH_H

#include <stdbool.h>

#include "agent/plan/admission.h"
#include "common/loop.h"

struct agent_pidwatch_ops {
  /* ctr's pid ended and no exit was reported (a shim's after a grace):
   * end the entry; agent_pidwatch_forget(ctr) must follow. */
  void (*ended)(void *user, struct agent_ctr *ctr);
};

struct agent_pidwatch {
  struct iob_loop *loop; /* NULL: nothing is watched (headless) */
  const struct agent_pidwatch_ops *ops;
  void *user;
  bool unsupported; /* pidfd_open refused once (ENOSYS, EPERM): not tried again */
};

void agent_pidwatch_init(struct agent_pidwatch *pw, struct iob_loop *loop,
                         const struct agent_pidwatch_ops *ops, void *user);
/* Watch ctr's pid (ctr->pid_watch); nothing if it is watched already. */
void agent_pidwatch_add(struct agent_pidwatch *pw, struct agent_ctr *ctr);
/* Stop watching ctr (it leaves). */
void agent_pidwatch_forget(struct agent_pidwatch *pw, struct agent_ctr *ctr);

#endif
