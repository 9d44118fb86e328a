// SPDX-License-Identifier: Apache-2.0
/* libbatch — the penalty-aware batcher of iobatch (docs/DESIGN.md, "Batching").
 *
 * No I/O at all: the agent (iobatchd) reads files, samples cgroups and talks
 * ttrpc; this library only decides.  Everything here is deterministic and
 * fast enough to call on every event (arrival, exit, reclassification,
 * deadline timer).
 *
 * How the agent uses it
 * ---------------------
 *   struct batch_config cfg;
 *   batch_config_default(&cfg);
 *   batch_config_parse(&cfg, "/etc/iobatch/batcher.conf", buf, len, &err);
 *       (the agent reads the file; on SIGHUP it parses into a copy and keeps
 *       the old config when parsing fails — parse never half-applies)
 *
 *   on every change:
 *     fill struct batch_job jobs[n]   (running and pending containers)
 *     batch_plan(&cfg, jobs, n, now, decisions, &wake_at, &err);
 *       decisions[i].admit for each pending job: start it now;
 *       decisions[i].reason / .conflict: what `iobatchctl status` shows;
 *       wake_at: call batch_plan again by then (earliest deadline of a held
 *       job) even if nothing else happens.
 *     mark admitted jobs running, then
 *     batch_weights(&cfg, jobs, n, weights, &err) and write io.weight for
 *       every running job.
 *
 *   `iobatchctl plan FILE` (offline):
 *     batch_solve(&cfg, classes, n, BATCH_SOLVE_AUTO, &sol, &err);
 *
 * Errors follow common/error.h: return < 0 and fill *err.
 */
#ifndef IOB_BATCHER_H
#define IOB_BATCHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "batcher/class.h"
#include "common/error.h"

enum batch_policy {
  BATCH_POLICY_PREDICTIVE = 0, /* default: hold only when it pays */
  BATCH_POLICY_PAPER,          /* the paper's batch objective */
};
/* "predictive", "paper"; "invalid" otherwise. */
const char *batch_policy_name(enum batch_policy p);
/* The policy for a name (the `policy` key of the batcher's config and of
 * iobatchd.conf), or -1. */
int batch_policy_from_name(const char *name);

/* Limits on outside input (docs/STYLE.md: checked before anything is used). */
#define BATCH_CONFIG_MAX_BYTES (64 * 1024)
#define BATCH_CONFIG_MAX_LINE 1024
#define BATCH_PENALTY_MAX 100.0
#define BATCH_MAX_BATCH 1024

struct batch_config {
  /* s[i][j]: penalty job class i suffers from a neighbour of class j
   * (0 = good neighbours, higher = worse; the paper's scale, defaults in
   * batcher/config.c with the reasons).  Not necessarily symmetric: a random
   * writer suffers from a sequential writer far more than the reverse.  A
   * pair in one batch costs s[i][j] + s[j][i] in the objective. */
  double s[BATCH_NCLASS][BATCH_NCLASS];
  double alpha;       /* weight of Tp in the objective, [0,1]; 0.5 */
  unsigned max_batch; /* L: max jobs per batch / concurrently running; 4 */
  enum batch_policy policy;
  /* Predictive model: a job's slowdown (rate while it runs) beside the
   * neighbours N doing I/O is
   *   1 + slowdown_scale * sum_{j in N, not both sequential} s[i][j]
   *     + (seq_slowdown - 1) * #(other sequential streams, if i is one)
   * (with seq_pairs_from_matrix the sequential pairs take
   * slowdown_scale * s[i][j] from the matrix like any other pair: a
   * calibrated matrix has measured them) and for a CPU-heavy job at least
   * (#CPU-heavy jobs) / ncpu. */
  double slowdown_scale;      /* 2 */
  double seq_slowdown;        /* 2: two sequential streams each run 2x slower */
  bool seq_pairs_from_matrix; /* `seq_pairs = matrix`; false (seq_slowdown) */
  unsigned ncpu;              /* 2 */
  /* Fairness bound on a job's predicted *stretch*: (its age + its forecast
   * completion) / its solo duration, i.e. the slowdown of its turnaround.
   * A job is held for fairness when admitting it now stretches a victim
   * (itself, or a running job it slows) beyond this and holding it keeps
   * every job within it (a bound holding cannot meet is left to the
   * makespan forecast).  Not the instantaneous rate
   * slowdown: a random writer that a short sequential writer slows 50x
   * while it runs is only stretched by the writer's few seconds.  4 */
  double fairness;
  double hold_margin; /* hold only when predicted makespan improves by
                         more than this fraction; 0.02 */
  /* Seconds between an admission and the job's first I/O (the shim starts
   * the container, the process starts).  A job started next to others
   * hides it; a held job started after a completion leaves the disk to the
   * rest meanwhile, so holding pays this once more.  0.25 */
  double start_s;
  double default_solo_s; /* the paper policy's and the CLI's solo duration for
                            unknown workloads; the predictive policy treats
                            a job without an estimate as open-ended; 60 */
  /* Evidence.  known[i][j]: s[i][j] comes from a matrix file or was
   * measured (the agent fills measured pairs in before each plan);
   * measured[i][j]: measured online, so it also replaces seq_slowdown for
   * sequential pairs.  The predictive policy holds only on evidence: pairs
   * not known cost nothing in its forecasts (first, do no harm); weights
   * and the paper policy use the whole matrix.  hold_on_matrix (`hold_on =
   * matrix`) treats every pair as known (the behaviour before evidence). */
  bool known[BATCH_NCLASS][BATCH_NCLASS];
  bool measured[BATCH_NCLASS][BATCH_NCLASS];
  bool hold_on_matrix;
  /* max_batch caps the I/O jobs running under the predictive policy only
   * when given explicitly (`max_batch` in a file, the agent's
   * max_concurrency); by default nothing is held for capacity. */
  bool cap_running;
  double open_ended_factor; /* a running job past this x its learned solo
                               duration is open-ended; 3 */
  double deadline_spread_s; /* jobs forced in at max_hold start at least
                               this far apart (earlier, never later); 1 */
  /* Exact solver budget in work units (count-vector states x batch
   * candidates, see batch_solve_work); above it the heuristic runs.
   * Default 1e7 (~50 ms), chosen by bench/solver.sh. */
  double exact_limit;
};

