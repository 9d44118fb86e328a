// SPDX-License-Identifier: Apache-2.0
/* The I/O priority lever (agent/protect/ioprio.h).
 *
 * The per-thread path keeps one old class per container, not one per
 * thread: the class the container's first listed task (its init) had when
 * the lever first held it, journalled once with the cgroup's inode.
 * Containers almost always run every thread at the default (none), and
 * threads started while held inherit the held class from their parent, so
 * a per-thread record would not cover them anyway.  A thread with another
 * class than that one chose its own: it is left alone, never held and
 * never put back, which keeps the put-back exact.  The put-back itself is
 * agent/store/restore.c's (the same code replays a crashed agent's journal). */
#include "agent/protect/ioprio.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/store/restore.h"
#include "cgroupv2/blkio.h"
#include "cgroupv2/cg2.h"
#include "cgroupv2/iostat.h"
#include "cgroupv2/throttle.h"
#include "common/cleanup.h"
#include "common/file.h"
#include "common/ioprio.h"
#include "common/log.h"
#include "common/xalloc.h"

#define TASKS_MAX_BYTES (4u << 20)

struct agent_ioprio_ctr {
  const struct agent_ctr *c;
  struct cg2_throttle_target t; /* its cgroup directory and the disks it does I/O on */
  unsigned long long ino;       /* of t.cgdir at registration */
  char tasks_file[AGENT_RESTORE_PATH_MAX];
  char prio_file[AGENT_RESTORE_PATH_MAX]; /* blk-ioprio's file; "" none */
  bool stale;                             /* its cgroup is another one now: never written */
  bool held;
  bool by_file; /* held through prio_file, not thread by thread */
  int at;       /* the class it is held at */
  int old;      /* the class its tasks had (per-thread path) */
  int *tids;
  size_t ntids, captids;
};

const char *agent_ioprio_mode_name(int mode) {
  switch (mode) {
  case AGENT_IOPRIO_IDLE:
    return "idle";
  case AGENT_IOPRIO_BE7:
    return "be7";
  default:
    return "off";
  }
}

void agent_ioprio_init(struct agent_ioprio *io, struct agent_restore *restore, const char *root) {
  *io = (struct agent_ioprio){.restore = restore, .root = root, .mode = AGENT_IOPRIO_IDLE};
}

static struct agent_ioprio_ctr *find(const struct agent_ioprio *io, const struct agent_ctr *c) {
  for (size_t i = 0; i < io->n; i++)
    if (io->v[i].c == c)
      return &io->v[i];
  return NULL;
}

static bool exists(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0;
}

void agent_ioprio_bind(struct agent_ioprio *io, const struct agent_ctr *c) {
  if (c->pid == 0 || find(io, c))
    return;
  struct cg2_throttle_target t;
  cleanup_error struct iob_error *err = NULL;
  struct stat sb;
  if (cg2_throttle_target_resolve(io->root, (pid_t)c->pid, c->bundle, &t, &err) < 0 ||
      t.mech == CG2_THROTTLE_NONE || stat(t.cgdir, &sb) < 0) {
    iob_debug("no I/O priority lever for '%s': %s", c->id,
              err ? err->msg : "no v2 io or v1 blkio cgroup of its own");
    cg2_throttle_target_release(&t);
    return;
  }
  if (io->n == io->cap) {
    io->cap = io->cap ? io->cap * 2 : 8;
    io->v = xrealloc(io->v, io->cap * sizeof(*io->v));
  }
  struct agent_ioprio_ctr *s = &io->v[io->n++];
  *s = (struct agent_ioprio_ctr){.c = c, .t = t, .ino = (unsigned long long)sb.st_ino};
  bool v2 = t.mech == CG2_THROTTLE_V2_IOMAX;
  snprintf(s->tasks_file, sizeof(s->tasks_file), "%s/%s", t.cgdir, v2 ? "cgroup.threads" : "tasks");
  char prio[AGENT_RESTORE_PATH_MAX];
  snprintf(prio, sizeof(prio), "%s/%s", t.cgdir, v2 ? "io.prio.class" : "blkio.prio.class");
  if (exists(prio))
    snprintf(s->prio_file, sizeof(s->prio_file), "%s", prio);
}

/* Still the cgroup bound at registration?  Another one stops the lever
 * for the container, said once. */
static bool still_bound(struct agent_ioprio_ctr *s) {
  struct stat sb;
  if (s->stale || stat(s->t.cgdir, &sb) < 0)
    return false;
  if ((unsigned long long)sb.st_ino == s->ino)
    return true;
  s->stale = true;
  iob_warn("'%s': its cgroup '%s' is another one than at registration: no I/O priority set for "
           "it any more",
           s->c->id, s->t.cgdir);
  return false;
}

