// SPDX-License-Identifier: Apache-2.0
/* The offline batch problem: exact solver over class-count vectors and a
 * greedy + local-search heuristic.
 *
 * Jobs of one class are interchangeable (the objective only sees classes),
 * so a partition is a multiset of batch count vectors.  The exact solver is
 * a search over the remaining count vector v:
 *   best(v) = min over batches x <= v, 1 <= |x| <= L, containing one job of
 *             v's first non-empty class: cost(x) + best(v - x)
 * "Contains one job of the first non-empty class" is the count form of the
 * usual symmetry breaking (jobs assigned in order, a job opens at most one
 * new batch): every partition is generated exactly once, in one canonical
 * batch order.  Each sub-vector is solved once and memoised, so the search
 * proves optimality with states x candidates work; for N = 25 in 5 classes
 * of 5 that is 6^5 = 7776 states.  Branch-and-bound pruning was tried
 * inside a state (Tp so far + w * ceil((|v| - L) / L) against the best
 * candidate): it cut only 5-10% of the enumeration nodes and no measurable
 * time, because every sub-problem's exact value is already a table lookup;
 * it was left out.
 * The state count is prod(count_c + 1), so what limits the exact solver is
 * the spread over classes, not N (1000 jobs of one class are trivial).
 */
#include "batcher/solve_internal.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

#define EPS 1e-12

/* Tp_max: each job has at most L-1 neighbours, so the in-batch penalty of
 * any feasible partition is at most half the sum over jobs of their L-1
 * largest pair costs (see batcher.h). */
static double tp_max_bound(const struct batch_norm *nm, const size_t count[BATCH_NCLASS]) {
  double total = 0;
  for (int a = 0; a < BATCH_NCLASS; a++) {
    if (count[a] == 0)
      continue;
    int order[BATCH_NCLASS];
    for (int k = 0; k < BATCH_NCLASS; k++)
      order[k] = k;
    for (int i = 1; i < BATCH_NCLASS; i++) /* by pair cost, descending */
      for (int j = i; j > 0 && nm->p[a][order[j]] > nm->p[a][order[j - 1]]; j--) {
        int t = order[j];
        order[j] = order[j - 1];
        order[j - 1] = t;
      }
    size_t need = nm->L - 1;
    double sum = 0;
    for (int k = 0; k < BATCH_NCLASS && need > 0; k++) {
      int b = order[k];
      size_t avail = count[b] - (b == a ? 1 : 0);
      size_t take = avail < need ? avail : need;
      sum += (double)take * nm->p[a][b];
      need -= take;
    }
    total += (double)count[a] * sum;
  }
  return total / 2;
}

void batch_norm_init(struct batch_norm *nm, const struct batch_config *cfg,
                     const size_t count[BATCH_NCLASS]) {
  memset(nm, 0, sizeof(*nm));
  for (int i = 0; i < BATCH_NCLASS; i++)
    for (int j = 0; j < BATCH_NCLASS; j++)
      nm->p[i][j] = cfg->s[i][j] + cfg->s[j][i];
  nm->L = cfg->max_batch ? cfg->max_batch : 1;
  for (int c = 0; c < BATCH_NCLASS; c++)
    nm->n += count[c];
  nm->nz_min = (unsigned)((nm->n + nm->L - 1) / nm->L);
  nm->tp_max = tp_max_bound(nm, count);
  nm->a = nm->tp_max > 0 ? cfg->alpha / nm->tp_max : 0;
  nm->w = nm->n > nm->nz_min ? (1 - cfg->alpha) / (double)(nm->n - nm->nz_min) : 0;
}

double batch_tp_counts(const struct batch_norm *nm, const unsigned x[BATCH_NCLASS]) {
  double tp = 0;
  for (int i = 0; i < BATCH_NCLASS; i++) {
    if (x[i] == 0)
      continue;
    tp += (double)x[i] * (x[i] - 1) / 2 * nm->p[i][i];
    for (int j = 0; j < i; j++)
      tp += (double)x[i] * x[j] * nm->p[i][j];
  }
  return tp;
}

