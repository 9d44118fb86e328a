// SPDX-License-Identifier: Apache-2.0
/* The offline plan (the paper's problem) for a list of named jobs: shared
 * by the agent's Plan RPC and `iobatchctl plan`, which links the batcher
 * directly and works without an agent.  Plain C: the protobuf messages
 * (PlanJob, PlanResponse) are converted in agent/serve/requests.c and cli/plan_verb.c. */
#ifndef IOB_BATCH_JOBFILE_H
#define IOB_BATCH_JOBFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "batcher/batcher.h"
#include "common/error.h"

#define BATCH_JOBFILE_MAX_JOBS 4096
#define BATCH_JOBFILE_NAME_MAX 256
#define BATCH_JOBFILE_SIZE_MAX (1024 * 1024)

struct batch_jobfile_job {
  char *name;
  char *cls; /* a class name (batch_class_from_name); NULL reads as "" */
  double solo_s;
};

struct batch_jobfile {
  struct batch_jobfile_job *v;
  size_t n;
};

struct batch_jobfile_batch {
  char **names; /* borrowed from the jobs */
  size_t n_names;
  double penalty;
};

struct batch_jobfile_plan {
  struct batch_jobfile_batch *batches;
  size_t n_batches;
  double objective;
  bool optimal;
  const char *solver; /* "exact" or "heuristic" */
};

/* A job file: "name class [solo_seconds]" per line ('#' comments), or JSON
 * ([{"name": .., "class": .., "solo_seconds": ..}] or {"jobs": [...]}).
 * Errors name the file and the line (or job).  *jobs is empty on error. */
int batch_jobfile_parse(const char *name, const char *buf, size_t len, struct batch_jobfile *jobs,
                        struct iob_error **err);
void batch_jobfile_release(struct batch_jobfile *jobs);

/* Solve for jobs (class names as batch_class_from_name knows them) with
 * cfg (cap and alpha already applied).  out's names point into jobs;
 * release it with batch_jobfile_plan_release. */
int batch_jobfile_solve(const struct batch_config *cfg, const struct batch_jobfile_job *jobs,
                        size_t n, struct batch_jobfile_plan *out, struct iob_error **err);
void batch_jobfile_plan_release(struct batch_jobfile_plan *p);

#endif
