// SPDX-License-Identifier: Apache-2.0
/* The online planner (batch_plan) and the io.weight rule (batch_weights). */
#include "batcher/solve_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

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
  case BATCH_ADMIT_PROBE:
    return "admitted: unknown class, admitted as a probe";
  case BATCH_ADMIT_SERVICE:
    return "admitted: a service is never held";
  case BATCH_ADMIT_NOEST:
    return "admitted: no estimate of its work, holding cannot be shown to pay";
  case BATCH_ADMIT_WAITED:
    return "admitted: its wait reached the fairness bound";
  case BATCH_HOLD_BEHIND:
    return "pending: an older held container it conflicts with goes first";
  case BATCH_ADMIT_CROWD:
    return "admitted: too many containers doing I/O to forecast";
  case BATCH_HOLD_PROTECT:
    return "pending: protecting a latency-sensitive container short of its target";
  case BATCH_HOLD_NEXT:
    return "pending: decided in the next plan (forecast budget)";
  case BATCH_ADMIT_MEASURE:
    return "admitted: runs alone to measure its workload's solo rate";
  case BATCH_HOLD_MEASURE:
    return "pending: a container runs alone to be measured";
  case BATCH_HOLD_STARVE:
    return "pending: it would starve a job beside it, and holding costs the set nothing";
  case BATCH_NREASON:
    break;
  }
  return "invalid";
}

/* ---- the slowdown model (batcher.h) ---- */

/* pen[i][k]: the extra slowdown a job of class i suffers from one neighbour
 * of class k doing I/O.  Built once per plan from the config: classes that
 * do no I/O (idle, unknown) neither suffer nor cause any; sequential pairs
 * share bandwidth (seq_slowdown) unless measured or seq_pairs = matrix;
 * with `evidence` only pairs known from a file or measured count (the
 * planner's holds), otherwise the whole matrix (weights). */
struct model {
  double pen[BATCH_NCLASS][BATCH_NCLASS];
  bool conflict[BATCH_NCLASS][BATCH_NCLASS]; /* a pair either suffers from (not bandwidth) */
  /* i is slowed by k in a way that can make holding pay: a penalty, or
   * lossy bandwidth sharing (seq_slowdown > 2: two streams together take
   * longer than one after the other).  Neutral sharing changes nobody's
   * completion order enough to hold for. */
  bool effect[BATCH_NCLASS][BATCH_NCLASS];
  unsigned ncpu;
};

static bool pair_known(const struct batch_config *cfg, int i, int k) {
  return cfg->hold_on_matrix || cfg->known[i][k] || cfg->measured[i][k];
}

static void model_init(struct model *m, const struct batch_config *cfg, bool evidence) {
  memset(m, 0, sizeof(*m));
  m->ncpu = cfg->ncpu;
  for (int i = 0; i < BATCH_NCLASS; i++)
    for (int k = 0; k < BATCH_NCLASS; k++) {
      if (!batch_class_does_io((enum batch_class)i) || !batch_class_does_io((enum batch_class)k))
        continue;
      bool bw = batch_class_is_seq((enum batch_class)i) &&
                batch_class_is_seq((enum batch_class)k) && !cfg->seq_pairs_from_matrix &&
                !cfg->measured[i][k];
      if (bw)
        m->pen[i][k] = cfg->seq_slowdown - 1; /* shared bandwidth, not a penalty */
      else if (!evidence || pair_known(cfg, i, k))
        m->pen[i][k] = cfg->slowdown_scale * cfg->s[i][k];
    }
  for (int i = 0; i < BATCH_NCLASS; i++)
    for (int k = 0; k < BATCH_NCLASS; k++) {
      bool bw_i = batch_class_is_seq((enum batch_class)i) &&
                  batch_class_is_seq((enum batch_class)k) && !cfg->seq_pairs_from_matrix;
      double a = bw_i && !cfg->measured[i][k] ? 0 : m->pen[i][k];
      double b = bw_i && !cfg->measured[k][i] ? 0 : m->pen[k][i];
      m->conflict[i][k] = a > 0 || b > 0;
      bool lossy = cfg->seq_slowdown > 2 + 1e-9;
      m->effect[i][k] = m->pen[i][k] > 0 && (a > 0 || lossy);
    }
}

struct sj {
  int cls;
  bool cpu;
  bool io;         /* its class does I/O: only then is it simulated */
  bool slot;       /* takes a batch slot (does I/O and is not a service) */
  double work;     /* solo-seconds left; HUGE_VAL: open-ended */
  double wait;     /* seconds until its first I/O (start_s after a start) */
  double deadline; /* relative to now; pending only */
  double age;      /* seconds since it arrived (its stretch counts them) */
  double solo;     /* its solo duration, 0: unknown (no stretch) */
  double done;     /* forecast: when it completes, < 0 not yet */
  bool on;         /* started in the simulation */
};