/* Lexicographic (objective, Nz, Tp): the documented tie-break.  Ties are
 * mostly normalisation artefacts (for N = 2 both partitions score alpha vs
 * 1-alpha whatever the penalty), and a tie is no reason to hold anyone. */
static bool better(double c1, double t1, unsigned z1, double c2, double t2, unsigned z2) {
  if (c1 < c2 - EPS)
    return true;
  if (c1 > c2 + EPS)
    return false;
  if (z1 != z2)
    return z1 < z2;
  return t1 < t2 - EPS;
}

/* ---- exact ---- */

struct dp {
  const struct batch_norm *nm;
  unsigned m;                 /* classes present */
  int cls[BATCH_NCLASS];      /* compressed -> class */
  unsigned cnt[BATCH_NCLASS]; /* compressed counts */
  size_t stride[BATCH_NCLASS];
  size_t states;
  double *cost, *tp;
  unsigned *nz;
  uint32_t *choice; /* index of the first batch's vector */
  /* enumeration scratch */
  unsigned v[BATCH_NCLASS], x[BATCH_NCLASS];
  size_t vi;
  double best_c, best_t;
  unsigned best_z;
  uint32_t best_x;
};

static size_t states_of(const size_t count[BATCH_NCLASS]) {
  size_t s = 1;
  for (int c = 0; c < BATCH_NCLASS; c++) {
    if (count[c] >= BATCH_EXACT_MAX_STATES)
      return SIZE_MAX;
    s *= count[c] + 1;
    if (s > BATCH_EXACT_MAX_STATES)
      return SIZE_MAX;
  }
  return s;
}

double batch_work_counts(unsigned L, const size_t count[BATCH_NCLASS]) {
  size_t s = states_of(count);
  if (s == SIZE_MAX)
    return HUGE_VAL;
  /* candidates per state <= vectors x <= count with |x| <= L */
  double ways[BATCH_MAX_BATCH + 1] = {0};
  ways[0] = 1;
  for (int c = 0; c < BATCH_NCLASS; c++) {
    for (int t = (int)L; t >= 0; t--) {
      double sum = 0;
      for (size_t k = 0; k <= count[c] && k <= (size_t)t; k++)
        sum += ways[t - k];
      ways[t] = sum;
    }
  }
  double cand = 0;
  for (unsigned t = 0; t <= L; t++)
    cand += ways[t];
  return (double)s * cand;
}

/* Enumerate the first batch x of state v: classes k..m-1, size so far,
 * Tp so far. */
static void dp_enum(struct dp *d, unsigned k, unsigned size, double tp, size_t xi) {
  if (k == d->m) {
    if (size == 0)
      return;
    size_t rest = d->vi - xi;
    double c = d->nm->a * tp + d->nm->w + d->cost[rest];
    double t = tp + d->tp[rest];
    unsigned z = 1 + d->nz[rest];
    if (better(c, t, z, d->best_c, d->best_t, d->best_z)) {
      d->best_c = c, d->best_t = t, d->best_z = z;
      d->best_x = (uint32_t)xi;
    }
    return;
  }
  unsigned lo = 0, hi = d->v[k];
  bool first = true;
  for (unsigned j = 0; j < k; j++)
    if (d->v[j])
      first = false;
  if (first && d->v[k] > 0)
    lo = 1; /* symmetry breaking: the first remaining class opens the batch */
  if (hi > d->nm->L - size)
    hi = d->nm->L - size;
  const double(*p)[BATCH_NCLASS] = d->nm->p;
  double cross = 0;
  for (unsigned j = 0; j < k; j++)
    cross += d->x[j] * p[d->cls[k]][d->cls[j]];
  for (unsigned n = lo; n <= hi; n++) {
    d->x[k] = n;
    double add = n * cross + (double)n * (n - 1) / 2 * p[d->cls[k]][d->cls[k]];
    dp_enum(d, k + 1, size + n, tp + add, xi + n * d->stride[k]);
  }
  d->x[k] = 0;
}

static void dp_free(struct dp *d) {
  free(d->cost);
  free(d->tp);
  free(d->nz);
  free(d->choice);
}

