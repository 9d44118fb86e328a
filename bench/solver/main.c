// SPDX-License-Identifier: Apache-2.0
/* batch-bench: the batcher's solvers measured.
 *
 *   batch-bench JSON_OUT MD_OUT [--quick]
 *
 * 1. N = 6..12: exact and heuristic vs a brute-force enumeration of all
 *    partitions (time to optimal, optimality gap).
 * 2. N = 25 (the paper: 5 applications x 5 containers), 100, 1000.
 * 3. The exact/heuristic boundary: exact time against the solver's work
 *    estimate on growing instances, and the heuristic's gap there; the
 *    recommended exact_limit is the work the exact solver does in BUDGET_S.
 * 4. batch_plan latency for 10..200 jobs under both policies.
 * Times are medians over repeated runs (the machines are noisy).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "batcher/batcher.h"
#include "common/cleanup.h"

/* The agent plans on every event on a 2-core node: an exact plan may take
 * at most this long before the heuristic is used instead. */
#define BUDGET_S 0.05

static bool quick;

/* CPU time of this thread: other work on these shared 2-core machines
 * make wall time swing 2x between runs; the solver is single-threaded and
 * does no I/O, so its CPU time is its cost. */
static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t rng = 0x2545f4914f6cdd1dull;
static unsigned rndu(unsigned n) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (unsigned)(rng % n);
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, size_t n) {
  if (n == 0)
    return NAN;
  qsort(v, n, sizeof(double), cmp_d);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void die(struct iob_error **err) {
  iob_error_print("batch-bench", err);
  exit(1);
}

/* Solve `reps` times; median seconds, the (deterministic) solution kept. */
static double timed_solve(const struct batch_config *c, const enum batch_class *cls, size_t n,
                          enum batch_method m, unsigned reps, struct batch_solution *out) {
  double t[64];
  if (reps > 64)
    reps = 64;
  for (unsigned r = 0; r < reps; r++) {
    struct iob_error *err = NULL;
    struct batch_solution s;
    double t0 = now_s();
    if (batch_solve(c, cls, n, m, &s, &err) < 0)
      die(&err);
    t[r] = now_s() - t0;
    if (r + 1 == reps)
      *out = s;
    else
      batch_solution_free(&s);
  }
  return median(t, reps);
}

/* ---- brute force (all set partitions, batches <= L) ---- */

struct bf {
  const struct batch_config *c;
  const enum batch_class *cls;
  size_t n;
  unsigned rgs[16], size[16];
  double best;
};

static void bf_rec(struct bf *b, size_t i, unsigned used) {
  if (i == b->n) {
    double o;
    struct iob_error *err = NULL;
    if (batch_evaluate(b->c, b->cls, b->n, b->rgs, &o, NULL, NULL, &err) < 0)
      die(&err);
    if (o < b->best)
      b->best = o;
    return;
  }
  for (unsigned k = 0; k <= used && k < b->n; k++) {
    if (b->size[k] >= b->c->max_batch)
      continue;
    b->rgs[i] = k;
    b->size[k]++;
    bf_rec(b, i + 1, k == used ? used + 1 : used);
    b->size[k]--;
  }
}

static double brute_force(const struct batch_config *c, const enum batch_class *cls, size_t n,
                          double *secs) {
  struct bf b = {.c = c, .cls = cls, .n = n, .best = HUGE_VAL};
  double t0 = now_s();
  bf_rec(&b, 0, 0);
  *secs = now_s() - t0;
  return b.best;
}

static void random_classes(enum batch_class *cls, size_t n, unsigned ncls) {
  for (size_t i = 0; i < n; i++)
    cls[i] = rndu(ncls);
}

/* ---- 1. small N vs brute force ---- */

static json_t *bench_small(const struct batch_config *c, FILE *md) {
  json_t *arr = json_array();
  fprintf(md,
          "### Small N: exact and heuristic vs brute force\n\n"
          "Random instances, 7 classes, default matrix, L = %u, alpha = "
          "%.2g. Times are medians over instances (each the median of "
          "repeated runs); gaps are in objective units.\n\n",
          c->max_batch, c->alpha);
  fprintf(md, "| N | instances | brute force | exact | heuristic | exact gap "
              "(max) | heuristic gap (mean / max) | heuristic optimal |\n"
              "|---|---|---|---|---|---|---|---|\n");
  for (size_t n = 6; n <= 12; n++) {
    unsigned inst = n <= 9 ? 20 : n <= 11 ? 6 : 3;
    if (quick)
      inst = n <= 10 ? 3 : 1;
    double tb[32], te[32], th[32], egap = 0, hsum = 0, hmax = 0;
    unsigned hopt = 0;
    for (unsigned k = 0; k < inst; k++) {
      enum batch_class cls[16];
      random_classes(cls, n, BATCH_NCLASS);
      double opt = brute_force(c, cls, n, &tb[k]);
      struct batch_solution e, h;
      te[k] = timed_solve(c, cls, n, BATCH_SOLVE_EXACT, 11, &e);
      th[k] = timed_solve(c, cls, n, BATCH_SOLVE_HEURISTIC, 11, &h);
      double ge = fabs(e.objective - opt), gh = h.objective - opt;
      if (ge > egap)
        egap = ge;
      hsum += gh;
      if (gh > hmax)
        hmax = gh;
      hopt += gh < 1e-9;
      batch_solution_free(&e);
      batch_solution_free(&h);
    }
    double mb = median(tb, inst), me = median(te, inst), mh = median(th, inst);
    fprintf(md,
            "| %zu | %u | %.3g ms | %.3g ms | %.3g ms | %.2g | %.4f / %.4f | "
            "%u/%u |\n",
            n, inst, mb * 1e3, me * 1e3, mh * 1e3, egap, hsum / inst, hmax, hopt, inst);
    json_array_append_new(arr, json_pack("{s:i, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:i}", "n",
                                         (int)n, "instances", (int)inst, "brute_force_s", mb,
                                         "exact_s", me, "heuristic_s", mh, "exact_gap_max", egap,
                                         "heuristic_gap_mean", hsum / inst, "heuristic_gap_max",
                                         hmax, "heuristic_optimal", (int)hopt));
    fflush(md);
  }
  fprintf(md, "\n");
  return arr;
}

/* ---- 2. N = 25, 100, 1000 ---- */

static json_t *one_large(const struct batch_config *c, const char *name,
                         const enum batch_class *cls, size_t n, FILE *md) {
  struct batch_solution h, e = {0};
  unsigned reps = n >= 1000 ? (quick ? 1 : 5) : (quick ? 3 : 11);
  double th = timed_solve(c, cls, n, BATCH_SOLVE_HEURISTIC, reps, &h);
  double work = batch_solve_work(c, cls, n);
  double te = NAN;
  bool have_exact = work <= 5e9 && isfinite(work);
  if (have_exact)
    te = timed_solve(c, cls, n, BATCH_SOLVE_EXACT, reps, &e);
  char ex[96] = "not attempted (work over limit)";
  if (have_exact)
    snprintf(ex, sizeof(ex), "%.3g ms, %.4f (%u batches)", te * 1e3, e.objective, e.nz);
  fprintf(md, "| %s | %zu | %.3g | %s | %.3g ms, %.4f (%u batches) | %s |\n", name, n, work, ex,
          th * 1e3, h.objective, h.nz,
          have_exact ? (h.objective - e.objective < 1e-9 ? "0" : "> 0") : "-");
  json_t *o = json_pack("{s:s, s:i, s:f, s:f, s:f, s:i}", "instance", name, "n", (int)n, "work",
                        isfinite(work) ? work : -1, "heuristic_s", th, "heuristic_objective",
                        h.objective, "heuristic_batches", (int)h.nz);
  if (have_exact) {
    json_object_set_new(o, "exact_s", json_real(te));
    json_object_set_new(o, "exact_objective", json_real(e.objective));
    json_object_set_new(o, "exact_batches", json_integer(e.nz));
    json_object_set_new(o, "heuristic_gap", json_real(h.objective - e.objective));
  }
  batch_solution_free(&h);
  batch_solution_free(&e);
  return o;
}

static json_t *bench_large(const struct batch_config *c0, FILE *md) {
  json_t *arr = json_array();
  fprintf(md, "### Large N\n\n"
              "`work` is the exact solver's estimate (count-vector states x "
              "batch candidates); the exact solver is run where that is "
              "feasible at all.\n\n"
              "| instance | N | work | exact: time, objective | heuristic: "
              "time, objective | heuristic gap |\n|---|---|---|---|---|---|\n");
  struct batch_config c = *c0;
  c.max_batch = 5;
  enum batch_class *cls = malloc(1000 * sizeof(*cls));
  if (cls == NULL)
    abort();
  const enum batch_class apps[5] = {BATCH_SEQ_READ, BATCH_RAND_READ, BATCH_SEQ_WRITE,
                                    BATCH_RAND_WRITE, BATCH_MIXED};
  for (int i = 0; i < 25; i++)
    cls[i] = apps[i / 5];
  json_array_append_new(arr, one_large(&c, "paper: 5 apps x 5 containers, L=5", cls, 25, md));
  random_classes(cls, 25, BATCH_NCLASS);
  json_array_append_new(arr, one_large(c0, "random, 7 classes, L=4", cls, 25, md));
  random_classes(cls, 100, 3);
  json_array_append_new(arr, one_large(c0, "random, 3 classes, L=4", cls, 100, md));
  random_classes(cls, 100, BATCH_NCLASS);
  json_array_append_new(arr, one_large(c0, "random, 7 classes, L=4", cls, 100, md));
  random_classes(cls, 1000, BATCH_NCLASS);
  json_array_append_new(arr, one_large(c0, "random, 7 classes, L=4", cls, 1000, md));
  fprintf(md, "\n");
  free(cls);
  return arr;
}

/* ---- 3. boundary ---- */

static json_t *bench_boundary(const struct batch_config *c, FILE *md, double *limit) {
  json_t *arr = json_array();
  fprintf(md,
          "### Exact vs heuristic at the boundary\n\n"
          "Random instances over 7 classes, L = %u, growing N; the exact "
          "solver's time against its work estimate.\n\n"
          "| N | work (median) | exact (median) | ns / work unit | "
          "heuristic (median) | heuristic gap (mean / max) |\n"
          "|---|---|---|---|---|---|\n",
          c->max_batch);
  double per_unit[64];
  size_t npu = 0;
  for (size_t n = 14; n <= 42; n += 4) {
    unsigned inst = quick ? 2 : 5;
    double tw[8], te[8], th[8], gsum = 0, gmax = 0;
    unsigned done = 0;
    for (unsigned k = 0; k < inst; k++) {
      enum batch_class cls[64];
      random_classes(cls, n, BATCH_NCLASS);
      double w = batch_solve_work(c, cls, n);
      if (!isfinite(w) || w > 3e9)
        continue;
      struct batch_solution e, h;
      unsigned reps = w < 1e7 ? 5 : 1;
      te[done] = timed_solve(c, cls, n, BATCH_SOLVE_EXACT, reps, &e);
      th[done] = timed_solve(c, cls, n, BATCH_SOLVE_HEURISTIC, 5, &h);
      tw[done] = w;
      if (npu < 64)
        per_unit[npu++] = te[done] / w;
      double g = h.objective - e.objective;
      gsum += g;
      if (g > gmax)
        gmax = g;
      done++;
      batch_solution_free(&e);
      batch_solution_free(&h);
    }
    if (done == 0)
      break;
    double mw = median(tw, done), me = median(te, done), mh = median(th, done);
    fprintf(md, "| %zu | %.3g | %.3g ms | %.2f | %.3g ms | %.4f / %.4f |\n", n, mw, me * 1e3,
            me / mw * 1e9, mh * 1e3, gsum / done, gmax);
    json_array_append_new(arr, json_pack("{s:i, s:f, s:f, s:f, s:f, s:f}", "n", (int)n, "work", mw,
                                         "exact_s", me, "heuristic_s", mh, "heuristic_gap_mean",
                                         gsum / done, "heuristic_gap_max", gmax));
    fflush(md);
    if (me > 4 * BUDGET_S)
      break; /* well past the boundary */
  }
  double spu = median(per_unit, npu);
  /* two significant digits: a limit, not a measurement */
  double raw = BUDGET_S / spu;
  double mag = pow(10, floor(log10(raw)) - 1);
  *limit = floor(raw / mag) * mag;
  fprintf(md,
          "\nMedian exact cost %.2f ns per work unit, so a %.0f ms budget "
          "allows **exact_limit = %.2g** work units; above it the heuristic "
          "runs.\n\n",
          spu * 1e9, BUDGET_S * 1e3, *limit);
  return arr;
}

/* ---- 4. online planner latency ---- */

/* A node with 2 running jobs and n-2 pending ones of random classes.  Since
 * the fairness bound is judged on the forecast (not before it), every
 * pending job with capacity left is forecast with or without it; the
 * column without it is kept for comparison with older results. */
static json_t *bench_plan(const struct batch_config *c0, FILE *md) {
  json_t *arr = json_array();
  fprintf(md,
          "### Online planner latency (batch_plan)\n\n"
          "2 running and N-2 pending jobs of random classes, L = %u; "
          "median of repeated calls.\n\n"
          "| N | predictive | predictive, no fairness bound | paper |\n"
          "|---|---|---|---|\n",
          c0->max_batch);
  static const size_t ns[] = {10, 25, 50, 100, 200};
  for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
    size_t n = ns[k];
    struct batch_job *j = calloc(n, sizeof(*j));
    struct batch_decision *d = calloc(n, sizeof(*d));
    if (j == NULL || d == NULL)
      abort();
    for (size_t i = 0; i < n; i++)
      j[i] = (struct batch_job){.cls = rndu(BATCH_NCLASS),
                                .running = i < 2,
                                .arrival = (double)i,
                                .start = 0,
                                .solo_s = 10 + rndu(100),
                                .deadline = 1000 + (double)i,
                                .cpu_heavy = rndu(4) == 0};
    double med[3];
    for (int v = 0; v < 3; v++) {
      struct batch_config c = *c0;
      c.policy = v == 2 ? BATCH_POLICY_PAPER : BATCH_POLICY_PREDICTIVE;
      if (v == 1)
        c.fairness = 1e6;
      double t[15];
      unsigned reps = quick ? 3 : 15;
      for (unsigned r = 0; r < reps; r++) {
        struct iob_error *err = NULL;
        double t0 = now_s();
        if (batch_plan(&c, j, n, 50, d, NULL, &err) < 0)
          die(&err);
        t[r] = now_s() - t0;
      }
      med[v] = median(t, reps);
    }
    fprintf(md, "| %zu | %.3g ms | %.3g ms | %.3g ms |\n", n, med[0] * 1e3, med[1] * 1e3,
            med[2] * 1e3);
    json_array_append_new(arr, json_pack("{s:i, s:f, s:f, s:f}", "n", (int)n, "predictive_s",
                                         med[0], "predictive_unfair_s", med[1], "paper_s", med[2]));
    free(j);
    free(d);
  }
  fprintf(md, "\n");
  return arr;
}

