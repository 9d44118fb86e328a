// SPDX-License-Identifier: Apache-2.0
/* Defaults and the config-file parser of the batcher. */
#include "batcher/batcher.h"

#include "common/cleanup.h"
#include "common/conf.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *batch_policy_name(enum batch_policy p) {
  switch (p) {
  case BATCH_POLICY_PREDICTIVE:
    return "predictive";
  case BATCH_POLICY_PAPER:
    return "paper";
  }
  return "invalid";
}

int batch_policy_from_name(const char *name) {
  if (strcmp(name, "predictive") == 0)
    return BATCH_POLICY_PREDICTIVE;
  if (strcmp(name, "paper") == 0)
    return BATCH_POLICY_PAPER;
  return -1;
}

/* Default penalties: row = the job that suffers, column = its neighbour.
 * Sources: docs/DESIGN.md ("Where the idea comes from"), i.e. the paper and fio
 * pairs on this project's NVMe machines.  Where they disagree we take the
 * worse case, because a wrong "good neighbours" admits a pair that costs a
 * victim 20-60x, while a wrong "bad neighbours" only delays a start by one
 * job (and the predictive policy still admits when holding does not pay).
 *
 *  - large sequential (either direction) beside small random (either
 *    direction): 2 for the random job.  Measured: a 4 KiB random writer fell
 *    from 62k to <1k IOPS beside a 1 MiB sequential writer and from 75k to
 *    1.3k beside a sequential *reader*; a random reader fell from 36k to 3.3k
 *    beside a sequential writer.  The paper's "read next to write is fine"
 *    did not hold here, so reads are not let off.
 *  - the sequential job beside a random one: the writer lost about a third
 *    (0.5); the sequential reader lost nothing beside a random writer (0).
 *  - sequential beside sequential: 1.  They share bandwidth (2-3x each
 *    measured) but little is lost overall; the predictive model treats this
 *    pair with seq_slowdown instead.
 *  - random beside random: 0 for the same direction (NVMe queues absorb
 *    them), 0.25 between random readers and writers ("barely slowed each
 *    other").
 *  - mixed: half sequential, half random, so half of each neighbour's worst
 *    (rounded up to 1 against sequential streams; 0.5 otherwise).
 *  - idle: does no I/O and suffers nothing: 0 row and column.
 *  - unknown (before the first sample): 1 everywhere but idle, between the
 *    good and the bad case; configurable as matrix.unknown, and the agent
 *    reclassifies within a sampling period anyway.
 */
/* clang-format off */
static const double default_s[BATCH_NCLASS][BATCH_NCLASS] = {
    /*            sr    rr    sw    rw    mx   idle  unk */
    /* sr   */ {1.0,  0.0,  1.0,  0.0,  0.5,  0.0,  1.0},
    /* rr   */ {2.0,  0.0,  2.0,  0.25, 1.0,  0.0,  1.0},
    /* sw   */ {1.0,  0.5,  1.0,  0.5,  0.5,  0.0,  1.0},
    /* rw   */ {2.0,  0.25, 2.0,  0.0,  1.0,  0.0,  1.0},
    /* mx   */ {1.0,  0.5,  1.0,  0.5,  1.0,  0.0,  1.0},
    /* idle */ {0.0,  0.0,  0.0,  0.0,  0.0,  0.0,  0.0},
    /* unk  */ {1.0,  1.0,  1.0,  1.0,  1.0,  0.0,  1.0},
};
/* clang-format on */

