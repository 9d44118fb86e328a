// SPDX-License-Identifier: Apache-2.0
/* Protection caps on batch containers (agent/protect/protection.c decides the
 * level and whom it binds; here it is written): cgroup v2 io.max or v1 blkio.throttle, whichever
 * cgroupv2/throttle.h finds for the container, on the disks its I/O goes
 * to.  Read and write bytes/s are capped alike.
 *
 * What was there before is remembered (agent/store/restore.h) before the first
 * write, kept under the cap (a limit the runtime set, docker's
 * --device-read-iops or the spec's blockIO throttles, stays in force and a
 * lower one wins), and put back when the cap is lifted, when the container
 * leaves and when the agent stops.
 *
 * With protect_cpu, every batch container (readers too) also runs at the
 * least CPU weight while a latency-sensitive container runs
 * (cgroupv2/cpu.h), remembered and put back the same way: on a 2-core
 * host a batch container's CPU cost more of the service's throughput than
 * caps alone saved (bench/results/service-cpu.md).
 *
 * Both targets are resolved once, when the container registers with its
 * pid (agent_caps_bind), to a directory and its inode; before each write
 * the inode is checked, and a container whose cgroup is another one now
 * (recreated, or its pid reused elsewhere before the agent first looked)
 * gets no write any more, with one log line naming it. */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "agent/protect/caps.h"

#include "agent/store/restore.h"
#include "cgroupv2/blkio.h"
#include "cgroupv2/cpu.h"
#include "cgroupv2/iostat.h"
#include "cgroupv2/throttle.h"
#include "common/cleanup.h"
#include "common/loop.h"
#include "common/log.h"
#include "common/xalloc.h"

struct cap_state {
  struct cg2_throttle_target t;
  bool bound;                      /* agent_caps_bind ran with a pid */
  bool stale;                      /* a target's inode changed: nothing is written any more */
  char why[160];                   /* why the throttle target could not be resolved */
  unsigned long long ino, cpu_ino; /* of t.cgdir and of cpu.file's directory */
  bool resolved, warned;
  bool have_orig; /* orig[] read and remembered in ac->restore */
  size_t norig;   /* disks of t whose orig[] is read */
  struct cg2_throttle_limits orig[CG2_THROTTLE_MAX_DEVS];
  struct cg2_cpu_target cpu;
  bool cpu_resolved, cpu_low, cpu_warned;
};

void agent_caps_init(struct agent_caps *ac, struct agent_adm *adm, struct agent_restore *restore,
                     const char *root) {
  *ac = (struct agent_caps){.adm = adm, .restore = restore, .root = root};
}

static struct cap_state *state_of(struct agent_ctr *c);
static void dir_of(const char *file, char *out, size_t size);
static uint64_t lower(uint64_t orig, uint64_t cap);

static const char *const v1_files[4] = {
    "blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device",
    "blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device"};

static void iomax_word(char *out, size_t size, uint64_t v) {
  if (v == 0)
    snprintf(out, size, "max");
  else
    snprintf(out, size, "%llu", (unsigned long long)v);
}

/* The cap or the limit that was there, whichever is lower (0: none). */
static uint64_t lower(uint64_t orig, uint64_t cap) {
  return orig && orig < cap ? orig : cap;
}

/* Before each write of cap V: the first time, read what the container's
 * files hold for each disk and remember it with the directory's inode;
 * every time, journal what is written (one journal write for all). */
