// SPDX-License-Identifier: Apache-2.0
#include "cgroupv2/iostat.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroupv2/cg2.h"
#include "cgroupv2/sample.h"
#include "common/cleanup.h"
#include "common/xalloc.h"

static const char *const base_keys[] = {"rbytes", "wbytes", "rios", "wios", "dbytes", "dios"};

static uint64_t *counter_slot(struct cg2_io_counters *c, size_t i) {
  uint64_t *slots[] = {&c->rbytes, &c->wbytes, &c->rios, &c->wios, &c->dbytes, &c->dios};
  return slots[i];
}

static uint64_t counter_get(const struct cg2_io_counters *c, size_t i) {
  const uint64_t v[] = {c->rbytes, c->wbytes, c->rios, c->wios, c->dbytes, c->dios};
  return v[i];
}

static int dev_cmp(const void *a, const void *b) {
  const struct cg2_iostat_dev *x = a, *y = b;
  if (x->major != y->major)
    return x->major < y->major ? -1 : 1;
  if (x->minor != y->minor)
    return x->minor < y->minor ? -1 : 1;
  return 0;
}

static int parse_line(const char *line, size_t len, int lineno, struct cg2_iostat_dev *d,
                      struct iob_error **err) {
  size_t i = 0;
  size_t tl = 0;
  while (i + tl < len && line[i + tl] != ' ')
    tl++;
  if (cg2_parse_devno(line, tl, &d->major, &d->minor) < 0)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "io.stat line %d: invalid device '%.*s'",
                          lineno, (int)(tl > 32 ? 32 : tl), line);
  memset(&d->c, 0, sizeof(d->c));
  unsigned seen = 0;
  for (i = tl; i < len;) {
    while (i < len && line[i] == ' ')
      i++;
    if (i == len)
      break;
    const char *tok = line + i;
    size_t n = 0;
    while (i + n < len && line[i + n] != ' ')
      n++;
    i += n;
    const char *eq = memchr(tok, '=', n);
    if (eq == NULL || eq == tok)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "io.stat line %d: expected key=value, got '%.*s'", lineno,
                            (int)(n > 32 ? 32 : n), tok);
    size_t kl = (size_t)(eq - tok), vl = n - kl - 1;
    for (size_t k = 0; k < IOB_ARRAY_SIZE(base_keys); k++) {
      if (strlen(base_keys[k]) != kl || memcmp(base_keys[k], tok, kl) != 0)
        continue;
      if (seen & (1u << k))
        return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                              "io.stat line %d: key '%s' given twice", lineno, base_keys[k]);
      seen |= 1u << k;
      if (cg2_parse_u64(eq + 1, vl, counter_slot(&d->c, k)) < 0)
        return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                              "io.stat line %d: invalid value for '%s': '%.*s'", lineno,
                              base_keys[k], (int)(vl > 32 ? 32 : vl), eq + 1);
    }
    /* Anything else (cost.usage=, depth=, avg_lat=, ...) is a controller's
     * extra and not ours to judge. */
  }
  return 0;
}

int cg2_iostat_parse(const char *buf, size_t len, struct cg2_iostat *out, struct iob_error **err) {
  size_t cap = 0, n = 0;
  cleanup_free struct cg2_iostat_dev *dev = NULL;
  int lineno = 0;
  for (size_t off = 0; off < len;) {
    const char *line = buf + off;
    const char *nl = memchr(line, '\n', len - off);
    size_t ll = nl ? (size_t)(nl - line) : len - off;
    off += ll + 1;
    lineno++;
    if (ll == 0)
      continue;
    if (ll > CG2_IOSTAT_LINE_MAX)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "io.stat line %d: longer than %d bytes",
                            lineno, CG2_IOSTAT_LINE_MAX);
    if (memchr(line, '\0', ll) != NULL)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "io.stat line %d: contains a NUL byte",
                            lineno);
    if (n == CG2_IOSTAT_MAX_DEVS)
      return iob_error_code(err, IOB_CODE_RESOURCE_EXHAUSTED, "io.stat: more than %d devices",
                            CG2_IOSTAT_MAX_DEVS);
    if (n == cap) {
      cap = cap ? cap * 2 : 8;
      dev = xrealloc(dev, cap * sizeof(*dev));
    }
    if (parse_line(line, ll, lineno, &dev[n], err) < 0)
      return -1;
    n++;
  }
  if (n > 1)
    qsort(dev, n, sizeof(*dev), dev_cmp);
  for (size_t i = 1; i < n; i++)
    if (dev_cmp(&dev[i - 1], &dev[i]) == 0)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "io.stat: device %u:%u listed twice",
                            dev[i].major, dev[i].minor);
  out->n = n;
  out->dev = steal_ptr(&dev);
  return 0;
}

