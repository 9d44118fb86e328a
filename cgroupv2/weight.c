// SPDX-License-Identifier: Apache-2.0
#include "cgroupv2/weight.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroupv2/cg2.h"
#include "common/cleanup.h"
#include "common/xalloc.h"

#define IO_WEIGHT_MIN 1u
#define IO_WEIGHT_MAX 10000u
#define BFQ_WEIGHT_MIN 1u
#define BFQ_WEIGHT_MAX 1000u
#define WEIGHT_DEFAULT 100u

unsigned cg2_weight_min(enum cg2_weight_kind kind) {
  return kind == CG2_IO_WEIGHT ? IO_WEIGHT_MIN : BFQ_WEIGHT_MIN;
}
unsigned cg2_weight_max(enum cg2_weight_kind kind) {
  return kind == CG2_IO_WEIGHT ? IO_WEIGHT_MAX : BFQ_WEIGHT_MAX;
}
const char *cg2_weight_file(enum cg2_weight_kind kind) {
  return kind == CG2_IO_WEIGHT ? "io.weight" : "io.bfq.weight";
}

/* The same piecewise-linear map as systemd's BFQ_WEIGHT() in
 * src/basic/cgroup-util.h (checked against its source on 2026-11-30):
 * identity up to the default 100, then 100 + (w - 100) * 900 / 9900. */
unsigned cg2_weight_io_to_bfq(unsigned w) {
  if (w < IO_WEIGHT_MIN)
    w = IO_WEIGHT_MIN;
  if (w > IO_WEIGHT_MAX)
    w = IO_WEIGHT_MAX;
  if (w <= WEIGHT_DEFAULT)
    return WEIGHT_DEFAULT - (WEIGHT_DEFAULT - w) * (WEIGHT_DEFAULT - BFQ_WEIGHT_MIN) /
                                (WEIGHT_DEFAULT - IO_WEIGHT_MIN);
  return WEIGHT_DEFAULT + (w - WEIGHT_DEFAULT) * (BFQ_WEIGHT_MAX - WEIGHT_DEFAULT) /
                              (IO_WEIGHT_MAX - WEIGHT_DEFAULT);
}

unsigned cg2_weight_bfq_to_io(unsigned b) {
  if (b < BFQ_WEIGHT_MIN)
    b = BFQ_WEIGHT_MIN;
  if (b > BFQ_WEIGHT_MAX)
    b = BFQ_WEIGHT_MAX;
  if (b <= WEIGHT_DEFAULT)
    return WEIGHT_DEFAULT - (WEIGHT_DEFAULT - b) * (WEIGHT_DEFAULT - IO_WEIGHT_MIN) /
                                (WEIGHT_DEFAULT - BFQ_WEIGHT_MIN);
  return WEIGHT_DEFAULT + (b - WEIGHT_DEFAULT) * (IO_WEIGHT_MAX - WEIGHT_DEFAULT) /
                              (BFQ_WEIGHT_MAX - WEIGHT_DEFAULT);
}

static int parse_weight(enum cg2_weight_kind kind, const char *s, size_t len, unsigned *out) {
  uint64_t v;
  if (cg2_parse_u64(s, len, &v) < 0 || v < cg2_weight_min(kind) || v > cg2_weight_max(kind))
    return -1;
  *out = (unsigned)v;
  return 0;
}

static int parse_devno(const char *s, size_t len, unsigned *maj, unsigned *min) {
  const char *colon = memchr(s, ':', len);
  uint64_t a, b;
  if (colon == NULL || cg2_parse_u64(s, (size_t)(colon - s), &a) < 0 ||
      cg2_parse_u64(colon + 1, len - (size_t)(colon - s) - 1, &b) < 0 || a > UINT32_MAX ||
      b > UINT32_MAX)
    return -1;
  *maj = (unsigned)a;
  *min = (unsigned)b;
  return 0;
}