static int dp_run(struct dp *d, const struct batch_norm *nm, const size_t count[BATCH_NCLASS],
                  struct iob_error **err) {
  memset(d, 0, sizeof(*d));
  d->nm = nm;
  size_t s = states_of(count);
  if (s == SIZE_MAX)
    return iob_error_code(err, IOB_CODE_RESOURCE_EXHAUSTED,
                          "instance too large for the exact solver (over %u "
                          "count states)",
                          BATCH_EXACT_MAX_STATES);
  size_t st = 1;
  for (int c = 0; c < BATCH_NCLASS; c++) {
    if (count[c] == 0)
      continue;
    d->cls[d->m] = c;
    d->cnt[d->m] = (unsigned)count[c];
    d->stride[d->m] = st;
    st *= count[c] + 1;
    d->m++;
  }
  d->states = s;
  d->cost = xmalloc(s * sizeof(double));
  d->tp = xmalloc(s * sizeof(double));
  d->nz = xmalloc(s * sizeof(unsigned));
  d->choice = xmalloc(s * sizeof(uint32_t));
  d->cost[0] = d->tp[0] = 0;
  d->nz[0] = 0;
  d->choice[0] = 0;
  memset(d->v, 0, sizeof(d->v));
  /* Increasing index: every v - x (x non-empty) has a smaller index. */
  for (size_t vi = 1; vi < s; vi++) {
    for (unsigned k = 0; k < d->m; k++) { /* mixed-radix increment */
      if (++d->v[k] <= d->cnt[k])
        break;
      d->v[k] = 0;
    }
    d->vi = vi;
    d->best_c = d->best_t = HUGE_VAL;
    d->best_z = UINT32_MAX;
    dp_enum(d, 0, 0, 0, 0);
    d->cost[vi] = d->best_c;
    d->tp[vi] = d->best_t;
    d->nz[vi] = d->best_z;
    d->choice[vi] = d->best_x;
  }
  return 0;
}

static void dp_decode(const struct dp *d, size_t idx, unsigned x[BATCH_NCLASS]) {
  memset(x, 0, sizeof(unsigned) * BATCH_NCLASS);
  for (unsigned k = 0; k < d->m; k++)
    x[d->cls[k]] = (unsigned)(idx / d->stride[k] % (d->cnt[k] + 1));
}

static size_t dp_encode(const struct dp *d, const unsigned x[BATCH_NCLASS]) {
  size_t idx = 0;
  for (unsigned k = 0; k < d->m; k++)
    idx += x[d->cls[k]] * d->stride[k];
  return idx;
}

static void counts_push(struct batch_counts *out, const unsigned x[BATCH_NCLASS]) {
  out->b = xrealloc(out->b, (out->nb + 1) * sizeof(*out->b));
  memcpy(out->b[out->nb++], x, sizeof(unsigned) * BATCH_NCLASS);
}

static void dp_unroll(const struct dp *d, size_t idx, struct batch_counts *out) {
  while (idx != 0) {
    unsigned x[BATCH_NCLASS];
    dp_decode(d, d->choice[idx], x);
    counts_push(out, x);
    idx -= d->choice[idx];
  }
}

/* Batch 0 = fixed0 + y for the best y <= free with |fixed0 + y| <= cap0;
 * the rest of `free` is partitioned by the table. */
struct pin {
  const struct dp *d;
  const unsigned *fixed0;
  double tp0;
  unsigned size0, cap0;
  unsigned y[BATCH_NCLASS];
  double best_c, best_t;
  unsigned best_z;
  unsigned best_y[BATCH_NCLASS];
};