/* Doing I/O now: started and past its start cost. */
static bool active(const struct sj *j) {
  return j->on && j->wait <= 0;
}

/* Active jobs by class, and how many of them are CPU-heavy. */
struct counts {
  unsigned cnt[BATCH_NCLASS];    /* active jobs doing I/O, by class */
  unsigned grp[BATCH_NCLASS][2]; /* active jobs by class and CPU-heaviness */
  unsigned cpu;
};

static void count_add(struct counts *c, const struct sj *x) {
  c->cnt[x->cls] += x->io;
  c->grp[x->cls][x->cpu]++;
  c->cpu += x->cpu;
}

static void recount(const struct sj *j, size_t n, struct counts *c) {
  memset(c, 0, sizeof(*c));
  for (size_t k = 0; k < n; k++)
    if (active(&j[k]))
      count_add(c, &j[k]);
}

/* The same, with the jobs still paying their start cost counted as the
 * I/O they are about to do. */
static void recount_started(const struct sj *j, size_t n, struct counts *c) {
  memset(c, 0, sizeof(*c));
  for (size_t k = 0; k < n; k++)
    if (j[k].on)
      count_add(c, &j[k]);
}

/* Job x's slowdown beside the active jobs counted in c (x itself may be
 * inactive: the question is then "if it ran now"). */
static double slow(const struct model *m, const struct counts *c, const struct sj *x) {
  double io = 1;
  bool self = active(x);
  if (x->io)
    for (int k = 0; k < BATCH_NCLASS; k++) {
      unsigned n = c->cnt[k] - (self && k == x->cls);
      if (n)
        io += n * m->pen[x->cls][k];
    }
  unsigned kcpu = c->cpu + (x->cpu && !self);
  if (x->cpu && kcpu > m->ncpu) {
    double r = (double)kcpu / m->ncpu;
    if (r > io)
      io = r;
  }
  return io;
}

/* The aggregate progress rate of the active jobs: every active job of one
 * class and CPU-heaviness has the same slowdown, so this costs
 * O(classes), not O(jobs). */
static double rate_sum(const struct model *m, const struct counts *c) {
  double r = 0;
  for (int k = 0; k < BATCH_NCLASS; k++)
    for (int cpu = 0; cpu < 2; cpu++) {
      if (c->grp[k][cpu] == 0)
        continue;
      struct sj x = {
          .cls = k, .cpu = cpu, .io = batch_class_does_io((enum batch_class)k), .on = true};
      r += c->grp[k][cpu] / slow(m, c, &x);
    }
  return r;
}

static size_t count_on(const struct sj *j, size_t n, bool slots) {
  size_t c = 0;
  for (size_t k = 0; k < n; k++)
    c += j[k].on && j[k].io && (!slots || j[k].slot);
  return c;
}

/* The rule the forecast applies to jobs still queued: start one when
 * nothing runs, at its deadline, or when, once doing I/O, it does not lower
 * the aggregate progress rate.  It is the local form of "holding must pay".
 * (Fairness is judged on the whole forecast, not here.) */
static bool sim_accepts(const struct model *m, const struct counts *c, double before,
                        const struct sj *q) {
  struct counts a = *c;
  count_add(&a, q);
  return rate_sum(m, &a) >= before - 1e-9;
}

/* Forecast the makespan of the finite jobs: jobs[on] run now (those with a
 * wait start their I/O after it), queue (indices, FIFO) start by the rule
 * above and then pay start_s.  Event-driven: the next event is a
 * completion, the end of a start cost, or a queued job's deadline.  Job
 * `held` (or SIZE_MAX) may not start before the first event: holding means
 * "not now, look again when something changes", which is what the agent
 * does.  Open-ended jobs never complete; a finite job that never gets to
 * start makes the makespan HUGE_VAL.  Sets j[k].done. */
