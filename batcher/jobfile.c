// SPDX-License-Identifier: Apache-2.0
#include "batcher/jobfile.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/xalloc.h"

void batch_jobfile_plan_release(struct batch_jobfile_plan *p) {
  for (size_t b = 0; p->batches && b < p->n_batches; b++)
    free(p->batches[b].names); /* the names belong to the jobs */
  free(p->batches);
  p->batches = NULL;
  p->n_batches = 0;
}

static void build(const struct batch_config *cfg, const struct batch_jobfile_job *jobs, size_t n,
                  const enum batch_class *cls, const struct batch_solution *sol,
                  struct batch_jobfile_plan *p) {
  p->batches = xcalloc(sol->nz + 1, sizeof(*p->batches));
  p->n_batches = sol->nz;
  for (unsigned b = 0; b < sol->nz; b++)
    p->batches[b].names = xcalloc(n + 1, sizeof(char *));
  for (size_t i = 0; i < n; i++) {
    struct batch_jobfile_batch *pb = &p->batches[sol->batch_of[i]];
    /* the pair cost of i with every earlier member of its batch */
    for (size_t k = 0; k < pb->n_names; k++) {
      size_t j = 0;
      while (strcmp(jobs[j].name, pb->names[k]) != 0 || sol->batch_of[j] != sol->batch_of[i])
        j++;
      pb->penalty += cfg->s[cls[i]][cls[j]] + cfg->s[cls[j]][cls[i]];
    }
    pb->names[pb->n_names++] = jobs[i].name;
  }
}

int batch_jobfile_solve(const struct batch_config *cfg, const struct batch_jobfile_job *jobs,
                        size_t n, struct batch_jobfile_plan *out, struct iob_error **err) {
  memset(out, 0, sizeof(*out));
  if (n == 0)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "no jobs to plan");
  if (n > BATCH_JOBFILE_MAX_JOBS)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "too many jobs: %zu, at most %d", n,
                          BATCH_JOBFILE_MAX_JOBS);
  cleanup_free enum batch_class *cls = xcalloc(n, sizeof(*cls));
  for (size_t i = 0; i < n; i++) {
    if (jobs[i].name == NULL || jobs[i].name[0] == '\0')
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "job %zu has no name", i + 1);
    for (size_t j = 0; j < i; j++)
      if (strcmp(jobs[i].name, jobs[j].name) == 0)
        return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "job name '%s' given twice",
                              jobs[i].name);
    int c = batch_class_from_name(jobs[i].cls ? jobs[i].cls : "");
    if (c < 0)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "job '%s': unknown class '%s'",
                            jobs[i].name, jobs[i].cls ? jobs[i].cls : "");
    cls[i] = (enum batch_class)c;
  }
  struct batch_solution sol;
  memset(&sol, 0, sizeof(sol));
  if (batch_solve(cfg, cls, n, BATCH_SOLVE_AUTO, &sol, err) < 0)
    return -1;
  out->objective = sol.objective;
  out->optimal = sol.optimal;
  out->solver = sol.method == BATCH_SOLVE_EXACT ? "exact" : "heuristic";
  build(cfg, jobs, n, cls, &sol, out);
  batch_solution_free(&sol);
  return 0;
}

/* ---- job files ---- */

void batch_jobfile_release(struct batch_jobfile *j) {
  for (size_t i = 0; i < j->n; i++) {
    free(j->v[i].name);
    free(j->v[i].cls);
  }
  free(j->v);
  j->v = NULL;
  j->n = 0;
}

static int add_job(struct batch_jobfile *j, const char *name, const char *cls, double solo,
                   struct iob_error **err) {
  if (j->n >= BATCH_JOBFILE_MAX_JOBS)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "too many jobs (at most %d)",
                          BATCH_JOBFILE_MAX_JOBS);
  if (strlen(name) > BATCH_JOBFILE_NAME_MAX)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "job name too long (at most %d bytes)",
                          BATCH_JOBFILE_NAME_MAX);
  if (batch_class_from_name(cls) < 0)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "unknown class '%s' (expected seq-read, rand-read, seq-write, "
                          "rand-write, mixed, idle or unknown)",
                          cls);
  if (!(solo >= 0 && isfinite(solo)))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid solo seconds for '%s'", name);
  if (j->n % 64 == 0)
    j->v = xrealloc(j->v, (j->n + 64) * sizeof(*j->v));
  j->v[j->n++] =
      (struct batch_jobfile_job){.name = xstrdup(name), .cls = xstrdup(cls), .solo_s = solo};
  return 0;
}

/* "name class [solo_seconds]" per line; '#' comments. */
static int parse_text(const char *path, char *buf, struct batch_jobfile *j,
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
static int parse_json(const char *path, const char *buf, size_t len, struct batch_jobfile *j,
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

int batch_jobfile_parse(const char *name, const char *buf, size_t len, struct batch_jobfile *j,
                        struct iob_error **err) {
  memset(j, 0, sizeof(*j));
  if (len > BATCH_JOBFILE_SIZE_MAX)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "'%s' is too large: %zu bytes, at most %d", name, len,
                          BATCH_JOBFILE_SIZE_MAX);
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
    char *copy = xstrndup(buf, len);
    r = parse_text(name, copy, j, err);
    free(copy);
  }
  if (r < 0)
    batch_jobfile_release(j);
  return r;
}
