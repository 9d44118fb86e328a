/* The online planner (batch_plan) and the io.weight rule (batch_weights). */
#include "batcher/solve_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Pending jobs simulated in a forecast besides the one decided (oldest
 * first); see predict(). */
#define ROLLOUT_QUEUE 24
#define PLAN_MAX_JOBS 65536

const char *batch_reason_name(enum batch_reason r) {
  switch (r) {
  case BATCH_RUNNING:
    return "running";
  case BATCH_ADMIT_IDLE:
    return "admitted: nothing running";
  case BATCH_ADMIT_FREE:
    return "admitted: no conflict";
  case BATCH_ADMIT_PAYS:
    return "admitted: holding would not finish sooner";
  case BATCH_ADMIT_PLAN:
    return "admitted: in the current batch";
  case BATCH_ADMIT_DEADLINE:
    return "admitted: max hold reached";
  case BATCH_HOLD_FULL:
    return "pending: max concurrency reached";
  case BATCH_HOLD_MAKESPAN:
    return "pending: holding finishes sooner";
  case BATCH_HOLD_FAIRNESS:
    return "pending: slowdown beyond the fairness bound";
  case BATCH_HOLD_PLAN:
    return "pending: planned for a later batch";
  }
  return "invalid";
}

/* ---- the slowdown model (batcher.h) ---- */

struct sj {
  int cls;
  bool cpu;
  double work;     /* solo-seconds left */
  double wait;     /* seconds until its first I/O (start_s after a start) */
  double deadline; /* relative to now; pending only */
  double age;      /* seconds since it arrived (its stretch counts them) */
  double solo;     /* its solo duration */
  double done;     /* forecast: when it completes, < 0 not yet */
  bool on;         /* started in the simulation */
};

/* Doing I/O now: started and past its start cost. */
static bool active(const struct sj *j) {
  return j->on && j->wait <= 0;
}

/* Job i's slowdown beside the active jobs (i itself may be inactive: the
 * question is then "if it ran now"). */
static double slowdown_of(const struct batch_config *cfg, const struct sj *j, size_t n, size_t i) {
  double io = 1;
  unsigned kcpu = j[i].cpu;
  bool seq = batch_class_is_seq((enum batch_class)j[i].cls) && !cfg->seq_pairs_from_matrix;
  for (size_t k = 0; k < n; k++) {
    if (k == i || !active(&j[k]))
      continue;
    kcpu += j[k].cpu;
    if (seq && batch_class_is_seq((enum batch_class)j[k].cls))
      io += cfg->seq_slowdown - 1; /* shared bandwidth, not a penalty */
    else
      io += cfg->slowdown_scale * cfg->s[j[i].cls][j[k].cls];
  }
  if (j[i].cpu && kcpu > cfg->ncpu) {
    double c = (double)kcpu / cfg->ncpu;
    if (c > io)
      io = c;
  }
  return io;
}

static double rate_sum(const struct batch_config *cfg, const struct sj *j, size_t n) {
  double r = 0;
  for (size_t k = 0; k < n; k++)
    if (active(&j[k]))
      r += 1 / slowdown_of(cfg, j, n, k);
  return r;
}

static size_t count_on(const struct sj *j, size_t n) {
  size_t c = 0;
  for (size_t k = 0; k < n; k++)
    c += j[k].on;
  return c;
}

/* The rule the forecast applies to jobs still queued: start one when
 * nothing runs, at its deadline, or when, once doing I/O, it does not lower
 * the aggregate progress rate.  It is the local form of "holding must pay".
 * (Fairness is judged on the whole forecast, not here.) */
static bool sim_accepts(const struct batch_config *cfg, struct sj *j, size_t n, size_t q) {
  double before = rate_sum(cfg, j, n);
  double w = j[q].wait;
  j[q].on = true;
  j[q].wait = 0;
  double after = rate_sum(cfg, j, n);
  j[q].on = false;
  j[q].wait = w;
  return after >= before - 1e-9;
}

/* Forecast the makespan: jobs[on] run now (those with a wait start their
 * I/O after it), queue (indices, FIFO) start by the rule above and then pay
 * start_s.  Event-driven: the next event is a completion, the end of a
 * start cost, or a queued job's deadline.  Job `held` (or SIZE_MAX) may not
 * start before the first event: holding means "not now, look again when
 * something changes", which is what the agent does.  Sets j[k].done. */
