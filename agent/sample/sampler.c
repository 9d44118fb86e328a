// SPDX-License-Identifier: Apache-2.0
/* Sampling registered containers: a sample per period, rates from the last
 * two, the class from a short window of them (wcd), and the cgroup's
 * disappearance as an exit (a shim that died cannot tell us). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "agent/protect/protection.h"
#include "agent/sample/sampler.h"
#include "cgroupv2/blkio.h"
#include "cgroupv2/cg2.h"
#include "cgroupv2/sample.h"
#include "common/cleanup.h"
#include "common/log.h"
#include "common/loop.h"
#include "common/xalloc.h"
#include "wcd/wcd.h"

/* Samples kept per container; the detector looks at all of them, so this
 * times the period is its window (5 s at the default 1 s). */
#define RING 6
/* Below this the class is not changed: one noisy window must not unpin a
 * declared-looking workload from its profile. */
#define MIN_CONFIDENCE 0.5
/* A window with less than this is no I/O: such a neighbour does not count
 * as sharing the disk (an idle service, a pause container). */
#define IO_ACTIVE_BPS (64.0 * 1024)
#define IO_ACTIVE_IOPS 16.0

struct sstate {
  char *cgdir;
  enum cg2_source source; /* what cgdir is sampled with (fixed with cgdir) */
  struct cg2_sample ring[RING];
  size_t n;
  bool warned;    /* the "cannot sample" warning was logged once */
  bool seen;      /* the cgroup existed, with processes in it, at some sample */
  double last_dt; /* seconds of the last window with rates, 0: none this round */
  /* Learning measures co-runs, not windows: a disk that serves its
   * streams by turns (an HDD's queue, a write cache flushing) gives one
   * stream a whole window and the next nothing, so a window says little;
   * the rate over a span in which the same containers did I/O says what
   * the co-run cost.  A span (epoch) starts when the set of busy
   * neighbours changes; its first window (the change happened in it) and
   * its last (the one in which the next change happened) are left out. */
  bool busy;              /* doing I/O as learning counts it (io_set_count) */
  unsigned quiet_windows; /* windows in a row without any I/O */
  /* Its io.pressure is read beside each sample (pressure_beside) because
   * its bytes alone cannot say whether it waits for the disk: busy and
   * moving nothing, moving a trickle, found waiting the window before, or
   * new and not yet seen doing I/O (admitted into a crowd, a reader may
   * move nothing from its first window on); each only while another
   * container moves (io_set_count). */
  bool watch_stall;
  unsigned run_windows; /* windows it ran, up to WATCH_NEW_WINDOWS */
  struct epoch {
    bool open;
    bool cross;                   /* a neighbour of another tenant was among them */
    uint64_t with;                /* the neighbours' signature (0: none, alone) */
    size_t nb;                    /* how many */
    uint16_t ncls[BATCH_NCLASS];  /* ... by class */
    unsigned windows;             /* windows counted (the first is not) */
    double bytes, secs;           /* their sums ... */
    double last_bytes, last_secs; /* ... and the last one's, left out at the end */
  } ep;
  /* Co-runs that ended before its solo rate was known: a fresh node
   * starts a mix all at once, and a job's solo rate is measured only at
   * its end, when the others have left; kept until then (OWED_MAX, one
   * entry per set of neighbours), taught when it is known (pay_owed). */
  struct epoch *owed;
  unsigned n_owed;
  /* A protected container sampled from a directory without io.pressure
   * (v1 blkio, procfs on a hybrid host): its cgroup2 directory, which has
   * one (PSI needs no controller), read beside each sample. */
  char *psidir;
  /* Block I/O latency from BPF: the cgroup id the program keys the
   * container's requests by (the inode of its blkcg's directory: the v1
   * blkio cgroup on a hybrid host, else the sampled cgroup), and the
   * counters at the last sample. */
  struct agent_latency *lat;
  uint64_t cgid;
  bool lat_prev_set;
  struct blklat_val lat_prev;
  /* sampler = bpf: the inode of cgdir, whose removal the BPF program
   * reports (agent_latency_gone), and that it did (cgdir is then looked
   * at); 0 until cgdir was seen. */
  uint64_t dir_ino;
  bool dir_gone;
  /* The last classification was of a ring without I/O (nothing moved
   * between its first and last samples): the same ring gives the same
   * result, and is not classified again. */
  bool idle_classified;
};

/* sampler = bpf looks at each container's directory only every this many
 * windows (by turns), besides the removals the program reports: a removal
 * it missed (its `gone` map full, a directory that is no cgroup) is found
 * within this many windows. */
#define SWEEP_WINDOWS 32

void agent_sampler_io_total_add(struct agent_io_total *t, const struct cg2_io_counters *d,
                                bool reset) {
  if (reset)
    return;
  t->rbytes += d->rbytes;
  t->wbytes += d->wbytes;
  t->rios += d->rios;
  t->wios += d->wios;
}

void agent_sampler_init_headless(struct agent_sampler *s, const struct agent_config *cfg,
                                 const struct agent_sampler_env *env) {
  memset(s, 0, sizeof(s[0]));
  s->lat.mode = AGENT_LATHIST_MODE_OFF;
  s->lat.map_fd = -1;
  s->env = *env;
  s->protect_detected = cfg->protect_detected;
  s->protect_signal = cfg->protect_signal;
  wcd_config_default(&s->wcd);
}

bool agent_sampler_auto_bpf(bool writeback_v2, bool fixture, int lat_mode, const char *lat_why,
                            bool dirty, const char *dirty_why, char **why) {
  if (fixture) {
    *why = xstrdup("cgroup_root is set (fixture cgroups: no block I/O of their own)");
    return false;
  }
  if (lat_mode != AGENT_LATHIST_MODE_BPF) {
    *why = xasprintf("the BPF program is not loaded: %s", lat_why ? lat_why : "unknown");
    return false;
  }
  if (writeback_v2) {
    *why = xstrdup("cgroup v2 charges buffered writeback to the writer's cgroup: the block "
                   "layer's counts per cgroup are io.stat's");
    return true;
  }
  if (!dirty) {
    *why = xasprintf("the io and memory controllers are not both in cgroup v2 here (a v1 or "
                     "hybrid host charges buffered writeback to the root cgroup, not the "
                     "writer's), and the program does not count dirtied pages: %s",
                     dirty_why ? dirty_why : "unknown");
    return false;
  }
  *why = xstrdup("a v1 or hybrid host charges buffered writeback to the root cgroup: the program "
                 "counts the pages each container dirties (writeback_dirty_folio) beside its "
                 "block requests");
  return true;
}

/* sampler = auto: the BPF map where it sees every write; the files (as
 * chosen above) elsewhere.  The log says which and why; status does too
 * where it is bpf, and on cgroup v2 (the name). */
