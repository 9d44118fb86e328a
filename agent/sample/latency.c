// SPDX-License-Identifier: Apache-2.0
/* Loading agent/sample/bpf/blklat.bpf.c and reading its map (agent/sample/latency.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent/sample/latency.h"
#include "agent/sample/bpf/blklat.skel.h" /* generated in $(B) (agent/module.mk) */
#include "common/cleanup.h"
#include "common/log.h"
#include "common/xalloc.h"

#define KERNEL_BTF "/sys/kernel/btf/vmlinux"

/* libbpf's warnings and notes (a failed load's verifier log, relocation
 * failures) at debug level: the one line that matters is the error we
 * return. */
__attribute__((format(printf, 2, 0))) static int libbpf_log(enum libbpf_print_level level,
                                                            const char *fmt, va_list ap) {
  if (level == LIBBPF_DEBUG)
    return 0; /* every relocation and section: noise even at debug */
  cleanup_free char *buf = NULL;
  if (vasprintf(&buf, fmt, ap) < 0)
    return 0;
  /* the verifier's log comes as one message of many lines */
  for (char *line = buf, *nl; *line; line = nl + 1) {
    nl = strchrnul(line, '\n');
    if (nl > line)
      iob_debug("libbpf: %.*s", (int)(nl - line), line);
    if (*nl == '\0')
      break;
  }
  return 0;
}

static char *why_errno(const char *what, int e) {
  if (e == EPERM || e == EACCES)
    return xasprintf("%s: %s (needs CAP_BPF and CAP_PERFMON, or CAP_SYS_ADMIN on kernels "
                     "before 5.8)",
                     what, strerror(e));
  return xasprintf("%s: %s", what, strerror(e));
}

/* Load and attach the program, with the dirty-page counter when dirty;
 * NULL when it runs, else why not. */
static char *try_load(struct agent_latency *l, bool dirty) {
  struct blklat *skel = blklat__open();
  if (skel == NULL)
    return why_errno("cannot open the BPF program", errno);
  long page = sysconf(_SC_PAGESIZE);
  skel->rodata->page_size = page > 0 ? (__u64)page : 4096;
  bpf_program__set_autoload(skel->progs.blklat_dirty, dirty);
  int r = blklat__load(skel);
  if (r < 0) {
    char *why = why_errno("cannot load the BPF program", -r);
    blklat__destroy(skel);
    return why;
  }
  r = blklat__attach(skel);
  if (r < 0) {
    char *why = why_errno(dirty ? "cannot attach to block_rq_issue/block_rq_complete/"
                                  "writeback_dirty_folio"
                                : "cannot attach to block_rq_issue/block_rq_complete",
                          -r);
    blklat__destroy(skel);
    return why;
  }
  l->skel = skel;
  l->dirty = dirty;
  l->map_fd = bpf_map__fd(skel->maps.lat);
  l->watch_fd = bpf_map__fd(skel->maps.watch);
  l->gone_fd = bpf_map__fd(skel->maps.gone);
  return NULL;
}

/* The program, with its dirty-page counter when asked and it loads (a
 * kernel without the writeback_dirty_folio tracepoint, before 5.17, or
 * whose structs it cannot relocate), else without it: latency does not
 * depend on it.  NULL when it runs, else why not. */
static char *try_bpf(struct agent_latency *l, bool dirty) {
  /* CO-RE needs the running kernel's BTF; without it libbpf would fail
   * with a less helpful message. */
  if (access(KERNEL_BTF, R_OK) != 0)
    return xasprintf("no kernel BTF at '%s' (%s)", KERNEL_BTF, strerror(errno));
  libbpf_set_print(libbpf_log);
  if (dirty) {
    char *why = try_load(l, true);
    if (why == NULL)
      return NULL;
    l->dirty_why = xasprintf("buffered writes not counted: %s", why);
    iob_debug("BPF program: %s; loading it without", l->dirty_why);
    free(why);
  }
  return try_load(l, false);
}

int agent_latency_open(struct agent_latency *l, int pref, bool dirty, struct iob_error **err) {
  memset(l, 0, sizeof(*l));
  l->map_fd = l->watch_fd = l->gone_fd = -1;
  char *bpf_error = NULL;
  if (agent_lathist_wants_bpf(pref))
    bpf_error = try_bpf(l, dirty);
  int r = agent_lathist_decide(pref, bpf_error, &l->mode, &l->why, err);
  free(bpf_error);
  if (r < 0 || l->mode != AGENT_LATHIST_MODE_BPF)
    agent_latency_close(l);
  return r;
}

void agent_latency_close(struct agent_latency *l) {
  if (l->skel)
    blklat__destroy(l->skel);
  l->skel = NULL;
  l->dirty = false;
  free(l->dirty_why);
  l->dirty_why = NULL;
  l->map_fd = l->watch_fd = l->gone_fd = -1;
  agent_lathist_snap_free(&l->snap);
  free(l->gone_ids);
  l->gone_ids = NULL;
  l->gone_cap = 0;
}

/* The kernel has no batched lookups for this map type (before 5.6). */
static bool no_batch_errno(int e) {
  return e == EINVAL || e == ENOTSUP || e == EOPNOTSUPP || e == ENOSYS || e == 524 /* ENOTSUPP */;
}

/* Every entry of map fd into keys[]/vals[] (grown by grow), one batch of
 * up to the room left at a time; *n the entries read.  del: lookup and
 * delete.  A batch may end at a hash bucket only: ENOSPC when the room left
 * is less than one bucket holds, then more room and the same bucket again.
 * Returns 0, or -1 with errno. */
struct batch_buf {
  void *keys, *vals;
  size_t ksz, vsz, cap;
  void (*grow)(struct batch_buf *b, size_t want, void *user);
  void *user;
};