static double forecast(const struct batch_config *cfg, const struct model *m, struct sj *j,
                       size_t n, const size_t *queue, size_t nq, size_t held) {
  double t = 0;
  bool *started = xcalloc(nq + 1, sizeof(bool));
  double *sd = xmalloc((n + 1) * sizeof(double));
  for (size_t k = 0; k < n; k++)
    j[k].done = -1;
  for (size_t guard = 0; guard < 6 * (n + nq) + 8; guard++) {
    /* A queued job is judged against every started job, those still in
     * their start cost included: judged against the active ones only, a
     * whole queue followed the first job in while it started. */
    struct counts c;
    recount_started(j, n, &c);
    double before = rate_sum(m, &c);
    size_t on = count_on(j, n, false), slots = count_on(j, n, true);
    for (size_t k = 0; k < nq; k++) {
      size_t q = queue[k];
      if (started[k] || (q == held && t == 0 && on > 0))
        continue;
      bool due = t >= j[q].deadline - 1e-9;
      bool room = !cfg->cap_running || slots < cfg->max_batch;
      if (on == 0 || due || (room && sim_accepts(m, &c, before, &j[q]))) {
        j[q].on = true;
        j[q].wait = cfg->start_s;
        started[k] = true;
        on++;
        slots += j[q].slot;
        count_add(&c, &j[q]);
        before = rate_sum(m, &c);
      }
    }
    recount(j, n, &c);
    for (size_t k = 0; k < n; k++)
      sd[k] = active(&j[k]) ? slow(m, &c, &j[k]) : 1;
    double dt = HUGE_VAL;
    for (size_t k = 0; k < n; k++) {
      if (!j[k].on)
        continue;
      double f = j[k].wait > 0 ? j[k].wait : j[k].work * sd[k];
      if (f < dt)
        dt = f;
    }
    for (size_t k = 0; k < nq; k++)
      if (!started[k] && j[queue[k]].deadline > t && j[queue[k]].deadline - t < dt)
        dt = j[queue[k]].deadline - t;
    if (dt == HUGE_VAL)
      break; /* only open-ended jobs run, and nothing can start */
    for (size_t k = 0; k < n; k++) {
      if (!j[k].on)
        continue;
      if (j[k].wait > 0) {
        j[k].wait -= dt;
        if (j[k].wait <= 1e-12 * (1 + dt))
          j[k].wait = 0;
        continue;
      }
      if (j[k].work == HUGE_VAL)
        continue;
      j[k].work -= dt / sd[k];
      if (j[k].work <= 1e-9 * (1 + dt)) {
        j[k].work = 0;
        j[k].on = false;
        j[k].done = t + dt;
      }
    }
    t += dt;
  }
  for (size_t k = 0; k < nq; k++)
    if (!started[k] && j[queue[k]].work != HUGE_VAL)
      t = HUGE_VAL; /* a finite job left waiting forever */
  free(started);
  free(sd);
  return t;
}

/* The worst stretch (age + completion) / solo over the forecast's finite
 * jobs with a known solo duration (only those with only[k], when only is
 * not NULL). */
static double worst_stretch(const struct sj *j, size_t n, double makespan, const bool *only) {
  double w = 0;
  for (size_t k = 0; k < n; k++) {
    if ((only && !only[k]) || j[k].solo <= 0 || (j[k].done < 0 && j[k].work == HUGE_VAL))
      continue;
    double done = j[k].done >= 0 ? j[k].done : makespan;
    double st = (j[k].age + done) / j[k].solo;
    if (st > w)
      w = st;
  }
  return w;
}

/* ---- planning ---- */

/* Forecast work one plan may spend (the sum of the squared sizes of the
 * simulations it runs: a forecast costs about that many steps), 2-4 ms
 * here; the jobs beyond wait for the next plan (soon: *wake_at), so a
 * burst of arrivals on a busy node never stalls the agent's loop. */
#define PLAN_FORECAST_WORK 60000.0
/* Beyond this many containers doing I/O a forecast is not run at all (it
 * would cost more than a plan may take, and a model of hundreds of
 * streams on one disk says little): the newcomer is admitted. */
#define PLAN_SIM_MAX 160

struct ctx {
  const struct batch_config *cfg;
  struct model ev; /* evidence only: what holds */
  const struct batch_job *jobs;
  size_t n;
  double now;
  size_t *pend; /* pending indices, FIFO */
  size_t np;
  bool *admitted;  /* per job: running or admitted in this plan */
  bool *decided;   /* per job: decided in this plan */
  double *due;     /* per pending job: its max_hold or fairness bound (spread) */
  double *hard;    /* per pending job: its max_hold alone (spread) */
  double work;     /* forecast work spent */
  bool budget_out; /* some job waits for the next plan */
  struct batch_decision *d;
  /* Kept as jobs are admitted, so each decision costs O(classes): */
  unsigned acnt[BATCH_NCLASS]; /* admitted jobs by class */
  unsigned acpu;               /* admitted CPU-heavy jobs */
  unsigned aio, aslots;        /* admitted jobs doing I/O; of them, taking a slot */
  long arep[BATCH_NCLASS];     /* an admitted job of each class, -1 none */
};

static void admitted_add(struct ctx *c, size_t k) {
  const struct batch_job *j = &c->jobs[k];
  c->acnt[j->cls]++;
  c->acpu += j->cpu_heavy;
  if (batch_class_does_io(j->cls)) {
    c->aio++;
    c->aslots += !j->service;
  }
  if (c->arep[j->cls] < 0)
    c->arep[j->cls] = (long)k;
}