static void sampler_auto(struct agent_sampler *s, const struct agent_config *cfg) {
  cleanup_free char *why = NULL;
  const char *lat_why = s->lat.why;
  s->bpf_counters = agent_sampler_auto_bpf(s->writeback_v2, cfg->cgroup_root != NULL, s->lat.mode,
                                           lat_why, s->lat.dirty, s->lat.dirty_why, &why);
  if (s->bpf_counters) {
    s->name = xasprintf("bpf (block-layer bytes and requests from the latency program's map; "
                        "auto: %s)",
                        why);
    iob_info("sampler = auto: bpf, bytes and requests from the BPF program's map (%s)", why);
  } else if (s->writeback_v2 && cfg->cgroup_root == NULL) {
    s->name = xasprintf("%s (auto: not bpf: %s)", cg2_source_name(s->source), why);
    iob_warn("sampler = auto: %s, not bpf: %s", cg2_source_name(s->source), why);
  } else {
    iob_info("sampler = auto: %s, not bpf: %s", agent_sampler_name(s), why);
  }
}

int agent_sampler_init(struct agent_sampler *s, const struct agent_config *cfg,
                       const struct agent_sampler_env *env, struct iob_error **err) {
  agent_sampler_init_headless(s, cfg, env);
  if (cfg->detector_file && wcd_config_load(cfg->detector_file, &s->wcd, err) < 0)
    return -1;
  struct cg2_mount m = {0};
  cleanup_error struct iob_error *merr = NULL;
  if (cg2_mount_find(NULL, &m, &merr) == 0) {
    s->has_mount = true;
    s->has_io = m.has_io;
    s->writeback_v2 = m.has_io && m.has_memory;
  }
  const char *root = cfg->cgroup_root ? cfg->cgroup_root : m.path;
  if (root)
    s->cgroup_root = xstrdup(root);
  cg2_mount_release(&m);
  /* io.stat is exact; without the io controller in v2 (hybrid and v1
   * hosts) the /proc/PID/io sums are what there is.  `sampler` in the
   * config may force either (io.stat: for fixture cgroups, which have the
   * file on any host). */
  switch (cfg->sampler) {
  case AGENT_SAMPLER_IOSTAT:
    s->source = CG2_SOURCE_IOSTAT;
    break;
  case AGENT_SAMPLER_PROCFS:
    s->source = CG2_SOURCE_PROCIO;
    break;
  default:
    s->source = s->has_io ? CG2_SOURCE_IOSTAT : CG2_SOURCE_PROCIO;
    break;
  }
  /* Hybrid/v1 host: the v1 blkio statistics are block-layer counts (reads,
   * direct writes, libaio) where procfs misses some; they count only on
   * disks where blk-throttle is active, so activate it (a no-cap rule on
   * the blkio root, only for disks that have no rule yet; blkio.h).  A
   * fixture cgroup root (cgroup_root set) keeps the procfs rule. */
  if (cfg->sampler != AGENT_SAMPLER_IOSTAT && cfg->sampler != AGENT_SAMPLER_PROCFS && !s->has_io &&
      cfg->cgroup_root == NULL) {
    cleanup_free char *mnt = NULL, *added = NULL;
    cleanup_error struct iob_error *e = NULL;
    size_t n = 0;
    if (cg2_v1_mount_find(NULL, "blkio", &mnt, &e) == 0 &&
        cg2_blkio_activate_all(NULL, mnt, &n, &added, &e) == 0 && n > 0) {
      s->source = CG2_SOURCE_BLKIO_V1;
      s->blkio_mount = steal_ptr(&mnt);
      iob_info("sampling v1 blkio statistics under '%s' (%zu disks count%s%s)", s->blkio_mount, n,
               added ? "; activated now: " : "", added ? added : "");
    } else if (e) {
      iob_info("no v1 blkio statistics (%s): procfs sampler", e->msg);
    }
  }
  /* Where writeback is not charged to the writer, the program also counts
   * dirtied pages, for the samplers that read its map. */
  bool dirty = !s->writeback_v2 && cfg->cgroup_root == NULL &&
               (cfg->sampler == AGENT_SAMPLER_AUTO || cfg->sampler == AGENT_SAMPLER_BPF);
  if (agent_latency_open(&s->lat, cfg->latency_source, dirty, err) < 0)
    return -1;
  if (cfg->sampler == AGENT_SAMPLER_BPF && s->lat.mode == AGENT_LATHIST_MODE_BPF)
    s->bpf_counters = true;
  else if (cfg->sampler == AGENT_SAMPLER_BPF)
    iob_warn("sampler = bpf needs the BPF latency program, which is not loaded: sampling %s",
             agent_sampler_name(s));
  else if (cfg->sampler == AGENT_SAMPLER_AUTO)
    sampler_auto(s, cfg);
  if (s->lat.mode == AGENT_LATHIST_MODE_BPF)
    iob_info("block I/O latency per container from BPF (block_rq_issue/block_rq_complete)");
  else if (s->lat.mode == AGENT_LATHIST_MODE_PRESSURE)
    iob_info("block I/O latency per container approximated from io.pressure, not BPF: %s",
             s->lat.why);
  else
    iob_info("no block I/O latency per container: %s", s->lat.why);
  return 0;
}

void agent_sampler_release(struct agent_sampler *s) {
  agent_latency_close(&s->lat);
  free(s->lat.why);
  s->lat.why = NULL;
  free(s->name);
  s->name = NULL;
  free(s->cgroup_root);
  free(s->blkio_mount);
  free(s->blkio_keys);
  s->cgroup_root = s->blkio_mount = s->blkio_keys = NULL;
  s->blkio_looked = false;
}

const char *agent_sampler_name(const struct agent_sampler *s) {
  if (s->name)
    return s->name;
  if (s->bpf_counters)
    return "bpf (block-layer bytes and requests from the latency program's map)";
  if (s->source == CG2_SOURCE_IOSTAT)
    return s->has_io ? "io.stat" : "io.stat (forced; no io controller on this host's cgroup2)";
  if (s->source == CG2_SOURCE_BLKIO_V1)
    return "blkio-v1 (procfs for buffered writes, and where a container has no blkio cgroup)";
  return "procfs (lower fidelity)";
}

void agent_sampler_forget(struct agent_ctr *c) {
  struct sstate *st = c->sample.sampler_state;
  if (st == NULL)
    return;
  if (st->lat && st->cgid)
    agent_latency_forget(st->lat, st->cgid);
  if (st->lat && st->dir_ino)
    agent_latency_unwatch(st->lat, st->dir_ino);
  free(st->cgdir);
  free(st->psidir);
  free(st->owed);
  free(st);
  c->sample.sampler_state = NULL;
}