static int batch_read(int fd, bool del, struct batch_buf *b, size_t *n) {
  uint64_t in = 0, out = 0; /* htab batches are bucket numbers (u32): 8 bytes is room */
  bool first = true;
  *n = 0;
  for (;;) {
    if (*n == b->cap)
      b->grow(b, b->cap * 2, b->user);
    __u32 count = (__u32)(b->cap - *n);
    char *k = (char *)b->keys + *n * b->ksz, *v = (char *)b->vals + *n * b->vsz;
    int r = del ? bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in, &out, k, v, &count, NULL)
                : bpf_map_lookup_batch(fd, first ? NULL : &in, &out, k, v, &count, NULL);
    int e = r < 0 ? errno : 0;
    if (r < 0 && e == ENOSPC && count == 0) {
      b->grow(b, b->cap * 2, b->user);
      continue;
    }
    if (r < 0 && e != ENOENT)
      return -1;
    *n += count;
    if (e == ENOENT)
      return 0;
    in = out;
    first = false;
  }
}

static void snap_grow(struct batch_buf *b, size_t want, void *user) {
  struct agent_lathist_snap *s = user;
  agent_lathist_snap_reserve(s, want);
  b->keys = s->keys;
  b->vals = s->vals;
  b->cap = s->cap;
}

int agent_latency_snapshot(struct agent_latency *l, struct iob_error **err) {
  l->snap.valid = false;
  if (l->map_fd < 0 || l->no_batch)
    return 0;
  agent_lathist_snap_reserve(&l->snap, 64);
  struct batch_buf b = {.keys = l->snap.keys,
                        .vals = l->snap.vals,
                        .ksz = sizeof(uint64_t),
                        .vsz = sizeof(struct blklat_val),
                        .cap = l->snap.cap,
                        .grow = snap_grow,
                        .user = &l->snap};
  size_t n = 0;
  if (batch_read(l->map_fd, false, &b, &n) < 0) {
    if (no_batch_errno(errno)) {
      iob_info("no batched BPF map reads on this kernel (%s): one lookup per container",
               strerror(errno));
      l->no_batch = true;
      return 0;
    }
    return iob_error(err, errno, "cannot read the latency map");
  }
  l->snap.n = n;
  agent_lathist_snap_index(&l->snap);
  return 0;
}

void agent_latency_snapshot_drop(struct agent_latency *l) {
  l->snap.valid = false;
  return;
}

/* A zeroed entry for cgid, which the program then counts. */
static int track(const struct agent_latency *l, uint64_t cgid, struct iob_error **err) {
  static const struct blklat_val zero;
  if (bpf_map_update_elem(l->map_fd, &cgid, &zero, BPF_NOEXIST) == 0 || errno == EEXIST)
    return 0;
  return iob_error(err, errno, "cannot count the latency of cgroup %llu", (unsigned long long)cgid);
}

int agent_latency_read(struct agent_latency *l, uint64_t cgid, struct blklat_val *out,
                       struct iob_error **err) {
  if (l->map_fd < 0) {
    memset(out, 0, sizeof(*out));
    return 0;
  }
  if (l->snap.valid) {
    const struct blklat_val *v = agent_lathist_snap_find(&l->snap, cgid);
    if (v) {
      *out = *v;
      return 1;
    }
  } else if (bpf_map_lookup_elem(l->map_fd, &cgid, out) == 0) {
    return 1;
  } else if (errno != ENOENT) {
    return iob_error(err, errno, "cannot read the latency of cgroup %llu",
                     (unsigned long long)cgid);
  }
  memset(out, 0, sizeof(*out));
  return track(l, cgid, err) < 0 ? -1 : 0;
}

void agent_latency_forget(const struct agent_latency *l, uint64_t cgid) {
  if (l->map_fd >= 0)
    (void)bpf_map_delete_elem(l->map_fd, &cgid);
}

int agent_latency_watch(const struct agent_latency *l, uint64_t ino, struct iob_error **err) {
  uint8_t one = 1;
  if (l->watch_fd < 0 || bpf_map_update_elem(l->watch_fd, &ino, &one, BPF_ANY) == 0)
    return 0;
  return iob_error(err, errno, "cannot watch cgroup %llu", (unsigned long long)ino);
}

void agent_latency_unwatch(const struct agent_latency *l, uint64_t ino) {
  if (l->watch_fd >= 0)
    (void)bpf_map_delete_elem(l->watch_fd, &ino);
}

static void gone_grow(struct batch_buf *b, size_t want, void *user) {
  struct agent_latency *l = user;
  /* keys and values side by side: the values (one byte each) are not used */
  l->gone_ids = xrealloc(l->gone_ids, want * (sizeof(uint64_t) + 1));
  l->gone_cap = want;
  b->keys = l->gone_ids;
  b->vals = (char *)(l->gone_ids + want);
  b->cap = want;
}

int agent_latency_gone(struct agent_latency *l, const uint64_t **ids, size_t *n,
                       struct iob_error **err) {
  *ids = NULL;
  *n = 0;
  if (l->gone_fd < 0 || l->no_batch)
    return 0;
  struct batch_buf b = {.ksz = sizeof(uint64_t), .vsz = 1, .grow = gone_grow, .user = l};
  if (l->gone_cap == 0)
    gone_grow(&b, 16, l);
  b.keys = l->gone_ids;
  b.vals = (char *)(l->gone_ids + l->gone_cap);
  b.cap = l->gone_cap;
  if (batch_read(l->gone_fd, true, &b, n) < 0) {
    *n = 0;
    if (no_batch_errno(errno)) {
      l->no_batch = true;
      return 0;
    }
    return iob_error(err, errno, "cannot read the removed cgroups");
  }
  *ids = l->gone_ids;
  return 0;
}
