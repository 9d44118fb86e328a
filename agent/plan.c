#include "agent/plan.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
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

/* ---- job files ---- */

void agent_plan_jobs_release(struct agent_plan_jobs *j) {
  for (size_t i = 0; i < j->n; i++) {
    free(j->v[i]->name);
    free(j->v[i]->class_);
    free(j->v[i]);
  }
  free(j->v);
  j->v = NULL;
  j->n = 0;
}

static int add_job(struct agent_plan_jobs *j, const char *name, const char *cls, double solo,
                   struct iob_error **err) {
  if (j->n >= AGENT_PLAN_MAX_JOBS)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "too many jobs (at most %d)",
                          AGENT_PLAN_MAX_JOBS);
  if (strlen(name) > AGENT_PLAN_NAME_MAX)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "job name too long (at most %d bytes)",
                          AGENT_PLAN_NAME_MAX);
  if (batch_class_from_name(cls) < 0)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "unknown class '%s' (expected seq-read, rand-read, seq-write, "
                          "rand-write, mixed, idle or unknown)",
                          cls);
  if (!(solo >= 0 && isfinite(solo)))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid solo seconds for '%s'", name);
  if (j->n % 64 == 0) {
    void *v = realloc(j->v, (j->n + 64) * sizeof(*j->v));
    if (v == NULL)
      return iob_error(err, ENOMEM, "cannot allocate jobs");
    j->v = v;
  }
  Iobatch__Agent__V1__PlanJob *p = calloc(1, sizeof(*p));
  if (p == NULL)
    return iob_error(err, ENOMEM, "cannot allocate jobs");
  iobatch__agent__v1__plan_job__init(p);
  p->name = strdup(name);
  p->class_ = strdup(cls);
  p->solo_seconds = solo;
  j->v[j->n++] = p;
  if (p->name == NULL || p->class_ == NULL)
    return iob_error(err, ENOMEM, "cannot allocate jobs");
  return 0;
}

/* "name class [solo_seconds]" per line; '#' comments. */
static int parse_text(const char *path, char *buf, struct agent_plan_jobs *j,
                      struct iob_error **err) {
  unsigned lineno = 0;
  char *save = NULL;
  for (char *line = buf; line; line = save) {
    char *nl = strchr(line, '\n');
    save = nl ? nl + 1 : NULL;
    if (nl)
      *nl = '\0';
    lineno++;
    char *hash = strchr(line, '#');
    if (hash)
      *hash = '\0';
    char *sp = NULL;
    char *name = strtok_r(line, " \t\r", &sp);
    if (name == NULL)
      continue;
    char *cls = strtok_r(NULL, " \t\r", &sp);
    char *solo = strtok_r(NULL, " \t\r", &sp);
    char *extra = strtok_r(NULL, " \t\r", &sp);
    if (cls == NULL || extra)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "'%s' line %u: expected 'name class [solo_seconds]'", path, lineno);
    double s = 0;
    if (solo) {
      char *end = NULL;
      s = strtod(solo, &end);
      if (*end != '\0' || end == solo)
        return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                              "'%s' line %u: invalid solo seconds '%s'", path, lineno, solo);
    }
    if (add_job(j, name, cls, s, err) < 0)
      return iob_error_prefix(err, "'%s' line %u", path, lineno);
  }
  return 0;
}

/* [{"name": "a", "class": "seq-write", "solo_seconds": 30}, ...] or
 * {"jobs": [...]} */
static int parse_json(const char *path, const char *buf, size_t len, struct agent_plan_jobs *j,
                      struct iob_error **err) {
  json_error_t je;
  json_auto_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
  if (root == NULL)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "cannot parse '%s': line %d: %s", path,
                          je.line, je.text);
  json_t *arr = json_is_object(root) ? json_object_get(root, "jobs") : root;
  if (!json_is_array(arr))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "'%s': expected an array of jobs or {\"jobs\": [...]}", path);
  size_t i;
  json_t *v;
  json_array_foreach(arr, i, v) {
    const char *name = NULL, *cls = NULL;
    double solo = 0;
    if (json_unpack_ex(v, &je, JSON_STRICT, "{s:s, s:s, s?F}", "name", &name, "class", &cls,
                       "solo_seconds", &solo) < 0)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "'%s': job %zu: %s", path, i + 1,
                            je.text);
    if (add_job(j, name, cls, solo, err) < 0)
      return iob_error_prefix(err, "'%s': job %zu", path, i + 1);
  }
  return 0;
}

int agent_plan_parse_jobs(const char *name, const char *buf, size_t len, struct agent_plan_jobs *j,
                          struct iob_error **err) {
  memset(j, 0, sizeof(*j));
  if (len > AGENT_PLAN_FILE_MAX)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "'%s' is too large: %zu bytes, at most %d", name, len,
                          AGENT_PLAN_FILE_MAX);
  if (memchr(buf, '\0', len))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "'%s' contains a NUL byte", name);
  size_t i = 0;
  while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r'))
    i++;
  int r;
  if (i < len && (buf[i] == '[' || buf[i] == '{')) {
    r = parse_json(name, buf, len, j, err);
  } else {
    /* strtok needs a writable, terminated copy */
    char *copy = strndup(buf, len);
    if (copy == NULL)
      return iob_error(err, ENOMEM, "cannot read '%s'", name);
    r = parse_text(name, copy, j, err);
    free(copy);
  }
  if (r < 0)
    agent_plan_jobs_release(j);
  return r;
}