static int journal(struct agent_caps *ac, struct cap_state *st, uint64_t v,
                   struct iob_error **err) {
  const struct cg2_throttle_target *t = &st->t;
  struct agent_restore_entry e[CG2_THROTTLE_MAX_DEVS * 4];
  cleanup_free char(*files)[AGENT_RESTORE_PATH_MAX] = xcalloc(t->ndev * 4 + 1, sizeof(*files));
  size_t n = 0;
  for (size_t i = 0; i < t->ndev; i++) {
    unsigned maj = t->dev[i].major, min = t->dev[i].minor;
    struct cg2_throttle_limits *o = &st->orig[i];
    if (i >= st->norig && cg2_throttle_get(t, maj, min, o, err) < 0)
      return -1;
    const uint64_t was[4] = {o->rbps, o->wbps, o->riops, o->wiops};
    const uint64_t now[4] = {lower(o->rbps, v), lower(o->wbps, v), o->riops, o->wiops};
    if (t->mech == CG2_THROTTLE_V2_IOMAX) {
      char w[4][24], x[4][24];
      for (int k = 0; k < 4; k++) {
        iomax_word(w[k], sizeof(w[k]), was[k]);
        iomax_word(x[k], sizeof(x[k]), now[k]);
      }
      e[n] = (struct agent_restore_entry){
          .file = files[n], .major = maj, .minor = min, .ino = st->ino};
      snprintf(e[n].value, sizeof(e[n].value), "rbps=%s wbps=%s riops=%s wiops=%s", w[0], w[1],
               w[2], w[3]);
      snprintf(e[n].written, sizeof(e[n].written), "rbps=%s wbps=%s riops=%s wiops=%s", x[0], x[1],
               x[2], x[3]);
      snprintf(files[n], sizeof(files[n]), "%s/io.max", t->cgdir);
      n++;
      continue;
    }
    for (int k = 0; k < 4; k++, n++) {
      e[n] = (struct agent_restore_entry){
          .file = files[n], .major = maj, .minor = min, .ino = st->ino};
      snprintf(e[n].value, sizeof(e[n].value), "%llu", (unsigned long long)was[k]);
      snprintf(e[n].written, sizeof(e[n].written), "%llu", (unsigned long long)now[k]);
      snprintf(files[n], sizeof(files[n]), "%s/%s", t->cgdir, v1_files[k]);
    }
  }
  if (agent_restore_remember_n(ac->restore, e, n, err) < 0)
    return -1;
  st->have_orig = true;
  st->norig = t->ndev;
  return 0;
}

static unsigned long long ino_of(const char *dir) {
  struct stat sb;
  return stat(dir, &sb) == 0 ? (unsigned long long)sb.st_ino : 0;
}

/* Whether DIR is still the directory bound at registration (INO).  A gone
 * one fails quietly (the container exited); another one stops every
 * write for C, said once. */
static bool still_bound(struct cap_state *st, const struct agent_ctr *c, const char *dir,
                        unsigned long long ino) {
  if (st->stale)
    return false;
  struct stat sb;
  if (stat(dir, &sb) < 0)
    return false;
  if ((unsigned long long)sb.st_ino == ino)
    return true;
  st->stale = true;
  iob_warn("'%s': its cgroup '%s' is another one than at registration (inode %llu, was %llu: "
           "recreated, or its pid reused): no cap or CPU weight written for it any more",
           c->id, dir, (unsigned long long)sb.st_ino, ino);
  return false;
}

void agent_caps_bind(struct agent_caps *ac, struct agent_ctr *c) {
  if (c->pid == 0 || (c->caps.state && ((struct cap_state *)c->caps.state)->bound))
    return;
  struct cap_state *st = state_of(c);
  st->bound = true;
  cleanup_error struct iob_error *err = NULL;
  st->resolved = true;
  if (cg2_throttle_target_resolve(ac->root, (pid_t)c->pid, c->bundle, &st->t, &err) < 0 ||
      (st->t.mech != CG2_THROTTLE_NONE && (st->ino = ino_of(st->t.cgdir)) == 0)) {
    snprintf(st->why, sizeof(st->why), "%s", err ? err->msg : "its cgroup is gone");
    cg2_throttle_target_release(&st->t);
    st->t.mech = CG2_THROTTLE_NONE;
  }
  iob_error_release(&err);
  st->cpu_resolved = true;
  if (cg2_cpu_target_resolve(ac->root, (pid_t)c->pid, &st->cpu, &err) < 0 ||
      st->cpu.mech == CG2_CPU_NONE) {
    iob_debug("no CPU weight for '%s': %s", c->id,
              err ? err->msg : "no cpu.weight or cpu.shares for its cgroup");
    cg2_cpu_target_release(&st->cpu);
    st->cpu.mech = CG2_CPU_NONE;
    return;
  }
  char dir[AGENT_RESTORE_PATH_MAX];
  dir_of(st->cpu.file, dir, sizeof(dir));
  if ((st->cpu_ino = ino_of(dir)) == 0) {
    cg2_cpu_target_release(&st->cpu);
    st->cpu.mech = CG2_CPU_NONE;
  }
}

/* Disks the container has done I/O on since it registered (a volume on
 * another disk than its root file system), from the bound directory's
 * statistics: never from its pid. */
