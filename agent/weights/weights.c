// SPDX-License-Identifier: Apache-2.0
/* io.weight for running containers, written only where something enforces
 * it: iocost enabled for the device, or BFQ as its scheduler.  Elsewhere a
 * write "succeeds" and does nothing (docs/reference/cgroup-v2-io.md), and
 * claiming otherwise in Status would be a lie.  Weights are written where
 * the containers compete, which agent/weights/weighttree.c works out: the container
 * cgroups under a flat parent, the pod cgroups between pods.
 *
 * Each file's value for a device is remembered before the first write
 * (agent/store/restore.h, journal first) and put back when its directory is no
 * longer a target (no running container competes there any more) and when
 * the agent stops. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/weights/weights.h"

#include "agent/weights/weighttree.h"
#include "cgroupv2/iostat.h"
#include "cgroupv2/weight.h"
#include "common/cleanup.h"
#include "common/log.h"
#include "common/xalloc.h"

static void note(struct agent_ctr *c, bool effective, const char *what, const char *detail) {
  c->weights.weight_effective = effective;
  snprintf(c->weights.weight_note, sizeof(c->weights.weight_note), "%s%s", what, detail);
}

/* Before each write of WRITTEN for MAJ:MIN to CGDIR's KIND file: the first
 * time, remember what it holds (its override, or "default" without one)
 * and the directory's inode; every time, what is written (journal first). */
static int remember(struct agent_weights *ws, const char *cgdir, enum cg2_weight_kind kind,
                    unsigned maj, unsigned min, unsigned written, struct iob_error **err) {
  char file[AGENT_RESTORE_PATH_MAX], w[16];
  snprintf(file, sizeof(file), "%s/%s", cgdir, cg2_weight_file(kind));
  snprintf(w, sizeof(w), "%u", written);
  char value[16] = "default";
  /* A target recreated at the same path since the first write: what the
   * old one held is nobody's, the new one's value is read anew. */
  if (!agent_restore_has(ws->restore, file, maj, min) ||
      agent_restore_stale(ws->restore, file, maj, min)) {
    struct cg2_weight cur = {0};
    if (cg2_weight_read(cgdir, kind, &cur, err) < 0)
      return -1;
    for (size_t i = 0; i < cur.n; i++)
      if (cur.dev[i].major == maj && cur.dev[i].minor == min)
        snprintf(value, sizeof(value), "%u", cur.dev[i].weight);
    cg2_weight_release(&cur);
  }
  return agent_restore_remember(ws->restore, file, maj, min, value, w, 0, err);
}

/* Write w for one device; returns 1 when written with an enforcing
 * mechanism, 0 when nothing enforces weights there, < 0 on error. */
static int write_dev(struct agent_weights *ws, const char *cgdir, unsigned major, unsigned minor,
                     unsigned w, struct iob_error **err) {
  unsigned mech = 0, dmaj = 0, dmin = 0;
  if (cg2_weight_mechanism(NULL, ws->sampler->cgroup_root, major, minor, &mech, &dmaj, &dmin, err) <
      0)
    return -1;
  if (mech & CG2_MECH_IOCOST) {
    if (remember(ws, cgdir, CG2_IO_WEIGHT, dmaj, dmin, w, err) < 0 ||
        cg2_weight_write_dev(cgdir, CG2_IO_WEIGHT, dmaj, dmin, w, err) < 0)
      return -1;
    return 1;
  }
  if (mech & CG2_MECH_BFQ) {
    if (remember(ws, cgdir, CG2_BFQ_WEIGHT, dmaj, dmin, cg2_weight_io_to_bfq(w), err) < 0 ||
        cg2_weight_write_dev(cgdir, CG2_BFQ_WEIGHT, dmaj, dmin, cg2_weight_io_to_bfq(w), err) < 0)
      return -1;
    return 1;
  }
  return 0;
}

/* What was last written to each target, so that the 1 Hz re-plan while
 * containers share the disk writes only what changed. */
struct agent_weights_written {
  struct agent_weights_written *next;
  char *dir;
  unsigned weight;
  size_t ndev;  /* devices written (a new device means writing again) */
  int enforced; /* 1: a mechanism enforces it, 0: none, -1: a write failed */
  char note[96];
};

static struct agent_weights_written *cache_get(struct agent_weights *ws, const char *dir) {
  for (struct agent_weights_written *w = ws->written; w; w = w->next)
    if (!strcmp(w->dir, dir))
      return w;
  struct agent_weights_written *w = xcalloc(1, sizeof(*w));
  w->dir = xstrdup(dir);
  w->next = ws->written;
  ws->written = w;
  return w;
}

/* Forget the targets that are not targets any more, and put back what
 * was written there. */
static void cache_prune(struct agent_weights *ws, const struct wt_target *t, size_t nt) {
  for (struct agent_weights_written **pp = &ws->written; *pp;) {
    bool keep = false;
    for (size_t k = 0; k < nt && !keep; k++)
      keep = !strcmp(t[k].dir, (*pp)->dir);
    if (keep) {
      pp = &(*pp)->next;
      continue;
    }
    struct agent_weights_written *w = *pp;
    *pp = w->next;
    agent_restore_dir(ws->restore, w->dir, AGENT_RESTORE_WEIGHTS);
    free(w->dir);
    free(w);
  }
}