double batch_work_left(const struct batch_config *cfg, const struct batch_job *j, double now) {
  if (j->service)
    return HUGE_VAL;
  if (!j->running)
    return j->solo_s > 0 ? j->solo_s : HUGE_VAL;
  if (j->remaining_s > 0)
    return j->remaining_s;
  if (j->solo_s <= 0)
    return HUGE_VAL; /* no estimate: open-ended, not "finishes soon" */
  double el = now - j->start;
  if (el > cfg->open_ended_factor * j->solo_s)
    return HUGE_VAL; /* far past anything learned: a service after all */
  double left = j->solo_s - el;
  /* Past its prediction it is still running: expect a little more. */
  return left > 0.05 * j->solo_s ? left : 0.05 * j->solo_s;
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

/* When job x must start at the latest, before spreading: its max_hold
 * deadline, or (fair) earlier when its own wait reaches the fairness bound
 * ((fairness - 1) x its solo duration: held longer, its stretch exceeds
 * the bound whatever happens next). */
static double due_base(const struct batch_config *cfg, const struct batch_job *j, bool fair) {
  double d = j->deadline;
  if (fair && j->solo_s > 0) {
    double f = j->arrival + (cfg->fairness - 1) * j->solo_s;
    if (f < d)
      d = f;
  }
  return d;
}

struct due_sort {
  const struct batch_config *cfg;
  const struct batch_job *jobs;
  bool fair;
};

static int due_cmp(const void *a, const void *b, void *arg) {
  const struct due_sort *ds = arg;
  size_t x = *(const size_t *)a, y = *(const size_t *)b;
  double dx = due_base(ds->cfg, &ds->jobs[x], ds->fair),
         dy = due_base(ds->cfg, &ds->jobs[y], ds->fair);
  if (dx < dy)
    return -1;
  if (dx > dy)
    return 1;
  return fifo_cmp(a, b, (void *)ds->jobs);
}

/* max_hold and the fairness bound are hard bounds, but jobs that reach
 * them together must not all start at one instant (a herd released at
 * once is what the bounds exist to avoid): in order, each is forced in at
 * least deadline_spread_s after the one before, by starting the earlier
 * ones sooner (never one later than its own bound). */
static void spread_deadlines(struct ctx *c, bool fair, double *due) {
  size_t *o = xmalloc((c->np + 1) * sizeof(size_t));
  memcpy(o, c->pend, c->np * sizeof(size_t));
  struct due_sort ds = {.cfg = c->cfg, .jobs = c->jobs, .fair = fair};
  qsort_r(o, c->np, sizeof(size_t), due_cmp, &ds);
  double next = HUGE_VAL;
  for (size_t k = c->np; k-- > 0;) {
    double dl = due_base(c->cfg, &c->jobs[o[k]], fair);
    double e = next - c->cfg->deadline_spread_s;
    due[o[k]] = dl < e ? dl : e;
    next = due[o[k]];
  }
  free(o);
}

/* The admitted job p conflicts with most, and who of the two suffers. */
static void blame(struct ctx *c, size_t p) {
  const struct batch_config *cfg = c->cfg;
  int cp = c->jobs[p].cls;
  double worst = 0;
  long who = -1;
  for (int ck = 0; ck < BATCH_NCLASS; ck++) {
    long k = c->arep[ck];
    if (k < 0 || (k == (long)p && c->acnt[ck] < 2))
      continue;
    if (k == (long)p) { /* another admitted job of its own class */
      for (size_t i = 0; i < c->n; i++)
        if (i != p && c->admitted[i] && (int)c->jobs[i].cls == ck) {
          k = (long)i;
          break;
        }
    }
    double pc = cfg->s[cp][ck] + cfg->s[ck][cp];
    if (pc > worst) {
      worst = pc;
      who = k;
    }
  }
  c->d[p].conflict = who;
  c->d[p].victim = -1;
  if (who >= 0) {
    int ck = c->jobs[who].cls;
    c->d[p].victim = cfg->s[cp][ck] >= cfg->s[ck][cp] ? (long)p : who;
  }
}

/* Name h as the job p conflicts with (a held one: blame() only looks at
 * admitted jobs). */
static void blame_on(struct ctx *c, size_t p, long h) {
  c->d[p].conflict = h;
  c->d[p].victim = -1;
  if (h >= 0) {
    int cp = c->jobs[p].cls, ch = c->jobs[h].cls;
    c->d[p].victim = c->cfg->s[cp][ch] >= c->cfg->s[ch][cp] ? (long)p : h;
  }
}

/* True when p's wait has reached its (spread) fairness bound. */
static bool overdue(const struct ctx *c, size_t p) {
  return c->now + 1e-6 >= c->due[p];
}

static void decide(struct ctx *c, size_t p, bool admit, enum batch_reason r) {
  c->d[p].admit = admit;
  c->d[p].reason = r;
  c->decided[p] = true;
  if (admit && !c->admitted[p]) {
    c->admitted[p] = true;
    admitted_add(c, p);
  }
  blame(c, p);
}

static void sim_one(const struct ctx *c, size_t k, struct sj *s) {
  const struct batch_job *j = &c->jobs[k];
  double age = c->now - j->arrival;
  bool io = batch_class_does_io(j->cls);
  *s = (struct sj){.cls = j->cls,
                   .cpu = j->cpu_heavy,
                   .io = io,
                   .slot = io && !j->service,
                   .work = batch_work_left(c->cfg, j, c->now),
                   /* Only max_hold forces a start in the forecast: the
                    * fairness bound starts a job only where that serves
                    * it (plan_predictive), and a forecast that forced
                    * every long-waiting job into the crowd found holding
                    * never paid on a disk where crowds cost most. */
                   .deadline = j->running ? 0 : c->hard[k] - c->now,
                   .age = age > 0 ? age : 0,
                   .solo = j->solo_s,
                   .done = -1,
                   /* admitted in this plan: it still has to start */
                   .wait = c->admitted[k] && !j->running ? c->cfg->start_s : 0,
                   .on = c->admitted[k]};
}

/* Forecast with p admitted now vs held; both queue the oldest other
 * pending jobs not decided yet.  Only jobs that do I/O are simulated.
 * m_*: makespans; w_admit: the worst stretch, admitting p, of p and the
 * jobs it slows (victim[job index]); w_hold: the worst stretch of all when
 * p is held; own[0], own[1] (own may be NULL): p's forecast completion,
 * admitted and held. */
#define ROLLOUT_QUEUE 16
static void predict(struct ctx *c, size_t p, const bool *victim, double *m_admit, double *m_hold,
                    double *w_admit, double *w_hold, double *own) {
  size_t cap = c->n + 1;
  struct sj *s = xmalloc(cap * sizeof(struct sj));
  size_t *q = xmalloc(cap * sizeof(size_t));
  bool *vic = xcalloc(cap, sizeof(bool));

  for (int hold = 0; hold < 2; hold++) {
    size_t ns = 0, nq = 0, queued = 0, ps;
    for (size_t k = 0; k < c->n; k++)
      if (c->admitted[k] && batch_class_does_io(c->jobs[k].cls)) {
        vic[ns] = victim[k];
        sim_one(c, k, &s[ns++]);
      }
    ps = ns;
    vic[ns] = true;
    sim_one(c, p, &s[ns]);
    s[ns].on = !hold;
    s[ns++].wait = hold ? 0 : c->cfg->start_s;
    for (size_t k = 0; k < c->np; k++) { /* FIFO */
      size_t i = c->pend[k];
      if (i == p) {
        if (hold)
          q[nq++] = ps;
        continue;
      }
      if (c->decided[i] || queued == ROLLOUT_QUEUE || !batch_class_does_io(c->jobs[i].cls))
        continue;
      sim_one(c, i, &s[ns]);
      q[nq++] = ns++;
      queued++;
    }
    c->work += (double)ns * (double)(ns + nq);
    double m = forecast(c->cfg, &c->ev, s, ns, q, nq, hold ? ps : SIZE_MAX);
    *(hold ? m_hold : m_admit) = m;
    if (own)
      own[hold] = s[ps].done >= 0 ? s[ps].done : m;
    if (hold)
      *w_hold = worst_stretch(s, ns, m, NULL);
    else
      *w_admit = worst_stretch(s, ns, m, vic);
  }
  free(s);
  free(q);
  free(vic);
}

/* True when starting p changes nobody's predicted slowdown, its own
 * included (by class counts: O(classes)). */
static bool no_effect(const struct ctx *c, size_t p) {
  const struct model *m = &c->ev;
  const struct batch_job *jp = &c->jobs[p];
  if (jp->cpu_heavy && c->acpu + 1 > m->ncpu)
    return false;
  for (int k = 0; k < BATCH_NCLASS; k++)
    if (c->acnt[k] && batch_class_does_io((enum batch_class)k) &&
        (m->effect[k][jp->cls] || m->effect[jp->cls][k]))
      return false;
  return true;
}

/* Marks in victim[] the admitted jobs whose predicted slowdown starting p
 * raises, and p itself if it is slowed. */
static void victims(const struct ctx *c, size_t p, bool *victim) {
  const struct model *m = &c->ev;
  const struct batch_job *jp = &c->jobs[p];
  bool cpu_hit = jp->cpu_heavy && c->acpu + 1 > m->ncpu;
  bool self = cpu_hit;
  for (size_t k = 0; k < c->n; k++) {
    victim[k] = false;
    if (!c->admitted[k])
      continue;
    const struct batch_job *jk = &c->jobs[k];
    bool io = batch_class_does_io(jk->cls);
    victim[k] = (io && m->effect[jk->cls][jp->cls]) || (cpu_hit && jk->cpu_heavy);
    self = self || (io && m->effect[jp->cls][jk->cls]);
  }
  victim[p] = self;
}

/* An admitted job doing I/O that p's start would slow beyond the fairness
 * bound, or that would slow p so (by the measured pair alone), or -1.
 * Beside it, one of the two runs at under 1/fairness of its speed for as
 * long as they share the disk: its stretch passes the bound if they share
 * it for long. */
static long starved_by(const struct ctx *c, size_t p) {
  const struct batch_config *cfg = c->cfg;
  int cp = c->jobs[p].cls;
  for (size_t k = 0; k < c->n; k++) {
    if (!c->admitted[k] || k == p || !batch_class_does_io(c->jobs[k].cls) ||
        batch_work_left(cfg, &c->jobs[k], c->now) == HUGE_VAL)
      continue; /* one that never ends (a service) ties no forecast */
    int ck = c->jobs[k].cls;
    if ((pair_known(cfg, ck, cp) && 1 + cfg->slowdown_scale * cfg->s[ck][cp] >= cfg->fairness) ||
        (pair_known(cfg, cp, ck) && 1 + cfg->slowdown_scale * cfg->s[cp][ck] >= cfg->fairness))
      return (long)k;
  }
  return -1;
}

/* The oldest job held so far in this plan that p conflicts with, or -1:
 * within what conflicts, the oldest goes first (no overtaking). */
static long held_before(const struct ctx *c, size_t p, const long *oldest_held) {
  int cp = c->jobs[p].cls;
  long best = -1;
  for (int k = 0; k < BATCH_NCLASS; k++) {
    long h = oldest_held[k];
    if (h >= 0 && c->ev.conflict[cp][k] && (best < 0 || fifo_cmp(&h, &best, (void *)c->jobs) < 0))
      best = h;
  }
  return best;
}

/* The predictive policy for the jobs the common rules left undecided,
 * oldest first. */
static void plan_predictive(struct ctx *c) {
  const struct batch_config *cfg = c->cfg;
  bool *victim = xmalloc((c->n + 1) * sizeof(bool));
  /* The oldest job held so far, per class (no overtaking). */
  long oldest_held[BATCH_NCLASS];
  /* A forecast's hold, per class: a younger job of the class, in the same
   * place, is held for the same reason without another forecast. */
  long memo[BATCH_NCLASS];
  for (int k = 0; k < BATCH_NCLASS; k++)
    oldest_held[k] = memo[k] = -1;
  /* First the jobs whose wait reached the fairness bound, oldest first:
   * each starts, whatever the capacity, where starting now is what keeps
   * its stretch within the bound.  Where the bound is met either way, or
   * by neither (a crowd that slows it as much as the wait), the makespan
   * forecast decides, as for any job: on a disk that punishes crowds,
   * forcing it in stretched it and every other job further than waiting
   * its turn. */
  for (size_t k = 0; k < c->np; k++) {
    size_t p = c->pend[k];
    if (c->decided[p] || !overdue(c, p))
      continue;
    bool hold = false;
    enum batch_reason why = BATCH_HOLD_MAKESPAN;
    long starved = -1;
    if (c->aio > 0 && !no_effect(c, p) && c->aio + 1 <= PLAN_SIM_MAX) {
      double ma = 0, mh = 0, wa = 0, wh = 0;
      victims(c, p, victim);
      double own[2];
      predict(c, p, victim, &ma, &mh, &wa, &wh, own);
      c->d[p].makespan_admit = ma;
      c->d[p].makespan_hold = mh;
      c->d[p].stretch_admit = wa;
      c->d[p].stretch_hold = wh;
      const struct batch_job *jp = &c->jobs[p];
      double age = c->now - jp->arrival;
      bool bound_met_held = (age + own[1]) / jp->solo_s <= cfg->fairness;
      bool bound_met_admitted = (age + own[0]) / jp->solo_s <= cfg->fairness;
      double m = cfg->hold_margin;
      hold = mh < ma * (1 - m) && (bound_met_held || !bound_met_admitted);
      /* Started beside a job that starves it (or that it starves), it
       * would end no sooner than held: starting serves neither it nor the
       * set, and its max hold still bounds the wait. */
      if (!hold && mh <= ma * (1 + m) && own[1] <= own[0] * (1 + m) &&
          (starved = starved_by(c, p)) >= 0) {
        hold = true;
        why = BATCH_HOLD_STARVE;
      }
    }
    decide(c, p, !hold, hold ? why : BATCH_ADMIT_WAITED);
    if (starved >= 0)
      blame_on(c, p, starved);
    if (hold && oldest_held[c->jobs[p].cls] < 0)
      oldest_held[c->jobs[p].cls] = (long)p;
  }
  for (size_t k = 0; k < c->np; k++) {
    size_t p = c->pend[k];
    if (c->decided[p])
      continue;
    const struct batch_job *jp = &c->jobs[p];
    long h = held_before(c, p, oldest_held);
    if (h >= 0) {
      decide(c, p, false, BATCH_HOLD_BEHIND);
      blame_on(c, p, h);
    } else if (c->aio == 0) {
      decide(c, p, true, BATCH_ADMIT_IDLE);
    } else if (cfg->cap_running && c->aslots >= cfg->max_batch) {
      decide(c, p, false, BATCH_HOLD_FULL);
    } else if (no_effect(c, p)) {
      decide(c, p, true, BATCH_ADMIT_FREE);
    } else if (jp->solo_s <= 0) {
      decide(c, p, true, BATCH_ADMIT_NOEST);
    } else if (memo[jp->cls] >= 0 &&
               fabs(c->jobs[memo[jp->cls]].solo_s - jp->solo_s) <= 0.1 * jp->solo_s) {
      size_t o = (size_t)memo[jp->cls];
      decide(c, p, false, c->d[o].reason);
      blame_on(c, p, c->d[o].conflict);
    } else if (c->aio + 1 > PLAN_SIM_MAX) {
      decide(c, p, true, BATCH_ADMIT_CROWD);
    } else if (c->work >= PLAN_FORECAST_WORK) {
      decide(c, p, false, BATCH_HOLD_NEXT);
      c->budget_out = true;
    } else {
      double ma = 0, mh = 0, wa = 0, wh = 0;
      victims(c, p, victim);
      predict(c, p, victim, &ma, &mh, &wa, &wh, NULL);
      c->d[p].makespan_admit = ma;
      c->d[p].makespan_hold = mh;
      c->d[p].stretch_admit = wa;
      c->d[p].stretch_hold = wh;
      long starved = -1;
      if (mh < ma * (1 - cfg->hold_margin))
        decide(c, p, false, BATCH_HOLD_MAKESPAN);
      else if (wa > cfg->fairness && wh <= cfg->fairness && wh < wa * (1 - cfg->hold_margin))
        decide(c, p, false, BATCH_HOLD_FAIRNESS);
      /* A tie: where a victim all but stops beside its aggressor, the
       * model's disk does the same work either way (the victim's after the
       * aggressor's), so the forecasts agree.  Then the pair is not mixed:
       * the one that waits loses nothing it would not lose starved, and the
       * disk is spared mixing its measured penalties say it punishes. */
      else if (mh <= ma * (1 + cfg->hold_margin) && (starved = starved_by(c, p)) >= 0) {
        decide(c, p, false, BATCH_HOLD_STARVE);
        blame_on(c, p, starved);
      } else
        decide(c, p, true, BATCH_ADMIT_PAYS);
      if (!c->d[p].admit)
        memo[jp->cls] = (long)p;
    }
    if (!c->d[p].admit && oldest_held[jp->cls] < 0)
      oldest_held[jp->cls] = (long)p;
  }
  free(victim);
}

/* The paper's objective on the running and pending jobs that do I/O (and
 * are no services), with the running jobs and those the common rules
 * admitted pinned to the current batch (or, when there are none, the
 * oldest pending job).  FIFO, and the node is never left idle with work
 * pending. */
static int plan_paper(struct ctx *c, struct iob_error **err) {
  const struct batch_config *cfg = c->cfg;
  size_t count[BATCH_NCLASS] = {0};
  unsigned fixed[BATCH_NCLASS] = {0}, nfixed = 0;
  long first = -1;
  for (size_t k = 0; k < c->n; k++) {
    const struct batch_job *j = &c->jobs[k];
    if (!batch_class_does_io(j->cls) || j->service)
      continue;
    if (c->admitted[k]) {
      count[j->cls]++;
      fixed[j->cls]++;
      nfixed++;
    } else if (!c->decided[k]) {
      count[j->cls]++;
    }
  }
  for (size_t k = 0; k < c->np && first < 0; k++)
    if (!c->decided[c->pend[k]])
      first = (long)c->pend[k];
  if (first < 0)
    return 0;
  if (nfixed == 0) {
    decide(c, (size_t)first, true, BATCH_ADMIT_IDLE);
    fixed[c->jobs[first].cls]++;
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
  if (batch_partition_counts(&nm, count, fixed, cap0, exact, &bc, err) < 0)
    return -1;
  unsigned extra[BATCH_NCLASS];
  for (int cl = 0; cl < BATCH_NCLASS; cl++)
    extra[cl] = bc.b[0][cl] - fixed[cl];
  free(bc.b);
  for (size_t k = 0; k < c->np; k++) {
    size_t p = c->pend[k];
    if (c->decided[p])
      continue;
    int cl = c->jobs[p].cls;
    if (extra[cl] > 0) {
      extra[cl]--;
      decide(c, p, true, BATCH_ADMIT_PLAN);
    } else {
      decide(c, p, false, BATCH_HOLD_PLAN);
    }
  }
  return 0;
}

/* The rules every policy follows first, oldest first: a job at its
 * (spread) max_hold starts, and under the paper policy one at its
 * fairness bound; so does a service and a job that does no I/O (an
 * unknown one as a probe: it is measured within a sample or two and later
 * arrivals are judged against it; nothing is held on a guess). */
static void plan_common(struct ctx *c) {
  for (size_t k = 0; k < c->np; k++) {
    size_t p = c->pend[k];
    const struct batch_job *j = &c->jobs[p];
    if (c->now + 1e-6 >= c->hard[p]) {
      decide(c, p, true, BATCH_ADMIT_DEADLINE);
    } else if (overdue(c, p) && c->cfg->policy == BATCH_POLICY_PAPER) {
      decide(c, p, true, BATCH_ADMIT_WAITED);
    } else if (j->service) {
      decide(c, p, true, BATCH_ADMIT_SERVICE);
    } else if (j->cls == BATCH_UNKNOWN) {
      decide(c, p, true, BATCH_ADMIT_PROBE);
    } else if (!batch_class_does_io(j->cls)) {
      decide(c, p, true, BATCH_ADMIT_FREE);
    }
  }
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
  model_init(&c.ev, cfg, true);
  c.pend = xmalloc((n + 1) * sizeof(size_t));
  c.admitted = xcalloc(n + 1, sizeof(bool));
  c.decided = xcalloc(n + 1, sizeof(bool));
  c.due = xcalloc(n + 1, sizeof(double));
  c.hard = xcalloc(n + 1, sizeof(double));
  for (int k = 0; k < BATCH_NCLASS; k++)
    c.arep[k] = -1;
  for (size_t i = 0; i < n; i++) {
    decisions[i] = (struct batch_decision){
        .admit = jobs[i].running, .reason = BATCH_RUNNING, .conflict = -1, .victim = -1};
    c.admitted[i] = jobs[i].running;
    c.decided[i] = jobs[i].running;
    if (jobs[i].running)
      admitted_add(&c, i);
    else
      c.pend[c.np++] = i;
  }
  qsort_r(c.pend, c.np, sizeof(size_t), fifo_cmp, (void *)jobs);
  spread_deadlines(&c, true, c.due);
  spread_deadlines(&c, false, c.hard);
  plan_common(&c);
  int ret = 0;
  if (cfg->policy == BATCH_POLICY_PAPER)
    ret = plan_paper(&c, err);
  else
    plan_predictive(&c);
  if (wake_at) {
    *wake_at = HUGE_VAL;
    for (size_t k = 0; k < c.np && ret == 0; k++) {
      size_t p = c.pend[k];
      /* Past its fairness bound and still held: its max_hold is next. */
      double w = c.due[p] > now + 1e-6 ? c.due[p] : c.hard[p];
      if (!decisions[p].admit && w < *wake_at)
        *wake_at = w;
    }
    /* Jobs past the forecast budget are decided in the next plan. */
    if (c.budget_out && now + 0.1 < *wake_at)
      *wake_at = now + 0.1;
  }
  free(c.pend);
  free(c.admitted);
  free(c.decided);
  free(c.due);
  free(c.hard);
  return ret;
}

/* ---- weights ---- */

double batch_slowdown(const struct batch_config *cfg, const struct batch_job *jobs, size_t n,
                      size_t i) {
  if ((unsigned)jobs[i].cls >= BATCH_NCLASS)
    return 1;
  /* Weights keep the whole matrix, unknown neighbours included (they are
   * about softening, not holding): an unknown neighbour counts as the
   * matrix's unknown column says. */
  double io = 1;
  unsigned kcpu = jobs[i].cpu_heavy;
  bool seq = batch_class_is_seq(jobs[i].cls) && !cfg->seq_pairs_from_matrix;
  for (size_t k = 0; k < n; k++) {
    if (k == i || !jobs[k].running || (unsigned)jobs[k].cls >= BATCH_NCLASS)
      continue;
    kcpu += jobs[k].cpu_heavy;
    if (seq && batch_class_is_seq(jobs[k].cls) && !cfg->measured[jobs[i].cls][jobs[k].cls])
      io += cfg->seq_slowdown - 1;
    else
      io += cfg->slowdown_scale * cfg->s[jobs[i].cls][jobs[k].cls];
  }
  if (jobs[i].cpu_heavy && kcpu > cfg->ncpu) {
    double r = (double)kcpu / cfg->ncpu;
    if (r > io)
      io = r;
  }
  return io;
}

int batch_weights(const struct batch_config *cfg, const struct batch_job *jobs, size_t n,
                  unsigned *weights, struct iob_error **err) {
  if (check_jobs(cfg, jobs, n, 0, err) < 0)
    return -1;
  double *sd = xmalloc((n + 1) * sizeof(double));
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
