// SPDX-License-Identifier: Apache-2.0
/* The console socket runc sends the pty master to (SCM_RIGHTS). */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/xalloc.h"
#include "shim/console.h"

struct shim_console_socket {
  int fd;
  char dir[64];
  char path[96];
};

int shim_console_socket_new(struct shim_console_socket **out, struct iob_error **err) {
  struct shim_console_socket *s = xcalloc(1, sizeof(*s));
  const char *tmp = getenv("TMPDIR");
  if (tmp == NULL || strlen(tmp) > 40 || tmp[0] != '/')
    tmp = "/tmp";
  snprintf(s->dir, sizeof(s->dir), "%s/ptyXXXXXX", tmp);
  if (mkdtemp(s->dir) == NULL) {
    free(s);
    return iob_error(err, errno, "cannot create console socket dir");
  }
  snprintf(s->path, sizeof(s->path), "%s/pty.sock", s->dir);
  s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  strcpy(sa.sun_path, s->path);
  if (s->fd < 0 || bind(s->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(s->fd, 1) < 0) {
    int e = errno;
    shim_console_socket_free(s);
    return iob_error(err, e, "cannot listen on console socket");
  }
  *out = s;
  return 0;
}

const char *shim_console_socket_path(const struct shim_console_socket *s) {
  return s->path;
}

static int recv_fd(int conn, int *master, struct iob_error **err) {
  char name[4096];
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(sizeof(int))];
  } cm;
  struct iovec iov = {.iov_base = name, .iov_len = sizeof(name)};
  struct msghdr msg = {
      .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.buf, .msg_controllen = sizeof(cm.buf)};
  ssize_t n;
  do
    n = recvmsg(conn, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n < 0)
    return iob_error(err, errno, "cannot receive console");
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  if (c == NULL || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
      c->cmsg_len != CMSG_LEN(sizeof(int)))
    return iob_error_code(err, IOB_CODE_INTERNAL, "no console fd received");
  memcpy(master, CMSG_DATA(c), sizeof(int));
  return 0;
}

int shim_console_socket_recv(struct shim_console_socket *s, int timeout_ms, int *master,
                             struct iob_error **err) {
  struct pollfd p = {.fd = s->fd, .events = POLLIN};
  int r;
  do
    r = poll(&p, 1, timeout_ms);
  while (r < 0 && errno == EINTR);
  if (r == 0)
    return iob_error_code(err, IOB_CODE_DEADLINE_EXCEEDED, "timed out waiting for the console");
  cleanup_close int conn = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
  if (conn < 0)
    return iob_error(err, errno, "cannot accept console connection");
  return recv_fd(conn, master, err);
}

void shim_console_socket_free(struct shim_console_socket *s) {
  if (s == NULL)
    return;
  if (s->fd >= 0)
    close(s->fd);
  unlink(s->path);
  rmdir(s->dir);
  free(s);
}
