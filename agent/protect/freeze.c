// SPDX-License-Identifier: Apache-2.0
/* The concurrency lever: batch containers frozen so that at most a limit
 * of them do I/O at once (agent/protect/protection.c decides the limit and the
 * candidates, agent_protect_freeze_pick which ones; here it is written,
 * cgroupv2/freeze.h).  What the freezer file held is journalled
 * (agent/store/restore.h, AGENT_RESTORE_FREEZE) before the first freeze, and put
 * back on thaw, when the container leaves and when the agent stops; a
 * crashed agent's successor replays the journal at start and thaws.
 *
 * Never frozen: a protected or service container, one past its budget (a
 * frozen job's time counts against it: at the budget it is thawed for
 * good), one frozen by someone else (docker pause), one whose cgroup a
 * container that may not be frozen shares.
 *
 * The target is resolved once, when the container registers with its pid
 * (agent_freeze_bind, as caps.c binds its targets), to a file and the
 * inode of its directory; before each freeze the inode is checked.  A pid
 * looked up later may be another process's (reused), and a cgroup path
 * may be another cgroup by then (removed and made again for a new
 * container with the same id): either would freeze a container the lever
 * never chose.  Such a container is never frozen, with one log line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/protect/freeze.h"

#include "agent/store/restore.h"
#include "cgroupv2/freeze.h"
#include "common/cleanup.h"
#include "common/loop.h"
#include "common/log.h"
#include "common/xalloc.h"

struct freeze_state {
  struct cg2_freeze_target t;
  bool bound;             /* agent_freeze_bind ran with a pid */
  unsigned long long ino; /* of t.file's directory at registration (0: no target) */
  char why[160];          /* why there is no target */
};

void agent_freezer_init(struct agent_freezer *f, struct agent_adm *adm,
                        struct agent_restore *restore, const char *root) {
  *f = (struct agent_freezer){.adm = adm, .restore = restore, .root = root};
}

static struct freeze_state *state_of(struct agent_ctr *c) {
  if (c->freeze.state == NULL)
    c->freeze.state = xcalloc(1, sizeof(struct freeze_state));
  return c->freeze.state;
}

/* The directory of a cgroup file, as agent_restore_dir takes it. */
static void dir_of(const char *file, char *out, size_t size) {
  const char *slash = strrchr(file, '/');
  size_t n = slash ? (size_t)(slash - file) : 0;
  snprintf(out, size, "%.*s", (int)n, file);
}

static void thaw(struct agent_freezer *f, struct agent_ctr *c, uint64_t now, const char *why) {
  struct freeze_state *st = c->freeze.state;
  if (!c->freeze.frozen || st == NULL)
    return;
  char dir[AGENT_RESTORE_PATH_MAX];
  dir_of(st->t.file, dir, sizeof(dir));
  agent_restore_dir(f->restore, dir, AGENT_RESTORE_FREEZE);
  c->freeze.frozen = false;
  if (now > c->freeze.since_ms)
    c->freeze.frozen_ms += now - c->freeze.since_ms;
  c->freeze.since_ms = 0;
  iob_info("thawed '%s' (%s; frozen %.1f s in all)", c->id, why,
           (double)c->freeze.frozen_ms / 1000);
}

/* Whether O is one of the N candidates WHO that may still be frozen. */
static bool may_freeze(struct agent_ctr *const *who, size_t n, const struct agent_ctr *o) {
  for (size_t i = 0; i < n; i++)
    if (who[i] == o)
      return !o->freeze.done;
  return false;
}

/* Another registered container that may not be frozen in C's cgroup. */
static bool shares_cgroup(struct agent_freezer *f, const struct agent_ctr *c,
                          struct agent_ctr *const *who, size_t n) {
  if (c->cgroup == NULL || c->cgroup[0] == '\0')
    return false;
  for (struct agent_ctr *o = f->adm->list; o; o = o->next)
    if (o != c && o->cgroup && strcmp(o->cgroup, c->cgroup) == 0 && !may_freeze(who, n, o))
      return true;
  return false;
}

static unsigned long long dir_ino(const char *file) {
  char dir[AGENT_RESTORE_PATH_MAX];
  dir_of(file, dir, sizeof(dir));
  struct stat sb;
  return stat(dir, &sb) == 0 ? (unsigned long long)sb.st_ino : 0;
}

void agent_freeze_bind(struct agent_freezer *f, struct agent_ctr *c) {
  if (c->pid == 0 || (c->freeze.state && ((struct freeze_state *)c->freeze.state)->bound))
    return;
  struct freeze_state *st = state_of(c);
  cleanup_error struct iob_error *err = NULL;
  st->bound = true;
  if (cg2_freeze_target_resolve(f->root, (pid_t)c->pid, &st->t, &err) < 0 ||
      st->t.mech == CG2_FREEZE_NONE || (st->ino = dir_ino(st->t.file)) == 0) {
    snprintf(st->why, sizeof(st->why), "%s",
             err                             ? err->msg
             : st->t.mech == CG2_FREEZE_NONE ? "no freezer.state or cgroup.freeze for its cgroup"
                                             : "its cgroup is gone");
    cg2_freeze_target_release(&st->t);
    st->t.mech = CG2_FREEZE_NONE;
    st->ino = 0;
  }
}

