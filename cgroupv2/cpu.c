// SPDX-License-Identifier: Apache-2.0
#include "cgroupv2/cpu.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroupv2/cg2.h"
#include "common/cleanup.h"
#include "common/xalloc.h"

void cg2_cpu_target_release(struct cg2_cpu_target *t) {
  free(t->file);
  t->file = NULL;
  t->mech = CG2_CPU_NONE;
}

int cg2_cpu_target_resolve(const char *root, pid_t pid, struct cg2_cpu_target *t,
                           struct iob_error **err) {
  t->mech = CG2_CPU_NONE;
  t->file = NULL;
  cleanup_error struct iob_error *e = NULL;
  struct cg2_mount m = {0};
  if (cg2_mount_find(root, &m, &e) == 0) {
    cleanup_free char *cg = NULL;
    if (cg2_pid_cgroup(root, pid, &cg, err) < 0) {
      cg2_mount_release(&m);
      return -1;
    }
    t->file = cg2_file_in(root, m.path, cg, "cpu.weight");
    cg2_mount_release(&m);
    if (t->file) {
      t->mech = CG2_CPU_V2_WEIGHT;
      return 0;
    }
  }
  iob_error_release(&e);
  cleanup_free char *mnt = NULL, *cg = NULL;
  if (cg2_v1_mount_find(root, "cpu", &mnt, &e) == 0 &&
      cg2_pid_cgroup_v1(root, pid, "cpu", &cg, &e) == 0) {
    t->file = cg2_file_in(root, mnt, cg, "cpu.shares");
    if (t->file)
      t->mech = CG2_CPU_V1_SHARES;
  }
  return 0;
}

uint64_t cg2_cpu_min(const struct cg2_cpu_target *t) {
  return t->mech == CG2_CPU_V1_SHARES ? CG2_CPU_V1_MIN : CG2_CPU_V2_MIN;
}

int cg2_cpu_parse(enum cg2_cpu_mech mech, const char *name, const char *buf, size_t len,
                  uint64_t *v, struct iob_error **err) {
  size_t n = len;
  if (n > 0 && buf[n - 1] == '\n')
    n--;
  uint64_t lo = mech == CG2_CPU_V1_SHARES ? CG2_CPU_V1_MIN : CG2_CPU_V2_MIN;
  uint64_t hi = mech == CG2_CPU_V1_SHARES ? CG2_CPU_V1_MAX : CG2_CPU_V2_MAX;
  if (n == 0 || n > 20 || memchr(buf, '\0', n) || cg2_parse_u64(buf, n, v) < 0 || *v < lo ||
      *v > hi)
    return iob_error(err, EINVAL, "'%s': not a CPU weight from %llu to %llu: '%.*s'", name,
                     (unsigned long long)lo, (unsigned long long)hi, (int)(n > 32 ? 32 : n), buf);
  return 0;
}

int cg2_cpu_get(const struct cg2_cpu_target *t, uint64_t *v, struct iob_error **err) {
  cleanup_free char *buf = NULL;
  size_t len = 0;
  if (cg2_read_file(t->file, 64, &buf, &len, err) < 0)
    return -1;
  return cg2_cpu_parse(t->mech, t->file, buf, len, v, err);
}

int cg2_cpu_set(const struct cg2_cpu_target *t, uint64_t v, struct iob_error **err) {
  char line[32];
  snprintf(line, sizeof(line), "%llu", (unsigned long long)v);
  return cg2_write_file(t->file, line, err);
}

const char *cg2_cpu_mech_name(enum cg2_cpu_mech mech) {
  switch (mech) {
  case CG2_CPU_V2_WEIGHT:
    return "cpu.weight";
  case CG2_CPU_V1_SHARES:
    return "cpu.shares";
  case CG2_CPU_NONE:
    break;
  }
  return "none";
}
