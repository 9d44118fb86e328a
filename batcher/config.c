/* Classes, defaults and the config-file parser of the batcher. */
#include "batcher/batcher.h"

#include "common/cleanup.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const class_names[BATCH_NCLASS] = {
    "seq-read", "rand-read", "seq-write", "rand-write", "mixed", "idle", "unknown",
};

const char *batch_class_name(enum batch_class c) {
  if ((unsigned)c >= BATCH_NCLASS)
    return "invalid";
  return class_names[c];
}

int batch_class_from_name(const char *name) {
  for (int i = 0; i < BATCH_NCLASS; i++)
    if (strcmp(name, class_names[i]) == 0)
      return i;
  return -1;
}

bool batch_class_does_io(enum batch_class c) {
  return c == BATCH_SEQ_READ || c == BATCH_RAND_READ || c == BATCH_SEQ_WRITE ||
         c == BATCH_RAND_WRITE || c == BATCH_MIXED;
}

bool batch_class_is_seq(enum batch_class c) {
  return c == BATCH_SEQ_READ || c == BATCH_SEQ_WRITE;
}

const char *batch_policy_name(enum batch_policy p) {
  switch (p) {
  case BATCH_POLICY_PREDICTIVE:
    return "predictive";
  case BATCH_POLICY_PAPER:
    return "paper";
  }
  return "invalid";
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

static char *trim(char *s) {
  while (*s == ' ' || *s == '\t')
    s++;
  char *e = s + strlen(s);
  while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
    *--e = '\0';
  return s;
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

static const char *const scalar_keys[] = {
    "alpha", "max_batch", "policy",      "slowdown_scale", "seq_slowdown",
    "ncpu",  "fairness",  "hold_margin", "default_solo_s", "exact_limit",
    "start_s", "seq_pairs", "hold_on", "open_ended_factor", "deadline_spread_s",
};

static int set_scalar(struct parse *p, struct batch_config *c, unsigned k, const char *key,
                      const char *val) {
  switch (k) {
  case 0:
    return parse_num(p, key, val, 0.0, 1.0, &c->alpha);
  case 1:
    c->cap_running = true; /* an explicit cap is the operator's evidence */
    return parse_uint(p, key, val, 1, BATCH_MAX_BATCH, &c->max_batch);
  case 2:
    if (strcmp(val, "predictive") == 0)
      c->policy = BATCH_POLICY_PREDICTIVE;
    else if (strcmp(val, "paper") == 0)
      c->policy = BATCH_POLICY_PAPER;
    else
      return perr(p, "unknown policy '%s' (want 'predictive' or 'paper')", val);
    return 0;
  case 3:
    return parse_num(p, key, val, 0.0, 100.0, &c->slowdown_scale);
  case 4:
    return parse_num(p, key, val, 1.0, 100.0, &c->seq_slowdown);
  case 5:
    return parse_uint(p, key, val, 1, 4096, &c->ncpu);
  case 6:
    return parse_num(p, key, val, 1.0, 1e6, &c->fairness);
  case 7:
    return parse_num(p, key, val, 0.0, 0.99, &c->hold_margin);
  case 8:
    return parse_num(p, key, val, 1e-3, 1e7, &c->default_solo_s);
  case 9:
    return parse_num(p, key, val, 0.0, 1e12, &c->exact_limit);
  case 10:
    return parse_num(p, key, val, 0.0, 60.0, &c->start_s);
  case 11:
    if (strcmp(val, "matrix") == 0)
      c->seq_pairs_from_matrix = true;
    else if (strcmp(val, "seq_slowdown") == 0)
      c->seq_pairs_from_matrix = false;
    else
      return perr(p, "unknown seq_pairs '%.60s' (want 'seq_slowdown' or 'matrix')", val);
    return 0;
  case 12:
    if (strcmp(val, "matrix") == 0)
      c->hold_on_matrix = true;
    else if (strcmp(val, "evidence") == 0)
      c->hold_on_matrix = false;
    else
      return perr(p, "unknown hold_on '%.60s' (want 'evidence' or 'matrix')", val);
    return 0;
  case 13:
    return parse_num(p, key, val, 1.0, 1000.0, &c->open_ended_factor);
  case 14:
    return parse_num(p, key, val, 0.0, 3600.0, &c->deadline_spread_s);
  }
  return perr(p, "unknown key '%s'", key);
}

static int parse_line(struct parse *p, struct batch_config *c, char *line, bool seen[NKEYS]) {
  char *hash = strchr(line, '#');
  if (hash)
    *hash = '\0';
  char *s = trim(line);
  if (*s == '\0')
    return 0;
  char *eq = strchr(s, '=');
  if (eq == NULL)
    return perr(p, "expected 'key = value', got '%.60s'", s);
  *eq = '\0';
  char *key = trim(s), *val = trim(eq + 1);
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
    for (k = 0; k < (unsigned)IOB_ARRAY_SIZE(scalar_keys); k++)
      if (strcmp(key, scalar_keys[k]) == 0)
        break;
    if (k == (unsigned)IOB_ARRAY_SIZE(scalar_keys))
      return perr(p, "unknown key '%.60s'", key);
    k += SEEN_ROWS;
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
  return set_scalar(p, c, k - SEEN_ROWS, key, val);
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
                            p->name, class_names[k]);
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
  struct parse p = {.name = name, .line = 0, .err = err};
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