static void add_disks(const struct agent_caps *ac, struct cap_state *st) {
  struct cg2_iostat s = {0};
  cleanup_error struct iob_error *e = NULL;
  int rc = st->t.mech == CG2_THROTTLE_V2_IOMAX ? cg2_iostat_read(st->t.cgdir, &s, &e)
                                               : cg2_blkio_read(st->t.cgdir, &s, &e);
  for (size_t i = 0; rc == 0 && i < s.n; i++) {
    const struct cg2_io_counters *c = &s.dev[i].c;
    if ((c->rbytes || c->wbytes || c->rios || c->wios) &&
        cg2_throttle_target_add_dev(ac->root, &st->t, s.dev[i].major, s.dev[i].minor, &e) < 0)
      iob_error_release(&e); /* a device that is not a disk: not capped */
  }
  cg2_iostat_release(&s);
}

static int write_caps(const struct cap_state *st, uint64_t v, struct iob_error **err) {
  for (size_t i = 0; i < st->t.ndev; i++) {
    struct cg2_throttle_target one = {.mech = st->t.mech, .cgdir = st->t.cgdir, .ndev = 1};
    one.dev[0] = st->t.dev[i];
    const struct cg2_throttle_limits *o = &st->orig[i];
    if (cg2_throttle_set(&one, lower(o->rbps, v), lower(o->wbps, v), o->riops, o->wiops, err) < 0)
      return -1;
  }
  return 0;
}

/* Another container capped through the same directory (a cgroup shared by
 * two registered containers): its cap stays until it is lifted too. */
static bool dir_capped_elsewhere(struct agent_caps *ac, const struct agent_ctr *c,
                                 const char *dir) {
  for (struct agent_ctr *o = ac->adm->list; o; o = o->next) {
    const struct cap_state *os = o->caps.state;
    if (o != c && os && os->have_orig && os->t.cgdir && strcmp(os->t.cgdir, dir) == 0)
      return true;
  }
  return false;
}

/* Put back what was there before the first cap. */
static void lift(struct agent_caps *ac, struct agent_ctr *c, struct cap_state *st) {
  if (!st->have_orig)
    return;
  st->have_orig = false;
  st->norig = 0;
  if (!dir_capped_elsewhere(ac, c, st->t.cgdir))
    agent_restore_dir(ac->restore, st->t.cgdir, AGENT_RESTORE_CAPS);
}

static struct cap_state *state_of(struct agent_ctr *c) {
  struct cap_state *st = c->caps.state;
  if (st == NULL) {
    st = xcalloc(1, sizeof(*st));
    c->caps.state = st;
  }
  return st;
}

/* The directory of a cgroup file, as agent_restore_dir takes it. */
static void dir_of(const char *file, char *out, size_t size) {
  const char *slash = strrchr(file, '/');
  size_t n = slash ? (size_t)(slash - file) : 0;
  snprintf(out, size, "%.*s", (int)n, file);
}

/* Another container lowered through the same file (two registered
 * containers in one cgroup): it stays low until that one is back too. */
static bool cpu_low_elsewhere(struct agent_caps *ac, const struct agent_ctr *c, const char *file) {
  for (struct agent_ctr *o = ac->adm->list; o; o = o->next) {
    const struct cap_state *os = o->caps.state;
    if (o != c && os && os->cpu_low && os->cpu.file && strcmp(os->cpu.file, file) == 0)
      return true;
  }
  return false;
}

static void cpu_back(struct agent_caps *ac, struct agent_ctr *c, struct cap_state *st) {
  if (!st->cpu_low)
    return;
  st->cpu_low = false;
  if (cpu_low_elsewhere(ac, c, st->cpu.file))
    return;
  char dir[AGENT_RESTORE_PATH_MAX];
  dir_of(st->cpu.file, dir, sizeof(dir));
  agent_restore_dir(ac->restore, dir, AGENT_RESTORE_CPU);
  iob_debug("CPU weight of '%s' put back", c->id);
}