static void machine(json_t *root, FILE *md) {
  char model[256] = "unknown";
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    char line[512];
    while (fgets(line, sizeof(line), f))
      if (strncmp(line, "model name", 10) == 0) {
        char *p = strchr(line, ':');
        if (p) {
          snprintf(model, sizeof(model), "%s", p + 2);
          model[strcspn(model, "\n")] = '\0';
        }
        break;
      }
    fclose(f);
  }
  time_t t = time(NULL);
  char date[64];
  strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&t));
  json_object_set_new(root, "date", json_string(date));
  json_object_set_new(root, "cpu", json_string(model));
  json_object_set_new(root, "command", json_string("bench/solver.sh"));
  fprintf(md,
          "## Solver benchmark\n\n%s, %s, `bench/solver.sh`%s. Times are CPU time of the "
          "solving thread (single-threaded, no I/O), medians.\n\n",
          date, model, quick ? " (--quick)" : "");
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: batch-bench JSON_OUT MD_OUT [--quick]\n");
    return 2;
  }
  quick = argc > 3 && strcmp(argv[3], "--quick") == 0;
  FILE *md = fopen(argv[2], "w");
  if (md == NULL) {
    perror(argv[2]);
    return 1;
  }
  struct batch_config c;
  batch_config_default(&c);
  json_t *root = json_object();
  machine(root, md);
  json_object_set_new(root, "max_batch", json_integer(c.max_batch));
  json_object_set_new(root, "alpha", json_real(c.alpha));
  json_object_set_new(root, "small", bench_small(&c, md));
  json_object_set_new(root, "large", bench_large(&c, md));
  double limit = 0;
  json_object_set_new(root, "boundary", bench_boundary(&c, md, &limit));
  json_object_set_new(root, "plan", bench_plan(&c, md));
  json_object_set_new(root, "budget_s", json_real(BUDGET_S));
  json_object_set_new(root, "recommended_exact_limit", json_real(limit));
  json_object_set_new(root, "configured_exact_limit", json_real(c.exact_limit));
  fprintf(md, "Configured default `exact_limit`: %.2g.\n", c.exact_limit);
  fclose(md);
  if (json_dump_file(root, argv[1], JSON_INDENT(2)) < 0) {
    fprintf(stderr, "batch-bench: cannot write '%s'\n", argv[1]);
    return 1;
  }
  json_decref(root);
  return 0;
}
