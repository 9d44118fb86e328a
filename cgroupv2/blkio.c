// SPDX-License-Identifier: Apache-2.0
#include "cgroupv2/blkio.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroupv2/cg2.h"
#include "cgroupv2/procio.h"
#include "cgroupv2/sample.h"
#include "common/cleanup.h"
#include "common/xalloc.h"

enum { K_READ, K_WRITE, K_SYNC, K_ASYNC, K_DISCARD, K_TOTAL, K_N };
static const char *const keys[K_N] = {"Read", "Write", "Sync", "Async", "Discard", "Total"};

static uint64_t *slot(struct cg2_blkio_dev *d, int k) {
  switch (k) {
  case K_READ:
    return &d->read;
  case K_WRITE:
    return &d->write;
  case K_SYNC:
    return &d->sync;
  case K_ASYNC:
    return &d->async;
  case K_DISCARD:
    return &d->discard;
  default:
    return &d->total;
  }
}

/* Split LINE (LL bytes) at single spaces into at most 3 tokens; returns the
 * count, or -1 for more, an empty token or other whitespace. */
static int split(const char *line, size_t ll, const char *tok[3], size_t tl[3]) {
  int n = 0;
  size_t start = 0;
  for (size_t i = 0; i <= ll; i++) {
    if (i < ll && line[i] != ' ') {
      if (line[i] == '\t' || line[i] == '\r' || line[i] == '\0')
        return -1;
      continue;
    }
    if (i == start || n == 3)
      return -1;
    tok[n] = line + start;
    tl[n] = i - start;
    n++;
    start = i + 1;
  }
  return n;
}

int cg2_blkio_parse(const char *buf, size_t len, struct cg2_blkio *out, struct iob_error **err) {
  size_t cap = 0, n = 0;
  cleanup_free struct cg2_blkio_dev *dev = NULL;
  cleanup_free unsigned *seen = NULL; /* key bitmask per device */
  uint64_t total = 0;
  int lineno = 0, have_total = 0;
  for (size_t off = 0; off < len;) {
    const char *line = buf + off;
    const char *nl = memchr(line, '\n', len - off);
    size_t ll = nl ? (size_t)(nl - line) : len - off;
    off += ll + 1;
    lineno++;
    if (ll == 0)
      continue;
    if (ll > CG2_IOSTAT_LINE_MAX)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "blkio line %d: longer than %d bytes",
                            lineno, CG2_IOSTAT_LINE_MAX);
    const char *tok[3];
    size_t tl[3];
    int nt = split(line, ll, tok, tl);
    if (nt == 2 && tl[0] == 5 && memcmp(tok[0], "Total", 5) == 0) {
      if (have_total || cg2_parse_u64(tok[1], tl[1], &total) < 0)
        return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "blkio line %d: invalid 'Total'",
                              lineno);
      have_total = 1;
      continue;
    }
    if (nt != 3)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "blkio line %d: expected 'MAJ:MIN KEY VALUE' or 'Total VALUE'", lineno);
    if (have_total)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "blkio line %d: device line after the 'Total' line", lineno);
    unsigned maj, min;
    uint64_t v;
    if (cg2_parse_devno(tok[0], tl[0], &maj, &min) < 0)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "blkio line %d: invalid device '%.*s'",
                            lineno, (int)(tl[0] > 32 ? 32 : tl[0]), tok[0]);
    if (cg2_parse_u64(tok[2], tl[2], &v) < 0)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "blkio line %d: invalid value", lineno);
    /* The kernel prints a device's lines together: a device other than the
     * last one is new, and must not have been seen before. */
    if (n == 0 || dev[n - 1].major != maj || dev[n - 1].minor != min) {
      for (size_t i = 0; i + 1 < n; i++)
        if (dev[i].major == maj && dev[i].minor == min)
          return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                                "blkio line %d: device %u:%u given twice", lineno, maj, min);
      if (n == CG2_IOSTAT_MAX_DEVS)
        return iob_error_code(err, IOB_CODE_RESOURCE_EXHAUSTED, "blkio: more than %d devices",
                              CG2_IOSTAT_MAX_DEVS);
      if (n == cap) {
        cap = cap ? cap * 2 : 4;
        dev = xrealloc(dev, cap * sizeof(*dev));
        seen = xrealloc(seen, cap * sizeof(*seen));
      }
      memset(&dev[n], 0, sizeof(dev[n]));
      dev[n].major = maj;
      dev[n].minor = min;
      seen[n] = 0;
      n++;
    }
    for (int k = 0; k < K_N; k++) {
      if (strlen(keys[k]) != tl[1] || memcmp(keys[k], tok[1], tl[1]) != 0)
        continue;
      if (seen[n - 1] & (1u << k))
        return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                              "blkio line %d: '%s' given twice for %u:%u", lineno, keys[k], maj,
                              min);
      seen[n - 1] |= 1u << k;
      *slot(&dev[n - 1], k) = v;
    }
  }
  out->n = n;
  out->dev = steal_ptr(&dev);
  out->total = total;
  return 0;
}

