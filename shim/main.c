/* containerd-shim-iobatch-v2: dispatch to start, delete, -info, -v or the
 * daemon. */
#include <stdio.h>
#include <stdlib.h>

#include "common/cleanup.h"
#include "shim/shim.h"

int main(int argc, char **argv) {
  struct shim_args a;
  cleanup_error struct iob_error *err = NULL;
  int r;
  if (shim_args_parse(&a, argc, argv, &err) < 0)
    r = -1;
  else if (a.version)
    r = printf("%s:\n  Version: %s\n", SHIM_NAME, SHIM_VERSION) < 0 ? -1 : 0;
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
