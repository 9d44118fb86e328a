#include "cgroupv2/sample.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cgroupv2/blkio.h"
#include "cgroupv2/cg2.h"
#include "cgroupv2/procio.h"
#include "common/cleanup.h"

const char *cg2_source_name(enum cg2_source source) {
  switch (source) {
  case CG2_SOURCE_IOSTAT:
    return "io.stat";
  case CG2_SOURCE_PROCIO:
    return "procfs";
  case CG2_SOURCE_BLKIO_V1:
    return "blkio-v1";
  }
  return "unknown";
}

int cg2_sample_take(const char *root, const char *cgdir, enum cg2_source source,
                    struct cg2_sample *out, struct iob_error **err) {
  struct cg2_sample s;
  struct timespec ts;
  memset(&s, 0, sizeof(s));
  s.source = source;
  if (source == CG2_SOURCE_IOSTAT) {
    struct cg2_iostat st;
    if (cg2_iostat_read(cgdir, &st, err) < 0)
      return -1;
    cg2_iostat_sum(&st, &s.io);
    cg2_iostat_release(&st);
  } else if (source == CG2_SOURCE_PROCIO) {
    struct cg2_procio p;
    size_t n = 0;
    if (cg2_procio_sample(root, cgdir, &p, &n, NULL, err) < 0)
      return -1;
    s.io.rbytes = p.read_bytes;
    s.io.wbytes = p.write_bytes;
    s.io.rios = p.syscr;
    s.io.wios = p.syscw;
    s.npids = n;
    s.rchar = p.rchar;
    s.wchar = p.wchar;
  } else if (source == CG2_SOURCE_BLKIO_V1) {
    struct cg2_iostat st;
    if (cg2_blkio_read(cgdir, &st, err) < 0)
      return -1;
    cg2_iostat_sum(&st, &s.io);
    cg2_iostat_release(&st);
    struct cg2_procio p;
    size_t n = 0;
    if (cg2_procio_sample(root, cgdir, &p, &n, NULL, err) < 0)
      return -1;
    /* The rule in sample.h: each a lower bound, the larger wins. */
    uint64_t net =
        p.write_bytes > p.cancelled_write_bytes ? p.write_bytes - p.cancelled_write_bytes : 0;
    if (net > s.io.wbytes)
      s.io.wbytes = net;
    if (p.syscw > s.io.wios)
      s.io.wios = p.syscw;
    s.npids = n;
    s.rchar = p.rchar;
    s.wchar = p.wchar;
  } else {
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "unknown sample source %d", (int)source);
  }
  /* io.pressure is optional: v1 directories and kernels without PSI lack it
   * (and PSI can be disabled with psi=0, which makes the file fail to open
   * with EOPNOTSUPP). */
  cleanup_error struct iob_error *perr = NULL;
  s.has_pressure = cg2_pressure_read(cgdir, &s.pressure, &perr) == 0;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  s.t_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  *out = s;
  return 0;
}

/* ROOT + MOUNT + CG, where a cgroup "/" adds nothing. */
static char *cg_dir(const char *root, const char *mount, const char *cg) {
  char *r = NULL;
  if (asprintf(&r, "%s%s%s", root ? root : "", mount, strcmp(cg, "/") ? cg : "") < 0)
    abort();
  return r;
}

int cg2_source_pick(const char *root, pid_t pid, const struct cg2_mount *m, int allow_blkio,
                    enum cg2_source *source, char **cgdir, struct iob_error **err) {
  cleanup_free char *v2 = NULL;
  if (cg2_pid_cgroup(root, pid, &v2, err) < 0)
    return iob_error_prefix(err, "cannot resolve the cgroup of pid %d", (int)pid);
  int v2_own = strcmp(v2, "/") != 0;
  if (m && m->has_io && v2_own) {
    *source = CG2_SOURCE_IOSTAT;
    *cgdir = cg_dir(root, m->path, v2);
    return 0;
  }
  if (allow_blkio) {
    cleanup_free char *cg = NULL, *mnt = NULL;
    cleanup_error struct iob_error *e = NULL;
    if (cg2_pid_cgroup_v1(root, pid, "blkio", &cg, &e) == 0 &&
        cg2_v1_mount_find(root, "blkio", &mnt, &e) == 0 && strcmp(cg, "/") != 0) {
      char *dir = cg_dir(root, mnt, cg);
      cleanup_free char *probe = NULL;
      if (asprintf(&probe, "%s/%s", dir, CG2_BLKIO_BYTES) < 0)
        abort();
      if (access(probe, R_OK) == 0) {
        *source = CG2_SOURCE_BLKIO_V1;
        *cgdir = dir;
        return 0;
      }
      free(dir);
    }
  }
  *source = CG2_SOURCE_PROCIO;
  if (m && v2_own) {
    *cgdir = cg_dir(root, m->path, v2);
    return 0;
  }
  static const char *const ctrls[] = {"pids", "memory", "blkio"};
  for (size_t i = 0; i < sizeof(ctrls) / sizeof(ctrls[0]); i++) {
    cleanup_free char *cg = NULL, *mnt = NULL;
    cleanup_error struct iob_error *e = NULL;
    if (cg2_pid_cgroup_v1(root, pid, ctrls[i], &cg, &e) < 0 ||
        cg2_v1_mount_find(root, ctrls[i], &mnt, &e) < 0 || strcmp(cg, "/") == 0)
      continue;
    *cgdir = cg_dir(root, mnt, cg);
    return 0;
  }
  return iob_error_code(err, IOB_CODE_NOT_FOUND,
                        "cannot find a cgroup of its own for pid %d: it is in the v2 root and in "
                        "no v1 pids/memory/blkio cgroup",
                        (int)pid);
}
