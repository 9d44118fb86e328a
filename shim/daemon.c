// SPDX-License-Identifier: Apache-2.0
/* The shim daemon: child subreaper, log FIFO on stderr, signalfd, the ttrpc
 * server on the listener `start` left as fd 3. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/log.h"
#include "shim/daemon.h"
#include "shim/events.h"
#include "shim/reaper.h"
#include "shim/service.h"
#include "shim/trim.h"
#include "ttrpc/ttrpc.h"

#define LISTENER_FD 3
#define DRAIN_MS 5000

struct daemon {
  struct iob_loop *loop;
  struct ttrpc_server *server;
  struct shim_service *svc;
  char sock[108];
  int sfd;
};

/* containerd holds the FIFO open for reading, so this open does not block;
 * non-blocking writes keep a stalled reader from stalling the shim. */
static void open_log(void) {
  int fd = open("log", O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  /* No reader yet (ENXIO): read-write opens never fail on a FIFO, and
   * containerd's reader gets what was written once it opens. */
  if (fd < 0 && errno == ENXIO)
    fd = open("log", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return;
  dup2(fd, 2);
  close(fd);
}

static void on_signal(struct iob_loop *loop, int fd, uint32_t events, void *data) {
  (void)events;
  struct daemon *d = data;
  struct signalfd_siginfo si;
  while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
    if (si.ssi_signo == SIGCHLD) {
      shim_reaper_reap();
      /* Children mean runc ran: a burst of work just happened. */
      shim_trim_later(loop);
    } else {
      iob_info("received signal %u, exiting", si.ssi_signo);
      iob_loop_stop(loop);
    }
  }
  (void)d;
}

static int setup_signals(struct daemon *d, struct iob_error **err) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
    return iob_error(err, errno, "sigprocmask");
  signal(SIGPIPE, SIG_IGN);
  d->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (d->sfd < 0)
    return iob_error(err, errno, "signalfd");
  return iob_loop_add(d->loop, d->sfd, EPOLLIN, on_signal, d, err);
}

static void remember_socket(struct daemon *d) {
  struct sockaddr_un sa;
  socklen_t len = sizeof(sa);
  memset(&sa, 0, sizeof(sa));
  if (getsockname(LISTENER_FD, (struct sockaddr *)&sa, &len) == 0 && sa.sun_path[0] == '/')
    memcpy(d->sock, sa.sun_path, sizeof(d->sock) - 1);
}

static int setup(struct daemon *d, const struct shim_args *a, struct iob_error **err) {
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
    return iob_error(err, errno, "cannot become a child subreaper");
  if (iob_loop_new(&d->loop, err) < 0 || setup_signals(d, err) < 0)
    return -1;
  remember_socket(d);
  if (ttrpc_server_new(d->loop, &d->server, err) < 0 ||
      shim_service_new(d->loop, d->server, a->ns, &d->svc, err) < 0 ||
      ttrpc_server_serve_fd(d->server, LISTENER_FD, err) < 0)
    return -1;
  const char *ttrpc = getenv("TTRPC_ADDRESS");
  cleanup_error struct iob_error *eerr = NULL;
  if (shim_events_init(d->loop, ttrpc, a->ns, &eerr) < 0)
    iob_warn("events disabled: %s", eerr->msg);
  return 0;
}

/* Answers already queued (Shutdown's) still go out while events drain. */
static void finish(struct daemon *d) {
  ttrpc_server_close_listeners(d->server);
  if (d->sock[0])
    unlink(d->sock);
  shim_events_drain(d->loop, DRAIN_MS);
  for (int i = 0; i < 5; i++)
    iob_loop_run_once(d->loop, 10, NULL);
}

int shim_daemon_run(const struct shim_args *a, struct iob_error **err) {
  struct daemon d = {.sfd = -1};
  open_log();
  iob_log_init("iobatch-shim", a->debug);
  int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (fd >= 0) {
    dup2(fd, 0);
    dup2(fd, 1);
    close(fd);
  }
  int r = setup(&d, a, err);
  if (r == 0) {
    shim_trim_later(d.loop);
    r = iob_loop_run(d.loop, err);
  }
  if (r == 0)
    finish(&d);
  ttrpc_server_free(d.server);
  shim_service_free(d.svc);
  if (d.sfd >= 0)
    close(d.sfd);
  iob_loop_free(d.loop);
  return r;
}