static void pin_enum(struct pin *pn, int c, unsigned size, double tp) {
  const struct dp *d = pn->d;
  const struct batch_norm *nm = d->nm;
  if (c == BATCH_NCLASS) {
    size_t rest = d->states - 1 - dp_encode(d, pn->y);
    double c0 = size ? nm->a * tp + nm->w : 0;
    double cc = c0 + d->cost[rest], tt = tp + d->tp[rest];
    unsigned zz = (size ? 1 : 0) + d->nz[rest];
    if (better(cc, tt, zz, pn->best_c, pn->best_t, pn->best_z)) {
      pn->best_c = cc, pn->best_t = tt, pn->best_z = zz;
      memcpy(pn->best_y, pn->y, sizeof(pn->y));
    }
    return;
  }
  unsigned avail = 0;
  for (unsigned k = 0; k < d->m; k++)
    if (d->cls[k] == c)
      avail = d->cnt[k];
  double cross = 0;
  for (int j = 0; j < BATCH_NCLASS; j++)
    cross += ((j < c ? pn->y[j] : 0) + pn->fixed0[j]) * nm->p[c][j];
  for (unsigned n = 0; n <= avail && (n == 0 || size + n <= pn->cap0); n++) {
    pn->y[c] = n;
    double add = n * cross + (double)n * (n - 1) / 2 * nm->p[c][c];
    pin_enum(pn, c + 1, size + n, tp + add);
  }
  pn->y[c] = 0;
}

static int exact_counts(const struct batch_norm *nm, const size_t count[BATCH_NCLASS],
                        const unsigned fixed0[BATCH_NCLASS], unsigned cap0,
                        struct batch_counts *out, struct iob_error **err) {
  size_t freec[BATCH_NCLASS];
  for (int c = 0; c < BATCH_NCLASS; c++)
    freec[c] = count[c] - (fixed0 ? fixed0[c] : 0);
  struct dp d;
  if (dp_run(&d, nm, freec, err) < 0)
    return -1;
  if (fixed0 == NULL) {
    dp_unroll(&d, d.states - 1, out);
  } else {
    struct pin pn = {.d = &d, .fixed0 = fixed0, .cap0 = cap0};
    for (int c = 0; c < BATCH_NCLASS; c++)
      pn.size0 += fixed0[c];
    pn.tp0 = batch_tp_counts(nm, fixed0);
    pn.best_c = pn.best_t = HUGE_VAL;
    pn.best_z = UINT32_MAX;
    pin_enum(&pn, 0, pn.size0, pn.tp0);
    unsigned b0[BATCH_NCLASS];
    for (int c = 0; c < BATCH_NCLASS; c++)
      b0[c] = fixed0[c] + pn.best_y[c];
    counts_push(out, b0);
    dp_unroll(&d, d.states - 1 - dp_encode(&d, pn.best_y), out);
  }
  dp_free(&d);
  return 0;
}

/* ---- heuristic ---- */

struct hs {
  const struct batch_norm *nm;
  unsigned nb; /* batches allocated */
  unsigned hw; /* 1 + highest batch ever used: loops stop at
                  hw + 1 (one empty batch is enough) */
  unsigned (*b)[BATCH_NCLASS];
  unsigned *size;
  const unsigned *min0; /* batch 0's pinned counts, or NULL */
  unsigned cap0;
  double tp;
  unsigned nz;
};

static unsigned hs_end(const struct hs *h) {
  return h->hw + 1 < h->nb ? h->hw + 1 : h->nb;
}

static unsigned hs_cap(const struct hs *h, unsigned b) {
  return b == 0 && h->min0 ? h->cap0 : h->nm->L;
}

/* Pair cost of one job of class c with the jobs of batch b. */
static double cost_to(const struct hs *h, int c, unsigned b) {
  double s = 0;
  for (int j = 0; j < BATCH_NCLASS; j++)
    s += h->b[b][j] * h->nm->p[c][j];
  return s;
}

static void hs_put(struct hs *h, int c, unsigned b) {
  if (b + 1 > h->hw)
    h->hw = b + 1;
  h->tp += cost_to(h, c, b);
  if (h->size[b]++ == 0)
    h->nz++;
  h->b[b][c]++;
}

static void hs_take(struct hs *h, int c, unsigned b) {
  h->b[b][c]--;
  if (--h->size[b] == 0)
    h->nz--;
  h->tp -= cost_to(h, c, b);
}

static double hs_obj(const struct hs *h) {
  return h->nm->a * h->tp + h->nm->w * h->nz;
}