/* The scheduler in force on disk MAJ:MIN ("" unknown). */
static void scheduler(const char *root, unsigned maj, unsigned min, char *out, size_t size) {
  char path[256];
  snprintf(path, sizeof(path), "%s/sys/dev/block/%u:%u/queue/scheduler", root ? root : "", maj,
           min);
  cleanup_free char *buf = NULL;
  size_t len = 0;
  cleanup_error struct iob_error *err = NULL;
  out[0] = '\0';
  if (iob_read_file(path, 4096, &buf, &len, &err) < 0)
    return;
  const char *a = strchr(buf, '['), *b = a ? strchr(a, ']') : NULL;
  if (a && b)
    snprintf(out, size, "%.*s", (int)(b - a - 1), a + 1);
  else /* a single scheduler is printed without brackets */
    snprintf(out, size, "%.*s", (int)strcspn(buf, " \n"), buf);
}

/* Whether a class reaches any disk S does I/O on: only mq-deadline and
 * BFQ keep requests apart by class.  *WHY says why not. */
static bool honoured(const struct agent_ioprio *io, struct agent_ioprio_ctr *s, char *why,
                     size_t size) {
  struct cg2_iostat st = {0};
  cleanup_error struct iob_error *e = NULL;
  int rc = s->t.mech == CG2_THROTTLE_V2_IOMAX ? cg2_iostat_read(s->t.cgdir, &st, &e)
                                              : cg2_blkio_read(s->t.cgdir, &st, &e);
  for (size_t i = 0; rc == 0 && i < st.n; i++) {
    const struct cg2_io_counters *c = &st.dev[i].c;
    if ((c->rbytes || c->wbytes || c->rios || c->wios) &&
        cg2_throttle_target_add_dev(io->root, &s->t, st.dev[i].major, st.dev[i].minor, &e) < 0)
      iob_error_release(&e); /* not a disk */
  }
  cg2_iostat_release(&st);
  snprintf(why, size, "'%s': no disk found", s->c->id);
  for (size_t i = 0; i < s->t.ndev; i++) {
    char sched[64];
    scheduler(io->root, s->t.dev[i].major, s->t.dev[i].minor, sched, sizeof(sched));
    if (strcmp(sched, "mq-deadline") == 0 || strcmp(sched, "bfq") == 0)
      return true;
    snprintf(why, size, "'%s': disk %u:%u has scheduler '%s', which ignores I/O priority", s->c->id,
             s->t.dev[i].major, s->t.dev[i].minor, sched[0] ? sched : "unknown");
  }
  return false;
}

static int given(const struct agent_ioprio *io) {
  return io->mode == AGENT_IOPRIO_BE7 ? IOB_IOPRIO_BE7 : IOB_IOPRIO_IDLE;
}

/* blk-ioprio: "idle" for the cgroup (its other policies have no
 * best-effort 7, so be7 goes thread by thread). */
static int hold_file(struct agent_ioprio *io, struct agent_ioprio_ctr *s, struct iob_error **err) {
  if (s->held)
    return 0;
  cleanup_free char *buf = NULL;
  size_t len = 0;
  if (iob_read_file(s->prio_file, 256, &buf, &len, err) < 0)
    return -1;
  while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
    buf[--len] = '\0';
  if (agent_restore_remember(io->restore, s->prio_file, 0, 0, buf, "idle", s->ino, err) < 0 ||
      cg2_write_file(s->prio_file, "idle", err) < 0)
    return -1;
  s->held = true;
  iob_info("'%s' at the I/O priority class idle (%s, was '%s')", s->c->id, s->prio_file, buf);
  return 0;
}

static bool known(const struct agent_ioprio_ctr *s, int tid) {
  for (size_t i = 0; i < s->ntids; i++)
    if (s->tids[i] == tid)
      return true;
  return false;
}

static void keep(int **v, size_t *n, size_t *cap, int tid) {
  if (*n == *cap) {
    *cap = *cap ? *cap * 2 : 16;
    *v = xrealloc(*v, *cap * sizeof(**v));
  }
  (*v)[(*n)++] = tid;
}

/* Every thread listed in the cgroup's task list that has the container's
 * old class gets the lever's; those held before are not asked again, and
 * those no longer listed (exited) are no longer counted. */
