#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/log.h"
#include "runtime-hook/hook.h"

int hook_register(const char *socket_path, const struct hook_state *st,
                  const struct hook_result *res, struct iob_error **err) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  if (strlen(socket_path) >= sizeof(sa.sun_path))
    return iob_error(err, ENAMETOOLONG, "invalid agent socket '%s'", socket_path);
  struct stat sb;
  if (stat(socket_path, &sb) < 0 && errno == ENOENT) {
    iob_debug("no agent at '%s': container '%s' not registered", socket_path, st->id);
    return 0;
  }
  strcpy(sa.sun_path, socket_path);
  cleanup_close int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return iob_error(err, errno, "cannot create a socket for '%s'", socket_path);
  if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
    /* Fail open (DESIGN.md): an agent that is down, or a socket file left by
     * one that died, must not stop containers; the agent re-learns them
     * when it comes back. */
    iob_debug("cannot reach the agent at '%s' (%s): container '%s' not registered", socket_path,
              strerror(errno), st->id);
    return 0;
  }
  /* The agent's ttrpc API (proto/) is not there yet: this is where the
   * Register request with RES goes. */
  iob_debug("agent at '%s' is listening; registration of '%s' (cgroup '%s', class '%s') "
            "waits for the agent API",
            socket_path, st->id, res->cgroup, wcd_class_name(res->cls));
  return 0;
}
