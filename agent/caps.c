/* Protection caps on batch containers (agent/protect.h decides the level;
 * here it is written): cgroup v2 io.max or v1 blkio.throttle, whichever
 * cgroupv2/throttle.h finds for the container, on the disks its I/O goes
 * to.  Read and write bytes/s are capped alike. */
#include <errno.h>
#include <stdlib.h>

#include "agent/daemon.h"
#include "cgroupv2/throttle.h"
#include "common/cleanup.h"
#include "common/log.h"

struct cap_state {
  struct cg_throttle_target t;
  bool resolved, warned;
};

static struct cap_state *state_of(struct agent_ctr *c) {
  struct cap_state *st = c->cap_state;
  if (st == NULL) {
    st = calloc(1, sizeof(*st));
    c->cap_state = st;
  }
  return st;
}

void agent_caps_forget(struct agent_ctr *c) {
  struct cap_state *st = c->cap_state;
  if (st == NULL)
    return;
  cg_throttle_target_release(&st->t);
  free(st);
  c->cap_state = NULL;
}

static void set_cap(struct agent_ctr *c, double bps) {
  if (c->cap_bps == bps)
    return;
  struct cap_state *st = state_of(c);
  if (st == NULL)
    return;
  cleanup_error struct iob_error *err = NULL;
  if (!st->resolved && bps > 0) {
    st->resolved = true;
    if (c->pid == 0 ||
        cg_throttle_target_resolve(NULL, (pid_t)c->pid, c->bundle, &st->t, &err) < 0) {
      if (!st->warned)
        iob_warn("cannot cap '%s': %s", c->id, err ? err->msg : "its pid is not known");
      st->warned = true;
      st->t.mech = CG_THROTTLE_NONE;
      return;
    }
  }
  if (!st->resolved || st->t.mech == CG_THROTTLE_NONE || st->t.ndev == 0) {
    if (bps > 0 && !st->warned)
      iob_warn("cannot cap '%s': no io.max or blkio.throttle for its cgroup, or no disk found",
               c->id);
    st->warned = st->warned || bps > 0;
    c->cap_bps = st->resolved ? bps : 0;
    return;
  }
  uint64_t v = (uint64_t)bps;
  int r = v ? cg_throttle_set(&st->t, v, v, 0, 0, &err) : cg_throttle_clear(&st->t, &err);
  if (r < 0) {
    /* The container may have just exited: its cgroup is gone. */
    if (err->errno_ != ENOENT && !st->warned)
      iob_warn("cannot %s '%s': %s", v ? "cap" : "lift the cap of", c->id, err->msg);
    st->warned = true;
    return;
  }
  if (v)
    iob_debug("capped '%s' at %.1f MiB/s (%s)", c->id, bps / (1024 * 1024),
              cg_throttle_mech_name(st->t.mech));
  else
    iob_debug("cap on '%s' lifted", c->id);
  c->cap_bps = bps;
}

void agent_caps_apply(struct agent_daemon *d) {
  double level = d->adm.prot.level_bps;
  for (struct agent_ctr *c = d->adm.list; c; c = c->next) {
    bool capped = level > 0 && c->state == AGENT_RUNNING && agent_ctr_protect_target(&d->adm, c);
    set_cap(c, capped ? level : 0);
  }
}

void agent_caps_release(struct agent_daemon *d) {
  for (struct agent_ctr *c = d->adm.list; c; c = c->next) {
    set_cap(c, 0);
    agent_caps_forget(c);
  }
}
