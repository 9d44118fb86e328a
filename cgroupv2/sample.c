// SPDX-License-Identifier: Apache-2.0
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
#include "common/xalloc.h"

static int read_bpf(const char *root, const char *cgdir, struct cg2_sample *s,
                    struct iob_error **err) {
  (void)root;
  (void)s;
  return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                        "cannot sample '%s' from bpf: only iobatchd's BPF program counts those",
                        cgdir);
}

const struct cg2_source_ops cg2_source_bpf = {
    .source = CG2_SOURCE_BPF,
    .name = "bpf",
    .lower_fidelity = false,
    .counts_pids = false,
    .read = read_bpf,
};

static const struct cg2_source_ops *const sources[] = {
    &cg2_source_iostat,
    &cg2_source_procio,
    &cg2_source_blkio_v1,
    &cg2_source_bpf,
};

const struct cg2_source_ops *cg2_source_ops(enum cg2_source source) {
  for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
    if (sources[i]->source == source)
      return sources[i];
  return NULL;
}

const char *cg2_source_name(enum cg2_source source) {
  const struct cg2_source_ops *ops = cg2_source_ops(source);
  return ops ? ops->name : "unknown";
}

int cg2_source_from_name(const char *name) {
  for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++)
    if (strcmp(name, sources[i]->name) == 0)
      return (int)sources[i]->source;
  return -1;
}

int cg2_sample_take(const char *root, const char *cgdir, enum cg2_source source,
                    struct cg2_sample *out, struct iob_error **err) {
  const struct cg2_source_ops *ops = cg2_source_ops(source);
  if (ops == NULL)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "unknown sample source %d", (int)source);
  struct cg2_sample s;
  memset(&s, 0, sizeof(s));
  s.source = source;
  if (ops->read(root, cgdir, &s, err) < 0)
    return -1;
  /* io.pressure is optional: kernels without PSI lack it (and PSI can be
   * disabled with psi=0, which makes the file fail to open with
   * EOPNOTSUPP); v1 directories never have it. */
  if (!ops->v1_dir) {
    cleanup_error struct iob_error *perr = NULL;
    s.has_pressure = cg2_pressure_read(cgdir, &s.pressure, &perr) == 0;
  }
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  s.t_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
  *out = s;
  return 0;
}

int cg2_sample_delta(const struct cg2_sample *a, const struct cg2_sample *b,
                     struct cg2_io_counters *d, double *seconds, struct iob_error **err) {
  if (a->source != b->source)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "cannot diff a sample from %s against one from %s",
                          cg2_source_name(b->source), cg2_source_name(a->source));
  *seconds =
      b->t_ns > a->t_ns ? (double)(b->t_ns - a->t_ns) / 1e9 : -(double)(a->t_ns - b->t_ns) / 1e9;
  return cg2_counters_delta(&a->io, &b->io, d);
}

/* ROOT + MOUNT + CG, where a cgroup "/" adds nothing. */
static char *cg_dir(const char *root, const char *mount, const char *cg) {
  return xasprintf("%s%s%s", root ? root : "", mount, strcmp(cg, "/") ? cg : "");
}

static bool own(const char *cg) {
  return cg && *cg && strcmp(cg, "/") != 0;
}

/* By the host, from the pid: steps 1-3 of cg2_source_pick. */
static int pick_by_pid(const char *root, pid_t pid, const struct cg2_mount *m, bool allow_blkio,
                       enum cg2_source *source, char **cgdir, struct iob_error **err) {
  cleanup_free char *v2 = NULL;
  if (cg2_pid_cgroup(root, pid, &v2, err) < 0)
    return iob_error_prefix(err, "cannot resolve the cgroup of pid %d", (int)pid);
  bool v2_own = own(v2);
  if (m && m->has_io && v2_own) {
    *source = CG2_SOURCE_IOSTAT;
    *cgdir = cg_dir(root, m->path, v2);
    return 0;
  }
  if (allow_blkio) {
    cleanup_free char *cg = NULL, *mnt = NULL;
    cleanup_error struct iob_error *e = NULL;
    if (cg2_pid_cgroup_v1(root, pid, "blkio", &cg, &e) == 0 &&
        cg2_v1_mount_find(root, "blkio", &mnt, &e) == 0 && own(cg)) {
      char *dir = cg_dir(root, mnt, cg);
      cleanup_free char *probe = xasprintf("%s/%s", dir, CG2_BLKIO_BYTES);
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
        cg2_v1_mount_find(root, ctrls[i], &mnt, &e) < 0 || !own(cg))
      continue;
    *cgdir = cg_dir(root, mnt, cg);
    return 0;
  }
  return iob_error_code(err, IOB_CODE_NOT_FOUND,
                        "cannot find a cgroup of its own for pid %d: it is in the v2 root and in "
                        "no v1 pids/memory/blkio cgroup",
                        (int)pid);
}

int cg2_source_pick(const struct cg2_pick *p, enum cg2_source *source, char **cgdir,
                    struct iob_error **err) {
  bool by_host = p->source == CG2_SOURCE_NONE || p->source == CG2_SOURCE_BLKIO_V1;
  if (by_host && p->pid > 0)
    return pick_by_pid(p->root, p->pid, p->m, true, source, cgdir, err);
  enum cg2_source src = p->source;
  if (by_host)
    src = p->m && p->m->has_io ? CG2_SOURCE_IOSTAT : CG2_SOURCE_PROCIO;
  if (p->m && own(p->cgroup)) {
    *source = src;
    *cgdir = cg_dir(p->root, p->m->path, p->cgroup);
    return 0;
  }
  if (p->pid <= 0)
    return iob_error_code(err, IOB_CODE_NOT_FOUND, "no cgroup registered and no pid to find one");
  cleanup_free char *v2 = NULL;
  if (cg2_pid_cgroup(p->root, p->pid, &v2, err) < 0)
    return iob_error_prefix(err, "cannot resolve the cgroup of pid %d", (int)p->pid);
  if (p->m && own(v2)) {
    *source = src;
    *cgdir = cg_dir(p->root, p->m->path, v2);
    return 0;
  }
  /* In the v2 root (runc on a hybrid host): procfs can count a v1 cgroup
   * of its own; io.stat cannot. */
  if (src != CG2_SOURCE_PROCIO)
    return iob_error_code(err, IOB_CODE_NOT_FOUND,
                          "pid %d is in the root of the v2 hierarchy: no io.stat of its own",
                          (int)p->pid);
  return pick_by_pid(p->root, p->pid, p->m, false, source, cgdir, err);
}