static double forecast(const struct batch_config *cfg, struct sj *j, size_t n, const size_t *queue,
                       size_t nq, size_t held) {
  double t = 0;
  bool *started = calloc(nq + 1, sizeof(bool));
  double *sd = malloc((n + 1) * sizeof(double));
  if (started == NULL || sd == NULL)
    abort();
  for (size_t k = 0; k < n; k++)
    j[k].done = -1;
  for (size_t guard = 0; guard < 6 * (n + nq) + 8; guard++) {
    for (size_t k = 0; k < nq; k++) {
      size_t q = queue[k];
      if (started[k] || (q == held && t == 0 && count_on(j, n) > 0))
        continue;
      size_t on = count_on(j, n);
      bool due = t >= j[q].deadline - 1e-9;
      if (on == 0 || due || (on < cfg->max_batch && sim_accepts(cfg, j, n, q))) {
        j[q].on = true;
        j[q].wait = cfg->start_s;
        started[k] = true;
      }
    }
    double dt = HUGE_VAL;
    for (size_t k = 0; k < n; k++) {
      if (!j[k].on)
        continue;
      double f = j[k].wait > 0 ? j[k].wait : j[k].work * slowdown_of(cfg, j, n, k);
      if (f < dt)
        dt = f;
    }
    for (size_t k = 0; k < nq; k++)
      if (!started[k] && j[queue[k]].deadline > t && j[queue[k]].deadline - t < dt)
        dt = j[queue[k]].deadline - t;
    if (dt == HUGE_VAL)
      break; /* nothing runs and nothing is queued */
    for (size_t k = 0; k < n; k++)
      sd[k] = active(&j[k]) ? slowdown_of(cfg, j, n, k) : 1;
    for (size_t k = 0; k < n; k++) {
      if (!j[k].on)
        continue;
      if (j[k].wait > 0) {
        j[k].wait -= dt;
        if (j[k].wait <= 1e-12 * (1 + dt))
          j[k].wait = 0;
        continue;
      }
      j[k].work -= dt / sd[k];
      if (j[k].work <= 1e-9 * (1 + dt)) {
        j[k].work = 0;
        j[k].on = false;
        j[k].done = t + dt;
      }
    }
    t += dt;
  }
  free(started);
  free(sd);
  return t;
}

/* The worst stretch (age + completion) / solo over the forecast's jobs
 * (only those with only[k], when only is not NULL). */
static double worst_stretch(const struct sj *j, size_t n, double makespan, const bool *only) {
  double w = 0;
  for (size_t k = 0; k < n; k++) {
    if (only && !only[k])
      continue;
    double done = j[k].done >= 0 ? j[k].done : makespan;
    double st = (j[k].age + done) / j[k].solo;
    if (st > w)
      w = st;
  }
  return w;
}

/* ---- planning ---- */

struct ctx {
  const struct batch_config *cfg;
  const struct batch_job *jobs;
  size_t n;
  double now;
  size_t *pend; /* pending indices, FIFO */
  size_t np;
  bool *admitted; /* per job: running or admitted in this plan */
  struct batch_decision *d;
};

static double solo_of(const struct batch_config *cfg, const struct batch_job *j) {
  return j->solo_s > 0 ? j->solo_s : cfg->default_solo_s;
}

static double work_left(const struct ctx *c, const struct batch_job *j) {
  if (!j->running)
    return solo_of(c->cfg, j);
  if (j->remaining_s > 0)
    return j->remaining_s;
  double solo = solo_of(c->cfg, j);
  double left = solo - (c->now - j->start);
  /* Past its prediction it is still running: expect a little more. */
  return left > 0.05 * solo ? left : 0.05 * solo;
}

static int fifo_cmp(const void *a, const void *b, void *arg) {
  const struct batch_job *jobs = arg;
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  if (jobs[x].arrival < jobs[y].arrival)
    return -1;
  if (jobs[x].arrival > jobs[y].arrival)
    return 1;
  return x < y ? -1 : x > y;
}

/* The admitted job p conflicts with most, and who of the two suffers. */
static void blame(struct ctx *c, size_t p) {
  const struct batch_config *cfg = c->cfg;
  int cp = c->jobs[p].cls;
  double worst = 0;
  long who = -1;
  for (size_t k = 0; k < c->n; k++) {
    if (k == p || !c->admitted[k])
      continue;
    int ck = c->jobs[k].cls;
    double pc = cfg->s[cp][ck] + cfg->s[ck][cp];
    if (pc > worst) {
      worst = pc;
      who = (long)k;
    }
  }
  c->d[p].conflict = who;
  c->d[p].victim = -1;
  if (who >= 0) {
    int ck = c->jobs[who].cls;
    c->d[p].victim = cfg->s[cp][ck] >= cfg->s[ck][cp] ? (long)p : who;
  }
}