static int hold_tasks(struct agent_ioprio *io, struct agent_ioprio_ctr *s, struct iob_error **err) {
  cleanup_free char *buf = NULL;
  size_t len = 0;
  if (iob_read_file(s->tasks_file, TASKS_MAX_BYTES, &buf, &len, err) < 0)
    return -1;
  int to = given(io);
  cleanup_free int *now_held = NULL;
  size_t n = 0, cap = 0, fresh = 0;
  for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
    char *end;
    long tid = strtol(l, &end, 10);
    int now;
    cleanup_error struct iob_error *e = NULL;
    if (*end || tid <= 0 || tid > INT32_MAX)
      continue;
    if (known(s, (int)tid)) {
      keep(&now_held, &n, &cap, (int)tid);
      continue;
    }
    if (iob_ioprio_get((int)tid, &now, &e) < 0)
      continue; /* exited since the list was read */
    if (!s->held) {
      char was[16], w[16];
      iob_ioprio_name(now, was, sizeof(was));
      iob_ioprio_name(to, w, sizeof(w));
      if (was[0] == '\0' || now == to)
        return 0; /* a class of its own (or ours already): not the lever's */
      if (agent_restore_remember(io->restore, s->tasks_file, 0, 0, was, w, s->ino, err) < 0)
        return -1;
      s->old = now;
      s->held = true;
    }
    if (now != s->old && now != to)
      continue;
    if (now != to && iob_ioprio_set((int)tid, to, &e) < 0)
      continue;
    keep(&now_held, &n, &cap, (int)tid);
    fresh++;
  }
  free(s->tids);
  s->tids = steal_ptr(&now_held);
  s->ntids = n;
  s->captids = cap;
  if (fresh)
    iob_debug("'%s': %zu more threads at the I/O priority class %s (%zu in all)", s->c->id, fresh,
              agent_ioprio_mode_name(io->mode), s->ntids);
  return 0;
}

static void put_back(struct agent_ioprio *io, struct agent_ioprio_ctr *s) {
  if (!s->held)
    return;
  s->held = false;
  s->ntids = 0;
  agent_restore_dir(io->restore, s->t.cgdir, AGENT_RESTORE_IOPRIO);
  iob_info("'%s' has its I/O priority back", s->c->id);
}

static void hold(struct agent_ioprio *io, struct agent_ioprio_ctr *s) {
  char why[sizeof(io->why)];
  /* Nothing journalled, nothing written: it could not be put back. */
  if (io->restore == NULL || !still_bound(s))
    return;
  if (!honoured(io, s, why, sizeof(why))) {
    snprintf(io->why, sizeof(io->why), "%s", why);
    put_back(io, s);
    return;
  }
  bool by_file = s->prio_file[0] && io->mode == AGENT_IOPRIO_IDLE;
  /* protect_ioprio changed on reload: what the old class left is put back
   * first, or threads at the old one would be neither held nor put back. */
  if (s->held && (s->by_file != by_file || s->at != given(io)))
    put_back(io, s);
  s->by_file = by_file;
  s->at = given(io);
  cleanup_error struct iob_error *err = NULL;
  int rc = by_file ? hold_file(io, s, &err) : hold_tasks(io, s, &err);
  if (rc < 0 && err->errno_ != ENOENT) /* ENOENT: it has just exited */
    snprintf(io->why, sizeof(io->why), "'%s': %s", s->c->id, err->msg);
}

void agent_ioprio_set(struct agent_ioprio *io, const struct agent_ctr *const *who, size_t n) {
  io->ctrs = io->tasks = 0;
  io->why[0] = '\0';
  for (size_t i = 0; i < io->n; i++) {
    struct agent_ioprio_ctr *s = &io->v[i];
    bool want = false;
    for (size_t k = 0; k < n && !want; k++)
      want = who[k] == s->c;
    if (want && io->mode != AGENT_IOPRIO_OFF)
      hold(io, s);
    else
      put_back(io, s);
    io->ctrs += s->held;
    io->tasks += (unsigned)s->ntids;
  }
}

bool agent_ioprio_held(const struct agent_ioprio *io, const struct agent_ctr *c, size_t *tasks) {
  const struct agent_ioprio_ctr *s = find(io, c);
  if (tasks)
    *tasks = s ? s->ntids : 0;
  return s && s->held;
}

void agent_ioprio_forget(struct agent_ioprio *io, const struct agent_ctr *c) {
  struct agent_ioprio_ctr *s = find(io, c);
  if (s == NULL)
    return;
  put_back(io, s);
  cg2_throttle_target_release(&s->t);
  free(s->tids);
  *s = io->v[--io->n];
}

void agent_ioprio_release(struct agent_ioprio *io) {
  while (io->n > 0)
    agent_ioprio_forget(io, io->v[io->n - 1].c);
  free(io->v);
  io->v = NULL;
  io->cap = 0;
}
