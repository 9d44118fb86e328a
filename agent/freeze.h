// SPDX-License-Identifier: Apache-2.0
/* The concurrency lever (agent/freeze.c; issue #22): freeze all but
 * adm->prot.io_limit of the batch containers under it
 * (agent_protect_freeze_pick says which), through v1 freezer.state or v2
 * cgroup.freeze (cgroupv2/freeze.h), each freeze journalled first
 * (agent/restore.h) so that a crashed agent's successor thaws it.
 * freeze.c calls nothing of the daemon's: it is given the containers and
 * the journal. */
#ifndef IOB_AGENT_FREEZE_H
#define IOB_AGENT_FREEZE_H

#include <stdint.h>

#include "agent/admission.h"

struct agent_restore;

struct agent_freezer {
  struct agent_adm *adm;         /* the containers and the protection state */
  struct agent_restore *restore; /* each freeze journalled before it is written */
  const char *root;              /* prefixes /proc and the mounts; NULL on a real system */
};

void agent_freezer_init(struct agent_freezer *f, struct agent_adm *adm,
                        struct agent_restore *restore, const char *root);
/* Resolve CTR's freeze target once, from its pid at registration, to a
 * file and the inode of its directory (nothing without a pid; nothing
 * again once done): a freeze writes there only while it is that inode. */
void agent_freeze_bind(struct agent_freezer *f, struct agent_ctr *ctr);
/* Freeze all but io_limit of the batch containers under the lever, thaw
 * the others, and thaw for good any past its budget; nothing frozen while
 * io_limit is 0 (protect_freeze off, no protected container doing I/O). */
void agent_freeze_apply(struct agent_freezer *f, uint64_t now);
/* How many batch containers the lever may act on now. */
unsigned agent_freeze_candidates(struct agent_freezer *f, uint64_t now);
/* Thaw ctr if frozen and drop what freeze.c keeps for it (it leaves). */
void agent_freeze_forget(struct agent_freezer *f, struct agent_ctr *ctr);
/* Thaw everything (the agent stops). */
void agent_freeze_release(struct agent_freezer *f);

#endif
