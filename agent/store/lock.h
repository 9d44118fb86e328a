// SPDX-License-Identifier: Apache-2.0
/* One agent per state directory: two agents sharing one would
 * each overwrite restore.json with only their own entries and record the
 * other's caps as "originals".  And the mark that tells the next agent
 * whether this one left containers behind. */
#ifndef IOB_AGENT_LOCK_H
#define IOB_AGENT_LOCK_H

#include <stdbool.h>

#include "common/error.h"

#define AGENT_LOCK_FILE "iobatchd.lock"

/* Create STATE_DIR (0700) if needed, open STATE_DIR/iobatchd.lock and
 * take flock(LOCK_EX | LOCK_NB) on it, then write our pid into it.  The
 * lock lives as long as *fd_out is open (the kernel drops it when the
 * process dies, however it dies: no stale lock to clean up).  Held by
 * another process: an error naming its pid, as that process wrote it. */
int agent_lock_state_dir(const char *state_dir, int *fd_out, struct iob_error **err);

/* After a restart the agent plans nothing for this long (deadlines aside):
 * its state is soft, and the shims of running containers register them
 * again within a few of their 200 ms retries (client/client.c); admitting a
 * pending container before that would put it beside the very containers
 * it conflicts with.  A restart is told from a first start by the mark
 * "<socket>.live" (next to the socket, so a reboot clears it): made at
 * start, removed by a clean stop with no container left. */
#define AGENT_SETTLE_MS 1000
/* Make the mark MARK ("<socket>.live", O_EXCL | O_NOFOLLOW, 0600).  True
 * when it was there already: the last agent stopped with containers or
 * did not stop cleanly, and the caller waits AGENT_SETTLE_MS.  A mark that
 * cannot be made is a warning: a restart will then not wait. */
bool agent_lock_mark_live(const char *mark);
/* A clean stop with nothing registered: remove MARK (a warning if that
 * fails). */
void agent_lock_unmark_live(const char *mark);

#endif
