// SPDX-License-Identifier: Apache-2.0
/* One pid -> waiter table for the whole shim, with an early-exit cache. */
#ifndef SHIM_REAPER_H
#define SHIM_REAPER_H

#include <sys/types.h>

#include "common/error.h"
#include "shim/shim.h"

typedef void (*shim_reap_fn)(pid_t pid, int status, struct shim_time at, void *data);
/* Call fn when pid exits.  If pid already exited (early-exit cache) fn runs
 * before this returns. */
int shim_reaper_watch(pid_t pid, shim_reap_fn fn, void *data, struct iob_error **err);
/* The same for a child the shim has just spawned: an exit cached for that
 * number is an older process's (pids are reused), not this one's. */
int shim_reaper_watch_child(pid_t pid, shim_reap_fn fn, void *data, struct iob_error **err);
void shim_reaper_unwatch(pid_t pid);
/* wait4(-1, WNOHANG) until nothing is left; dispatch each exit. */
void shim_reaper_reap(void);
/* Hand one exit to its waiter or to the cache (separate for tests). */
void shim_reaper_dispatch(pid_t pid, int status, struct shim_time at);
void shim_reaper_reset(void);

#endif