void cg2_blkio_release(struct cg2_blkio *b) {
  free(b->dev);
  b->dev = NULL;
  b->n = 0;
}

static int read_one(const char *cgdir, const char *file, struct cg2_blkio *out,
                    struct iob_error **err) {
  cleanup_free char *path = xasprintf("%s/%s", cgdir, file);
  cleanup_free char *buf = NULL;
  size_t len = 0;
  if (cg2_read_file(path, CG2_FILE_MAX, &buf, &len, err) < 0)
    return -1;
  if (cg2_blkio_parse(buf, len, out, err) < 0)
    return iob_error_prefix(err, "cannot parse '%s'", path);
  return 0;
}

static int dev_cmp(const void *a, const void *b) {
  const struct cg2_iostat_dev *x = a, *y = b;
  if (x->major != y->major)
    return x->major < y->major ? -1 : 1;
  return x->minor < y->minor ? -1 : x->minor > y->minor;
}

static struct cg2_iostat_dev *find_or_add(struct cg2_iostat_dev *v, size_t *n, unsigned maj,
                                          unsigned min) {
  for (size_t i = 0; i < *n; i++)
    if (v[i].major == maj && v[i].minor == min)
      return &v[i];
  memset(&v[*n], 0, sizeof(v[*n]));
  v[*n].major = maj;
  v[*n].minor = min;
  return &v[(*n)++];
}

int cg2_blkio_read(const char *cgdir, struct cg2_iostat *out, struct iob_error **err) {
  struct cg2_blkio bytes = {0}, ios = {0};
  if (read_one(cgdir, CG2_BLKIO_BYTES, &bytes, err) < 0)
    return -1;
  if (read_one(cgdir, CG2_BLKIO_IOS, &ios, err) < 0) {
    cg2_blkio_release(&bytes);
    return -1;
  }
  size_t n = 0;
  struct cg2_iostat_dev *v = xcalloc(bytes.n + ios.n + 1, sizeof(*v));
  for (size_t i = 0; i < bytes.n; i++) {
    struct cg2_iostat_dev *d = find_or_add(v, &n, bytes.dev[i].major, bytes.dev[i].minor);
    d->c.rbytes = bytes.dev[i].read;
    d->c.wbytes = bytes.dev[i].write;
    d->c.dbytes = bytes.dev[i].discard;
  }
  for (size_t i = 0; i < ios.n; i++) {
    struct cg2_iostat_dev *d = find_or_add(v, &n, ios.dev[i].major, ios.dev[i].minor);
    d->c.rios = ios.dev[i].read;
    d->c.wios = ios.dev[i].write;
    d->c.dios = ios.dev[i].discard;
  }
  cg2_blkio_release(&bytes);
  cg2_blkio_release(&ios);
  if (n > 1)
    qsort(v, n, sizeof(*v), dev_cmp);
  out->n = n;
  out->dev = v;
  return 0;
}