/* The least CPU weight for C while LOW, what it had otherwise. */
static void set_cpu(struct agent_caps *ac, struct agent_ctr *c, bool low) {
  struct cap_state *st = low ? state_of(c) : c->caps.state;
  if (st == NULL || st->cpu_low == low)
    return;
  if (!low) {
    cpu_back(ac, c, st);
    return;
  }
  cleanup_error struct iob_error *err = NULL;
  /* Resolved at registration only (agent_caps_bind): never later from a
   * pid that may be another process's by now. */
  if (!st->cpu_resolved || st->cpu.mech == CG2_CPU_NONE)
    return;
  char dir[AGENT_RESTORE_PATH_MAX];
  dir_of(st->cpu.file, dir, sizeof(dir));
  if (!still_bound(st, c, dir, st->cpu_ino))
    return;
  uint64_t now = 0, least = cg2_cpu_min(&st->cpu);
  char value[32], written[32];
  if (cg2_cpu_get(&st->cpu, &now, &err) < 0 ||
      (snprintf(value, sizeof(value), "%llu", (unsigned long long)now),
       snprintf(written, sizeof(written), "%llu", (unsigned long long)(now > least ? least : now)),
       agent_restore_remember(ac->restore, st->cpu.file, 0, 0, value, written, st->cpu_ino, &err) <
           0) ||
      (now > least && cg2_cpu_set(&st->cpu, least, &err) < 0)) {
    /* The container may have just exited: its cgroup is gone. */
    if (err->errno_ != ENOENT && !st->cpu_warned)
      iob_warn("cannot lower the CPU weight of '%s': %s", c->id, err->msg);
    st->cpu_warned = true;
    if (agent_restore_has(ac->restore, st->cpu.file, 0, 0))
      st->cpu_low = true; /* remembered: put back with the rest */
    return;
  }
  st->cpu_low = true;
  iob_debug("CPU weight of '%s' %llu -> %llu (%s)", c->id, (unsigned long long)now,
            (unsigned long long)(now > least ? least : now), cg2_cpu_mech_name(st->cpu.mech));
}

void agent_caps_forget(struct agent_caps *ac, struct agent_ctr *c) {
  struct cap_state *st = c->caps.state;
  if (st == NULL)
    return;
  /* Its cgroup is usually gone by now (nothing to write then), but a
   * container may leave its agent entry before its cgroup goes. */
  lift(ac, c, st);
  cpu_back(ac, c, st);
  cg2_throttle_target_release(&st->t);
  cg2_cpu_target_release(&st->cpu);
  free(st);
  c->caps.state = NULL;
}

static void set_cap(struct agent_caps *ac, struct agent_ctr *c, double bps) {
  if (c->caps.bps == bps)
    return;
  struct cap_state *st = state_of(c);
  cleanup_error struct iob_error *err = NULL;
  /* Resolved at registration only (agent_caps_bind): never later from a
   * pid that may be another process's by now. */
  if (bps > 0 && (!st->resolved || st->why[0])) {
    if (!st->warned)
      iob_warn("cannot cap '%s': %s", c->id,
               st->why[0] ? st->why : "its pid was not known when it registered");
    st->warned = true;
    return;
  }
  if (st->resolved && st->t.mech != CG2_THROTTLE_NONE && bps > 0 &&
      still_bound(st, c, st->t.cgdir, st->ino))
    add_disks(ac, st);
  if (!st->resolved || st->t.mech == CG2_THROTTLE_NONE || st->t.ndev == 0) {
    if (bps > 0 && !st->warned)
      iob_warn("cannot cap '%s': no io.max or blkio.throttle for its cgroup, or no disk found",
               c->id);
    st->warned = st->warned || bps > 0;
    /* Nothing was written: no cap to show (status, metrics), and a disk
     * found later is capped at the next apply. */
    c->caps.bps = 0;
    return;
  }
  uint64_t v = (uint64_t)bps;
  if (v == 0) {
    lift(ac, c, st);
    iob_debug("cap on '%s' lifted", c->id);
    c->caps.bps = 0;
    return;
  }
  if (!still_bound(st, c, st->t.cgdir, st->ino))
    return;
  if (journal(ac, st, v, &err) < 0) {
    /* Not written: a cap that could not be put back after a crash would
     * outlive the agent. */
    if (err->errno_ != ENOENT && !st->warned)
      iob_warn("cannot cap '%s': %s", c->id, err->msg);
    st->warned = true;
    return;
  }
  if (write_caps(st, v, &err) < 0) {
    /* The container may have just exited: its cgroup is gone. */
    if (err->errno_ != ENOENT && !st->warned)
      iob_warn("cannot cap '%s': %s", c->id, err->msg);
    st->warned = true;
    return;
  }
  iob_debug("capped '%s' at %.1f MiB/s (%s)", c->id, bps / (1024 * 1024),
            cg2_throttle_mech_name(st->t.mech));
  c->caps.bps = bps;
}

void agent_caps_set(struct agent_caps *ac, struct agent_ctr *c, double bps, bool cpu_low) {
  set_cap(ac, c, bps);
  set_cpu(ac, c, cpu_low);
}

void agent_caps_release(struct agent_caps *ac) {
  for (struct agent_ctr *c = ac->adm->list; c; c = c->next) {
    set_cap(ac, c, 0);
    set_cpu(ac, c, false);
    agent_caps_forget(ac, c);
  }
}