/* Whether C's freeze target is still the cgroup bound at registration; a
 * gone one fails quietly (the container exited). */
static bool still_bound(const struct freeze_state *st, const struct agent_ctr *c) {
  unsigned long long now = dir_ino(st->t.file);
  if (now == st->ino)
    return true;
  char dir[AGENT_RESTORE_PATH_MAX];
  dir_of(st->t.file, dir, sizeof(dir));
  if (now != 0)
    iob_warn("'%s': its cgroup '%s' is another one than at registration (inode %llu, was %llu: "
             "recreated): never frozen",
             c->id, dir, now, st->ino);
  return false;
}

/* Freeze C; false when it cannot be (freeze_done is set then: not tried
 * again). */
static bool freeze(struct agent_freezer *f, struct agent_ctr *c, struct agent_ctr *const *who,
                   size_t n, unsigned limit, uint64_t now) {
  struct freeze_state *st = state_of(c);
  cleanup_error struct iob_error *err = NULL;
  if (!st->bound || st->t.mech == CG2_FREEZE_NONE) {
    iob_warn("cannot freeze '%s': %s", c->id,
             st->bound ? st->why : "no pid at registration to find its cgroup by");
    c->freeze.done = true;
    return false;
  }
  if (!still_bound(st, c)) {
    c->freeze.done = true;
    return false;
  }
  bool already = false;
  if (shares_cgroup(f, c, who, n) || cg2_freeze_get(&st->t, &already, &err) < 0 || already) {
    iob_info("'%s' is not frozen by the agent: %s", c->id,
             err       ? err->msg
             : already ? "it is frozen already (by someone else)"
                       : "its cgroup holds a container that may not be frozen");
    c->freeze.done = true;
    return false;
  }
  if (agent_restore_remember(f->restore, st->t.file, 0, 0, cg2_freeze_word(st->t.mech, false),
                             cg2_freeze_word(st->t.mech, true), st->ino, &err) < 0 ||
      cg2_freeze_set(&st->t, true, &err) < 0) {
    /* The container may have just exited: its cgroup is gone. */
    if (err->errno_ != ENOENT)
      iob_warn("cannot freeze '%s': %s", c->id, err->msg);
    char dir[AGENT_RESTORE_PATH_MAX];
    dir_of(st->t.file, dir, sizeof(dir));
    agent_restore_dir(f->restore, dir, AGENT_RESTORE_FREEZE);
    c->freeze.done = true;
    return false;
  }
  c->freeze.frozen = true;
  c->freeze.freezes++;
  c->freeze.since_ms = now;
  iob_info("froze '%s' (%s): batch containers doing I/O at once limited to %u", c->id,
           cg2_freeze_mech_name(st->t.mech), limit);
  return true;
}

void agent_freeze_set(struct agent_freezer *f, struct agent_ctr *const *who, size_t n,
                      unsigned limit, uint64_t now) {
  if (n == 0)
    return;
  cleanup_free struct agent_freeze_cand *v = xcalloc(n, sizeof(*v));
  for (size_t i = 0; i < n; i++)
    v[i] = (struct agent_freeze_cand){.id = who[i]->id,
                                      .since_ms = who[i]->plan.admitted_ms,
                                      .frozen = who[i]->freeze.frozen,
                                      .windows = who[i]->freeze.windows};
  agent_protect_freeze_pick(v, n, limit);
  for (size_t i = 0; i < n; i++) {
    struct agent_ctr *c = who[i];
    c->freeze.windows = v[i].windows;
    if (v[i].frozen && !c->freeze.frozen)
      freeze(f, c, who, n, limit, now);
    else if (!v[i].frozen && c->freeze.frozen)
      thaw(f, c, now, limit ? "its turn" : "the limit is lifted");
  }
}

void agent_freeze_thaw(struct agent_freezer *f, struct agent_ctr *c, uint64_t now,
                       const char *why) {
  thaw(f, c, now, why);
}

void agent_freeze_forget(struct agent_freezer *f, struct agent_ctr *c) {
  struct freeze_state *st = c->freeze.state;
  if (st == NULL)
    return;
  thaw(f, c, iob_now_ms(), "it leaves");
  cg2_freeze_target_release(&st->t);
  free(st);
  c->freeze.state = NULL;
}

void agent_freeze_release(struct agent_freezer *f) {
  for (struct agent_ctr *c = f->adm->list; c; c = c->next)
    agent_freeze_forget(f, c);
}
