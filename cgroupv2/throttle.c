// SPDX-License-Identifier: Apache-2.0
#include "cgroupv2/throttle.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cgroupv2/blkio.h"
#include "cgroupv2/cg2.h"
#include "cgroupv2/iostat.h"
#include "cgroupv2/weight.h"
#include "common/cleanup.h"
#include "common/xalloc.h"

static const char *const v1_files[4] = {
    "blkio.throttle.read_bps_device", "blkio.throttle.write_bps_device",
    "blkio.throttle.read_iops_device", "blkio.throttle.write_iops_device"};

const char *cg2_throttle_mech_name(enum cg2_throttle_mech mech) {
  switch (mech) {
  case CG2_THROTTLE_V2_IOMAX:
    return "io.max";
  case CG2_THROTTLE_V1_BLKIO:
    return "blkio.throttle";
  case CG2_THROTTLE_NONE:
    break;
  }
  return "none";
}

int cg2_throttle_parse_iomax(const char *buf, size_t len, unsigned major, unsigned minor,
                             struct cg2_throttle_limits *out, struct iob_error **err) {
  static const char *const keys[4] = {"rbps", "wbps", "riops", "wiops"};
  struct cg2_throttle_limits res = {0};
  int lineno = 0, found = 0;
  for (size_t off = 0; off < len;) {
    const char *line = buf + off;
    const char *nl = memchr(line, '\n', len - off);
    size_t ll = nl ? (size_t)(nl - line) : len - off;
    off += ll + 1;
    lineno++;
    if (ll == 0)
      continue;
    if (ll > CG2_IOSTAT_LINE_MAX)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "io.max line %d: too long", lineno);
    const char *sp = memchr(line, ' ', ll);
    unsigned maj, min;
    if (sp == NULL || cg2_parse_devno(line, (size_t)(sp - line), &maj, &min) < 0)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "io.max line %d: invalid device",
                            lineno);
    int mine = maj == major && min == minor;
    if (mine && found)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "io.max line %d: device %u:%u given twice", lineno, maj, min);
    struct cg2_throttle_limits l = {0};
    uint64_t *slots[4] = {&l.rbps, &l.wbps, &l.riops, &l.wiops};
    unsigned seen = 0;
    for (const char *p = sp + 1; p < line + ll;) {
      size_t tl = 0;
      while (p + tl < line + ll && p[tl] != ' ')
        tl++;
      const char *eq = memchr(p, '=', tl);
      if (tl == 0 || eq == NULL || eq == p)
        return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                              "io.max line %d: expected KEY=VALUE tokens", lineno);
      size_t kl = (size_t)(eq - p), vl = tl - kl - 1;
      uint64_t v = 0;
      if (!(vl == 3 && memcmp(eq + 1, "max", 3) == 0) && cg2_parse_u64(eq + 1, vl, &v) < 0)
        return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "io.max line %d: invalid value",
                              lineno);
      for (int k = 0; k < 4; k++) {
        if (strlen(keys[k]) != kl || memcmp(keys[k], p, kl) != 0)
          continue;
        if (seen & (1u << k))
          return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "io.max line %d: '%s' given twice",
                                lineno, keys[k]);
        seen |= 1u << k;
        *slots[k] = v;
      }
      p += tl + 1;
    }
    if (mine) {
      res = l;
      found = 1;
    }
  }
  *out = res;
  return 0;
}

