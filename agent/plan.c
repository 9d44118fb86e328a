#include "agent/plan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"

void agent_plan_response_free(Iobatch__Agent__V1__PlanResponse *r) {
  if (r == NULL)
    return;
  for (size_t b = 0; b < r->n_batches; b++) {
    if (r->batches[b] == NULL)
      continue;
    free(r->batches[b]->names); /* the names belong to the request */
    free(r->batches[b]);
  }
  free(r->batches);
  free(r);
}

static int build(const struct batch_config *cfg, Iobatch__Agent__V1__PlanJob *const *jobs, size_t n,
                 const enum batch_class *cls, const struct batch_solution *sol,
                 Iobatch__Agent__V1__PlanResponse *r) {
  r->n_batches = sol->nz;
  r->batches = calloc(sol->nz + 1, sizeof(*r->batches));
  if (r->batches == NULL)
    return -1;
  for (unsigned b = 0; b < sol->nz; b++) {
    Iobatch__Agent__V1__PlanBatch *pb = calloc(1, sizeof(*pb));
    if (pb == NULL)
      return -1;
    iobatch__agent__v1__plan_batch__init(pb);
    r->batches[b] = pb;
    pb->names = calloc(n + 1, sizeof(char *));
    if (pb->names == NULL)
      return -1;
  }
  for (size_t i = 0; i < n; i++) {
    Iobatch__Agent__V1__PlanBatch *pb = r->batches[sol->batch_of[i]];
    /* the pair cost of i with every earlier member of its batch */
    for (size_t k = 0; k < pb->n_names; k++) {
      size_t j = 0;
      while (strcmp(jobs[j]->name, pb->names[k]) != 0 || sol->batch_of[j] != sol->batch_of[i])
        j++;
      pb->penalty += cfg->s[cls[i]][cls[j]] + cfg->s[cls[j]][cls[i]];
    }
    pb->names[pb->n_names++] = jobs[i]->name;
  }
  return 0;
}

int agent_plan_solve(const struct batch_config *cfg, Iobatch__Agent__V1__PlanJob *const *jobs,
                     size_t n, Iobatch__Agent__V1__PlanResponse **out, struct iob_error **err) {
  if (n == 0)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "no jobs to plan");
  if (n > AGENT_PLAN_MAX_JOBS)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "too many jobs: %zu, at most %d", n,
                          AGENT_PLAN_MAX_JOBS);
  cleanup_free enum batch_class *cls = calloc(n, sizeof(*cls));
  if (cls == NULL)
    return iob_error(err, ENOMEM, "cannot allocate the plan");
  for (size_t i = 0; i < n; i++) {
    if (jobs[i]->name == NULL || jobs[i]->name[0] == '\0')
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "job %zu has no name", i + 1);
    for (size_t j = 0; j < i; j++)
      if (strcmp(jobs[i]->name, jobs[j]->name) == 0)
        return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "job name '%s' given twice",
                              jobs[i]->name);
    int c = batch_class_from_name(jobs[i]->class_ ? jobs[i]->class_ : "");
    if (c < 0)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "job '%s': unknown class '%s'",
                            jobs[i]->name, jobs[i]->class_ ? jobs[i]->class_ : "");
    cls[i] = (enum batch_class)c;
  }
  struct batch_solution sol;
  memset(&sol, 0, sizeof(sol));
  if (batch_solve(cfg, cls, n, BATCH_SOLVE_AUTO, &sol, err) < 0)
    return -1;
  Iobatch__Agent__V1__PlanResponse *r = calloc(1, sizeof(*r));
  if (r == NULL) {
    batch_solution_free(&sol);
    return iob_error(err, ENOMEM, "cannot allocate the plan");
  }
  iobatch__agent__v1__plan_response__init(r);
  r->objective = sol.objective;
  r->optimal = sol.optimal;
  r->solver = (char *)(sol.method == BATCH_SOLVE_EXACT ? "exact" : "heuristic");
  int ret = build(cfg, jobs, n, cls, &sol, r);
  batch_solution_free(&sol);
  if (ret < 0) {
    agent_plan_response_free(r);
    return iob_error(err, ENOMEM, "cannot allocate the plan");
  }
  *out = r;
  return 0;
}
