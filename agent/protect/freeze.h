// SPDX-License-Identifier: Apache-2.0
/* The concurrency lever (agent/protect/freeze.c), pulled by agent/protect/protection.c
 * only: freeze all but a limit of the candidates it is given
 * (agent_protect_freeze_pick says which), through v1 freezer.state or v2
 * cgroup.freeze (cgroupv2/freeze.h), each freeze journalled first
 * (agent/store/restore.h) so that a crashed agent's successor thaws it.
 * freeze.c decides nothing: it is given the containers, the candidates
 * and the journal. */
#ifndef IOB_AGENT_FREEZE_H
#define IOB_AGENT_FREEZE_H

#include <stdint.h>

#include "agent/plan/admission.h"

struct agent_restore;

struct agent_freezer {
  struct agent_adm *adm;         /* the containers (sharing a cgroup, release) */
  struct agent_restore *restore; /* each freeze journalled before it is written */
  const char *root;              /* prefixes /proc and the mounts; NULL on a real system */
};

void agent_freezer_init(struct agent_freezer *f, struct agent_adm *adm,
                        struct agent_restore *restore, const char *root);
/* Resolve CTR's freeze target once, from its pid at registration, to a
 * file and the inode of its directory (nothing without a pid; nothing
 * again once done): a freeze writes there only while it is that inode. */
void agent_freeze_bind(struct agent_freezer *f, struct agent_ctr *ctr);
/* Of the N candidates WHO (running batch jobs protection limits), freeze
 * all but LIMIT and thaw the others (LIMIT 0: thaw them all), rotating
 * as agent_protect_freeze_pick says.  A candidate that cannot be frozen
 * (no target, its cgroup shared with one that may not be, frozen by
 * someone else) is marked freeze.done and never tried again. */
void agent_freeze_set(struct agent_freezer *f, struct agent_ctr *const *who, size_t n,
                      unsigned limit, uint64_t now);
/* Thaw CTR if frozen (WHY: for the log). */
void agent_freeze_thaw(struct agent_freezer *f, struct agent_ctr *ctr, uint64_t now,
                       const char *why);
/* Thaw ctr if frozen and drop what freeze.c keeps for it (it leaves). */
void agent_freeze_forget(struct agent_freezer *f, struct agent_ctr *ctr);
/* Thaw everything (the agent stops). */
void agent_freeze_release(struct agent_freezer *f);

#endif