/* The cgroup directory and the source to sample it with: cg2_source_pick,
 * the hook's rule, with the agent's source (by the host on a v1 blkio host,
 * where the hook's baseline comes from the same source) and the cgroup
 * registered under the cgroup root.  Never a hierarchy's root: on a hybrid
 * host the hook registers a container that runc left in the v2 root as "/",
 * and sampling that would count every process of the host as the
 * container's. */
static char *cgroup_dir(const struct agent_sampler *s, const struct agent_ctr *c,
                        enum cg2_source *src) {
  *src = (enum cg2_source)s->source;
  if (s->cgroup_root == NULL)
    return NULL;
  struct cg2_mount m = {.path = s->cgroup_root, .has_io = s->has_io};
  struct cg2_pick pick = {
      .m = &m, .source = (enum cg2_source)s->source, .pid = (pid_t)c->pid, .cgroup = c->cgroup};
  char *out = NULL;
  cleanup_error struct iob_error *err = NULL;
  if (cg2_source_pick(&pick, src, &out, &err) < 0)
    return NULL;
  return out;
}

static struct sstate *state_of(struct agent_sampler *s, struct agent_ctr *c) {
  struct sstate *st = c->sample.sampler_state;
  if (st == NULL) {
    st = xcalloc(1, sizeof(*st));
    c->sample.sampler_state = st;
  }
  if (st->cgdir == NULL)
    st->cgdir = cgroup_dir(s, c, &st->source);
  return st;
}

const char *agent_sampler_cgdir(struct agent_sampler *s, struct agent_ctr *c) {
  return state_of(s, c)->cgdir;
}

bool agent_sampler_watches_stall(const struct agent_ctr *c) {
  const struct sstate *st = c->sample.sampler_state;
  return st && st->watch_stall;
}

static void push(struct sstate *st, const struct cg2_sample *smp) {
  if (st->n == RING) {
    memmove(&st->ring[0], &st->ring[1], (RING - 1) * sizeof(st->ring[0]));
    st->n--;
  }
  st->ring[st->n++] = *smp;
}

/* io.pressure of a protected container from its cgroup2 directory when
 * the sample's own directory has none: the pid's v2 cgroup under the
 * cgroup2 mount, never the root (that is every process of the host). */
static void pressure_beside(struct agent_sampler *s, struct agent_ctr *c, struct sstate *st,
                            struct cg2_sample *smp) {
  cleanup_error struct iob_error *err = NULL;
  if (st->psidir == NULL) {
    cleanup_free char *rel = NULL;
    if (c->pid == 0 || s->cgroup_root == NULL ||
        cg2_pid_cgroup(NULL, (pid_t)c->pid, &rel, &err) < 0 || strcmp(rel, "/") == 0)
      return;
    st->psidir = xasprintf("%s%s", s->cgroup_root, rel);
    iob_debug("'%s': io.pressure from '%s'", c->id, st->psidir);
  }
  s->pressure_reads++;
  smp->has_pressure = cg2_pressure_read(st->psidir, &smp->pressure, &err) == 0;
}

/* The directory whose inode the BPF program keys c's requests by: the
 * blkcg's cgroup.  That is the sampled directory, except with the procfs
 * source on a host whose io controller is not in cgroup v2: there the
 * pid's v1 blkio cgroup, or without a pid the registered path under the
 * blkio mount, and NULL without a blkio mount (the block layer charges
 * its requests to a root). */
static char *lat_key_dir(struct agent_sampler *s, struct agent_ctr *c, struct sstate *st) {
  if (st->cgdir == NULL)
    return NULL;
  if (st->source != CG2_SOURCE_PROCIO || s->has_io || s->cgroup_root == NULL)
    return xstrdup(st->cgdir);
  cleanup_free char *rel = NULL;
  cleanup_error struct iob_error *err = NULL;
  if (!s->blkio_looked) {
    s->blkio_looked = true;
    if (cg2_v1_mount_find(NULL, "blkio", &s->blkio_keys, &err) < 0)
      s->blkio_keys = NULL;
  }
  if (s->blkio_keys == NULL)
    return NULL;
  if (c->pid && cg2_pid_cgroup_v1(NULL, (pid_t)c->pid, "blkio", &rel, &err) == 0)
    return cg2_join(s->blkio_keys, rel);
  if (c->cgroup && *c->cgroup && strcmp(c->cgroup, "/") != 0)
    return cg2_join(s->blkio_keys, c->cgroup);
  return NULL;
}

/* The inode of a cgroup hierarchy's root directory (the kernfs root's
 * id): every process not in a cgroup of its own, never one container. */
#define CGROUP_ROOT_INO 1

/* The cgroup id of c's requests (st->cgid), found once its directory
 * exists; -1 with errno (ENOENT: no directory of its own) until then. */
static int lat_cgid(struct agent_sampler *s, struct agent_ctr *c, struct sstate *st) {
  if (st->cgid == 0) {
    cleanup_free char *dir = lat_key_dir(s, c, st);
    struct stat sb;
    if (dir == NULL) {
      errno = ENOENT;
      return -1;
    }
    if (stat(dir, &sb) < 0)
      return -1;
    if (sb.st_ino == CGROUP_ROOT_INO) {
      errno = ENOENT;
      return -1;
    }
    st->cgid = (uint64_t)sb.st_ino;
    st->lat = &s->lat;
    iob_debug("'%s': block I/O latency of cgroup %llu ('%s')", c->id, (unsigned long long)st->cgid,
              dir);
  }
  return 0;
}

/* The window's latency from the BPF histogram: the difference to the
 * counters at the last sample (pre: read already by sample_bpf).  The
 * first reading only sets the start. */
static void latency_bpf(struct agent_sampler *s, struct agent_ctr *c, struct sstate *st,
                        const struct blklat_val *pre) {
  cleanup_error struct iob_error *err = NULL;
  struct blklat_val now;
  if (pre) {
    now = *pre;
  } else if (lat_cgid(s, c, st) < 0) {
    return;
  } else if (agent_latency_read(&s->lat, st->cgid, &now, &err) < 0) {
    iob_debug("'%s': %s", c->id, err->msg);
    return;
  }
  if (!st->lat_prev_set) {
    /* The counters of a cgroup with no entry yet start at 0: its first
     * requests are in the first window. */
    st->lat_prev = now;
    st->lat_prev_set = true;
    if (now.rios + now.wios > 0)
      return;
  }
  struct agent_lathist_window w = {0};
  /* Most containers complete no request in most windows: nothing to
   * compute (the window of an unchanged histogram is empty). */
  if (memcmp(now.hist, st->lat_prev.hist, sizeof(now.hist)) != 0) {
    agent_lathist_window(now.hist, st->lat_prev.hist, AGENT_LATHIST_BUCKETS, &w);
    agent_lathist_hist_add_window(&c->lat.hist, now.hist, st->lat_prev.hist, AGENT_LATHIST_BUCKETS);
  }
  st->lat_prev = now;
  c->lat.valid = true;
  c->lat.windows++;
  c->lat.approx = false;
  c->lat.count = w.count;
  c->lat.p50_us = w.p50_us;
  c->lat.p99_us = w.p99_us;
  c->lat.stall = -1;
}