int cg2_iostat_read(const char *cgdir, struct cg2_iostat *out, struct iob_error **err) {
  cleanup_free char *path = xasprintf("%s/io.stat", cgdir);
  cleanup_free char *buf = NULL;
  size_t len = 0;
  if (cg2_read_file(path, CG2_FILE_MAX, &buf, &len, err) < 0)
    return -1;
  if (cg2_iostat_parse(buf, len, out, err) < 0)
    return iob_error_prefix(err, "cannot parse '%s'", path);
  return 0;
}

void cg2_iostat_release(struct cg2_iostat *s) {
  free(s->dev);
  s->dev = NULL;
  s->n = 0;
}

const struct cg2_io_counters *cg2_iostat_find(const struct cg2_iostat *s, unsigned major,
                                              unsigned minor) {
  struct cg2_iostat_dev key = {.major = major, .minor = minor};
  if (s->n == 0)
    return NULL;
  const struct cg2_iostat_dev *d = bsearch(&key, s->dev, s->n, sizeof(*s->dev), dev_cmp);
  return d ? &d->c : NULL;
}

/* Saturating: a sum over devices that overflows stays at the maximum rather
 * than wrapping into a small number that would look like a reset. */
static uint64_t sat_add(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

void cg2_iostat_sum(const struct cg2_iostat *s, struct cg2_io_counters *out) {
  memset(out, 0, sizeof(*out));
  for (size_t i = 0; i < s->n; i++)
    for (size_t k = 0; k < IOB_ARRAY_SIZE(base_keys); k++)
      *counter_slot(out, k) = sat_add(*counter_slot(out, k), counter_get(&s->dev[i].c, k));
}

/* Field by field, not through counter_get's arrays: the detector diffs
 * every pair of a container's ring each window, and the arrays built per
 * key made this 30% of a window's instructions with 200 containers
 * found (bench/results/kubepods-overhead-profile.txt). */
int cg2_counters_delta(const struct cg2_io_counters *prev, const struct cg2_io_counters *cur,
                       struct cg2_io_counters *out) {
  int reset = cur->rbytes < prev->rbytes || cur->wbytes < prev->wbytes || cur->rios < prev->rios ||
              cur->wios < prev->wios || cur->dbytes < prev->dbytes || cur->dios < prev->dios;
  /* All keys restart together, so one key going down voids the baseline of
   * every key: counting the others from prev would mix two lifetimes. */
  if (reset) {
    *out = *cur;
    return 1;
  }
  struct cg2_io_counters d = {
      .rbytes = cur->rbytes - prev->rbytes,
      .wbytes = cur->wbytes - prev->wbytes,
      .rios = cur->rios - prev->rios,
      .wios = cur->wios - prev->wios,
      .dbytes = cur->dbytes - prev->dbytes,
      .dios = cur->dios - prev->dios,
  };
  *out = d;
  return 0;
}

int cg2_iostat_delta(const struct cg2_iostat *prev, const struct cg2_iostat *cur,
                     struct cg2_iostat *out) {
  size_t n = 0;
  cleanup_free struct cg2_iostat_dev *dev = xcalloc(prev->n + cur->n, sizeof(*dev));
  static const struct cg2_io_counters zero;
  int resets = 0;
  size_t i = 0, j = 0;
  while (i < prev->n || j < cur->n) {
    int c = i == prev->n ? 1 : j == cur->n ? -1 : dev_cmp(&prev->dev[i], &cur->dev[j]);
    const struct cg2_iostat_dev *id = c <= 0 ? &prev->dev[i] : &cur->dev[j];
    const struct cg2_io_counters *p = c <= 0 ? &prev->dev[i].c : &zero;
    const struct cg2_io_counters *q = c >= 0 ? &cur->dev[j].c : &zero;
    dev[n].major = id->major;
    dev[n].minor = id->minor;
    resets += cg2_counters_delta(p, q, &dev[n].c);
    n++;
    if (c <= 0)
      i++;
    if (c >= 0)
      j++;
  }
  out->n = n;
  out->dev = steal_ptr(&dev);
  return resets;
}

/* The io.stat sample source: the cgroup's counters summed over devices. */
static int read_sample(const char *root, const char *cgdir, struct cg2_sample *s,
                       struct iob_error **err) {
  (void)root;
  struct cg2_iostat st;
  if (cg2_iostat_read(cgdir, &st, err) < 0)
    return -1;
  cg2_iostat_sum(&st, &s->io);
  cg2_iostat_release(&st);
  return 0;
}

const struct cg2_source_ops cg2_source_iostat = {
    .source = CG2_SOURCE_IOSTAT,
    .name = "io.stat",
    .read = read_sample,
};