int cg2_weight_parse(enum cg2_weight_kind kind, const char *buf, size_t len, struct cg2_weight *out,
                     struct iob_error **err) {
  const char *file = cg2_weight_file(kind);
  struct cg2_weight w = {.dflt = WEIGHT_DEFAULT};
  cleanup_free struct cg2_weight_dev *dev = NULL;
  size_t cap = 0;
  int lineno = 0, have_default = 0;
  for (size_t off = 0; off < len;) {
    const char *line = buf + off;
    const char *nl = memchr(line, '\n', len - off);
    size_t ll = nl ? (size_t)(nl - line) : len - off;
    off += ll + 1;
    lineno++;
    if (ll == 0)
      continue;
    const char *sp = memchr(line, ' ', ll);
    size_t kl = sp ? (size_t)(sp - line) : ll;
    const char *val = sp ? sp + 1 : NULL;
    size_t vl = sp ? ll - kl - 1 : 0;
    if (sp == NULL) {
      /* pre-5.4 io.bfq.weight: just the default */
      if (have_default || parse_weight(kind, line, ll, &w.dflt) < 0)
        return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "%s line %d: invalid weight '%.*s'",
                              file, lineno, (int)(ll > 32 ? 32 : ll), line);
      have_default = 1;
      continue;
    }
    if (kl == 7 && memcmp(line, "default", 7) == 0) {
      if (have_default || parse_weight(kind, val, vl, &w.dflt) < 0)
        return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "%s line %d: invalid default '%.*s'",
                              file, lineno, (int)(vl > 32 ? 32 : vl), val);
      have_default = 1;
      continue;
    }
    unsigned maj, min, wt;
    if (parse_devno(line, kl, &maj, &min) < 0)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "%s line %d: invalid device '%.*s'",
                            file, lineno, (int)(kl > 32 ? 32 : kl), line);
    if (parse_weight(kind, val, vl, &wt) < 0)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "%s line %d: invalid weight '%.*s'",
                            file, lineno, (int)(vl > 32 ? 32 : vl), val);
    for (size_t i = 0; i < w.n; i++)
      if (dev[i].major == maj && dev[i].minor == min)
        return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                              "%s line %d: device %u:%u given twice", file, lineno, maj, min);
    if (w.n == CG2_WEIGHT_MAX_DEVS)
      return iob_error_code(err, IOB_CODE_RESOURCE_EXHAUSTED, "%s: more than %d devices", file,
                            CG2_WEIGHT_MAX_DEVS);
    if (w.n == cap) {
      cap = cap ? cap * 2 : 4;
      dev = xrealloc(dev, cap * sizeof(*dev));
    }
    dev[w.n++] = (struct cg2_weight_dev){maj, min, wt};
  }
  if (!have_default)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "%s: no default weight", file);
  w.dev = steal_ptr(&dev);
  *out = w;
  return 0;
}

int cg2_weight_read(const char *cgdir, enum cg2_weight_kind kind, struct cg2_weight *out,
                    struct iob_error **err) {
  cleanup_free char *path = xasprintf("%s/%s", cgdir, cg2_weight_file(kind));
  cleanup_free char *buf = NULL;
  size_t len = 0;
  if (cg2_read_file(path, CG2_FILE_MAX, &buf, &len, err) < 0)
    return -1;
  if (cg2_weight_parse(kind, buf, len, out, err) < 0)
    return iob_error_prefix(err, "cannot parse '%s'", path);
  return 0;
}

void cg2_weight_release(struct cg2_weight *w) {
  free(w->dev);
  w->dev = NULL;
  w->n = 0;
}

unsigned cg2_weight_for(const struct cg2_weight *w, unsigned major, unsigned minor) {
  for (size_t i = 0; i < w->n; i++)
    if (w->dev[i].major == major && w->dev[i].minor == minor)
      return w->dev[i].weight;
  return w->dflt;
}

static int check_range(enum cg2_weight_kind kind, unsigned weight, const char *path,
                       struct iob_error **err) {
  if (weight < cg2_weight_min(kind) || weight > cg2_weight_max(kind))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "cannot write %u to '%s': weight out of range %u..%u", weight, path,
                          cg2_weight_min(kind), cg2_weight_max(kind));
  return 0;
}