void batch_config_default(struct batch_config *cfg) {
  memset(cfg, 0, sizeof(*cfg));
  memcpy(cfg->s, default_s, sizeof(cfg->s));
  cfg->alpha = 0.5; /* the paper: equal weight */
  /* Four concurrent jobs: the paper's batches held about 4-5 containers
   * and these machines have 2 cores (docs/DESIGN.md). */
  cfg->max_batch = 4;
  cfg->policy = BATCH_POLICY_PREDICTIVE;
  /* Penalty 2 -> 5x slowdown: still far below the measured 20-60x, but
   * beyond the break-even point at which serialising a pair pays. */
  cfg->slowdown_scale = 2.0;
  cfg->seq_slowdown = 2.0; /* measured 2-3x for two sequential streams */
  cfg->ncpu = 2;
  /* On the stretch (turnaround / solo) of every job in the forecast. */
  cfg->fairness = 4.0;
  /* Forecasts are rough; do not hold a job for a predicted 1% gain. */
  cfg->hold_margin = 0.02;
  /* Admission to first I/O: runc start, the process's start, fio's setup.
   * Solo runs on the 2-core bench host took 0.4-0.5 s from `ctr run` to
   * exit beyond fio's own runtime, about half of it creation, which a held
   * container has done already (bench/results/sched.md). */
  cfg->start_s = 0.25;
  cfg->default_solo_s = 60.0;
  /* Held only on evidence: the built-in matrix above is a guess until a
   * matrix file or the agent's own measurements say otherwise (known[][]
   * all false); weights still use it. */
  cfg->hold_on_matrix = false;
  /* max_batch caps what runs under the predictive policy only when set
   * explicitly (it is the paper's L either way). */
  cfg->cap_running = false;
  /* A job running 3x its learned duration is treated as open-ended. */
  cfg->open_ended_factor = 3.0;
  /* Jobs forced in by max_hold are spread this far apart (a herd of them
   * released at one instant is what max_hold must not cause). */
  cfg->deadline_spread_s = 1.0;
  /* bench/solver.sh measured 3.8-6.1 ns of CPU per work unit (runs
   * recommended 8.2e6-1.3e7 for the 50 ms budget of a plan made on every
   * event), so 1e7 units keep an exact plan near 50 ms.  That covers N = 25 in 5 classes (2e6
   * units, 7-12 ms) and random 7-class N = 25 (8e6 units, 27-46 ms).  Above it the heuristic, whose
   * measured gap there was 0 (max 0.015 on random N <= 25). */
  cfg->exact_limit = 1e7;
}

/* ---- parser ---- */

struct parse {
  const char *name;
  unsigned line;
  struct iob_error **err;
  struct batch_config *cfg;
};

__attribute__((format(printf, 2, 3))) static int perr(struct parse *p, const char *fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  return iob_error_code(p->err, IOB_CODE_INVALID_ARGUMENT, "'%s' line %u: %s", p->name, p->line,
                        msg);
}

/* strtod accepts "nan", "inf" and hex floats; only finite values in
 * [lo, hi] pass, so a NaN can never reach the solver's comparisons. */
static int parse_num(struct parse *p, const char *key, const char *val, double lo, double hi,
                     double *out) {
  char *end = NULL;
  errno = 0;
  double v = strtod(val, &end);
  if (end == val || *end != '\0' || errno == ERANGE || !isfinite(v))
    return perr(p, "invalid number for '%s': '%s'", key, val);
  if (v < lo || v > hi) {
    char range[64];
    snprintf(range, sizeof(range), "%g..%g", lo, hi);
    return perr(p, "value for '%s' out of range %s: '%s'", key, range, val);
  }
  *out = v;
  return 0;
}

static int parse_uint(struct parse *p, const char *key, const char *val, unsigned lo, unsigned hi,
                      unsigned *out) {
  double v;
  if (parse_num(p, key, val, lo, hi, &v) < 0)
    return -1;
  if (v != floor(v))
    return perr(p, "value for '%s' is not an integer: '%s'", key, val);
  *out = (unsigned)v;
  return 0;
}