/* Greedy: place jobs in `order` where they add the least cost; an empty
 * batch costs w (a new batch) unless fewer than `open` are in use. */
static void hs_greedy(struct hs *h, const int *order, size_t n, unsigned open) {
  for (size_t i = 0; i < n; i++) {
    int c = order[i];
    unsigned best = UINT32_MAX;
    double bc = HUGE_VAL;
    bool used_empty = false;
    for (unsigned b = 0; b < hs_end(h); b++) {
      if (h->size[b] >= hs_cap(h, b))
        continue;
      if (h->size[b] == 0) {
        if (used_empty)
          continue; /* all empty batches are alike */
        used_empty = true;
      }
      double d = h->nm->a * cost_to(h, c, b);
      if (h->size[b] == 0 && h->nz >= open)
        d += h->nm->w;
      if (d < bc - EPS) {
        bc = d;
        best = b;
      }
    }
    hs_put(h, c, best);
  }
}

static bool try_move(struct hs *h, unsigned A, int c) {
  const struct batch_norm *nm = h->nm;
  double out = cost_to(h, c, A) - nm->p[c][c];
  bool tried_empty = false;
  for (unsigned B = 0; B < hs_end(h); B++) {
    if (B == A || h->size[B] >= hs_cap(h, B))
      continue;
    if (h->size[B] == 0) {
      if (tried_empty)
        continue;
      tried_empty = true;
    }
    double dtp = cost_to(h, c, B) - out;
    int dz = (h->size[B] == 0) - (h->size[A] == 1);
    double d = nm->a * dtp + nm->w * dz;
    if (d < -EPS || (d <= EPS && (dz < 0 || (dz == 0 && dtp < -EPS)))) {
      hs_take(h, c, A);
      hs_put(h, c, B);
      return true;
    }
  }
  return false;
}

static bool try_swap(struct hs *h, unsigned A, int c) {
  const struct batch_norm *nm = h->nm;
  for (unsigned B = A + 1; B < hs_end(h); B++) {
    if (h->size[B] == 0)
      continue;
    for (int e = 0; e < BATCH_NCLASS; e++) {
      if (e == c || h->b[B][e] == 0)
        continue;
      /* B > A >= 0, so B is never the pinned batch */
      double dtp = (cost_to(h, c, B) - nm->p[c][e]) + (cost_to(h, e, A) - nm->p[e][c]) -
                   (cost_to(h, c, A) - nm->p[c][c]) - (cost_to(h, e, B) - nm->p[e][e]);
      if (dtp < -EPS) { /* Nz is unchanged; a >= 0 */
        hs_take(h, c, A);
        hs_take(h, e, B);
        hs_put(h, e, A);
        hs_put(h, c, B);
        return true;
      }
    }
  }
  return false;
}

/* Two jobs out of their batches into a new one together.  Neither move
 * pays alone when a new batch costs more than one job's share of penalty
 * (e.g. {sr,sw,sw} + {sr,sr,sr} -> ... + {sr,sw}), so the single-job moves
 * stall there.  Candidates: per class, the two batches where one job of it
 * suffers most; each trial is applied and undone if it does not improve. */
