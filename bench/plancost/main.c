// SPDX-License-Identifier: Apache-2.0
/* The planner's cost per plan: batch_plan with R
 * running and N pending jobs of mixed classes, N = 10 ... 1000, under the
 * shipped defaults (no evidence: nothing is held) and with every pair
 * counted as evidence (hold_on = matrix: the forecasts run), CPU time per
 * plan, median of REPS runs.  Writes JSON and a Markdown table.
 *   plan-cost OUT.json OUT.md [RUNNING] [REPS] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "batcher/batcher.h"
#include "common/cleanup.h"

static double cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static uint64_t rs = 0x9e3779b97f4a7c15ull;
static unsigned rnd(unsigned n) {
  rs ^= rs << 13;
  rs ^= rs >> 7;
  rs ^= rs << 17;
  return (unsigned)(rs % n);
}

/* A node: R running (a third idle services, the rest jobs of the five I/O
 * classes with learned durations, some without), N pending jobs of the
 * I/O classes arriving over the last minute, max hold 300 s. */
static void fill(struct batch_job *j, size_t r, size_t n, double now) {
  for (size_t i = 0; i < r; i++) {
    bool idle = i % 3 == 0;
    j[i] = (struct batch_job){.cls = idle ? BATCH_IDLE : (enum batch_class)rnd(5),
                              .running = true,
                              .service = idle,
                              .arrival = now - 100 - rnd(1000),
                              .start = now - rnd(100),
                              .solo_s = rnd(4) ? 10 + rnd(300) : 0,
                              .deadline = HUGE_VAL};
  }
  for (size_t i = r; i < r + n; i++) {
    double arr = now - rnd(60000) / 1000.0;
    j[i] = (struct batch_job){.cls = (enum batch_class)rnd(5),
                              .arrival = arr,
                              .solo_s = rnd(5) ? 5 + rnd(120) : 0,
                              .deadline = arr + 300};
  }
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: plan-cost OUT.json OUT.md [RUNNING] [REPS]\n");
    return 2;
  }
  size_t running = argc > 3 ? (size_t)atoi(argv[3]) : 200;
  int reps = argc > 4 ? atoi(argv[4]) : 21;
  static const size_t ns[] = {10, 30, 100, 300, 1000};
  FILE *js = fopen(argv[1], "w"), *md = fopen(argv[2], "w");
  if (js == NULL || md == NULL) {
    perror("plan-cost: open output");
    return 1;
  }
  fprintf(js, "{\"running\": %zu, \"reps\": %d, \"rows\": [", running, reps);
  fprintf(md, "| pending | running | defaults: ms/plan (median) | max | every pair as evidence: "
              "ms/plan (median) | max | admitted (evidence) |\n|---|---|---|---|---|---|---|\n");
  for (size_t t = 0; t < sizeof(ns) / sizeof(ns[0]); t++) {
    size_t n = running + ns[t];
    struct batch_job *j = calloc(n, sizeof(*j));
    struct batch_decision *d = calloc(n, sizeof(*d));
    double med[2], mx[2];
    unsigned admitted = 0;
    for (int mode = 0; mode < 2; mode++) {
      struct batch_config c;
      batch_config_default(&c);
      c.hold_on_matrix = mode == 1;
      double *v = calloc((size_t)reps, sizeof(double));
      for (int r = 0; r < reps; r++) {
        fill(j, running, ns[t], 10000);
        cleanup_error struct iob_error *err = NULL;
        double wake, t0 = cpu_ms();
        if (batch_plan(&c, j, n, 10000, d, &wake, &err) < 0) {
          fprintf(stderr, "plan-cost: %s\n", err->msg);
          return 1;
        }
        v[r] = cpu_ms() - t0;
        if (mode == 1 && r == 0)
          for (size_t i = running; i < n; i++)
            admitted += d[i].admit;
      }
      qsort(v, (size_t)reps, sizeof(double), cmp_d);
      med[mode] = v[reps / 2];
      mx[mode] = v[reps - 1];
      free(v);
    }
    fprintf(js, "%s{\"pending\": %zu, \"defaults_ms\": %.4f, \"defaults_max_ms\": %.4f, "
                "\"evidence_ms\": %.4f, \"evidence_max_ms\": %.4f, \"admitted\": %u}",
            t ? ", " : "", ns[t], med[0], mx[0], med[1], mx[1], admitted);
    fprintf(md, "| %zu | %zu | %.3f | %.3f | %.3f | %.3f | %u |\n", ns[t], running, med[0], mx[0],
            med[1], mx[1], admitted);
    free(j);
    free(d);
  }
  fprintf(js, "]}\n");
  fclose(js);
  fclose(md);
  return 0;
}
