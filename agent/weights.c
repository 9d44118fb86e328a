/* io.weight for running containers, written only where something enforces
 * it: iocost enabled for the device, or BFQ as its scheduler.  Elsewhere a
 * write "succeeds" and does nothing (reference/cgroup-v2-io.md), and
 * claiming otherwise in Status would be a lie. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "agent/daemon.h"
#include "cgroupv2/iostat.h"
#include "cgroupv2/weight.h"
#include "common/cleanup.h"
#include "common/log.h"

static void note(struct agent_ctr *c, bool effective, const char *what, const char *detail) {
  c->weight_effective = effective;
  snprintf(c->weight_note, sizeof(c->weight_note), "%s%s", what, detail);
}

/* Write w for one device; returns 1 when written with an enforcing
 * mechanism, 0 when nothing enforces weights there, < 0 on error. */
static int write_dev(struct agent_daemon *d, const char *cgdir, unsigned major, unsigned minor,
                     unsigned w, struct iob_error **err) {
  unsigned mech = 0, dmaj = 0, dmin = 0;
  if (cg2_weight_mechanism(NULL, d->sampler.cgroup_root, major, minor, &mech, &dmaj, &dmin, err) <
      0)
    return -1;
  if (mech & CG2_MECH_IOCOST) {
    if (cg2_weight_write_dev(cgdir, CG2_IO_WEIGHT, dmaj, dmin, w, err) < 0)
      return -1;
    return 1;
  }
  if (mech & CG2_MECH_BFQ) {
    if (cg2_weight_write_dev(cgdir, CG2_BFQ_WEIGHT, dmaj, dmin, cg2_weight_io_to_bfq(w), err) < 0)
      return -1;
    return 1;
  }
  return 0;
}

void agent_weights_apply(struct agent_daemon *d, struct agent_ctr *c) {
  if (!d->sampler.has_io) {
    note(c, false, "no io controller in cgroup v2 on this host", "");
    return;
  }
  const char *cgdir = agent_sampler_cgdir(d, c);
  if (cgdir == NULL) {
    note(c, false, "cgroup not known", "");
    return;
  }
  if (c->weight == c->weight_written)
    return;
  cleanup_error struct iob_error *err = NULL;
  struct cg2_iostat st = {0};
  if (cg2_iostat_read(cgdir, &st, &err) < 0) {
    note(c, false, "cannot read io.stat: ", err->msg);
    return;
  }
  if (st.n == 0) {
    /* Weights are per device; until it has done I/O we do not know which
     * device the container competes on. */
    note(c, false, "no I/O seen yet", "");
    cg2_iostat_release(&st);
    return;
  }
  int enforced = 0, failed = 0;
  for (size_t i = 0; i < st.n; i++) {
    int r = write_dev(d, cgdir, st.dev[i].major, st.dev[i].minor, c->weight, &err);
    if (r < 0) {
      iob_warn("weight %u for '%s' not written: %s", c->weight, c->id, err->msg);
      iob_error_release(&err);
      failed++;
    }
    enforced += r > 0;
  }
  cg2_iostat_release(&st);
  if (enforced > 0) {
    c->weight_written = c->weight;
    note(c, true, "", "");
    iob_debug("io.weight %u for '%s'", c->weight, c->id);
  } else {
    note(c, false, failed ? "write failed" : "neither iocost nor bfq on its devices", "");
  }
}
