/* The offline plan (the paper's problem) for a list of named jobs: shared
 * by the agent's Plan RPC and `iobatchctl plan`, which links the batcher
 * directly and works without an agent. */
#ifndef IOB_AGENT_PLAN_H
#define IOB_AGENT_PLAN_H

#include <stddef.h>

#include "batcher/batcher.h"
#include "common/error.h"
#include "iobatch/agent.pb-c.h"

#define AGENT_PLAN_MAX_JOBS 4096

/* Solve for jobs (class names as batch_class_from_name knows them) with
 * cfg (cap and alpha already applied).  *out is allocated here; free it
 * with agent_plan_response_free. */
int agent_plan_solve(const struct batch_config *cfg, Iobatch__Agent__V1__PlanJob *const *jobs,
                     size_t n, Iobatch__Agent__V1__PlanResponse **out, struct iob_error **err);
void agent_plan_response_free(Iobatch__Agent__V1__PlanResponse *r);

#endif
