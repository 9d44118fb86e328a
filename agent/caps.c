/* Protection caps on batch containers (agent/protect.h decides the level;
 * here it is written).  Until the throttle writers land (cgroupv2/
 * throttle.h) the level is recorded and reported, not enforced. */
#include <math.h>

#include "agent/daemon.h"
#include "common/log.h"

static void set_cap(struct agent_ctr *c, double bps) {
  if (c->cap_bps == bps)
    return;
  if (bps > 0)
    iob_debug("cap '%s' at %.1f MiB/s", c->id, bps / (1024 * 1024));
  else
    iob_debug("cap on '%s' lifted", c->id);
  c->cap_bps = bps;
}

void agent_caps_apply(struct agent_daemon *d) {
  double level = d->adm.prot.level_bps;
  for (struct agent_ctr *c = d->adm.list; c; c = c->next) {
    bool capped = level > 0 && c->state == AGENT_RUNNING && agent_ctr_is_batch(c);
    set_cap(c, capped ? level : 0);
  }
}

void agent_caps_release(struct agent_daemon *d) {
  for (struct agent_ctr *c = d->adm.list; c; c = c->next)
    set_cap(c, 0);
}
