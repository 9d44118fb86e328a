// SPDX-License-Identifier: Apache-2.0
#include "cgroupv2/procio.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroupv2/cg2.h"
#include "cgroupv2/sample.h"
#include "common/cleanup.h"

int cg2_procio_parse(const char *buf, size_t len, struct cg2_procio *out, struct iob_error **err) {
  static const char *const keys[] = {
      "rchar", "wchar", "syscr", "syscw", "read_bytes", "write_bytes", "cancelled_write_bytes"};
  struct cg2_procio p;
  uint64_t *slots[] = {&p.rchar,
                       &p.wchar,
                       &p.syscr,
                       &p.syscw,
                       &p.read_bytes,
                       &p.write_bytes,
                       &p.cancelled_write_bytes};
  unsigned seen = 0;
  int lineno = 0;
  memset(&p, 0, sizeof(p));
  for (size_t off = 0; off < len;) {
    const char *line = buf + off;
    const char *nl = memchr(line, '\n', len - off);
    size_t ll = nl ? (size_t)(nl - line) : len - off;
    off += ll + 1;
    lineno++;
    if (ll == 0)
      continue;
    const char *colon = memchr(line, ':', ll);
    if (colon == NULL || colon + 1 >= line + ll || colon[1] != ' ')
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "proc io line %d: expected 'key: value'", lineno);
    size_t kl = (size_t)(colon - line);
    for (size_t k = 0; k < IOB_ARRAY_SIZE(keys); k++) {
      if (strlen(keys[k]) != kl || memcmp(keys[k], line, kl) != 0)
        continue;
      if (seen & (1u << k))
        return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                              "proc io line %d: key '%s' given twice", lineno, keys[k]);
      seen |= 1u << k;
      if (cg2_parse_u64(colon + 2, ll - kl - 2, slots[k]) < 0)
        return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                              "proc io line %d: invalid value for '%s'", lineno, keys[k]);
    }
  }
  unsigned all = (1u << IOB_ARRAY_SIZE(keys)) - 1;
  if (seen != all)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "proc io: missing key '%s'",
                          keys[__builtin_ctz(~seen & all)]);
  *out = p;
  return 0;
}

int cg2_procio_read_pid(const char *root, pid_t pid, struct cg2_procio *out,
                        struct iob_error **err) {
  char rel[64];
  snprintf(rel, sizeof(rel), "/proc/%d/io", (int)pid);
  cleanup_free char *path = cg2_join(root, rel);
  cleanup_free char *buf = NULL;
  size_t len = 0;
  if (cg2_read_file(path, 4096, &buf, &len, err) < 0)
    return -1;
  if (cg2_procio_parse(buf, len, out, err) < 0)
    return iob_error_prefix(err, "cannot parse '%s'", path);
  return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* One pass: sum /proc/PID/io over the pids listed in cgdir's cgroup.procs. */
static int sample_once(const char *root, const pid_t *pids, size_t n, struct cg2_procio *out,
                       size_t *summed, size_t *gone, struct iob_error **err) {
  struct cg2_procio sum;
  memset(&sum, 0, sizeof(sum));
  *summed = *gone = 0;
  for (size_t i = 0; i < n; i++) {
    struct cg2_procio p;
    cleanup_error struct iob_error *e = NULL;
    if (cg2_procio_read_pid(root, pids[i], &p, &e) < 0) {
      /* The pid exited after cgroup.procs was read: ENOENT on open, or ESRCH
       * from read on a task that is being reaped. */
      if (e->errno_ == ENOENT || e->errno_ == ESRCH) {
        (*gone)++;
        continue;
      }
      if (err) {
        iob_error_release(err);
        *err = steal_ptr(&e);
      }
      return -1;
    }
    sum.rchar = sat_add(sum.rchar, p.rchar);
    sum.wchar = sat_add(sum.wchar, p.wchar);
    sum.syscr = sat_add(sum.syscr, p.syscr);
    sum.syscw = sat_add(sum.syscw, p.syscw);
    sum.read_bytes = sat_add(sum.read_bytes, p.read_bytes);
    sum.write_bytes = sat_add(sum.write_bytes, p.write_bytes);
    sum.cancelled_write_bytes = sat_add(sum.cancelled_write_bytes, p.cancelled_write_bytes);
    (*summed)++;
  }
  *out = sum;
  return 0;
}

/* A parent that reaps a child adds the child's counters to its own
 * (wait_task_zombie accumulates the I/O accounting).  If that happens
 * between reading the child's /proc/PID/io and the parent's, the child's
 * bytes count twice (seen: fio's job process and its parent, 2x the bytes).
 * An exiting task leaves cgroup.procs before it can be reaped, so a pass
 * whose pid list is the same before and after saw no reaping; retry the few
 * passes that did. */
#define PROCIO_PASSES 4

int cg2_procio_sample(const char *root, const char *cgdir, struct cg2_procio *out, size_t *npids,
                      size_t *vanished, struct iob_error **err) {
  cleanup_free pid_t *pids = NULL;
  size_t n = 0, summed = 0, gone = 0;
  if (cg2_procs_read(cgdir, &pids, &n, err) < 0)
    return -1;
  struct cg2_procio sum;
  for (int pass = 0;; pass++) {
    if (sample_once(root, pids, n, &sum, &summed, &gone, err) < 0)
      return -1;
    cleanup_free pid_t *after = NULL;
    size_t n_after = 0;
    if (cg2_procs_read(cgdir, &after, &n_after, err) < 0)
      return -1;
    bool same = n_after == n && (n == 0 || memcmp(after, pids, n * sizeof(*pids)) == 0);
    if (same || pass + 1 == PROCIO_PASSES)
      break;
    free(pids);
    pids = steal_ptr(&after);
    n = n_after;
  }
  *out = sum;
  if (npids)
    *npids = summed;
  if (vanished)
    *vanished = gone;
  return 0;
}

/* The procfs sample source (sample.h): read_bytes/write_bytes and the
 * syscall counts as the request counts. */
static int read_sample(const char *root, const char *cgdir, struct cg2_sample *s,
                       struct iob_error **err) {
  struct cg2_procio p;
  size_t n = 0;
  if (cg2_procio_sample(root, cgdir, &p, &n, NULL, err) < 0)
    return -1;
  s->io.rbytes = p.read_bytes;
  s->io.wbytes = p.write_bytes;
  s->io.rios = p.syscr;
  s->io.wios = p.syscw;
  s->npids = n;
  s->rchar = p.rchar;
  s->wchar = p.wchar;
  return 0;
}

const struct cg2_source_ops cg2_source_procio = {
    .source = CG2_SOURCE_PROCIO,
    .name = "procfs",
    .lower_fidelity = true,
    .counts_pids = true,
    .read = read_sample,
};
