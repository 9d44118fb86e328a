// SPDX-License-Identifier: Apache-2.0
/* Protection caps on batch containers (agent/caps.c): the cap level that
 * agent/protect.h decides (adm->prot.level_bps), written as cgroup v2
 * io.max or v1 blkio.throttle (cgroupv2/throttle.h) on every running batch
 * container protection targets, and with `cpu` the least CPU weight
 * (cgroupv2/cpu.h) while protection limits.  What was there is journalled
 * first (agent/restore.h) and put back.  caps.c calls nothing of the
 * daemon's: it is given the containers, the journal and its settings. */
#ifndef IOB_AGENT_CAPS_H
#define IOB_AGENT_CAPS_H

#include <stdbool.h>

#include "agent/admission.h"

struct agent_restore;

struct agent_caps {
  struct agent_adm *adm;         /* the containers and the protection level */
  struct agent_restore *restore; /* what was there, journalled before each write */
  const char *root;              /* prefixes /proc and the mounts; NULL on a real system */
  bool cpu;                      /* protect_cpu (the daemon's apply_config) */
};

void agent_caps_init(struct agent_caps *ac, struct agent_adm *adm, struct agent_restore *restore,
                     const char *root);
/* The cap level on every running batch container, written where it
 * changed; lifted from containers that are not batch or not running, and
 * from all when the level is 0.  A container nothing can cap here (no
 * io.max or blkio.throttle, or no disk found) gets no cap: its cap_bps
 * stays 0. */
void agent_caps_apply(struct agent_caps *ac);
/* Lift every cap written, putting back what was there before (at exit: a
 * stopped agent leaves no cap behind). */
void agent_caps_release(struct agent_caps *ac);
/* Put back what ctr's files held before its first cap (a vanished cgroup
 * needs nothing) and drop what caps.c keeps for it (it leaves). */
void agent_caps_forget(struct agent_caps *ac, struct agent_ctr *ctr);
/* Resolve CTR's cap and CPU weight targets once, from its pid at
 * registration, to directories and their inodes (nothing without a pid;
 * nothing again once done). */
void agent_caps_bind(struct agent_caps *ac, struct agent_ctr *ctr);

#endif