int cg2_blkio_activate(const char *root, const char *mount, unsigned major, unsigned minor,
                       int *done, struct iob_error **err) {
  cleanup_free char *rel = xasprintf("%s/%s", mount, CG2_BLKIO_BYTES);
  cleanup_free char *path = cg2_join(root, rel);
  cleanup_free char *buf = NULL;
  size_t len = 0;
  struct cg2_blkio b = {0};
  if (done)
    *done = 0;
  if (cg2_read_file(path, CG2_FILE_MAX, &buf, &len, err) < 0)
    return -1;
  if (cg2_blkio_parse(buf, len, &b, err) < 0)
    return iob_error_prefix(err, "cannot parse '%s'", path);
  int have = 0;
  for (size_t i = 0; i < b.n; i++)
    have |= b.dev[i].major == major && b.dev[i].minor == minor;
  cg2_blkio_release(&b);
  if (have)
    return 0;
  cleanup_free char *wrel = xasprintf("%s/blkio.throttle.read_bps_device", mount);
  cleanup_free char *wpath = cg2_join(root, wrel);
  char line[64];
  snprintf(line, sizeof(line), "%u:%u 0", major, minor);
  if (cg2_write_file(wpath, line, err) < 0)
    return -1;
  if (done)
    *done = 1;
  return 0;
}

int cg2_blkio_activate_all(const char *root, const char *mount, size_t *n_active, char **added,
                           struct iob_error **err) {
  if (added)
    *added = NULL;
  cleanup_free char *dir = cg2_join(root, "/sys/block");
  DIR *d = opendir(dir);
  if (d == NULL)
    return iob_error(err, errno, "cannot open '%s'", dir);
  size_t cnt = 0, seen = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && seen < CG2_IOSTAT_MAX_DEVS) {
    if (e->d_name[0] == '.')
      continue;
    seen++;
    cleanup_free char *devp = xasprintf("%s/%s/dev", dir, e->d_name);
    cleanup_free char *sizep = xasprintf("%s/%s/size", dir, e->d_name);
    cleanup_free char *dtxt = NULL, *stxt = NULL;
    size_t dl = 0, sl = 0;
    cleanup_error struct iob_error *e2 = NULL;
    if (cg2_read_file(devp, 64, &dtxt, &dl, &e2) < 0 ||
        cg2_read_file(sizep, 64, &stxt, &sl, &e2) < 0)
      continue;
    while (dl > 0 && dtxt[dl - 1] == '\n')
      dl--;
    while (sl > 0 && stxt[sl - 1] == '\n')
      sl--;
    unsigned maj, min;
    uint64_t sectors;
    if (cg2_parse_devno(dtxt, dl, &maj, &min) < 0 || cg2_parse_u64(stxt, sl, &sectors) < 0 ||
        sectors == 0)
      continue;
    int done = 0;
    if (cg2_blkio_activate(root, mount, maj, min, &done, &e2) < 0)
      continue;
    cnt++;
    if (done && added) {
      char *more =
          xasprintf("%s%s%s %u:%u", *added ? *added : "", *added ? ", " : "", e->d_name, maj, min);
      free(*added);
      *added = more;
    }
  }
  closedir(d);
  if (n_active)
    *n_active = cnt;
  return 0;
}

/* The v1 blkio sample source: blkio's counters, with procfs for what v1
 * does not charge to the container (the rule in sample.h). */
static int read_sample(const char *root, const char *cgdir, struct cg2_sample *s,
                       struct iob_error **err) {
  struct cg2_iostat st;
  if (cg2_blkio_read(cgdir, &st, err) < 0)
    return -1;
  cg2_iostat_sum(&st, &s->io);
  cg2_iostat_release(&st);
  struct cg2_procio p;
  size_t n = 0;
  if (cg2_procio_sample(root, cgdir, &p, &n, NULL, err) < 0)
    return -1;
  /* Each a lower bound, the larger wins. */
  uint64_t net =
      p.write_bytes > p.cancelled_write_bytes ? p.write_bytes - p.cancelled_write_bytes : 0;
  if (net > s->io.wbytes)
    s->io.wbytes = net;
  if (p.syscw > s->io.wios)
    s->io.wios = p.syscw;
  s->npids = n;
  s->rchar = p.rchar;
  s->wchar = p.wchar;
  return 0;
}

const struct cg2_source_ops cg2_source_blkio_v1 = {
    .source = CG2_SOURCE_BLKIO_V1,
    .name = "blkio-v1",
    .counts_pids = true,
    .v1_dir = true,
    .read = read_sample,
};
