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
#define AGENT_PLAN_NAME_MAX 256
#define AGENT_PLAN_FILE_MAX (1024 * 1024)

struct agent_plan_jobs {
  Iobatch__Agent__V1__PlanJob **v;
  size_t n;
};

/* A job file: "name class [solo_seconds]" per line ('#' comments), or JSON
 * ([{"name": .., "class": .., "solo_seconds": ..}] or {"jobs": [...]}).
 * Errors name the file and the line (or job).  *jobs is empty on error. */
int agent_plan_parse_jobs(const char *name, const char *buf, size_t len,
                          struct agent_plan_jobs *jobs, struct iob_error **err);
void agent_plan_jobs_release(struct agent_plan_jobs *jobs);

/* Solve for jobs (class names as batch_class_from_name knows them) with
 * cfg (cap and alpha already applied).  *out is allocated here; free it
 * with agent_plan_response_free. */
int agent_plan_solve(const struct batch_config *cfg, Iobatch__Agent__V1__PlanJob *const *jobs,
                     size_t n, Iobatch__Agent__V1__PlanResponse **out, struct iob_error **err);
void agent_plan_response_free(Iobatch__Agent__V1__PlanResponse *r);

#endif