int cg2_weight_write_default(const char *cgdir, enum cg2_weight_kind kind, unsigned weight,
                             struct iob_error **err) {
  cleanup_free char *path = xasprintf("%s/%s", cgdir, cg2_weight_file(kind));
  if (check_range(kind, weight, path, err) < 0)
    return -1;
  char buf[32];
  snprintf(buf, sizeof(buf), "default %u", weight);
  return cg2_write_file(path, buf, err);
}

int cg2_weight_write_dev(const char *cgdir, enum cg2_weight_kind kind, unsigned major,
                         unsigned minor, unsigned weight, struct iob_error **err) {
  cleanup_free char *path = xasprintf("%s/%s", cgdir, cg2_weight_file(kind));
  char buf[64];
  if (weight == 0) {
    snprintf(buf, sizeof(buf), "%u:%u default", major, minor);
  } else {
    if (check_range(kind, weight, path, err) < 0)
      return -1;
    snprintf(buf, sizeof(buf), "%u:%u %u", major, minor, weight);
  }
  return cg2_write_file(path, buf, err);
}

int cg2_scheduler_active(const char *text, char *name, size_t size) {
  const char *o = strchr(text, '[');
  const char *c = o ? strchr(o, ']') : NULL;
  if (c == NULL || (size_t)(c - o - 1) >= size || c == o + 1)
    return -1;
  memcpy(name, o + 1, (size_t)(c - o - 1));
  name[c - o - 1] = '\0';
  return 0;
}

int cg2_iocost_enabled(const char *qos, size_t len, unsigned major, unsigned minor) {
  for (size_t off = 0; off < len;) {
    const char *line = qos + off;
    const char *nl = memchr(line, '\n', len - off);
    size_t ll = nl ? (size_t)(nl - line) : len - off;
    off += ll + 1;
    const char *sp = memchr(line, ' ', ll);
    unsigned ma, mi;
    if (sp == NULL || parse_devno(line, (size_t)(sp - line), &ma, &mi) < 0)
      continue;
    if (ma != major || mi != minor)
      continue;
    /* "MAJ:MIN enable=1 ctrl=auto rpct=..." */
    for (const char *p = sp; p < line + ll;) {
      while (p < line + ll && *p == ' ')
        p++;
      size_t tl = 0;
      while (p + tl < line + ll && p[tl] != ' ')
        tl++;
      if (tl == 8 && memcmp(p, "enable=1", 8) == 0)
        return 1;
      if (tl == 8 && memcmp(p, "enable=0", 8) == 0)
        return 0;
      p += tl;
    }
    return -1;
  }
  return 0;
}

/* Whole disk of a block device: a partition's sysfs directory is a child of
 * its disk's, and has a "partition" attribute; the disk has none. */
static int whole_disk(const char *root, unsigned major, unsigned minor, unsigned *dmaj,
                      unsigned *dmin, struct iob_error **err) {
  char rel[96];
  snprintf(rel, sizeof(rel), "/sys/dev/block/%u:%u", major, minor);
  cleanup_free char *dir = cg2_join(root, rel);
  cleanup_free char *part = xasprintf("%s/partition", dir);
  if (access(dir, F_OK) < 0)
    return iob_error(err, errno, "no block device %u:%u at '%s'", major, minor, dir);
  if (access(part, F_OK) < 0) {
    *dmaj = major;
    *dmin = minor;
    return 0;
  }
  cleanup_free char *devpath = xasprintf("%s/../dev", dir);
  cleanup_free char *txt = NULL;
  size_t len = 0;
  if (cg2_read_file(devpath, 64, &txt, &len, err) < 0)
    return iob_error_prefix(err, "cannot find the disk of partition %u:%u", major, minor);
  while (len > 0 && txt[len - 1] == '\n')
    len--;
  if (parse_devno(txt, len, dmaj, dmin) < 0)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid device number '%.*s' in '%s'",
                          (int)len, txt, devpath);
  return 0;
}

int cg2_whole_disk(const char *root, unsigned major, unsigned minor, unsigned *disk_major,
                   unsigned *disk_minor, struct iob_error **err) {
  return whole_disk(root, major, minor, disk_major, disk_minor, err);
}

