// SPDX-License-Identifier: Apache-2.0
/* io.weight / io.bfq.weight of running containers (agent/weights/weights.c),
 * written where the containers compete (agent/weights/weighttree.h) and only where
 * something enforces them; each container's weight_effective and
 * weight_note say what happened, for Status. */
#ifndef IOB_AGENT_WEIGHTS_H
#define IOB_AGENT_WEIGHTS_H

#include "agent/plan/admission.h"
#include "agent/serve/metrics.h"
#include "agent/store/restore.h"
#include "agent/sample/sampler.h"

struct agent_weights_written;

struct agent_weights {
  struct agent_sampler *sampler;         /* the containers' cgroups, the host's io controller */
  struct agent_restore *restore;         /* what a file held before the first write */
  struct agent_metrics *metrics;         /* weight_writes */
  struct agent_weights_written *written; /* what was last written to each target */
};

/* All three outlive w. */
void agent_weights_init(struct agent_weights *w, struct agent_sampler *sampler,
                        struct agent_restore *restore, struct agent_metrics *metrics);
/* io.weight for every running container of LIST (agent_adm.list). */
void agent_weights_apply_all(struct agent_weights *w, struct agent_ctr *list);
/* Put back what was written and forget it (at exit). */
void agent_weights_release(struct agent_weights *w);

#endif