/* The window's latency approximated from io.pressure
 * (agent_lathist_pressure_window), with the requests the sampler counted;
 * reset: those counters went down, and the window adds nothing to the
 * histogram (as to the totals). */
static void latency_pressure(struct agent_ctr *c, const struct sstate *st,
                             const struct cg2_io_counters *dl, bool reset) {
  const struct cg2_sample *a = &st->ring[st->n - 2], *b = &st->ring[st->n - 1];
  struct agent_lathist_window w;
  double stall;
  if (!a->has_pressure || !b->has_pressure || b->t_ns <= a->t_ns ||
      agent_lathist_pressure_window(a->pressure.some.total, b->pressure.some.total,
                                    dl->rios + dl->wios, b->t_ns - a->t_ns, &w, &stall) < 0) {
    c->lat.valid = false;
    return;
  }
  if (!reset)
    agent_lathist_hist_observe(&c->lat.hist, w.p50_us, w.count);
  c->lat.valid = true;
  c->lat.windows++;
  c->lat.approx = true;
  c->lat.count = w.count;
  c->lat.p50_us = w.p50_us;
  c->lat.p99_us = w.p99_us;
  c->lat.stall = stall;
}

static void latency_window(struct agent_sampler *s, struct agent_ctr *c, struct sstate *st,
                           const struct cg2_io_counters *dl, bool reset,
                           const struct blklat_val *val) {
  if (s->lat.mode == AGENT_LATHIST_MODE_BPF)
    latency_bpf(s, c, st, val);
  else if (s->lat.mode == AGENT_LATHIST_MODE_PRESSURE)
    latency_pressure(c, st, dl, reset);
}

static void set_now(struct agent_sampler *s) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  s->now_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  return;
}

/* Whether c's directory is due a look this window (by turns, every
 * SWEEP_WINDOWS). */
static bool sweep_due(const struct agent_sampler *s, const struct agent_ctr *c) {
  return (s->round + c->handle) % SWEEP_WINDOWS == 0;
}

/* sampler = bpf: a sample from the program's counters of c's cgroup (the
 * window's snapshot of its map), with no system call per container in
 * most windows.  The cgroup is gone when its directory is: looked at
 * until it exists, then when the program reports its removal
 * (cgroup_rmdir) and every SWEEP_WINDOWS windows.  Returns 1 gone, 0 a
 * sample in *smp, 2 nothing this time. */
static int sample_bpf(struct agent_sampler *s, struct agent_ctr *c, struct sstate *st,
                      struct cg2_sample *smp, struct blklat_val *val) {
  cleanup_error struct iob_error *err = NULL;
  if (lat_cgid(s, c, st) < 0)
    return errno == ENOENT && st->seen ? 1 : 2;
  if (st->dir_ino == 0 || st->dir_gone || sweep_due(s, c)) {
    struct stat sb;
    if (stat(st->cgdir, &sb) < 0) {
      if (errno != ENOENT || !st->seen)
        return 2;
      iob_debug("'%s': '%s' removed (%s)", c->id, st->cgdir,
                st->dir_gone ? "cgroup_rmdir, reported by the BPF program"
                             : "found at the periodic look");
      return 1;
    }
    st->dir_gone = false; /* made again under the same name: sampled on */
    if (st->dir_ino != (uint64_t)sb.st_ino) {
      if (st->dir_ino)
        agent_latency_unwatch(&s->lat, st->dir_ino);
      st->dir_ino = (uint64_t)sb.st_ino;
      if (agent_latency_watch(&s->lat, st->dir_ino, &err) < 0)
        iob_debug("'%s': %s (found by the periodic look only)", c->id, err->msg);
    }
  }
  st->seen = true;
  if (agent_latency_read(&s->lat, st->cgid, val, &err) < 0) {
    if (!st->warned)
      iob_warn("cannot sample '%s': %s", c->id, err->msg);
    st->warned = true;
    return 2;
  }
  memset(smp, 0, sizeof(*smp));
  smp->source = CG2_SOURCE_BPF;
  smp->io.rbytes = val->rbytes;
  smp->io.wbytes = val->wbytes;
  smp->io.rios = val->rios;
  smp->io.wios = val->wios;
  /* Pages dirtied: the v1 block layer charges their writeback to the
   * container only when its own tasks issue it (fsync), so each count is
   * a lower bound; as in the blkio-v1 source (cgroupv2/sample.h) the
   * larger is taken, never the sum, and the max of two growing counters
   * grows. */
  if (s->lat.dirty) {
    smp->io.wbytes = val->dirtied > val->wbytes ? val->dirtied : val->wbytes;
    smp->io.wios = val->druns > val->wios ? val->druns : val->wios;
  }
  smp->t_ns = s->now_ns;
  return 0;
}

/* The removals the program reported since the last window: each
 * container whose directory it was looks at it this window. */
static void mark_gone(struct agent_sampler *s) {
  const uint64_t *ids;
  size_t n;
  cleanup_error struct iob_error *err = NULL;
  if (agent_latency_gone(&s->lat, &ids, &n, &err) < 0) {
    iob_debug("%s", err->msg);
    return;
  }
  for (size_t i = 0; i < n; i++)
    for (struct agent_ctr *c = s->env.adm->list; c; c = c->next) {
      struct sstate *st = c->sample.sampler_state;
      if (st && st->dir_ino == ids[i])
        st->dir_gone = true;
    }
}

/* Whether c's counters come from the program's map: always where
 * writeback is charged to the writer.  Elsewhere a container sampled with
 * procfs (cgroup_dir: registered without a pid, or its pid in the v2
 * root) is in the map only once it has a v1 blkio cgroup of its own (the
 * block layer and the dirty count key by it); until then its files are
 * read. */
static bool map_counts(struct agent_sampler *s, struct agent_ctr *c, struct sstate *st) {
  if (!s->bpf_counters)
    return false;
  return s->writeback_v2 || st->source != CG2_SOURCE_PROCIO || lat_cgid(s, c, st) == 0;
}

/* Returns 1 when the cgroup is gone (the container exited without anybody
 * telling us), 0 otherwise. */
