// SPDX-License-Identifier: Apache-2.0
/* sd_notify(3) over a plain datagram socket: systemd documents the wire
 * format as stable so that services need not link libsystemd. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "common/cleanup.h"
#include "common/sdnotify.h"

int iob_sd_notify_to(const char *addr, const char *state, struct iob_error **err) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  size_t n = strlen(addr);
  /* systemd also knows "vsock:CID:PORT" (v253+); nothing here sends to it. */
  if (n < 2 || (addr[0] != '/' && addr[0] != '@'))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "invalid NOTIFY_SOCKET '%s': not a path or an abstract name", addr);
  if (n > sizeof(sa.sun_path) - (addr[0] == '/'))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid NOTIFY_SOCKET '%s': too long",
                          addr);
  memcpy(sa.sun_path, addr, n);
  if (addr[0] == '@')
    sa.sun_path[0] = '\0'; /* abstract: the name is exactly n bytes, no NUL */
  socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
  cleanup_close int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return iob_error(err, errno, "cannot create a socket for NOTIFY_SOCKET");
  size_t m = strlen(state);
  ssize_t w;
  do
    w = sendto(fd, state, m, MSG_NOSIGNAL, (struct sockaddr *)&sa, len);
  while (w < 0 && errno == EINTR);
  if (w < 0)
    return iob_error(err, errno, "cannot notify '%s'", addr);
  if ((size_t)w != m)
    return iob_error(err, EMSGSIZE, "cannot notify '%s'", addr);
  return 1;
}

int iob_sd_notify(const char *state, struct iob_error **err) {
  const char *addr = getenv("NOTIFY_SOCKET");
  if (addr == NULL || *addr == '\0')
    return 0;
  return iob_sd_notify_to(addr, state, err);
}