/* The built-in defaults (documented in batcher/config.c). */
void batch_config_default(struct batch_config *cfg);

/* Parse a config file's contents (name is used in error messages only).
 * Format, one setting per line, '#' starts a comment:
 *   alpha = 0.5
 *   max_batch = 4
 *   policy = predictive | paper
 *   slowdown_scale = 2      seq_slowdown = 2      ncpu = 2
 *   seq_pairs = seq_slowdown | matrix
 *   fairness = 4            hold_margin = 0.02    default_solo_s = 60
 *   start_s = 0.25          exact_limit = 1e7
 *   hold_on = evidence | matrix          open_ended_factor = 3
 *   deadline_spread_s = 1
 *   matrix.seq-read = 1 0 1 0 1 0 1     (7 numbers, the enum order)
 *   ... one matrix.<class> row per class
 * Rows not given keep the defaults, except that the six measured classes
 * come as a set: giving some of their rows but not all is an error (a
 * calibrated matrix with a missing row is a mistake, not a wish);
 * matrix.unknown may be given alone.  Values are checked (finite, in range);
 * errors name the file and line: "'f.conf' line 3: ...".  On error *cfg is
 * untouched. */
int batch_config_parse(struct batch_config *cfg, const char *name, const char *buf, size_t len,
                       struct iob_error **err);

/* ---- Offline: the paper's problem ---------------------------------------
 * Partition N jobs into batches of at most L minimising
 *   alpha * Tp/Tp_max + (1-alpha) * (Nz - Nz_min)/(N - Nz_min)
 * Tp: sum over batches of the pair costs s[a][b]+s[b][a] of jobs in it.
 * Nz_min = ceil(N/L).
 * Tp_max: an upper bound on Tp over every partition with batches of at most
 *   L: each job has at most L-1 neighbours, so Tp <= 1/2 * sum over jobs of
 *   its L-1 largest pair costs.  Tight when all jobs share a class; unlike
 *   "all pairs" it does not shrink the Tp term as N/L grows.
 * A term whose denominator is 0 (Tp_max == 0, or N == Nz_min) is 0.
 * Ties are broken by fewer batches, then lower Tp: with N = 2 and alpha = 0.5
 * both partitions always tie (the normalisation makes any penalty maximal),
 * and a tie is no reason to hold a job. */
enum batch_method {
  BATCH_SOLVE_AUTO = 0,  /* exact within cfg->exact_limit, else heuristic */
  BATCH_SOLVE_EXACT,     /* exact, or an error beyond BATCH_EXACT_MAX_STATES */
  BATCH_SOLVE_HEURISTIC, /* greedy + local search */
};