static void decide(struct ctx *c, size_t p, bool admit, enum batch_reason r) {
  c->d[p].admit = admit;
  c->d[p].reason = r;
  if (admit)
    c->admitted[p] = true;
  blame(c, p);
}

/* Simulation jobs for everything: admitted ones on, the others off. */
static void sim_fill(const struct ctx *c, struct sj *s) {
  for (size_t k = 0; k < c->n; k++) {
    const struct batch_job *j = &c->jobs[k];
    double age = c->now - j->arrival;
    s[k] = (struct sj){.cls = j->cls,
                       .cpu = j->cpu_heavy,
                       .work = work_left(c, j),
                       .deadline = j->running ? 0 : j->deadline - c->now,
                       .age = age > 0 ? age : 0,
                       .solo = solo_of(c->cfg, j),
                       .done = -1,
                       /* admitted in this plan: it still has to start */
                       .wait = c->admitted[k] && !j->running ? c->cfg->start_s : 0,
                       .on = c->admitted[k]};
  }
}

/* Forecast with p admitted now vs held; both queue every other pending job
 * not admitted yet, oldest first.  m_*: makespans; w_admit: the worst
 * stretch, admitting p, of p and the jobs it slows (victim[job index]);
 * w_hold: the worst stretch of all when p is held. */
static void predict(struct ctx *c, size_t p, const bool *victim, double *m_admit, double *m_hold,
                    double *w_admit, double *w_hold) {
  /* The forecast runs on a compact set: what runs, p, and the oldest
   * ROLLOUT_QUEUE other pending jobs.  Younger ones barely move the
   * comparison, and this keeps a plan O(pending x ROLLOUT_QUEUE^3) instead of
   * O(n^5) when hundreds of containers wait. */
  size_t cap = c->n + 1;
  struct sj *all = malloc(cap * sizeof(struct sj));
  struct sj *s = malloc(cap * sizeof(struct sj));
  size_t *q = malloc(cap * sizeof(size_t));
  bool *vic = calloc(cap, sizeof(bool));
  if (all == NULL || s == NULL || q == NULL || vic == NULL)
    abort();
  sim_fill(c, all);
  for (int hold = 0; hold < 2; hold++) {
    size_t ns = 0, nq = 0, queued = 0, ps;
    for (size_t k = 0; k < c->n; k++)
      if (c->admitted[k]) {
        vic[ns] = victim[k];
        s[ns++] = all[k];
      }
    ps = ns;
    vic[ns] = true;
    s[ns] = all[p];
    s[ns].on = !hold;
    s[ns++].wait = hold ? 0 : c->cfg->start_s;
    for (size_t k = 0; k < c->np; k++) { /* FIFO */
      size_t i = c->pend[k];
      if (c->admitted[i])
        continue;
      if (i == p) {
        if (hold)
          q[nq++] = ps;
        continue;
      }
      if (queued == ROLLOUT_QUEUE)
        continue;
      s[ns] = all[i];
      q[nq++] = ns++;
      queued++;
    }
    double m = forecast(c->cfg, s, ns, q, nq, hold ? ps : SIZE_MAX);
    *(hold ? m_hold : m_admit) = m;
    if (hold)
      *w_hold = worst_stretch(s, ns, m, NULL);
    else
      *w_admit = worst_stretch(s, ns, m, vic);
  }
  free(all);
  free(s);
  free(q);
  free(vic);
}

/* Marks in victim[] the running (or admitted) jobs whose predicted slowdown
 * starting q raises, and q itself if it is slowed; true when there are
 * none (q changes nobody's slowdown, its own included). */
static bool no_effect(const struct batch_config *cfg, struct sj *s, size_t n, size_t q,
                      bool *victim) {
  double *before = malloc((n + 1) * sizeof(double));
  if (before == NULL)
    abort();
  for (size_t i = 0; i < n; i++)
    before[i] = s[i].on ? slowdown_of(cfg, s, n, i) : 1;
  s[q].on = true;
  bool same = true;
  for (size_t i = 0; i < n; i++) {
    victim[i] = s[i].on && slowdown_of(cfg, s, n, i) > before[i] + 1e-9;
    same = same && !victim[i];
  }
  s[q].on = false;
  free(before);
  return same;
}

