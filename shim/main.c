// SPDX-License-Identifier: Apache-2.0
/* containerd-shim-iobatch-v2: dispatch to start, delete, -info, -v or the
 * daemon. */
#include <stdio.h>
#include <stdlib.h>

#include "common/cleanup.h"
#include "common/version.h"
#include "shim/args.h"
#include "shim/daemon.h"
#include "shim/manager.h"
#include "shim/shim.h"

/* The line every iobatch program prints, then the runc shim's -v block
 * (Version, Revision), which scripts written for containerd shims read. */
static int print_version(void) {
  if (iob_version_print(SHIM_NAME) < 0 ||
      printf("  Version: %s\n  Revision: %s\n", iob_version, iob_git_rev) < 0)
    return -1;
  return 0;
}

int main(int argc, char **argv) {
  struct shim_args a;
  cleanup_error struct iob_error *err = NULL;
  int r;
  if (shim_args_parse(&a, argc, argv, &err) < 0)
    r = -1;
  else if (a.version)
    r = print_version();
  else if (a.info)
    r = shim_manager_info(&err);
  else if (a.action && a.action[0] == 's')
    r = shim_manager_start(&a, &err);
  else if (a.action)
    r = shim_manager_delete(&a, &err);
  else
    r = shim_daemon_run(&a, &err);
  if (r < 0) {
    iob_error_print(SHIM_NAME, &err);
    return 1;
  }
  return fflush(stdout) == 0 ? 0 : 1;
}
