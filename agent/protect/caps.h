// SPDX-License-Identifier: Apache-2.0
/* Protection's cap and CPU weight levers (agent/protect/caps.c), pulled by
 * agent/protect/protection.c only: a bytes/s cap written as cgroup v2 io.max or
 * v1 blkio.throttle (cgroupv2/throttle.h), and the least CPU weight
 * (cgroupv2/cpu.h).  What was there is journalled first (agent/store/restore.h)
 * and put back.  caps.c decides nothing: it is told, per container, what
 * to write. */
#ifndef IOB_AGENT_CAPS_H
#define IOB_AGENT_CAPS_H

#include <stdbool.h>

#include "agent/plan/admission.h"

struct agent_restore;

struct agent_caps {
  struct agent_adm *adm;         /* the containers (sharing a cgroup, release) */
  struct agent_restore *restore; /* what was there, journalled before each write */
  const char *root;              /* prefixes /proc and the mounts; NULL on a real system */
  bool cpu;                      /* protect_cpu (agent_protection_configure) */
};

void agent_caps_init(struct agent_caps *ac, struct agent_adm *adm, struct agent_restore *restore,
                     const char *root);
/* Cap CTR at BPS bytes/s (0: lift its cap) and set its CPU weight to the
 * least (CPU_LOW) or back, each written only where it changed.  A
 * container nothing can cap here (no io.max or blkio.throttle, or no disk
 * found) gets no cap: its caps.bps stays 0. */
void agent_caps_set(struct agent_caps *ac, struct agent_ctr *ctr, double bps, bool cpu_low);
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
