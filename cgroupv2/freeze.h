// SPDX-License-Identifier: Apache-2.0
/* Freezing a container's cgroup (the concurrency lever: the
 * number of batch containers doing I/O at once).  cgroup v1's freezer
 * hierarchy (freezer.state: "THAWED", "FREEZING", "FROZEN"; written
 * "FROZEN" or "THAWED") where it is mounted and the container has its own
 * cgroup there (a hybrid host: runc puts the freezer in v1), else cgroup
 * v2's cgroup.freeze ("0" or "1"), never a hierarchy's root. */
#ifndef IOB_CG_FREEZE_H
#define IOB_CG_FREEZE_H

#include <stdbool.h>
#include <sys/types.h>

#include "common/error.h"

enum cg2_freeze_mech {
  CG2_FREEZE_NONE = 0,
  CG2_FREEZE_V1_STATE,  /* freezer.state */
  CG2_FREEZE_V2_FREEZE, /* cgroup.freeze */
};

struct cg2_freeze_target {
  enum cg2_freeze_mech mech;
  char *file; /* freezer.state or cgroup.freeze with the root prefix, owned */
};

/* Which file freezes PID's cgroup (returns 0 with CG2_FREEZE_NONE when
 * neither exists or PID is in a hierarchy's root).  ROOT prefixes /proc
 * and the mounts (NULL: the real system).  T is released by the caller
 * even on error. */
int cg2_freeze_target_resolve(const char *root, pid_t pid, struct cg2_freeze_target *t,
                              struct iob_error **err);
void cg2_freeze_target_release(struct cg2_freeze_target *t);

/* What a freeze file holds: *FROZEN true for "1" / "FROZEN" / "FREEZING"
 * (a freeze asked for), false for "0" / "THAWED", an optional newline
 * after; anything else is an EINVAL error naming NAME. */
int cg2_freeze_parse(enum cg2_freeze_mech mech, const char *name, const char *buf, size_t len,
                     bool *frozen, struct iob_error **err);
/* The word that asks for FROZEN in MECH's file ("1"/"0", "FROZEN"/"THAWED"). */
const char *cg2_freeze_word(enum cg2_freeze_mech mech, bool frozen);

int cg2_freeze_get(const struct cg2_freeze_target *t, bool *frozen, struct iob_error **err);
int cg2_freeze_set(const struct cg2_freeze_target *t, bool frozen, struct iob_error **err);

const char *cg2_freeze_mech_name(enum cg2_freeze_mech mech);

#endif