static bool try_pair(struct hs *h) {
  const struct batch_norm *nm = h->nm;
  unsigned top[BATCH_NCLASS][2];
  double val[BATCH_NCLASS][2];
  for (int c = 0; c < BATCH_NCLASS; c++) {
    top[c][0] = top[c][1] = UINT32_MAX;
    val[c][0] = val[c][1] = -1;
  }
  unsigned empty = UINT32_MAX;
  for (unsigned A = 0; A < hs_end(h); A++) {
    if (h->size[A] == 0) {
      if (empty == UINT32_MAX && !(A == 0 && h->min0))
        empty = A;
      continue;
    }
    for (int c = 0; c < BATCH_NCLASS; c++) {
      unsigned lim = A == 0 && h->min0 ? h->min0[c] : 0;
      if (h->b[A][c] <= lim)
        continue;
      double out = cost_to(h, c, A) - nm->p[c][c];
      if (out > val[c][0]) {
        val[c][1] = val[c][0], top[c][1] = top[c][0];
        val[c][0] = out, top[c][0] = A;
      } else if (out > val[c][1]) {
        val[c][1] = out, top[c][1] = A;
      }
    }
  }
  if (empty == UINT32_MAX || nm->L < 2)
    return false;
  for (int c = 0; c < BATCH_NCLASS; c++)
    for (int d = c; d < BATCH_NCLASS; d++)
      for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
          unsigned A = top[c][i], C = top[d][j];
          if (A == UINT32_MAX || C == UINT32_MAX)
            continue;
          unsigned lim = A == 0 && h->min0 ? h->min0[c] : 0;
          if (A == C && c == d && h->b[A][c] < lim + 2)
            continue;
          double o0 = hs_obj(h), t0 = h->tp;
          unsigned z0 = h->nz;
          hs_take(h, c, A);
          unsigned limd = C == 0 && h->min0 ? h->min0[d] : 0;
          if (h->b[C][d] <= limd) {
            hs_put(h, c, A);
            continue;
          }
          hs_take(h, d, C);
          hs_put(h, c, empty);
          hs_put(h, d, empty);
          if (better(hs_obj(h), h->tp, h->nz, o0, t0, z0))
            return true;
          hs_take(h, d, empty);
          hs_take(h, c, empty);
          hs_put(h, d, C);
          hs_put(h, c, A);
        }
  return false;
}

/* One pass of moves (a job to another batch, possibly an empty one) and
 * swaps (two jobs of different classes), applying every improving step
 * (lexicographic objective, Nz, Tp: strictly decreasing, so no cycles).
 * Working on class counts makes a pass O(batches^2 * classes^2). */
static bool hs_improve_once(struct hs *h) {
  bool any = false;
  for (unsigned A = 0; A < hs_end(h); A++) {
    for (int c = 0; c < BATCH_NCLASS; c++) {
      unsigned lim = A == 0 && h->min0 ? h->min0[c] : 0;
      if (h->b[A][c] <= lim)
        continue;
      if (try_move(h, A, c) || try_swap(h, A, c))
        any = true;
    }
  }
  while (try_pair(h)) /* cheap: O(batches x classes) per call */
    any = true;
  return any;
}

static void hs_init(struct hs *h, const struct batch_norm *nm, size_t n, const unsigned *min0,
                    unsigned cap0) {
  memset(h, 0, sizeof(*h));
  h->nm = nm;
  h->min0 = min0;
  h->cap0 = cap0;
  h->nb = (unsigned)n + 1;
  h->b = xcalloc(h->nb, sizeof(*h->b));
  h->size = xcalloc(h->nb, sizeof(unsigned));
}

static void hs_free(struct hs *h) {
  free(h->b);
  free(h->size);
}

/* Start orders: the most conflicting jobs first (they need the best
 * places); jobs grouped by class (same-class batches, good when penalties
 * across classes dominate); classes interleaved (spread, good when
 * same-class penalties dominate). */
static void make_order(int kind, const struct batch_norm *nm, const size_t freec[BATCH_NCLASS],
                       int *order) {
  size_t k = 0;
  int cls[BATCH_NCLASS];
  for (int c = 0; c < BATCH_NCLASS; c++)
    cls[c] = c;
  if (kind == 0) {
    double deg[BATCH_NCLASS];
    for (int c = 0; c < BATCH_NCLASS; c++) {
      deg[c] = 0;
      for (int j = 0; j < BATCH_NCLASS; j++)
        deg[c] += (double)freec[j] * nm->p[c][j];
    }
    for (int i = 1; i < BATCH_NCLASS; i++)
      for (int j = i; j > 0 && deg[cls[j]] > deg[cls[j - 1]]; j--) {
        int t = cls[j];
        cls[j] = cls[j - 1];
        cls[j - 1] = t;
      }
  }
  if (kind == 2) {
    size_t left[BATCH_NCLASS];
    memcpy(left, freec, sizeof(left));
    for (bool any = true; any;) {
      any = false;
      for (int c = 0; c < BATCH_NCLASS; c++)
        if (left[c]) {
          order[k++] = c;
          left[c]--;
          any = true;
        }
    }
    return;
  }
  for (int i = 0; i < BATCH_NCLASS; i++)
    for (size_t j = 0; j < freec[cls[i]]; j++)
      order[k++] = cls[i];
}

