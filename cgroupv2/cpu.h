// SPDX-License-Identifier: Apache-2.0
/* The CPU weight of a container's cgroup: while a
 * latency-sensitive container runs, the agent gives batch containers the
 * smallest CPU weight, so that they take CPU only when the service leaves
 * it idle.  cgroup v2 cpu.weight (1..10000, default 100) where the cpu
 * controller is enabled for the container's v2 cgroup, else the v1 cpu
 * hierarchy's cpu.shares (2..262144, default 1024), as runc writes them
 * (on a hybrid host runc puts cpu in v1). */
#ifndef IOB_CG_CPU_H
#define IOB_CG_CPU_H

#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"

enum cg2_cpu_mech {
  CG2_CPU_NONE = 0,
  CG2_CPU_V2_WEIGHT, /* cpu.weight */
  CG2_CPU_V1_SHARES, /* cpu.shares */
};

#define CG2_CPU_V2_MIN 1
#define CG2_CPU_V2_MAX 10000
#define CG2_CPU_V1_MIN 2
#define CG2_CPU_V1_MAX 262144

struct cg2_cpu_target {
  enum cg2_cpu_mech mech;
  char *file; /* cpu.weight or cpu.shares with the root prefix, owned */
};

/* Which file sets the CPU weight of PID's cgroup: cpu.weight in its v2
 * cgroup when that file exists, else cpu.shares in its v1 cpu cgroup;
 * never a hierarchy's root (returns 0 with CG2_CPU_NONE then, and when
 * neither exists).  ROOT prefixes /proc and the mounts (NULL: the real
 * system).  T is released by the caller even on error. */
int cg2_cpu_target_resolve(const char *root, pid_t pid, struct cg2_cpu_target *t,
                           struct iob_error **err);
void cg2_cpu_target_release(struct cg2_cpu_target *t);

/* The smallest weight of T's mechanism. */
uint64_t cg2_cpu_min(const struct cg2_cpu_target *t);

/* The value in a cpu.weight / cpu.shares file: one decimal number and an
 * optional newline, within the mechanism's range.  Anything else is an
 * EINVAL error naming NAME. */
int cg2_cpu_parse(enum cg2_cpu_mech mech, const char *name, const char *buf, size_t len,
                  uint64_t *v, struct iob_error **err);

int cg2_cpu_get(const struct cg2_cpu_target *t, uint64_t *v, struct iob_error **err);
int cg2_cpu_set(const struct cg2_cpu_target *t, uint64_t v, struct iob_error **err);

const char *cg2_cpu_mech_name(enum cg2_cpu_mech mech);

#endif
