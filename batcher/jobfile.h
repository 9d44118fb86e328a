// SPDX-License-Identifier: Apache-2.0
/* The offline plan (the paper's problem) for a list of named jobs: shared
 * by the agent's Plan RPC and `iobatchctl plan`, which links the batcher
 * directly and works without an agent.  Plain C: the protobuf messages
 * (PlanJob, PlanResponse) are converted in agent/requests.c and cli/plan_verb.c. */
#ifndef IOB_BATCH_JOBFILE_H
#define IOB_BATCH_JOBFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "batcher/batcher.h"
#include "common/error.h"

#define AGENT_PLAN_MAX_JOBS 4096
#define AGENT_PLAN_NAME_MAX 256
#define AGENT_PLAN_FILE_MAX (1024 * 1024)

struct agent_plan_job {
  char *name;
  char *cls; /* a class name (batch_class_from_name); NULL reads as "" */
  double solo_s;
};

struct agent_plan_jobs {
  struct agent_plan_job *v;
  size_t n;
};

struct agent_plan_batch {
  char **names; /* borrowed from the jobs */
  size_t n_names;
  double penalty;
};

struct agent_plan {
  struct agent_plan_batch *batches;
  size_t n_batches;
  double objective;
  bool optimal;
  const char *solver; /* "exact" or "heuristic" */
};

/* A job file: "name class [solo_seconds]" per line ('#' comments), or JSON
 * ([{"name": .., "class": .., "solo_seconds": ..}] or {"jobs": [...]}).
 * Errors name the file and the line (or job).  *jobs is empty on error. */
int agent_plan_parse_jobs(const char *name, const char *buf, size_t len,
                          struct agent_plan_jobs *jobs, struct iob_error **err);
void agent_plan_jobs_release(struct agent_plan_jobs *jobs);

/* Solve for jobs (class names as batch_class_from_name knows them) with
 * cfg (cap and alpha already applied).  out's names point into jobs;
 * release it with agent_plan_release. */
int agent_plan_solve(const struct batch_config *cfg, const struct agent_plan_job *jobs, size_t n,
                     struct agent_plan *out, struct iob_error **err);
void agent_plan_release(struct agent_plan *p);

#endif