/* Write one target's weight for every device its subtree has done I/O on
 * (io.stat is hierarchical). */
static void write_target(struct agent_weights *ws, const struct wt_target *t,
                         struct agent_weights_written *w) {
  cleanup_error struct iob_error *err = NULL;
  struct cg2_iostat st = {0};
  if (cg2_iostat_read(t->dir, &st, &err) < 0) {
    w->enforced = -1;
    snprintf(w->note, sizeof(w->note), "cannot read io.stat of %s", t->dir);
    return;
  }
  if (st.n == 0) {
    /* Weights are per device; until it has done I/O we do not know which
     * device the container competes on. */
    w->enforced = 0;
    w->ndev = 0;
    snprintf(w->note, sizeof(w->note), "no I/O seen yet");
    cg2_iostat_release(&st);
    return;
  }
  if (w->weight == t->weight && w->ndev == st.n && w->enforced >= 0) {
    cg2_iostat_release(&st);
    return; /* nothing changed */
  }
  int enforced = 0, failed = 0;
  for (size_t i = 0; i < st.n; i++) {
    int r = write_dev(ws, t->dir, st.dev[i].major, st.dev[i].minor, t->weight, &err);
    if (r < 0) {
      iob_warn("weight %u for '%s' not written: %s", t->weight, t->dir, err->msg);
      iob_error_release(&err);
      failed++;
    }
    enforced += r > 0;
  }
  w->weight = t->weight;
  w->ndev = st.n;
  w->enforced = failed ? -1 : enforced > 0;
  ws->metrics->weight_writes[failed     ? AGENT_WEIGHT_ERROR
                             : enforced ? AGENT_WEIGHT_WRITTEN
                                        : AGENT_WEIGHT_NOT_ENFORCED]++;
  snprintf(w->note, sizeof(w->note), "%s",
           failed     ? "write failed"
           : enforced ? ""
                      : "neither iocost nor bfq on its devices");
  if (enforced)
    iob_debug("io weight %u for '%s'", t->weight, t->dir);
  cg2_iostat_release(&st);
}

void agent_weights_init(struct agent_weights *ws, struct agent_sampler *sampler,
                        struct agent_restore *restore, struct agent_metrics *metrics) {
  *ws = (struct agent_weights){.sampler = sampler, .restore = restore, .metrics = metrics};
}

void agent_weights_release(struct agent_weights *ws) {
  cache_prune(ws, NULL, 0);
}

void agent_weights_apply_all(struct agent_weights *ws, struct agent_ctr *list) {
  size_t n = 0;
  for (const struct agent_ctr *c = list; c; c = c->next)
    n += c->state == AGENT_RUNNING;
  cleanup_free struct agent_ctr **v = xcalloc(n + 1, sizeof(*v));
  cleanup_free struct wt_item *items = xcalloc(n + 1, sizeof(*items));
  size_t k = 0;
  for (struct agent_ctr *c = list; c && k < n; c = c->next) {
    if (c->state != AGENT_RUNNING)
      continue;
    v[k] = c;
    items[k] =
        (struct wt_item){.cgdir = ws->sampler->has_io ? agent_sampler_cgdir(ws->sampler, c) : NULL,
                         .weight = c->plan.weight};
    k++;
  }
  if (!ws->sampler->has_io) {
    for (size_t i = 0; i < k; i++)
      note(v[i], false, "no io controller in cgroup v2 on this host", "");
    return;
  }
  struct wt_target *t = NULL;
  size_t nt = 0;
  cleanup_error struct iob_error *err = NULL;
  if (agent_weighttree_targets(items, k, &t, &nt, &err) < 0) {
    iob_warn("weights not written: %s", err->msg);
    return;
  }
  cache_prune(ws, t, nt);
  for (size_t j = 0; j < nt; j++)
    write_target(ws, &t[j], cache_get(ws, t[j].dir));
  /* A container's weight is in effect when every target on its path is. */
  for (size_t i = 0; i < k; i++) {
    struct agent_ctr *c = v[i];
    if (items[i].cgdir == NULL) {
      note(c, false, "cgroup not known", "");
      continue;
    }
    const char *why = NULL;
    size_t on_path = 0;
    for (struct agent_weights_written *w = ws->written; w; w = w->next) {
      if (!agent_weighttree_target_covers(w->dir, items[i].cgdir))
        continue;
      on_path++;
      if (w->enforced != 1 && why == NULL)
        why = w->note[0] ? w->note : "not written";
    }
    if (on_path == 0)
      note(c, false, "shares its cgroup with another container", "");
    else if (why)
      note(c, false, why, "");
    else {
      note(c, true, "", "");
      c->weights.weight_written = c->plan.weight;
    }
  }
  agent_weighttree_targets_free(t, nt);
}