int cg2_throttle_parse_v1(const char *buf, size_t len, unsigned major, unsigned minor, uint64_t *v,
                          struct iob_error **err) {
  int lineno = 0, found = 0;
  uint64_t res = 0;
  for (size_t off = 0; off < len;) {
    const char *line = buf + off;
    const char *nl = memchr(line, '\n', len - off);
    size_t ll = nl ? (size_t)(nl - line) : len - off;
    off += ll + 1;
    lineno++;
    if (ll == 0)
      continue;
    const char *sp = memchr(line, ' ', ll);
    unsigned maj, min;
    uint64_t x;
    if (sp == NULL || cg2_parse_devno(line, (size_t)(sp - line), &maj, &min) < 0 ||
        cg2_parse_u64(sp + 1, ll - (size_t)(sp - line) - 1, &x) < 0)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "blkio throttle line %d: expected 'MAJ:MIN VALUE'", lineno);
    if (maj == major && min == minor) {
      if (found)
        return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                              "blkio throttle line %d: device %u:%u given twice", lineno, maj, min);
      found = 1;
      res = x;
    }
  }
  *v = res;
  return 0;
}

static int file_exists(const char *dir, const char *file) {
  cleanup_free char *p = xasprintf("%s/%s", dir, file);
  return access(p, F_OK) == 0;
}

static char *cg_dir(const char *root, const char *mount, const char *cg) {
  return xasprintf("%s%s%s", root ? root : "", mount, strcmp(cg, "/") ? cg : "");
}

int cg2_throttle_mechanism(const char *root, pid_t pid, enum cg2_throttle_mech *mech, char **cgdir,
                           struct iob_error **err) {
  *mech = CG2_THROTTLE_NONE;
  *cgdir = NULL;
  if (pid <= 0)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid pid %d", (int)pid);
  struct cg2_mount m = {0};
  cleanup_error struct iob_error *e = NULL;
  if (cg2_mount_find(root, &m, &e) == 0 && m.has_io) {
    cleanup_free char *cg = NULL;
    if (cg2_pid_cgroup(root, pid, &cg, err) < 0) {
      cg2_mount_release(&m);
      return -1;
    }
    if (strcmp(cg, "/") != 0) {
      char *dir = cg_dir(root, m.path, cg);
      if (file_exists(dir, "io.max")) {
        cg2_mount_release(&m);
        *mech = CG2_THROTTLE_V2_IOMAX;
        *cgdir = dir;
        return 0;
      }
      free(dir);
    }
  }
  cg2_mount_release(&m);
  cleanup_free char *cg = NULL, *mnt = NULL;
  iob_error_release(&e);
  if (cg2_v1_mount_find(root, "blkio", &mnt, &e) == 0 &&
      cg2_pid_cgroup_v1(root, pid, "blkio", &cg, &e) == 0 && strcmp(cg, "/") != 0) {
    char *dir = cg_dir(root, mnt, cg);
    if (file_exists(dir, v1_files[1])) {
      *mech = CG2_THROTTLE_V1_BLKIO;
      *cgdir = dir;
      return 0;
    }
    free(dir);
  }
  return 0;
}

int cg2_throttle_target_add_dev(const char *root, struct cg2_throttle_target *t, unsigned major,
                                unsigned minor, struct iob_error **err) {
  unsigned dmaj, dmin;
  if (major == 0)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "%u:%u is not a block device", major,
                          minor);
  if (cg2_whole_disk(root, major, minor, &dmaj, &dmin, err) < 0)
    return -1;
  for (size_t i = 0; i < t->ndev; i++)
    if (t->dev[i].major == dmaj && t->dev[i].minor == dmin)
      return 0;
  if (t->ndev == CG2_THROTTLE_MAX_DEVS)
    return iob_error_code(err, IOB_CODE_RESOURCE_EXHAUSTED, "more than %d disks",
                          CG2_THROTTLE_MAX_DEVS);
  t->dev[t->ndev++] = (struct cg2_throttle_dev){dmaj, dmin};
  return 0;
}

/* The device of the mount at MOUNTPOINT in the mountinfo file PATH (the
 * last one mounted there): its st_dev when that is a block device, else,
 * for an overlay, the device of its upperdir (ROOT-prefixed). */