int cg2_weight_mechanism(const char *root, const char *mount, unsigned major, unsigned minor,
                         unsigned *mech, unsigned *disk_major, unsigned *disk_minor,
                         struct iob_error **err) {
  unsigned dmaj, dmin, m = 0;
  if (whole_disk(root, major, minor, &dmaj, &dmin, err) < 0)
    return -1;

  cleanup_free char *qos_rel = xasprintf("%s/io.cost.qos", mount);
  cleanup_free char *qos_path = cg2_join(root, qos_rel);
  cleanup_free char *qos = NULL;
  size_t qlen = 0;
  cleanup_error struct iob_error *qerr = NULL;
  /* No io.cost.qos: a kernel without iocost, or io not in the v2 hierarchy;
   * either way iocost cannot be what enforces weights. */
  if (cg2_read_file(qos_path, CG2_FILE_MAX, &qos, &qlen, &qerr) == 0) {
    int r = cg2_iocost_enabled(qos, qlen, dmaj, dmin);
    if (r < 0)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "malformed line for %u:%u in '%s'",
                            dmaj, dmin, qos_path);
    if (r > 0)
      m |= CG2_MECH_IOCOST;
  } else if (qerr->errno_ != ENOENT) {
    return iob_error(err, qerr->errno_, "cannot read '%s'", qos_path);
  }

  char rel[96];
  snprintf(rel, sizeof(rel), "/sys/dev/block/%u:%u/queue/scheduler", dmaj, dmin);
  cleanup_free char *sched_path = cg2_join(root, rel);
  cleanup_free char *sched = NULL;
  cleanup_error struct iob_error *serr = NULL;
  char name[32];
  /* Devices without a queue (some virtual ones) have no scheduler file. */
  if (cg2_read_file(sched_path, 4096, &sched, NULL, &serr) == 0) {
    if (cg2_scheduler_active(sched, name, sizeof(name)) == 0 && strcmp(name, "bfq") == 0)
      m |= CG2_MECH_BFQ;
  } else if (serr->errno_ != ENOENT) {
    return iob_error(err, serr->errno_, "cannot read '%s'", sched_path);
  }
  *mech = m;
  if (disk_major)
    *disk_major = dmaj;
  if (disk_minor)
    *disk_minor = dmin;
  return 0;
}

static int disk_cmp(const void *a, const void *b) {
  const struct cg2_disk *x = a, *y = b;
  if (x->major != y->major)
    return x->major < y->major ? -1 : 1;
  return x->minor < y->minor ? -1 : x->minor > y->minor;
}

int cg2_weight_disks(const char *root, const char *mount, struct cg2_disk **out, size_t *n,
                     struct iob_error **err) {
  cleanup_free char *dir = cg2_join(root, "/sys/dev/block");
  DIR *d = opendir(dir);
  if (d == NULL)
    return iob_error(err, errno, "cannot open '%s'", dir);
  cleanup_free struct cg2_disk *v = NULL;
  size_t cnt = 0, cap = 0;
  struct dirent *e;
  int rc = 0;
  while ((e = readdir(d)) != NULL) {
    unsigned maj, min, mech, dmaj, dmin;
    if (e->d_name[0] == '.' || parse_devno(e->d_name, strlen(e->d_name), &maj, &min) < 0)
      continue;
    if (cg2_weight_mechanism(root, mount, maj, min, &mech, &dmaj, &dmin, err) < 0) {
      rc = -1;
      break;
    }
    if (dmaj != maj || dmin != min)
      continue; /* a partition */
    if (cnt == CG2_WEIGHT_MAX_DEVS) {
      rc = iob_error_code(err, IOB_CODE_RESOURCE_EXHAUSTED, "more than %d block devices in '%s'",
                          CG2_WEIGHT_MAX_DEVS, dir);
      break;
    }
    if (cnt == cap) {
      cap = cap ? cap * 2 : 16;
      v = xrealloc(v, cap * sizeof(*v));
    }
    v[cnt++] = (struct cg2_disk){maj, min, mech};
  }
  closedir(d);
  if (rc < 0)
    return -1;
  if (cnt > 1)
    qsort(v, cnt, sizeof(*v), disk_cmp);
  *out = steal_ptr(&v);
  *n = cnt;
  return 0;
}
