// SPDX-License-Identifier: Apache-2.0
/* OOM notifications: cgroup v1 through an eventfd registered on
 * memory.oom_control, v2 through inotify on memory.events (report when
 * oom_kill goes up).  Watching starts right after Create. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "cgroupv2/cg2.h"
#include "common/cleanup.h"
#include "common/xalloc.h"
#include "shim/oom.h"

struct shim_oom {
  struct iob_loop *loop;
  int fd;       /* eventfd (v1) or inotify (v2) */
  int ctl_fd;   /* v1: memory.oom_control, must stay open */
  char *ctl;    /* v1: its path */
  char *events; /* v2: path of memory.events */
  uint64_t kills;
  shim_oom_fn fn;
  void *data;
};

/* The directory of PID's memory cgroup and whether it is cgroup v2: the v1
 * memory hierarchy when one is mounted (hybrid hosts), else the v2 cgroup
 * under wherever cgroup2 is mounted.  Both the mount points and the
 * /proc/PID/cgroup lines are found by the cg2 library, the one parser of
 * them (a hand-rolled copy here matched no "0::" line, so on a pure v2 host
 * no OOM was ever watched). */
static int memory_cgroup(pid_t pid, char **dir, bool *v2, struct iob_error **err) {
  cleanup_free char *mnt = NULL, *rel = NULL;
  cleanup_error struct iob_error *v1err = NULL;
  if (cg2_v1_mount_find(NULL, "memory", &mnt, &v1err) == 0) {
    if (cg2_pid_cgroup_v1(NULL, pid, "memory", &rel, err) < 0)
      return -1;
    *v2 = false;
  } else {
    struct cg2_mount m = {0};
    if (cg2_mount_find(NULL, &m, err) < 0)
      return -1;
    mnt = steal_ptr(&m.path);
    cg2_mount_release(&m);
    if (cg2_pid_cgroup(NULL, pid, &rel, err) < 0)
      return -1;
    *v2 = true;
  }
  *dir = xasprintf("%s%s", mnt, strcmp(rel, "/") ? rel : "");
  return 0;
}

static uint64_t oom_kills(const char *path) {
  cleanup_file FILE *f = fopen(path, "re");
  char line[128];
  while (f && fgets(line, sizeof(line), f))
    if (!strncmp(line, "oom_kill ", 9))
      return strtoull(line + 9, NULL, 10);
  return 0;
}

static void on_event(struct iob_loop *loop, int fd, uint32_t events, void *data) {
  (void)events;
  struct shim_oom *o = data;
  char buf[512];
  ssize_t n = read(fd, buf, sizeof(buf));
  if (n <= 0) {
    iob_loop_del(loop, fd);
    return;
  }
  if (o->events) {
    uint64_t k = oom_kills(o->events);
    if (k <= o->kills)
      return;
    o->kills = k;
  } else if (access(o->ctl, F_OK) < 0 && errno == ENOENT) {
    /* cgroup v1 signals every eventfd registered on a memory cgroup when
     * the cgroup is removed (mm/memcontrol.c, memcg_event_remove), which
     * is no OOM: report nothing and stop watching, as containerd's v1
     * OOM watcher does when the cgroup is deleted (pkg/oom/v1). */
    iob_loop_del(loop, fd);
    return;
  }
  o->fn(o->data);
}

static int watch_v1(struct shim_oom *o, const char *dir, struct iob_error **err) {
  char path[4200];
  o->ctl = xasprintf("%s/memory.oom_control", dir);
  o->ctl_fd = open(o->ctl, O_RDONLY | O_CLOEXEC);
  if (o->ctl_fd < 0)
    return iob_error(err, errno, "cannot open '%s'", o->ctl);
  o->fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (o->fd < 0)
    return iob_error(err, errno, "cannot create eventfd");
  snprintf(path, sizeof(path), "%s/cgroup.event_control", dir);
  cleanup_close int ctl = open(path, O_WRONLY | O_CLOEXEC);
  if (ctl < 0 || dprintf(ctl, "%d %d", o->fd, o->ctl_fd) < 0)
    return iob_error(err, errno, "cannot register on '%s'", path);
  return 0;
}

static int watch_v2(struct shim_oom *o, const char *dir, struct iob_error **err) {
  o->events = xasprintf("%s/memory.events", dir);
  o->kills = oom_kills(o->events);
  o->fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (o->fd < 0)
    return iob_error(err, errno, "cannot create inotify");
  if (inotify_add_watch(o->fd, o->events, IN_MODIFY) < 0)
    return iob_error(err, errno, "cannot watch '%s'", o->events);
  return 0;
}

int shim_oom_watch(struct iob_loop *loop, pid_t pid, shim_oom_fn fn, void *data,
                   struct shim_oom **out, struct iob_error **err) {
  cleanup_free char *dir = NULL;
  bool v2 = false;
  if (memory_cgroup(pid, &dir, &v2, err) < 0)
    return -1;
  struct shim_oom *o = xcalloc(1, sizeof(*o));
  *o = (struct shim_oom){.loop = loop, .fd = -1, .ctl_fd = -1, .fn = fn, .data = data};
  int r = v2 ? watch_v2(o, dir, err) : watch_v1(o, dir, err);
  if (r == 0)
    r = iob_loop_add(loop, o->fd, EPOLLIN, on_event, o, err);
  if (r < 0) {
    shim_oom_free(o);
    return -1;
  }
  *out = o;
  return 0;
}

void shim_oom_free(struct shim_oom *o) {
  if (o == NULL)
    return;
  if (o->fd >= 0) {
    iob_loop_del(o->loop, o->fd);
    close(o->fd);
  }
  if (o->ctl_fd >= 0)
    close(o->ctl_fd);
  free(o->events);
  free(o->ctl);
  free(o);
}
