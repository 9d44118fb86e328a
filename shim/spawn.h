// SPDX-License-Identifier: Apache-2.0
/* Every child process of the shim goes through shim_spawn. */
#ifndef SHIM_SPAWN_H
#define SHIM_SPAWN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"

struct shim_spawn {
  const char *const *argv; /* argv[0] is looked up in PATH */
  int fds[3];              /* stdin, stdout, stderr; -1: /dev/null */
  int extra[3];            /* become fds 3, 4, 5 when >= 0 */
  int n_extra;
  const char *cwd;
  const char *const *setenv; /* "K=V" entries added to the environment */
  bool pdeathsig;            /* SIGKILL when the shim dies (runc) */
  bool setpgid;
  bool keep_thp; /* the daemon keeps PR_SET_THP_DISABLE */
};

int shim_spawn(const struct shim_spawn *sp, pid_t *pid, struct iob_error **err);
/* Wait for a child we spawned synchronously (not in the daemon, whose
 * children are reaped on its loop); *status is the raw wait status. */
int shim_spawn_wait(pid_t pid, int *status, struct iob_error **err);
/* WEXITSTATUS, or 128 + signal. */
uint32_t shim_exit_code(int status);

#endif