static int parse_row(struct parse *p, const char *key, char *val, double row[BATCH_NCLASS]) {
  unsigned k = 0;
  char *save = NULL;
  for (char *tok = strtok_r(val, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save)) {
    if (k == BATCH_NCLASS)
      return perr(p, "too many values in '%s' (want %d)", key, BATCH_NCLASS);
    if (parse_num(p, key, tok, 0.0, BATCH_PENALTY_MAX, &row[k]) < 0)
      return -1;
    k++;
  }
  if (k != BATCH_NCLASS)
    return perr(p, "too few values in '%s' (want %d)", key, BATCH_NCLASS);
  return 0;
}

enum { SEEN_ROWS = BATCH_NCLASS, NKEYS = SEEN_ROWS + 16 };

static int k_num(const struct iob_conf_key *k, const char *val, void *field, void *ctx) {
  return parse_num(ctx, k->name, val, k->lo, k->hi, field);
}

static int k_uint(const struct iob_conf_key *k, const char *val, void *field, void *ctx) {
  return parse_uint(ctx, k->name, val, (unsigned)k->lo, (unsigned)k->hi, field);
}

static int k_max_batch(const struct iob_conf_key *k, const char *val, void *field, void *ctx) {
  struct parse *p = ctx;
  p->cfg->cap_running = true; /* an explicit cap is the operator's evidence */
  return k_uint(k, val, field, ctx);
}

static int k_policy(const struct iob_conf_key *k, const char *val, void *field, void *ctx) {
  (void)k;
  int policy = batch_policy_from_name(val);
  if (policy < 0)
    return perr(ctx, "unknown policy '%s' (want 'predictive' or 'paper')", val);
  *(enum batch_policy *)field = (enum batch_policy)policy;
  return 0;
}

static int k_seq_pairs(const struct iob_conf_key *k, const char *val, void *field, void *ctx) {
  (void)k;
  if (strcmp(val, "matrix") == 0)
    *(bool *)field = true;
  else if (strcmp(val, "seq_slowdown") == 0)
    *(bool *)field = false;
  else
    return perr(ctx, "unknown seq_pairs '%.60s' (want 'seq_slowdown' or 'matrix')", val);
  return 0;
}

static int k_hold_on(const struct iob_conf_key *k, const char *val, void *field, void *ctx) {
  (void)k;
  if (strcmp(val, "matrix") == 0)
    *(bool *)field = true;
  else if (strcmp(val, "evidence") == 0)
    *(bool *)field = false;
  else
    return perr(ctx, "unknown hold_on '%.60s' (want 'evidence' or 'matrix')", val);
  return 0;
}

/* The scalar keys; the matrix rows (matrix.CLASS) are parsed by parse_row. */
#define F(f) offsetof(struct batch_config, f)
static const struct iob_conf_key scalar_keys[] = {
    {"alpha", k_num, F(alpha), 0.0, 1.0, NULL},
    {"max_batch", k_max_batch, F(max_batch), 1, BATCH_MAX_BATCH, NULL},
    {"policy", k_policy, F(policy), 0, 0, NULL},
    {"slowdown_scale", k_num, F(slowdown_scale), 0.0, 100.0, NULL},
    {"seq_slowdown", k_num, F(seq_slowdown), 1.0, 100.0, NULL},
    {"ncpu", k_uint, F(ncpu), 1, 4096, NULL},
    {"fairness", k_num, F(fairness), 1.0, 1e6, NULL},
    {"hold_margin", k_num, F(hold_margin), 0.0, 0.99, NULL},
    {"default_solo_s", k_num, F(default_solo_s), 1e-3, 1e7, NULL},
    {"exact_limit", k_num, F(exact_limit), 0.0, 1e12, NULL},
    {"start_s", k_num, F(start_s), 0.0, 60.0, NULL},
    {"seq_pairs", k_seq_pairs, F(seq_pairs_from_matrix), 0, 0, NULL},
    {"hold_on", k_hold_on, F(hold_on_matrix), 0, 0, NULL},
    {"open_ended_factor", k_num, F(open_ended_factor), 1.0, 1000.0, NULL},
    {"deadline_spread_s", k_num, F(deadline_spread_s), 0.0, 3600.0, NULL},
};
#undef F