static void heuristic_counts(const struct batch_norm *nm, const size_t count[BATCH_NCLASS],
                             const unsigned fixed0[BATCH_NCLASS], unsigned cap0,
                             struct batch_counts *out) {
  size_t n = 0, freec[BATCH_NCLASS];
  for (int c = 0; c < BATCH_NCLASS; c++) {
    freec[c] = count[c] - (fixed0 ? fixed0[c] : 0);
    n += freec[c];
  }
  int *order = xmalloc((n + 1) * sizeof(int));
  struct hs best = {0};
  double bo = HUGE_VAL, bt = HUGE_VAL;
  unsigned bz = UINT32_MAX;
  /* Starts: three orders x a few batch counts from Nz_min up, since the
   * greedy alone never opens a batch it does not need yet. */
  unsigned extra_max = n < 64 ? 4 : 2;
  for (unsigned run = 0; run < 3 * (extra_max + 1); run++) {
    int kind = (int)(run % 3);
    unsigned open = nm->nz_min + run / 3;
    struct hs h;
    hs_init(&h, nm, n + 1, fixed0, cap0);
    if (fixed0)
      for (int c = 0; c < BATCH_NCLASS; c++)
        for (unsigned j = 0; j < fixed0[c]; j++)
          hs_put(&h, c, 0);
    make_order(kind, nm, freec, order);
    hs_greedy(&h, order, n, open);
    while (hs_improve_once(&h))
      ;
    if (better(hs_obj(&h), h.tp, h.nz, bo, bt, bz)) {
      hs_free(&best);
      best = h;
      bo = hs_obj(&h), bt = h.tp, bz = h.nz;
    } else {
      hs_free(&h);
    }
  }
  free(order);
  for (unsigned b = 0; b < best.nb; b++)
    if (best.size[b] > 0 || (b == 0 && fixed0))
      counts_push(out, best.b[b]);
  hs_free(&best);
}

int batch_partition_counts(const struct batch_norm *nm, const size_t count[BATCH_NCLASS],
                           const unsigned fixed0[BATCH_NCLASS], unsigned cap0, bool exact,
                           struct batch_counts *out, struct iob_error **err) {
  memset(out, 0, sizeof(*out));
  if (exact) /* fails, if at all, before it adds a batch */
    return exact_counts(nm, count, fixed0, cap0, out, err);
  heuristic_counts(nm, count, fixed0, cap0, out);
  return 0;
}

/* ---- public ---- */

double batch_solve_work(const struct batch_config *cfg, const enum batch_class *cls, size_t n) {
  size_t count[BATCH_NCLASS] = {0};
  for (size_t i = 0; i < n; i++)
    if ((unsigned)cls[i] < BATCH_NCLASS)
      count[cls[i]]++;
  return batch_work_counts(cfg->max_batch ? cfg->max_batch : 1, count);
}

static int check_input(const struct batch_config *cfg, const enum batch_class *cls, size_t n,
                       size_t count[BATCH_NCLASS], struct iob_error **err) {
  if (cfg->max_batch < 1 || cfg->max_batch > BATCH_MAX_BATCH)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid max batch size %u",
                          cfg->max_batch);
  if (!(cfg->alpha >= 0 && cfg->alpha <= 1))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid alpha %g (want 0..1)",
                          cfg->alpha);
  for (int i = 0; i < BATCH_NCLASS; i++)
    for (int j = 0; j < BATCH_NCLASS; j++)
      if (!(cfg->s[i][j] >= 0 && cfg->s[i][j] <= BATCH_PENALTY_MAX))
        return iob_error_code(
            err, IOB_CODE_INVALID_ARGUMENT, "invalid penalty for '%s' beside '%s'",
            batch_class_name((enum batch_class)i), batch_class_name((enum batch_class)j));
  memset(count, 0, sizeof(size_t) * BATCH_NCLASS);
  for (size_t i = 0; i < n; i++) {
    if ((unsigned)cls[i] >= BATCH_NCLASS)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid class %d for job %zu",
                            (int)cls[i], i);
    count[cls[i]]++;
  }
  return 0;
}