static int mount_dev(const char *root, const char *path, const char *mountpoint, unsigned *maj,
                     unsigned *min) {
  cleanup_free char *buf = NULL;
  cleanup_error struct iob_error *e = NULL;
  if (cg2_read_file(path, CG2_FILE_MAX, &buf, NULL, &e) < 0)
    return -1;
  int found = 0;
  char *save = NULL;
  for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    /* id parent maj:min root mountpoint opts [optional...] - fstype source superopts */
    char *f[5] = {0}, *sp = NULL, *tok = strtok_r(line, " ", &sp);
    int i = 0;
    for (; tok && i < 5; i++, tok = strtok_r(NULL, " ", &sp))
      f[i] = tok;
    if (i < 5 || strcmp(f[4], mountpoint) != 0)
      continue;
    while (tok && strcmp(tok, "-") != 0)
      tok = strtok_r(NULL, " ", &sp);
    char *fstype = tok ? strtok_r(NULL, " ", &sp) : NULL;
    char *source = fstype ? strtok_r(NULL, " ", &sp) : NULL;
    char *opts = source ? strtok_r(NULL, " ", &sp) : NULL;
    unsigned a, b;
    if (cg2_parse_devno(f[2], strlen(f[2]), &a, &b) < 0)
      continue;
    if (a != 0) {
      *maj = a;
      *min = b;
      found = 1;
      continue;
    }
    if (fstype == NULL || opts == NULL || strcmp(fstype, "overlay") != 0)
      continue;
    char *s2 = NULL;
    for (char *o = strtok_r(opts, ",", &s2); o; o = strtok_r(NULL, ",", &s2)) {
      if (strncmp(o, "upperdir=", 9) != 0)
        continue;
      cleanup_free char *up = cg2_join(root, o + 9);
      struct stat st;
      if (stat(up, &st) == 0 && major(st.st_dev) != 0) {
        *maj = major(st.st_dev);
        *min = minor(st.st_dev);
        found = 1;
      }
    }
  }
  return found ? 0 : -1;
}

static void add_quiet(const char *root, struct cg2_throttle_target *t, unsigned maj, unsigned min) {
  cleanup_error struct iob_error *e = NULL;
  (void)cg2_throttle_target_add_dev(root, t, maj, min, &e);
}

int cg2_throttle_target_resolve(const char *root, pid_t pid, const char *bundle,
                                struct cg2_throttle_target *t, struct iob_error **err) {
  memset(t, 0, sizeof(*t));
  if (cg2_throttle_mechanism(root, pid, &t->mech, &t->cgdir, err) < 0)
    return -1;
  unsigned maj, min;
  char rel[64];
  snprintf(rel, sizeof(rel), "/proc/%d/mountinfo", (int)pid);
  cleanup_free char *mi = cg2_join(root, rel);
  if (mount_dev(root, mi, "/", &maj, &min) == 0)
    add_quiet(root, t, maj, min);
  if (bundle) {
    cleanup_free char *rootfs = xasprintf("%s/rootfs", bundle);
    cleanup_free char *self = cg2_join(root, "/proc/self/mountinfo");
    struct stat st;
    cleanup_free char *rp = cg2_join(root, rootfs);
    if (mount_dev(root, self, rootfs, &maj, &min) == 0)
      add_quiet(root, t, maj, min);
    else if (stat(rp, &st) == 0 && major(st.st_dev) != 0)
      add_quiet(root, t, major(st.st_dev), minor(st.st_dev));
  }
  if (t->mech != CG2_THROTTLE_NONE) {
    struct cg2_iostat s = {0};
    cleanup_error struct iob_error *e = NULL;
    int rc = t->mech == CG2_THROTTLE_V2_IOMAX ? cg2_iostat_read(t->cgdir, &s, &e)
                                              : cg2_blkio_read(t->cgdir, &s, &e);
    for (size_t i = 0; rc == 0 && i < s.n; i++) {
      const struct cg2_io_counters *c = &s.dev[i].c;
      if (c->rbytes || c->wbytes || c->rios || c->wios)
        add_quiet(root, t, s.dev[i].major, s.dev[i].minor);
    }
    cg2_iostat_release(&s);
  }
  return 0;
}