static int parse_line(struct parse *p, struct batch_config *c, char *line, bool seen[NKEYS]) {
  char *key = NULL, *val = NULL;
  int r = iob_conf_split(line, 0, &key, &val);
  if (r == 0)
    return 0;
  if (r < 0)
    return perr(p, "expected 'key = value', got '%.60s'", key);
  if (*key == '\0')
    return perr(p, "missing key before '='");
  if (*val == '\0')
    return perr(p, "missing value for '%.60s'", key);
  unsigned k;
  if (strncmp(key, "matrix.", 7) == 0) {
    int cls = batch_class_from_name(key + 7);
    if (cls < 0)
      return perr(p, "unknown class in '%.60s'", key);
    k = (unsigned)cls;
  } else {
    int i = iob_conf_find(scalar_keys, IOB_ARRAY_SIZE(scalar_keys), key);
    if (i < 0)
      return perr(p, "unknown key '%.60s'", key);
    k = (unsigned)i + SEEN_ROWS;
  }
  if (seen[k])
    return perr(p, "duplicate key '%.60s'", key);
  seen[k] = true;
  if (k < SEEN_ROWS) {
    /* A row in a file is evidence (calibrated or the operator's word). */
    for (unsigned j = 0; j < BATCH_NCLASS; j++)
      c->known[k][j] = true;
    return parse_row(p, key, val, c->s[k]);
  }
  return iob_conf_set(&scalar_keys[k - SEEN_ROWS], val, c, p);
}

/* A calibrated matrix covers all measured classes; a partial one is almost
 * certainly a truncated or hand-edited file. */
static int check_rows(struct parse *p, const bool seen[NKEYS]) {
  unsigned given = 0;
  for (unsigned k = 0; k < BATCH_UNKNOWN; k++)
    given += seen[k];
  if (given == 0 || given == BATCH_UNKNOWN)
    return 0;
  for (unsigned k = 0; k < BATCH_UNKNOWN; k++)
    if (!seen[k])
      return iob_error_code(p->err, IOB_CODE_INVALID_ARGUMENT,
                            "'%s': matrix row 'matrix.%s' missing (give all "
                            "rows but 'unknown', or none)",
                            p->name, batch_class_name((enum batch_class)k));
  return 0;
}

#define ERRP(fmt, ...) iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, fmt, __VA_ARGS__)

int batch_config_parse(struct batch_config *cfg, const char *name, const char *buf, size_t len,
                       struct iob_error **err) {
  if (name == NULL)
    name = "(config)";
  if (len > BATCH_CONFIG_MAX_BYTES)
    return ERRP("config '%s' too large: %zu bytes (limit %d)", name, len, BATCH_CONFIG_MAX_BYTES);
  if (len > 0 && memchr(buf, '\0', len) != NULL)
    return ERRP("config '%s' contains a NUL byte", name);
  struct batch_config c = *cfg;
  struct parse p = {.name = name, .line = 0, .err = err, .cfg = &c};
  bool seen[NKEYS] = {false};
  char line[BATCH_CONFIG_MAX_LINE + 1];
  size_t pos = 0;
  while (pos < len) {
    const char *nl = memchr(buf + pos, '\n', len - pos);
    size_t ll = nl ? (size_t)(nl - (buf + pos)) : len - pos;
    p.line++;
    if (ll > BATCH_CONFIG_MAX_LINE)
      return ERRP("'%s' line %u: line too long (%zu bytes, limit %d)", name, p.line, ll,
                  BATCH_CONFIG_MAX_LINE);
    memcpy(line, buf + pos, ll);
    line[ll] = '\0';
    if (parse_line(&p, &c, line, seen) < 0)
      return -1;
    pos += ll + 1;
  }
  if (check_rows(&p, seen) < 0)
    return -1;
  *cfg = c;
  return 0;
}