/* The exact solver refuses more count-vector states than this (memory). */
#define BATCH_EXACT_MAX_STATES (4u * 1024 * 1024)

struct batch_solution {
  size_t n;
  unsigned *batch_of; /* job -> batch 0..nz-1; batches ordered by their
                         first job */
  unsigned nz;
  double tp, tp_max, objective;
  bool optimal; /* proven optimal (exact solver) */
  enum batch_method method;
};

int batch_solve(const struct batch_config *cfg, const enum batch_class *cls, size_t n,
                enum batch_method method, struct batch_solution *sol, struct iob_error **err);
void batch_solution_free(struct batch_solution *sol);

/* The objective of any assignment (for tests, the CLI, and the heuristic's
 * callers).  Returns < 0 if batch_of is not a valid partition with batches
 * of at most L (empty batch indices are allowed and not counted). */
int batch_evaluate(const struct batch_config *cfg, const enum batch_class *cls, size_t n,
                   const unsigned *batch_of, double *objective, double *tp, unsigned *nz,
                   struct iob_error **err);

/* Work estimate of the exact solver for this instance (compare with
 * cfg->exact_limit); HUGE_VAL when it exceeds BATCH_EXACT_MAX_STATES. */
double batch_solve_work(const struct batch_config *cfg, const enum batch_class *cls, size_t n);

/* ---- Online ------------------------------------------------------------- */
struct batch_job {
  uint64_t id; /* the agent's handle; not used here */
  enum batch_class cls;
  bool running;        /* admitted and running (pinned to current batch) */
  bool service;        /* open-ended by nature (declared service, or ran far
                          past its learned duration): never finishes in a
                          forecast, takes no batch slot, never held; its
                          I/O still slows its neighbours */
  bool cpu_heavy;      /* saturates a core (learned or declared) */
  double arrival;      /* seconds on the agent's monotonic clock */
  double start;        /* running: when it started */
  double deadline;     /* pending: absolute time it must be admitted by
                          (arrival + max hold); never exceeded */
  double solo_s;       /* predicted solo duration, 0 = unknown: then the job
                          is open-ended (no estimate is not "finishes
                          soon") */
  double remaining_s;  /* running: predicted solo-seconds left from its
                          progress (bytes done against learned bytes), 0 =
                          estimate as solo_s - (now - start) */
  double solo_bps;     /* learned solo throughput, 0 = unknown */
  double observed_bps; /* current throughput, 0 = unknown (weights) */
};

enum batch_reason {
  BATCH_RUNNING = 0,    /* already running */
  BATCH_ADMIT_IDLE,     /* nothing was running */
  BATCH_ADMIT_FREE,     /* no conflict with what runs */
  BATCH_ADMIT_PAYS,     /* conflicts, but admitting finishes the set sooner */
  BATCH_ADMIT_PLAN,     /* paper: the plan puts it in the current batch */
  BATCH_ADMIT_DEADLINE, /* its max hold is over; forced in (maybe over L) */
  BATCH_HOLD_FULL,      /* max_batch jobs already run */
  BATCH_HOLD_MAKESPAN,  /* holding finishes the set sooner */
  BATCH_HOLD_FAIRNESS,  /* a victim's forecast stretch would exceed cfg->fairness */
  BATCH_HOLD_PLAN,      /* paper: the plan puts it in a later batch */
  BATCH_ADMIT_PROBE,    /* unknown class: admitted to be measured */
  BATCH_ADMIT_SERVICE,  /* a service: never held */
  BATCH_ADMIT_NOEST,    /* no estimate of its work: holding cannot be shown to pay */
  BATCH_ADMIT_WAITED,   /* its own wait reached the fairness bound */
  BATCH_HOLD_BEHIND,    /* an older held job it conflicts with goes first */
  BATCH_HOLD_NEXT,      /* past this plan's forecast budget: the next plan decides */
  BATCH_ADMIT_CROWD,    /* too many jobs doing I/O to forecast */
  BATCH_HOLD_PROTECT,   /* the agent: a latency-sensitive container is short of its target */
  BATCH_ADMIT_MEASURE,  /* the agent: runs alone so that its workload's solo rate is measured */
  BATCH_HOLD_MEASURE,   /* the agent: a container runs alone to be measured */
  BATCH_HOLD_STARVE,    /* a forecast tie, and one of a measured pair would starve */
  BATCH_NREASON
};
const char *batch_reason_name(enum batch_reason r);

