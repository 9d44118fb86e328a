// SPDX-License-Identifier: Apache-2.0
/* The node's measured I/O headroom: the share, 0 to
 * 1, of the disk's measured capacity that the containers the agent
 * samples left unused in the last sampling window, for a scheduler or
 * descheduler that places batch pods where the disk has room.
 *
 * "Measured capacity" (docs/DESIGN.md, "I/O headroom"): a disk moves far
 * fewer bytes per second for 4 KiB random requests than for 1 MiB
 * sequential ones, so capacity is kept per class: cap[K] is the highest
 * aggregate throughput (read + write bytes/s of every container doing
 * I/O) seen in a window in which every container doing I/O had class K,
 * decayed with a half-life of AGENT_HEADROOM_HALF_LIFE_S so that a disk
 * that got slower (a worn SSD, a replaced device) is seen in time.  It is
 * what the disk was seen to do, a lower bound of what it can do: the
 * headroom errs low, never high.  A window's use is then
 *   use = sum over containers doing I/O of rate_i / cap[class_i]
 * and headroom = 1 - min(1, use).  Unknown (no number, a reason) until a
 * class has a capacity, or while a container doing I/O has a class whose
 * capacity was never measured (its share of the disk is not known).
 * No I/O, no clock: the caller passes the window's length. */
#ifndef IOB_AGENT_HEADROOM_H
#define IOB_AGENT_HEADROOM_H

#include <stdint.h>

#include "batcher/batcher.h"

struct agent_ctr;

#define AGENT_HEADROOM_HALF_LIFE_S (24.0 * 3600.0)

enum agent_headroom_reason {
  AGENT_HEADROOM_KNOWN = 0,
  AGENT_HEADROOM_NO_WINDOW,   /* no sampling window yet */
  AGENT_HEADROOM_NO_CAPACITY, /* no class has a measured capacity yet */
  AGENT_HEADROOM_UNMEASURED,  /* a container doing I/O has a class without one */
};
/* "known", "no_window", "no_capacity", "unmeasured_class". */
const char *agent_headroom_reason_name(int reason);

struct agent_headroom {
  double cap_bps[BATCH_NCLASS]; /* measured capacity by class, decayed; 0 unknown */
  double bps;                   /* every sampled container's bytes/s in the last window */
  double ratio;                 /* the last window's headroom when reason is KNOWN */
  int reason;                   /* enum agent_headroom_reason */
  uint64_t windows;
};

void agent_headroom_init(struct agent_headroom *h);
/* One sampling window of WINDOW_S seconds ended: the containers of LIST
 * (agent_ctr: io_now, cls, read_bps, write_bps) teach the capacities and
 * give the window's headroom. */
void agent_headroom_window(struct agent_headroom *h, const struct agent_ctr *list, double window_s);

#endif