static int sample_one(struct agent_sampler *s, struct agent_ctr *c) {
  struct sstate *st = state_of(s, c);
  if (st->cgdir == NULL)
    return 0;
  cleanup_error struct iob_error *err = NULL;
  struct cg2_sample smp;
  struct blklat_val val;
  s->samples++;
  bool from_map = map_counts(s, c, st);
  if (from_map) {
    int r = sample_bpf(s, c, st, &smp, &val);
    if (r != 0)
      return r == 1 ? 1 : 0;
  } else if (cg2_sample_take(NULL, st->cgdir, st->source, &smp, &err) < 0) {
    /* Only a cgroup we saw can vanish: a shim may ask to start before
     * runc has created it. */
    if (err->errno_ == ENOENT)
      return st->seen ? 1 : 0;
    if (!st->warned)
      iob_warn("cannot sample '%s': %s", c->id, err->msg);
    st->warned = true;
    return 0;
  }
  /* An empty cgroup that had processes: every process of the container is
   * gone (runc removes the cgroup only at delete). */
  if (cg2_source_ops(smp.source)->counts_pids && smp.npids == 0) {
    if (st->seen && c->state == AGENT_RUNNING)
      return 1;
  } else {
    st->seen = true;
  }
  if (!smp.has_pressure &&
      (c->plan.protect || s->lat.mode == AGENT_LATHIST_MODE_PRESSURE || st->watch_stall))
    pressure_beside(s, c, st, &smp);
  push(st, &smp);
  if (st->n < 2)
    return 0;
  const struct cg2_sample *a = &st->ring[st->n - 2], *b = &st->ring[st->n - 1];
  struct cg2_io_counters dl;
  double dt;
  int reset = cg2_sample_delta(a, b, &dl, &dt, &err);
  if (reset < 0) {
    /* Counters of two sources are never diffed (nor classified together):
     * the window starts anew with this sample, and adds nothing to the
     * totals. */
    iob_debug("'%s': %s; window restarted", c->id, err->msg);
    st->ring[0] = *b;
    st->n = 1;
    return 0;
  }
  agent_sampler_io_total_add(&c->sample.io_total, &dl, reset > 0);
  agent_sampler_io_total_add(&s->node_io, &dl, reset > 0);
  if (dt <= 0)
    return 0;
  c->sample.read_bps = (double)dl.rbytes / dt;
  c->sample.write_bps = (double)dl.wbytes / dt;
  c->sample.read_iops = (double)dl.rios / dt;
  c->sample.write_iops = (double)dl.wios / dt;
  c->sample.io_now = c->sample.read_bps + c->sample.write_bps >= IO_ACTIVE_BPS ||
                     c->sample.read_iops + c->sample.write_iops >= IO_ACTIVE_IOPS;
  st->last_dt = dt;
  latency_window(s, c, st, &dl, reset > 0, from_map ? &val : NULL);
  if (c->state == AGENT_RUNNING)
    c->sample.bytes_run += (double)(dl.rbytes + dl.wbytes);
  /* The start path's length, from containers this agent admitted by a plan
   * (reason set; not re-registrations after a restart): the middle of the
   * window with the first I/O, not before the admission. */
  if (c->state == AGENT_RUNNING && c->sample.io_now && !c->sample.first_io) {
    c->sample.first_io = true;
    double mid_ms = (double)(a->t_ns + b->t_ns) / 2e6;
    if (c->plan.reason >= 0 && c->plan.admitted_ms > 0 && mid_ms > (double)c->plan.admitted_ms)
      if (agent_adm_observe_start(s->env.adm, (mid_ms - (double)c->plan.admitted_ms) / 1000.0))
        iob_info("containers start their I/O %.2f s after their admission (%u starts measured)",
                 s->env.adm->start_s, s->env.adm->start_n);
  }
  return 0;
}

/* A full ring in which nothing moved: one source, the same counters (and
 * io.pressure stall, when read) at its first and last samples. */
static bool ring_idle(const struct sstate *st) {
  const struct cg2_sample *a = &st->ring[0], *b = &st->ring[st->n - 1];
  if (st->n < RING || a->source != b->source || memcmp(&a->io, &b->io, sizeof(a->io)) != 0 ||
      a->has_pressure != b->has_pressure || a->npids != b->npids || a->rchar != b->rchar ||
      a->wchar != b->wchar)
    return false;
  return !a->has_pressure || (a->pressure.some.total == b->pressure.some.total &&
                              a->pressure.full.total == b->pressure.full.total);
}

static void classify(struct agent_sampler *s, struct agent_ctr *c) {
  struct sstate *st = c->sample.sampler_state;
  if (st == NULL || st->n < 2 || c->class_source == AGENT_CLASS_DECLARED)
    return;
  bool idle = ring_idle(st);
  if (idle && st->idle_classified && c->cls == BATCH_IDLE &&
      c->class_source == AGENT_CLASS_DETECTED)
    return;
  st->idle_classified = false;
  struct wcd_result res;
  wcd_classify(&s->wcd, st->ring, st->n, &res);
  st->idle_classified = idle && res.cls == BATCH_IDLE;
  if (res.cls == BATCH_UNKNOWN || res.confidence < MIN_CONFIDENCE)
    return;
  enum batch_class cls = res.cls; /* a planned class: wcd_classify never says latency */
  enum batch_class was = c->cls;
  enum agent_class_source was_src = c->class_source;
  unsigned what = agent_adm_measured(s->env.adm, c, cls, res.confidence, res.latency,
                                     s->protect_detected, iob_now_ms());
  bool latency_hint = c->decl.declared_untrusted && batch_class_names_latency(c->decl.declared);
  if (what & AGENT_MEASURED_PROTECTED)
    iob_info("'%s'%s looks latency-sensitive (%.0f requests/s of %.0f bytes on average): "
             "protecting it",
             c->id, latency_hint ? " declared latency (not trusted) and" : "",
             res.m.riops + res.m.wiops, res.m.wiops > res.m.riops ? res.m.wavg : res.m.ravg);
  if (what & AGENT_MEASURED_UNPROTECTED)
    iob_info("'%s' no longer looks latency-sensitive (measured %s): not protected any more", c->id,
             batch_class_name(cls));
  if (what & AGENT_MEASURED_OVERRULED)
    iob_info("'%s' declared %s (namespace '%s', not trusted by trust_declared), measured %s "
             "(confidence %.2f)%s",
             c->id, c->decl.declared, agent_ctr_tenant(c), batch_class_name(cls), res.confidence,
             latency_hint ? ": not protected (an untrusted latency never protects)"
                          : ": the measurement wins");
  else if (cls != was)
    iob_info("'%s' classified %s (confidence %.2f; was %s by %s)", c->id, batch_class_name(cls),
             res.confidence, batch_class_name(was), agent_class_source_name(was_src));
  /* An idle phase (start-up, a pause, the end) says nothing about the
   * workload. */
  if (cls != BATCH_IDLE && cls != BATCH_UNKNOWN) {
    c->sample.run_cls = (int)cls;
    c->sample.run_confidence = res.confidence;
  }
  if (cls != BATCH_IDLE && c->workload_key && *c->workload_key) {
    struct agent_profile_update u = {.cls = batch_class_name(cls), .confidence = res.confidence};
    s->env.ops->learn(c, &u, s->env.user);
  }
}

