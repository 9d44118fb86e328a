// SPDX-License-Identifier: Apache-2.0
/* One agent per state directory: two agents sharing one would
 * each overwrite restore.json with only their own entries and record the
 * other's caps as "originals". */
#ifndef IOB_AGENT_LOCK_H
#define IOB_AGENT_LOCK_H

#include "common/error.h"

#define AGENT_LOCK_FILE "iobatchd.lock"

/* Create STATE_DIR (0700) if needed, open STATE_DIR/iobatchd.lock and
 * take flock(LOCK_EX | LOCK_NB) on it, then write our pid into it.  The
 * lock lives as long as *fd_out is open (the kernel drops it when the
 * process dies, however it dies: no stale lock to clean up).  Held by
 * another process: an error naming its pid, as that process wrote it. */
int agent_lock_state_dir(const char *state_dir, int *fd_out, struct iob_error **err);

#endif