struct batch_decision {
  bool admit;
  enum batch_reason reason;
  /* The running (or just admitted) job it conflicts with most (largest pair
   * cost), -1 if none: the "reason" for status. */
  long conflict;
  /* Of this job and `conflict`, the one predicted to suffer more: protect it
   * with io.weight when admitted anyway.  -1 if no conflict. */
  long victim;
  double makespan_admit, makespan_hold; /* predictive: the two forecasts
                                           (seconds from now); 0 otherwise */
  double stretch_admit, stretch_hold;   /* predictive: the worst predicted
                                           stretch of a victim if admitted,
                                           of any job if held */
};

/* Decide for every pending job whether to start it now.  decisions has n
 * entries (running jobs get admit=true, BATCH_RUNNING).  Pending jobs are
 * considered oldest first (arrival, then index), so FIFO age breaks ties and
 * a job held for capacity is first in line.  A job at or past its deadline
 * is always admitted, even beyond max_batch; that deadline is also what
 * guarantees no starvation, so the agent should always set one (HUGE_VAL
 * means no max hold, and a job held for fairness could then wait forever
 * behind a steady stream of its aggressors).  *wake_at (may be NULL) is set
 * to the earliest deadline of a held job, or HUGE_VAL.
 *
 * predictive (default), per pending job, oldest first: past its max hold ->
 * admit; first, the jobs whose own wait reached the fairness bound start
 * (whatever the capacity) unless the forecasts below show that holding
 * finishes the set earlier by more than hold_margin, and starting now is
 * not what keeps the job's own stretch within the bound, or unless the
 * forecasts tie, it would end no sooner started, and a measured pair of it
 * and a running job slows one of them fairness-fold (BATCH_HOLD_STARVE,
 * below); then: nothing
 * runs -> admit; max_batch reached -> hold;
 * nobody's predicted slowdown changes -> admit; else two event-driven
 * forecasts of the whole set (admit now vs hold until the next completion;
 * every start pays start_s before its first I/O; queued jobs start when
 * that does not lower the aggregate progress rate of the jobs started,
 * those still paying their start cost included, or at their max hold),
 * and hold only if holding finishes the set earlier by more than
 * hold_margin (BATCH_HOLD_MAKESPAN), or if admitting gives a victim
 * (the job itself or a running one it slows) a predicted stretch above
 * cfg->fairness and holding keeps every job's within it (and lower by more
 * than hold_margin: BATCH_HOLD_FAIRNESS), or if holding costs the set at
 * most hold_margin and a measured pair of it and a running job slows one
 * of the two fairness-fold or more (BATCH_HOLD_STARVE: a victim that all
 * but stops beside its aggressor makes the two forecasts a tie).
 * paper: the offline objective over running + pending with the running and
 * due jobs pinned to the current batch (or, when there are none, the oldest
 * pending job); admit the pending jobs the optimal (or, above exact_limit,
 * heuristic) partition puts in that batch, oldest of each class first. */
int batch_plan(const struct batch_config *cfg, const struct batch_job *jobs, size_t n, double now,
               struct batch_decision *decisions, double *wake_at, struct iob_error **err);

/* Solo-seconds of work job j has left at `now` as the predictive policy
 * sees it; HUGE_VAL when open-ended (a service, no estimate, or far past
 * its learned duration). */
double batch_work_left(const struct batch_config *cfg, const struct batch_job *j, double now);

/* Predicted slowdown of running job i beside the other running jobs (the
 * model above); used by batch_weights and for status. */
double batch_slowdown(const struct batch_config *cfg, const struct batch_job *jobs, size_t n,
                      size_t i);

/* io.weight for each running job (pending ones get 100, the kernel default).
 * Rule: a job's weight is proportional to how much it suffers, so device time
 * goes to the victims and the jobs move toward equal normalised slowdown:
 *   weight_i = 100 * slowdown_i / min_j slowdown_j,  clamped to 1..10000,
 * where slowdown_i is solo_bps/observed_bps when both are known (the closed
 * loop, measured) and batch_slowdown() otherwise (predicted).  With the
 * defaults a random writer beside a sequential writer (5x vs 2x predicted)
 * gets 250 and the writer 100.  Jobs that suffer equally all get 100. */
int batch_weights(const struct batch_config *cfg, const struct batch_job *jobs, size_t n,
                  unsigned *weights, struct iob_error **err);

#endif