void agent_sampler_add(struct agent_sampler *s, struct agent_ctr *c,
                       const struct cg2_sample *base) {
  struct sstate *st = state_of(s, c);
  if (st->n > 0)
    return;
  /* The hook picks its source by the same rule (cg2_source_pick); one
   * older than IOSample.source does not say it, and its baseline is taken
   * as ours.  One that says another (the agent's sampler forced, or v1
   * blkio not active here) is not a baseline for our counters. */
  struct cg2_sample smp = *base;
  enum cg2_source own = map_counts(s, c, st) ? CG2_SOURCE_BPF : st->source;
  if (smp.source == CG2_SOURCE_NONE)
    smp.source = st->source;
  if (smp.t_ns != 0 && smp.source != own)
    iob_debug("'%s': baseline from %s, sampled with %s: not used", c->id,
              cg2_source_name(smp.source), cg2_source_name(own));
  if (smp.t_ns == 0 || smp.t_ns > (uint64_t)iob_now_ms() * 1000000u || smp.source != own) {
    set_now(s);
    (void)sample_one(s, c);
    return;
  }
  push(st, &smp);
}

/* A container's solo rate as measured: learned in earlier runs (its
 * profile), else from its windows alone in this run; 0 unknown. */
static double solo_rate(const struct agent_ctr *c) {
  if (c->profile.solo_bps > 0)
    return c->profile.solo_bps;
  return c->sample.alone_s > 0 ? c->sample.alone_bytes / c->sample.alone_s : 0;
}

/* The slowdown of running container c in the last window: measured (solo
 * rate / rate) when its solo rate is known, else predicted from the
 * classes of its I/O neighbours (matrix, with measured pairs in), and
 * *guessed says so. */
static double window_slowdown(const struct batch_config *cfg, struct agent_sampler *s,
                              const struct agent_ctr *c, bool *guessed) {
  double rate = c->sample.read_bps + c->sample.write_bps, solo = solo_rate(c);
  *guessed = false;
  if (solo > 0 && rate > 0)
    return solo / rate;
  *guessed = true;
  size_t n = 1;
  for (struct agent_ctr *o = s->env.adm->list; o; o = o->next)
    n += o != c && o->state == AGENT_RUNNING && o->sample.io_now;
  cleanup_free struct batch_job *jobs = xcalloc(n, sizeof(*jobs));
  size_t k = 0;
  jobs[k++] = (struct batch_job){.cls = c->cls, .running = true};
  for (struct agent_ctr *o = s->env.adm->list; o && k < n; o = o->next)
    if (o != c && o->state == AGENT_RUNNING && o->sample.io_now)
      jobs[k++] = (struct batch_job){.cls = o->cls, .running = true};
  return batch_slowdown(cfg, jobs, k, 0);
}

/* The share of the last window in which some task of the container
 * stalled on I/O (io.pressure "some"), -1 unknown. */
static double window_stall(const struct sstate *st) {
  if (st->n < 2)
    return -1;
  const struct cg2_sample *a = &st->ring[st->n - 2], *b = &st->ring[st->n - 1];
  if (!a->has_pressure || !b->has_pressure || b->t_ns <= a->t_ns ||
      b->pressure.some.total < a->pressure.some.total)
    return -1;
  double s = (double)(b->pressure.some.total - a->pressure.some.total) * 1000.0 /
             (double)(b->t_ns - a->t_ns);
  return s > 1 ? 1 : s;
}

/* A protected container's slack in the last window: the sampler's facts
 * (its rate, its io.pressure stall, its neighbours doing I/O) judged by
 * protection (agent/protect/protection.h). */
static void protect_share(struct agent_sampler *s, struct agent_ctr *c, const struct sstate *st,
                          double rate, size_t nb) {
  agent_protection_observe(c, s->protect_signal, rate, window_stall(st), nb);
}

/* A container stays busy, for learning, until this many windows in a row
 * without any I/O: a stream the disk starves for a few windows (an HDD
 * serving the nearest requests first) is still there for whoever shares
 * the disk with it. */
#define QUIET_WINDOWS 5
/* A container stalled on I/O (io.pressure "some") for at least this share
 * of a window waits for the disk: busy, whatever it moved.  A disk that
 * serves the nearest requests first can starve a random reader beside
 * sequential streams for minutes; by its bytes alone it would look idle,
 * and what the streams cost it would never be learnt. */
#define STALL_WAITING 0.5
/* A running container that has done no I/O yet is watched for this many
 * windows; one that never does (a pod's sandbox) costs no read after. */
#define WATCH_NEW_WINDOWS 30
/* Windows a co-run must have, its first and last left out, to teach. */
#define EPOCH_MIN_WINDOWS 2

/* The window's busy containers, counted once for all (not per container:
 * with a thousand that was most of a sample's CPU, bench/agent-overhead.sh):
 * how many, how many of each class, their signature, how many did I/O
 * above the io_now threshold (the neighbours protection counts), and
 * whether they all belong to one tenant. */
struct io_set {
  size_t n, n_io;
  size_t ncls[BATCH_NCLASS];
  uint64_t sig;
  bool one_tenant;
};

/* A container's part in the signature of a set of neighbours: the sum of
 * its members' parts, so that a set has one signature in any order. */
static uint64_t sig_part(uint64_t handle) {
  uint64_t x = handle + 0x9e3779b97f4a7c15u;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  return (x ^ (x >> 31)) | 1;
}

