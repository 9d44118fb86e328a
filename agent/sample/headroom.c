// SPDX-License-Identifier: Apache-2.0
/* The node's measured I/O headroom (agent/sample/headroom.h). */
#include "agent/sample/headroom.h"

#include <math.h>
#include <string.h>

#include "agent/plan/admission.h"

const char *agent_headroom_reason_name(int reason) {
  switch (reason) {
  case AGENT_HEADROOM_KNOWN:
    return "known";
  case AGENT_HEADROOM_NO_WINDOW:
    return "no_window";
  case AGENT_HEADROOM_NO_CAPACITY:
    return "no_capacity";
  default:
    return "unmeasured_class";
  }
}

void agent_headroom_init(struct agent_headroom *h) {
  memset(h, 0, sizeof(*h));
  h->reason = AGENT_HEADROOM_NO_WINDOW;
}

static double rate(const struct agent_ctr *c) {
  double r = c->sample.read_bps + c->sample.write_bps;
  return isfinite(r) && r > 0 ? r : 0;
}

/* The one class every container doing I/O has (-1: none does I/O, -2:
 * several, or one whose class says nothing of the disk's capacity). */
static int pure_class(const struct agent_ctr *list) {
  int k = -1;
  for (const struct agent_ctr *c = list; c; c = c->next) {
    if (!c->sample.io_now)
      continue;
    int cls = (int)c->cls;
    if (cls < 0 || cls >= BATCH_NCLASS || cls == BATCH_IDLE || cls == BATCH_UNKNOWN ||
        (k >= 0 && k != cls))
      return -2;
    k = cls;
  }
  return k;
}

/* The largest capacity known; 0 none. */
static double largest(const struct agent_headroom *h) {
  double m = 0;
  for (int k = 0; k < BATCH_NCLASS; k++)
    if (h->cap_bps[k] > m)
      m = h->cap_bps[k];
  return m;
}

void agent_headroom_window(struct agent_headroom *h, const struct agent_ctr *list,
                           double window_s) {
  double decay = window_s > 0 ? pow(0.5, window_s / AGENT_HEADROOM_HALF_LIFE_S) : 1.0;
  for (int k = 0; k < BATCH_NCLASS; k++)
    h->cap_bps[k] *= decay;
  double sum = 0;
  for (const struct agent_ctr *c = list; c; c = c->next)
    if (c->sample.io_now)
      sum += rate(c);
  h->bps = sum;
  h->windows++;
  int k = pure_class(list);
  if (k >= 0 && sum > h->cap_bps[k])
    h->cap_bps[k] = sum;
  double any = largest(h);
  if (any <= 0) {
    h->reason = AGENT_HEADROOM_NO_CAPACITY;
    return;
  }
  double use = 0;
  for (const struct agent_ctr *c = list; c; c = c->next) {
    if (!c->sample.io_now || rate(c) <= 0)
      continue;
    int cls = (int)c->cls;
    /* What the detector calls idle moves next to nothing: its share is
     * taken at the largest capacity known rather than making the whole
     * window unknown. */
    double cap = cls == BATCH_IDLE ? any : cls >= 0 && cls < BATCH_NCLASS ? h->cap_bps[cls] : 0;
    if (cap <= 0) {
      h->reason = AGENT_HEADROOM_UNMEASURED;
      return;
    }
    use += rate(c) / cap;
  }
  h->ratio = use >= 1 ? 0 : 1 - use;
  h->reason = AGENT_HEADROOM_KNOWN;
}