void cg2_throttle_target_release(struct cg2_throttle_target *t) {
  free(t->cgdir);
  memset(t, 0, sizeof(*t));
}

static int check_target(const struct cg2_throttle_target *t, struct iob_error **err) {
  if (t->mech == CG2_THROTTLE_NONE || t->cgdir == NULL)
    return iob_error_code(err, IOB_CODE_FAILED_PRECONDITION,
                          "no mechanism can cap this container here");
  return 0;
}

static void iomax_value(char *out, size_t size, uint64_t v) {
  if (v == 0)
    snprintf(out, size, "max");
  else
    snprintf(out, size, "%llu", (unsigned long long)v);
}

int cg2_throttle_set(const struct cg2_throttle_target *t, uint64_t rbps, uint64_t wbps,
                     uint64_t riops, uint64_t wiops, struct iob_error **err) {
  if (check_target(t, err) < 0)
    return -1;
  const uint64_t vals[4] = {rbps, wbps, riops, wiops};
  for (size_t i = 0; i < t->ndev; i++) {
    unsigned maj = t->dev[i].major, min = t->dev[i].minor;
    if (t->mech == CG2_THROTTLE_V2_IOMAX) {
      char v[4][24], line[160];
      for (int k = 0; k < 4; k++)
        iomax_value(v[k], sizeof(v[k]), vals[k]);
      snprintf(line, sizeof(line), "%u:%u rbps=%s wbps=%s riops=%s wiops=%s", maj, min, v[0], v[1],
               v[2], v[3]);
      cleanup_free char *path = xasprintf("%s/io.max", t->cgdir);
      if (cg2_write_file(path, line, err) < 0)
        return -1;
      continue;
    }
    /* v1 keeps IOPS caps in an unsigned int (THROTL_IOPS_MAX). */
    if (riops > UINT_MAX || wiops > UINT_MAX)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "IOPS cap above %u", UINT_MAX);
    for (int k = 0; k < 4; k++) {
      char line[64];
      snprintf(line, sizeof(line), "%u:%u %llu", maj, min, (unsigned long long)vals[k]);
      cleanup_free char *path = xasprintf("%s/%s", t->cgdir, v1_files[k]);
      if (cg2_write_file(path, line, err) < 0)
        return -1;
    }
  }
  return 0;
}

int cg2_throttle_clear(const struct cg2_throttle_target *t, struct iob_error **err) {
  return cg2_throttle_set(t, 0, 0, 0, 0, err);
}

int cg2_throttle_get(const struct cg2_throttle_target *t, unsigned major, unsigned minor,
                     struct cg2_throttle_limits *out, struct iob_error **err) {
  if (check_target(t, err) < 0)
    return -1;
  if (t->mech == CG2_THROTTLE_V2_IOMAX) {
    cleanup_free char *path = NULL, *buf = NULL;
    size_t len = 0;
    path = xasprintf("%s/io.max", t->cgdir);
    if (cg2_read_file(path, CG2_FILE_MAX, &buf, &len, err) < 0)
      return -1;
    if (cg2_throttle_parse_iomax(buf, len, major, minor, out, err) < 0)
      return iob_error_prefix(err, "cannot parse '%s'", path);
    return 0;
  }
  uint64_t *slots[4] = {&out->rbps, &out->wbps, &out->riops, &out->wiops};
  for (int k = 0; k < 4; k++) {
    cleanup_free char *path = NULL, *buf = NULL;
    size_t len = 0;
    path = xasprintf("%s/%s", t->cgdir, v1_files[k]);
    if (cg2_read_file(path, CG2_FILE_MAX, &buf, &len, err) < 0)
      return -1;
    if (cg2_throttle_parse_v1(buf, len, major, minor, slots[k], err) < 0)
      return iob_error_prefix(err, "cannot parse '%s'", path);
  }
  return 0;
}