static void io_set_count(const struct agent_sampler *s, struct io_set *w) {
  memset(w, 0, sizeof(*w));
  w->one_tenant = true;
  const char *tenant = NULL;
  for (const struct agent_ctr *o = s->env.adm->list; o; o = o->next) {
    struct sstate *ost = o->sample.sampler_state;
    if (ost == NULL)
      continue;
    bool moved = o->sample.read_bps + o->sample.write_bps > 0;
    bool running = o->state == AGENT_RUNNING;
    /* -1: unknown (not read, or no PSI); then bytes alone decide. */
    double stall = running && ost->watch_stall ? window_stall(ost) : -1;
    bool waiting = stall >= STALL_WAITING;
    if (!running)
      ost->busy = false;
    else if (o->sample.io_now || waiting)
      ost->busy = true;
    else if (ost->busy && !moved && stall >= 0)
      ost->busy = false; /* not waiting for the disk: idle of its own accord */
    else if (ost->busy && !moved && ost->quiet_windows + 1 >= QUIET_WINDOWS)
      ost->busy = false;
    ost->quiet_windows = moved || waiting ? 0 : ost->quiet_windows + 1;
    if (running && ost->run_windows < WATCH_NEW_WINDOWS)
      ost->run_windows++;
    bool fresh = !o->sample.first_io && ost->run_windows < WATCH_NEW_WINDOWS;
    ost->watch_stall =
        running && (waiting || fresh || (ost->busy && !moved) || (moved && !o->sample.io_now));
    if (!ost->busy)
      continue;
    w->n_io += o->sample.io_now;
    w->n++;
    if ((unsigned)o->cls < BATCH_NCLASS)
      w->ncls[o->cls]++;
    w->sig += sig_part(o->handle);
    const char *t = agent_ctr_tenant(o);
    if (tenant == NULL)
      tenant = t;
    else if (strcmp(tenant, t) != 0)
      w->one_tenant = false;
  }
  /* Starved by the disk means starved beside a neighbour that moves
   * (io_now): without one, a stall is its own I/O or the host's, no
   * co-run's cost to learn, and watching for it would cost a quiet node
   * one io.pressure read per container a window (a thousand found
   * containers: most of the agent's CPU, bench/kubepods-overhead.sh).
   * Neighbours that only wait do not count: on a disk the host keeps
   * busy, they would keep each other watched.  The first window beside a
   * mover only starts the watch (a stall needs two reads). */
  for (const struct agent_ctr *o = s->env.adm->list; o; o = o->next) {
    struct sstate *ost = o->sample.sampler_state;
    if (ost && ost->watch_stall && w->n_io <= (ost->busy && o->sample.io_now ? 1u : 0u))
      ost->watch_stall = false;
  }
}

/* What a co-run teaches: alone, the container's solo rate; beside NB
 * neighbours, with a measured solo rate, the pairs of its class and
 * theirs, its slowdown's excess shared among them as the batcher's model
 * adds it (1 + the sum of the pairs' penalties).  A victim from a
 * namespace whose declarations do not count teaches only beside another
 * tenant's container: two of a tenant's own containers make no evidence
 * against others. */
static void teach(struct agent_sampler *s, struct agent_ctr *c, const struct epoch *e, double solo,
                  bool trusted) {
  /* Busy, it moved nothing in the whole span: the disk starved it. */
  double rate = e->bytes > 0 ? e->bytes / e->secs : 0;
  double sd = rate > 0 ? solo / rate : AGENT_PEN_MAX_SLOWDOWN;
  /* Starved, it is slower than any rate can show: each neighbour gets the
   * largest share, as beside a crawl; shared out, starvation would teach
   * less than a crawl does. */
  double per = rate > 0 ? 1 + (sd - 1) / (double)e->nb : AGENT_PEN_MAX_SLOWDOWN;
  iob_debug("'%s' (%s) beside %zu for %.1f s: %.2f MiB/s, %.2fx slower than alone", c->id,
            batch_class_name(c->cls), e->nb, e->secs, rate / (1024 * 1024), sd);
  for (int k = 0; k < BATCH_NCLASS; k++)
    if (e->ncls[k] > 0 && batch_class_does_io((enum batch_class)k))
      agent_penalties_observe_share(s->env.pen, c->cls, (enum batch_class)k, per, 1 / (double)e->nb,
                                    true, trusted ? NULL : agent_ctr_tenant(c));
}

/* A co-run kept for when its solo rate is known: added to the one beside
 * the same neighbours, else a new entry while there is room. */
#define OWED_MAX 8

static void owe(struct sstate *st, const struct epoch *e) {
  for (unsigned i = 0; i < st->n_owed; i++)
    if (st->owed[i].with == e->with) {
      st->owed[i].bytes += e->bytes;
      st->owed[i].secs += e->secs;
      return;
    }
  if (st->n_owed == OWED_MAX)
    return;
  if (st->owed == NULL)
    st->owed = xcalloc(OWED_MAX, sizeof(*st->owed));
  st->owed[st->n_owed++] = *e;
}

/* Its solo rate known now: the co-runs kept for it teach. */
static void pay_owed(struct agent_sampler *s, struct agent_ctr *c, struct sstate *st) {
  double solo = solo_rate(c);
  if (st->n_owed == 0 || !(solo > 0) || !batch_class_does_io(c->cls))
    return;
  bool trusted = agent_adm_trusted(s->env.adm, c);
  for (unsigned i = 0; i < st->n_owed; i++)
    teach(s, c, &st->owed[i], solo, trusted);
  st->n_owed = 0;
}

static void epoch_end(struct agent_sampler *s, struct agent_ctr *c, struct epoch *e) {
  if (!e->open || e->windows < EPOCH_MIN_WINDOWS + 1)
    return;
  double bytes = e->bytes - e->last_bytes, secs = e->secs - e->last_secs;
  if (!(secs > 0) || e->nb == 0)
    return; /* alone: counted as it went (epoch_window) */
  bool trusted = agent_adm_trusted(s->env.adm, c);
  if (!trusted && !e->cross)
    return;
  struct epoch span = *e;
  span.bytes = bytes;
  span.secs = secs;
  double solo = solo_rate(c);
  if (solo > 0 && batch_class_does_io(c->cls))
    teach(s, c, &span, solo, trusted);
  else
    owe(c->sample.sampler_state, &span);
}

/* A span alone whose last window is known to be full: that window counts
 * toward the container's solo rate.  False: nothing to count. */
static bool take_last_alone(struct agent_ctr *c, const struct epoch *e) {
  if (e->nb != 0 || e->windows < 2 || !(e->last_secs > 0))
    return false;
  c->sample.alone_s += e->last_secs;
  c->sample.alone_bytes += e->last_bytes;
  return true;
}

/* The window in container C's co-run: a new one when its busy neighbours
 * changed (the last one ends: what it teaches is taken), else one more
 * window of it. */
static void epoch_window(struct agent_sampler *s, struct agent_ctr *c, struct sstate *st,
                         const struct io_set *w, double dt, double rate) {
  uint64_t with = w->sig - (st->busy ? sig_part(c->handle) : 0);
  struct epoch *e = &st->ep;
  if (!st->busy) {
    epoch_end(s, c, e);
    e->open = false;
    return;
  }
  if (!e->open || e->with != with) {
    epoch_end(s, c, e);
    *e = (struct epoch){.open = true, .cross = !w->one_tenant, .with = with, .nb = w->n - 1};
    for (int k = 0; k < BATCH_NCLASS; k++) {
      size_t m = w->ncls[k] - ((int)c->cls == k ? 1 : 0);
      e->ncls[k] = m > UINT16_MAX ? UINT16_MAX : (uint16_t)m;
    }
    e->windows = 1; /* this one, with the change in it: not counted */
    return;
  }
  /* Alone, the window before is its solo rate now that this one shows it
   * was not the last (a run's last window is partly idle). */
  if (take_last_alone(c, e))
    pay_owed(s, c, st);
  e->windows++;
  e->bytes += rate * dt;
  e->secs += dt;
  e->last_bytes = rate * dt;
  e->last_secs = dt;
}