static void plan_predictive(struct ctx *c) {
  const struct batch_config *cfg = c->cfg;
  struct sj *s = malloc((c->n + 1) * sizeof(struct sj));
  bool *victim = malloc((c->n + 1) * sizeof(bool));
  if (s == NULL || victim == NULL)
    abort();
  for (size_t k = 0; k < c->np; k++) {
    size_t p = c->pend[k];
    sim_fill(c, s);
    for (size_t i = 0; i < c->n; i++)
      s[i].wait = 0; /* no_effect asks about steady state */
    size_t on = count_on(s, c->n);
    if (c->now >= c->jobs[p].deadline) {
      decide(c, p, true, BATCH_ADMIT_DEADLINE);
      continue;
    }
    if (on == 0) {
      decide(c, p, true, BATCH_ADMIT_IDLE);
      continue;
    }
    if (on >= cfg->max_batch) {
      decide(c, p, false, BATCH_HOLD_FULL);
      continue;
    }
    if (no_effect(cfg, s, c->n, p, victim)) {
      decide(c, p, true, BATCH_ADMIT_FREE);
      continue;
    }
    double ma = 0, mh = 0, wa = 0, wh = 0;
    predict(c, p, victim, &ma, &mh, &wa, &wh);
    c->d[p].makespan_admit = ma;
    c->d[p].makespan_hold = mh;
    c->d[p].stretch_admit = wa;
    c->d[p].stretch_hold = wh;
    if (mh < ma * (1 - cfg->hold_margin))
      decide(c, p, false, BATCH_HOLD_MAKESPAN);
    else if (wa > cfg->fairness && wh <= cfg->fairness && wh < wa * (1 - cfg->hold_margin))
      decide(c, p, false, BATCH_HOLD_FAIRNESS);
    else
      decide(c, p, true, BATCH_ADMIT_PAYS);
  }
  free(s);
  free(victim);
}

/* The paper's objective on running ∪ pending, the running jobs (and those
 * past their deadline) pinned to the current batch.  With nothing pinned the
 * oldest pending job is, so the current batch is the one it is planned in
 * (FIFO, and the node is never left idle with work pending). */
static int plan_paper(struct ctx *c, struct iob_error **err) {
  const struct batch_config *cfg = c->cfg;
  size_t count[BATCH_NCLASS] = {0};
  unsigned fixed[BATCH_NCLASS] = {0}, nfixed = 0;
  for (size_t k = 0; k < c->n; k++) {
    count[c->jobs[k].cls]++;
    if (c->jobs[k].running) {
      fixed[c->jobs[k].cls]++;
      nfixed++;
    }
  }
  bool *forced = calloc(c->n + 1, sizeof(bool));
  if (forced == NULL)
    return iob_error(err, ENOMEM, "cannot allocate the plan");
  for (size_t k = 0; k < c->np; k++) {
    size_t p = c->pend[k];
    if (c->now >= c->jobs[p].deadline) {
      forced[p] = true;
      fixed[c->jobs[p].cls]++;
      nfixed++;
    }
  }
  if (nfixed == 0 && c->np > 0) {
    forced[c->pend[0]] = true;
    fixed[c->jobs[c->pend[0]].cls]++;
    nfixed++;
  }
  struct batch_norm nm;
  batch_norm_init(&nm, cfg, count);
  size_t freec[BATCH_NCLASS];
  for (int cl = 0; cl < BATCH_NCLASS; cl++)
    freec[cl] = count[cl] - fixed[cl];
  bool exact = batch_work_counts(nm.L, freec) <= cfg->exact_limit;
  unsigned cap0 = nfixed > nm.L ? nfixed : nm.L;
  struct batch_counts bc;
  if (batch_partition_counts(&nm, count, fixed, cap0, exact, &bc, err) < 0) {
    free(forced);
    return -1;
  }
  unsigned extra[BATCH_NCLASS];
  for (int cl = 0; cl < BATCH_NCLASS; cl++)
    extra[cl] = bc.b[0][cl] - fixed[cl];
  free(bc.b);
  for (size_t k = 0; k < c->np; k++) {
    size_t p = c->pend[k];
    int cl = c->jobs[p].cls;
    if (forced[p]) {
      bool due = c->now >= c->jobs[p].deadline;
      decide(c, p, true, due ? BATCH_ADMIT_DEADLINE : BATCH_ADMIT_IDLE);
    } else if (extra[cl] > 0) {
      extra[cl]--;
      decide(c, p, true, BATCH_ADMIT_PLAN);
    } else {
      decide(c, p, false, BATCH_HOLD_PLAN);
    }
  }
  free(forced);
  return 0;
}