int batch_evaluate(const struct batch_config *cfg, const enum batch_class *cls, size_t n,
                   const unsigned *batch_of, double *objective, double *tp, unsigned *nz,
                   struct iob_error **err) {
  size_t count[BATCH_NCLASS];
  if (check_input(cfg, cls, n, count, err) < 0)
    return -1;
  struct batch_norm nm;
  batch_norm_init(&nm, cfg, count);
  unsigned(*b)[BATCH_NCLASS] = xcalloc(n + 1, sizeof(*b));
  unsigned *size = xcalloc(n + 1, sizeof(unsigned));
  int ret = 0;
  for (size_t i = 0; i < n; i++) {
    if (batch_of[i] >= n) {
      ret = iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "job %zu: batch %u out of range", i,
                           batch_of[i]);
      goto out;
    }
    b[batch_of[i]][cls[i]]++;
    if (++size[batch_of[i]] > nm.L) {
      ret = iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "batch %u holds more than %u jobs",
                           batch_of[i], nm.L);
      goto out;
    }
  }
  double t = 0;
  unsigned z = 0;
  for (size_t k = 0; k < n; k++)
    if (size[k]) {
      t += batch_tp_counts(&nm, b[k]);
      z++;
    }
  if (tp)
    *tp = t;
  if (nz)
    *nz = z;
  if (objective)
    *objective = nm.a * t + nm.w * ((double)z - nm.nz_min);
out:
  free(b);
  free(size);
  return ret;
}

int batch_solve(const struct batch_config *cfg, const enum batch_class *cls, size_t n,
                enum batch_method method, struct batch_solution *sol, struct iob_error **err) {
  memset(sol, 0, sizeof(*sol));
  size_t count[BATCH_NCLASS];
  if (check_input(cfg, cls, n, count, err) < 0)
    return -1;
  struct batch_norm nm;
  batch_norm_init(&nm, cfg, count);
  bool exact;
  if (method == BATCH_SOLVE_AUTO)
    exact = batch_work_counts(nm.L, count) <= cfg->exact_limit;
  else
    exact = method == BATCH_SOLVE_EXACT;
  struct batch_counts bc;
  if (batch_partition_counts(&nm, count, NULL, 0, exact, &bc, err) < 0)
    return -1;
  sol->batch_of = xcalloc(n + 1, sizeof(unsigned));
  /* Jobs of a class go to batches in job order (FIFO within a class); then
   * batches are renumbered by their first job so that output is stable. */
  unsigned *map = xmalloc((bc.nb + 1) * sizeof(unsigned));
  unsigned cur[BATCH_NCLASS] = {0};
  for (size_t i = 0; i < n; i++) {
    int c = cls[i];
    while (cur[c] < bc.nb && bc.b[cur[c]][c] == 0)
      cur[c]++;
    sol->batch_of[i] = cur[c];
    bc.b[cur[c]][c]--;
  }
  for (unsigned k = 0; k < bc.nb; k++)
    map[k] = UINT32_MAX;
  unsigned next = 0;
  for (size_t i = 0; i < n; i++) {
    if (map[sol->batch_of[i]] == UINT32_MAX)
      map[sol->batch_of[i]] = next++;
    sol->batch_of[i] = map[sol->batch_of[i]];
  }
  free(map);
  free(bc.b);
  sol->n = n;
  sol->optimal = exact;
  sol->method = exact ? BATCH_SOLVE_EXACT : BATCH_SOLVE_HEURISTIC;
  sol->tp_max = nm.tp_max;
  return batch_evaluate(cfg, cls, n, sol->batch_of, &sol->objective, &sol->tp, &sol->nz, err);
}

void batch_solution_free(struct batch_solution *sol) {
  free(sol->batch_of);
  sol->batch_of = NULL;
}
