// SPDX-License-Identifier: Apache-2.0
/* A registered container ends when its pid does (agent/serve/pidwatch.h).  The
 * hook alone (podman, CRI-O, runc through hooks.d) has no shim to report
 * the exit: only its poststop does, and a poststop that never runs (a
 * killed runtime, a runtime without the hook configured for poststop)
 * would leave the entry until the sampler notices an empty cgroup or the
 * created-entry expiry.  A pidfd (pidfd_open(2), Linux 5.3) becomes
 * readable when the process exits, zombie or reaped, whoever its parent
 * is; the agent waits for it on its loop.  Pids are the host's: the agent
 * runs in the host's pid namespace, as it reads /proc/PID/io anyway. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/serve/pidwatch.h"
#include "common/cleanup.h"
#include "common/log.h"
#include "common/xalloc.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434 /* the same number on every architecture */
#endif

/* A container a shim registered is ended by the shim's own report
 * (Exited with its status, or the cancel of a held Start); its pid's end
 * only starts this wait, after which a shim that said nothing is taken
 * to be gone. */
#define PIDWATCH_SHIM_GRACE_MS 5000

struct pid_watch {
  struct agent_pidwatch *pw;
  struct agent_ctr *ctr;
  int fd;                 /* -1 once it fired */
  struct iob_timer *wait; /* the grace for a shim's report */
};

static void end_entry(struct pid_watch *w) {
  struct agent_pidwatch *pw = w->pw;
  struct agent_ctr *c = w->ctr;
  iob_info("'%s' exited: its pid %u ended (pidfd), with no exit reported", c->id, c->pid);
  pw->ops->ended(pw->user, c); /* frees w too (agent_pidwatch_forget) */
}

static void on_grace_over(struct iob_loop *loop, void *data) {
  (void)loop;
  struct pid_watch *w = data;
  w->wait = NULL;
  end_entry(w);
}

static void on_pid_exit(struct iob_loop *loop, int fd, uint32_t events, void *data) {
  (void)loop;
  (void)fd;
  (void)events;
  struct pid_watch *w = data;
  struct agent_ctr *c = w->ctr;
  if (c->source && strcmp(c->source, "shim") == 0) {
    iob_loop_del(w->pw->loop, w->fd);
    close(w->fd);
    w->fd = -1;
    w->wait = iob_loop_timer(w->pw->loop, PIDWATCH_SHIM_GRACE_MS, on_grace_over, w);
    return;
  }
  end_entry(w);
}

void agent_pidwatch_init(struct agent_pidwatch *pw, struct iob_loop *loop,
                         const struct agent_pidwatch_ops *ops, void *user) {
  *pw = (struct agent_pidwatch){.loop = loop, .ops = ops, .user = user};
}

void agent_pidwatch_add(struct agent_pidwatch *pw, struct agent_ctr *c) {
  if (pw->loop == NULL || c->pid == 0 || c->pid_watch || pw->unsupported)
    return;
  int fd = (int)syscall(SYS_pidfd_open, (pid_t)c->pid, 0);
  if (fd < 0) {
    if (errno == ENOSYS || errno == EPERM) {
      /* An old kernel, or a seccomp profile that refuses it: entries end
       * by Exited, poststop, the sampler or expiry, as with no watch. */
      pw->unsupported = true;
      iob_warn("cannot watch container pids (pidfd_open: %s): a container without a shim "
               "ends by its poststop, an empty cgroup or expiry",
               strerror(errno));
    } else {
      /* ESRCH: gone already, or not in our pid namespace; the sampler
       * decides (an empty cgroup ends it). */
      iob_debug("'%s': pid %u not watched: %s", c->id, c->pid, strerror(errno));
    }
    return;
  }
  struct pid_watch *w = xmalloc(sizeof(*w));
  cleanup_error struct iob_error *err = NULL;
  *w = (struct pid_watch){.pw = pw, .ctr = c, .fd = fd, .wait = NULL};
  if (iob_loop_add(pw->loop, fd, EPOLLIN, on_pid_exit, w, &err) < 0) {
    iob_warn("'%s': pid %u not watched: %s", c->id, c->pid, err->msg);
    close(fd);
    free(w);
    return;
  }
  c->pid_watch = w;
}

void agent_pidwatch_forget(struct agent_pidwatch *pw, struct agent_ctr *c) {
  struct pid_watch *w = c->pid_watch;
  if (w == NULL)
    return;
  c->pid_watch = NULL;
  if (w->wait && pw->loop)
    iob_timer_cancel(pw->loop, w->wait);
  if (w->fd >= 0) {
    if (pw->loop)
      iob_loop_del(pw->loop, w->fd);
    close(w->fd);
  }
  free(w);
}