static int check_jobs(const struct batch_config *cfg, const struct batch_job *jobs, size_t n,
                      double now, struct iob_error **err) {
  if (n > PLAN_MAX_JOBS)
    return iob_error_code(err, IOB_CODE_RESOURCE_EXHAUSTED, "too many jobs to plan: %zu (limit %d)",
                          n, PLAN_MAX_JOBS);
  if (cfg->max_batch < 1 || cfg->max_batch > BATCH_MAX_BATCH || cfg->ncpu < 1)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid batcher config");
  if (isnan(now))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid time");
  for (size_t i = 0; i < n; i++) {
    const struct batch_job *j = &jobs[i];
    if ((unsigned)j->cls >= BATCH_NCLASS)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "job %zu: invalid class %d", i,
                            (int)j->cls);
    if (isnan(j->arrival) || isnan(j->deadline) || isnan(j->start) ||
        !(j->solo_s >= 0 && isfinite(j->solo_s)) ||
        !(j->remaining_s >= 0 && isfinite(j->remaining_s)))
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "job %zu: invalid times", i);
  }
  return 0;
}

int batch_plan(const struct batch_config *cfg, const struct batch_job *jobs, size_t n, double now,
               struct batch_decision *decisions, double *wake_at, struct iob_error **err) {
  if (check_jobs(cfg, jobs, n, now, err) < 0)
    return -1;
  struct ctx c = {.cfg = cfg, .jobs = jobs, .n = n, .now = now, .d = decisions};
  c.pend = malloc((n + 1) * sizeof(size_t));
  c.admitted = calloc(n + 1, sizeof(bool));
  if (c.pend == NULL || c.admitted == NULL) {
    free(c.pend);
    free(c.admitted);
    return iob_error(err, ENOMEM, "cannot allocate the plan");
  }
  for (size_t i = 0; i < n; i++) {
    decisions[i] = (struct batch_decision){
        .admit = jobs[i].running, .reason = BATCH_RUNNING, .conflict = -1, .victim = -1};
    c.admitted[i] = jobs[i].running;
    if (!jobs[i].running)
      c.pend[c.np++] = i;
  }
  qsort_r(c.pend, c.np, sizeof(size_t), fifo_cmp, (void *)jobs);
  int ret = 0;
  if (cfg->policy == BATCH_POLICY_PAPER)
    ret = plan_paper(&c, err);
  else
    plan_predictive(&c);
  if (wake_at) {
    *wake_at = HUGE_VAL;
    for (size_t k = 0; k < c.np && ret == 0; k++) {
      size_t p = c.pend[k];
      if (!decisions[p].admit && jobs[p].deadline < *wake_at)
        *wake_at = jobs[p].deadline;
    }
  }
  free(c.pend);
  free(c.admitted);
  return ret;
}

/* ---- weights ---- */

double batch_slowdown(const struct batch_config *cfg, const struct batch_job *jobs, size_t n,
                      size_t i) {
  struct sj *s = malloc((n + 1) * sizeof(struct sj));
  if (s == NULL)
    abort();
  for (size_t k = 0; k < n; k++)
    s[k] =
        (struct sj){.cls = jobs[k].cls, .cpu = jobs[k].cpu_heavy, .on = jobs[k].running || k == i};
  double r = (unsigned)jobs[i].cls < BATCH_NCLASS ? slowdown_of(cfg, s, n, i) : 1;
  free(s);
  return r;
}

int batch_weights(const struct batch_config *cfg, const struct batch_job *jobs, size_t n,
                  unsigned *weights, struct iob_error **err) {
  if (check_jobs(cfg, jobs, n, 0, err) < 0)
    return -1;
  double *sd = malloc((n + 1) * sizeof(double));
  if (sd == NULL)
    return iob_error(err, ENOMEM, "cannot allocate weights");
  double lo = HUGE_VAL;
  for (size_t i = 0; i < n; i++) {
    weights[i] = 100;
    if (!jobs[i].running)
      continue;
    const struct batch_job *j = &jobs[i];
    /* Measured normalised slowdown when both rates are known: this is what
     * closes the loop (and what a wrong matrix cannot fool). */
    if (j->solo_bps > 0 && j->observed_bps > 0 && isfinite(j->solo_bps) &&
        isfinite(j->observed_bps))
      sd[i] = j->solo_bps / j->observed_bps;
    else
      sd[i] = batch_slowdown(cfg, jobs, n, i);
    if (sd[i] < 1e-6)
      sd[i] = 1e-6;
    if (sd[i] < lo)
      lo = sd[i];
  }
  for (size_t i = 0; i < n; i++) {
    if (!jobs[i].running)
      continue;
    double w = round(100 * sd[i] / lo);
    weights[i] = w < 1 ? 1 : w > 10000 ? 10000 : (unsigned)w;
  }
  free(sd);
  return 0;
}