/* The window its exit cut short, alone throughout (its neighbours were
 * gone by the last sample): one last sample, counted when that window
 * lasted at least half the one before it.  A tail alone of under two
 * windows has no full window but the one with the others' exit in it,
 * which does not count; this one then does.  Its I/O stopped in it as it
 * ended: the rate is lower, and what a co-run is taught to cost lower,
 * never higher. */
static void take_exit_window(struct agent_sampler *s, struct agent_ctr *c, struct sstate *st) {
  if (st->n < 2)
    return;
  double before = (double)(st->ring[st->n - 1].t_ns - st->ring[st->n - 2].t_ns) / 1e9;
  st->last_dt = 0;
  set_now(s); /* the BPF map's sample is stamped with it */
  if (sample_one(s, c) != 0 || !(before > 0) || !(st->last_dt >= before / 2))
    return;
  double rate = c->sample.read_bps + c->sample.write_bps;
  c->sample.alone_s += st->last_dt;
  c->sample.alone_bytes += rate * st->last_dt;
  iob_debug("'%s' (%s) alone for the last %.2f s before its exit: %.2f MiB/s", c->id,
            batch_class_name(c->cls), st->last_dt, rate / (1024 * 1024));
  st->last_dt = 0;
}

void agent_sampler_finish(struct agent_sampler *s, struct agent_ctr *c) {
  struct sstate *st = c->sample.sampler_state;
  if (st == NULL || c->state != AGENT_RUNNING)
    return;
  /* Alone when it exits: its last sampled window ended before the exit,
   * so it ran throughout, and so did the window the exit cut short.  The
   * last job of a mix started all at once runs alone only in its tail,
   * and this is then the only solo rate the node measures. */
  struct epoch *e = &st->ep;
  if (e->open && st->busy) {
    (void)take_last_alone(c, e);
    if (e->nb == 0)
      take_exit_window(s, c, st);
  }
  epoch_end(s, c, e);
  e->open = false;
  pay_owed(s, c, st);
}

/* What the last window teaches about running containers: their co-runs
 * (epoch_window) and their solo-equivalent progress (solo_equiv_s, learnt
 * at exit). */
static void account(struct agent_sampler *s) {
  struct batch_config cfg = s->env.adm->bcfg;
  agent_penalties_apply(s->env.pen, &cfg);
  struct io_set w;
  io_set_count(s, &w);
  for (struct agent_ctr *c = s->env.adm->list; c; c = c->next) {
    struct sstate *st = c->sample.sampler_state;
    if (c->state != AGENT_RUNNING || st == NULL || st->last_dt <= 0)
      continue;
    double dt = st->last_dt;
    st->last_dt = 0;
    double rate = c->sample.read_bps + c->sample.write_bps;
    size_t nb = w.n - (st->busy ? 1 : 0);
    if (c->plan.protect)
      protect_share(s, c, st, rate, w.n_io - (c->sample.io_now ? 1 : 0));
    epoch_window(s, c, st, &w, dt, rate);
    if (nb == 0 || (!c->sample.io_now && !st->busy)) {
      c->sample.solo_equiv_s += dt; /* alone, or idle of its own accord: solo speed by definition */
      continue;
    }
    c->sample.shared = true;
    /* Busy beside busy neighbours, it moved nothing: a disk that serves
     * its streams by turns starved it, and it made no progress.  Counted
     * at solo speed, such windows made its learned rate alone a fraction
     * of the real one, and every co-run then looked cheap. */
    if (!c->sample.io_now)
      continue;
    bool guessed;
    double sd = window_slowdown(&cfg, s, c, &guessed);
    c->sample.equiv_guessed |= guessed;
    c->sample.solo_equiv_s += dt / (sd > 1 ? sd : 1);
  }
}

/* The window's reading of the BPF program's maps: one batched read of
 * the counters for every container, the removals it saw. */
static void window_begin(struct agent_sampler *s) {
  cleanup_error struct iob_error *err = NULL;
  set_now(s);
  s->round++;
  if (s->lat.mode != AGENT_LATHIST_MODE_BPF || s->env.adm->list == NULL)
    return;
  if (agent_latency_snapshot(&s->lat, &err) < 0)
    iob_debug("%s: one lookup per container", err->msg);
  if (s->bpf_counters)
    mark_gone(s);
}

/* blk-throttle counts only on disks it is active on, and the agent made it
 * active on the disks there were at start: a disk attached later (a loop
 * device, a hot-plugged volume) is looked for every SWEEP_WINDOWS windows,
 * and at the first pass after idle windows (which count no round), or its
 * I/O would count for nobody. */
static void blkio_new_disks(struct agent_sampler *s) {
  bool resumed = s->resumed;
  s->resumed = false;
  if (s->blkio_mount == NULL || (!resumed && s->round % SWEEP_WINDOWS != SWEEP_WINDOWS - 1))
    return;
  cleanup_free char *added = NULL;
  cleanup_error struct iob_error *err = NULL;
  size_t n = 0;
  if (cg2_blkio_activate_all(NULL, s->blkio_mount, &n, &added, &err) < 0)
    iob_debug("v1 blkio: %s", err->msg);
  else if (added)
    iob_info("v1 blkio statistics now count on %s too (%zu disks in all)", added, n);
}

void agent_sampler_idle(struct agent_sampler *s) {
  s->resumed = true;
}

void agent_sampler_run(struct agent_sampler *s) {
  struct agent_ctr *next;
  blkio_new_disks(s);
  window_begin(s);
  for (struct agent_ctr *c = s->env.adm->list; c; c = next) {
    next = c->next;
    /* Created and pending ones too: a container deleted before it started
     * must not linger (nobody may tell us). */
    if (sample_one(s, c) == 1) {
      iob_info("'%s' (%s) is gone: its cgroup vanished or emptied", c->id,
               agent_state_name(c->state));
      s->env.ops->gone(c, "cgroup vanished", iob_now_ms(), s->env.user);
      continue;
    }
    if (c->state == AGENT_RUNNING)
      classify(s, c);
  }
  /* Readings between windows (agent_sampler_add) look the map up. */
  agent_latency_snapshot_drop(&s->lat);
  account(s);
}
