// SPDX-License-Identifier: Apache-2.0
/* Where io.weight must be written for running containers to compete.
 *
 * cgroup v2 weights share a device only among siblings: a container's
 * io.weight decides nothing against a container in another pod, whose
 * cgroups compete at the pod level (kubepods/.../podA vs .../podB).  For
 * every pair of running containers the competing cgroups are the two
 * children of their lowest common ancestor on each one's path; each such
 * cgroup gets the largest weight asked for by a container under it.  Under
 * a flat parent (ctr: /<namespace>/<id>) that is the container cgroups
 * themselves; under Kubernetes the pod cgroups, and the container cgroups
 * too when one pod has several running.  A container alone gets its own
 * cgroup's weight (written for Status, enforcing nothing). */
#ifndef IOBATCH_AGENT_WEIGHTTREE_H
#define IOBATCH_AGENT_WEIGHTTREE_H

#include <stddef.h>

#include "common/error.h"

struct wt_item {
  const char *cgdir; /* absolute, no trailing '/'; NULL: not known, skipped */
  unsigned weight;
};

struct wt_target {
  char *dir;       /* a cgroup directory to write */
  unsigned weight; /* the largest weight of the items under it */
};

/* *out: an array of *n_out targets, each dir distinct, for items[0..n);
 * the caller frees it with agent_weighttree_targets_free.  Returns 0 (out of
 * memory aborts, common/xalloc.h). */
int agent_weighttree_targets(const struct wt_item *items, size_t n, struct wt_target **out,
                             size_t *n_out, struct iob_error **err);
void agent_weighttree_targets_free(struct wt_target *t, size_t n);
/* Is target dir on the path of cgdir (dir == cgdir or an ancestor)? */
int agent_weighttree_target_covers(const char *dir, const char *cgdir);

#endif
