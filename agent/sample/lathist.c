// SPDX-License-Identifier: Apache-2.0
/* Histogram arithmetic and the latency source rule (agent/sample/lathist.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent/sample/lathist.h"
#include "common/xalloc.h"

#define SUB (1u << BLKLAT_SUB_BITS)

static unsigned fls64(uint64_t v) {
  return 63u - (unsigned)__builtin_clzll(v);
}

unsigned agent_lathist_bucket(uint64_t us) {
  if (us < SUB)
    return (unsigned)us;
  unsigned p = fls64(us);
  unsigned sub = (unsigned)(us >> (p - BLKLAT_SUB_BITS)) & (SUB - 1);
  unsigned b = SUB + ((p - BLKLAT_SUB_BITS) << BLKLAT_SUB_BITS) + sub;
  return b < AGENT_LATHIST_BUCKETS - 1 ? b : AGENT_LATHIST_BUCKETS - 1;
}

uint64_t agent_lathist_lower(unsigned b) {
  if (b < SUB)
    return b;
  unsigned p = (b - SUB) / SUB + BLKLAT_SUB_BITS, k = (b - SUB) % SUB;
  return (1ull << p) + (uint64_t)k * (1ull << (p - BLKLAT_SUB_BITS));
}

uint64_t agent_lathist_upper(unsigned b) {
  if (b >= AGENT_LATHIST_BUCKETS - 1)
    return UINT64_MAX;
  return agent_lathist_lower(b + 1);
}

double agent_lathist_quantile(const uint64_t *h, size_t n, uint64_t total, double q,
                              bool *overflow) {
  if (total == 0 || n == 0)
    return 0;
  /* The rank of the quantile among total requests, 1-based (nearest
   * rank), then where it falls inside its bucket. */
  double rank = ceil(q * (double)total);
  if (rank < 1)
    rank = 1;
  uint64_t cum = 0;
  for (size_t b = 0; b < n; b++) {
    if (h[b] == 0 || (double)(cum + h[b]) < rank) {
      cum += h[b];
      continue;
    }
    uint64_t lo = agent_lathist_lower((unsigned)b), hi = agent_lathist_upper((unsigned)b);
    if (hi == UINT64_MAX || b == n - 1) {
      *overflow = true;
      return (double)lo;
    }
    return (double)lo + (double)(hi - lo) * (rank - (double)cum) / (double)h[b];
  }
  /* total was more than the buckets hold: the largest bucket with any */
  for (size_t b = n; b-- > 0;)
    if (h[b])
      return (double)agent_lathist_lower((unsigned)b);
  return 0;
}

void agent_lathist_window(const uint64_t *now, const uint64_t *before, size_t n,
                          struct agent_lathist_window *out) {
  uint64_t d[AGENT_LATHIST_BUCKETS] = {0};
  bool restarted = false;
  if (n > AGENT_LATHIST_BUCKETS)
    n = AGENT_LATHIST_BUCKETS;
  for (size_t b = 0; before && b < n; b++)
    restarted |= now[b] < before[b];
  uint64_t total = 0;
  for (size_t b = 0; b < n; b++) {
    d[b] = before && !restarted ? now[b] - before[b] : now[b];
    total += d[b];
  }
  *out = (struct agent_lathist_window){.count = total};
  out->p50_us = agent_lathist_quantile(d, n, total, 0.50, &out->overflow);
  out->p99_us = agent_lathist_quantile(d, n, total, 0.99, &out->overflow);
}

uint64_t agent_lathist_hist_le_us(unsigned i) {
  return 32ull << i;
}

/* The bucket of a bin whose requests took less than hi us (the program
 * truncates to whole us, so a bin [lo, hi) holds [lo, hi) exactly): the
 * first whose bound is at least hi. */
static unsigned hist_bucket_below(uint64_t hi) {
  unsigned i = 0;
  while (i < AGENT_LATHIST_HIST_BUCKETS && hi > agent_lathist_hist_le_us(i))
    i++;
  return i;
}

void agent_lathist_hist_add_window(struct agent_lathist_hist *h, const uint64_t *now,
                                   const uint64_t *before, size_t n) {
  bool restarted = false;
  if (n > AGENT_LATHIST_BUCKETS)
    n = AGENT_LATHIST_BUCKETS;
  for (size_t b = 0; before && b < n; b++)
    restarted |= now[b] < before[b];
  for (size_t b = 0; b < n; b++) {
    uint64_t d = before && !restarted ? now[b] - before[b] : now[b];
    if (d == 0)
      continue;
    uint64_t lo = agent_lathist_lower((unsigned)b), hi = agent_lathist_upper((unsigned)b);
    bool open = hi == UINT64_MAX || b == n - 1;
    h->bucket[open ? AGENT_LATHIST_HIST_BUCKETS : hist_bucket_below(hi)] += d;
    h->count += d;
    h->sum_us += (double)d * (open ? (double)lo : ((double)lo + (double)hi) / 2);
  }
}

void agent_lathist_hist_observe(struct agent_lathist_hist *h, double us, uint64_t n) {
  if (n == 0 || !(us >= 0))
    return;
  unsigned i = 0;
  while (i < AGENT_LATHIST_HIST_BUCKETS && us > (double)agent_lathist_hist_le_us(i))
    i++;
  h->bucket[i] += n;
  h->count += n;
  h->sum_us += us * (double)n;
}

int agent_lathist_pressure_window(uint64_t some_a, uint64_t some_b, uint64_t ios, uint64_t dt_ns,
                                  struct agent_lathist_window *out, double *stall) {
  if (some_b < some_a || dt_ns == 0)
    return -1;
  uint64_t us = some_b - some_a;
  *out = (struct agent_lathist_window){.count = ios};
  out->p50_us = out->p99_us = ios ? (double)us / (double)ios : 0;
  double share = (double)us * 1000.0 / (double)dt_ns;
  *stall = share > 1 ? 1 : share;
  return 0;
}

void agent_lathist_snap_reserve(struct agent_lathist_snap *s, size_t want) {
  if (want <= s->cap)
    return;
  size_t cap = s->cap ? s->cap : 64;
  while (cap < want)
    cap *= 2;
  s->keys = xrealloc(s->keys, cap * sizeof(s->keys[0]));
  s->vals = xrealloc(s->vals, cap * sizeof(s->vals[0]));
  s->cap = cap;
}

/* Fibonacci hashing: cgroup ids are inode numbers, often consecutive. */
static size_t snap_slot(uint64_t key, size_t nslots) {
  return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 32) & (nslots - 1);
}

void agent_lathist_snap_index(struct agent_lathist_snap *s) {
  size_t want = 16;
  while (want < 2 * s->n)
    want *= 2;
  if (want > s->nslots) {
    free(s->slots);
    s->slots = xcalloc(want, sizeof(s->slots[0]));
    s->nslots = want;
  } else {
    memset(s->slots, 0, s->nslots * sizeof(s->slots[0]));
  }
  for (size_t i = 0; i < s->n; i++) {
    size_t h = snap_slot(s->keys[i], s->nslots);
    while (s->slots[h] && s->keys[s->slots[h] - 1] != s->keys[i])
      h = (h + 1) & (s->nslots - 1);
    if (s->slots[h] == 0)
      s->slots[h] = (uint32_t)(i + 1);
  }
  s->valid = true;
}

const struct blklat_val *agent_lathist_snap_find(const struct agent_lathist_snap *s, uint64_t key) {
  if (s->nslots == 0)
    return NULL;
  for (size_t h = snap_slot(key, s->nslots); s->slots[h]; h = (h + 1) & (s->nslots - 1))
    if (s->keys[s->slots[h] - 1] == key)
      return &s->vals[s->slots[h] - 1];
  return NULL;
}

void agent_lathist_snap_free(struct agent_lathist_snap *s) {
  free(s->keys);
  free(s->vals);
  free(s->slots);
  memset(s, 0, sizeof(*s));
}

static const char *const pref_names[] = {"auto", "bpf", "pressure", "off"};

const char *agent_lathist_pref_name(int pref) {
  if (pref < 0 || pref > AGENT_LATHIST_OFF)
    return "invalid";
  return pref_names[pref];
}

const char *agent_lathist_mode_name(int mode) {
  switch (mode) {
  case AGENT_LATHIST_MODE_BPF:
    return "bpf";
  case AGENT_LATHIST_MODE_PRESSURE:
    return "pressure";
  case AGENT_LATHIST_MODE_OFF:
    return "off";
  }
  return "invalid";
}

bool agent_lathist_wants_bpf(int pref) {
  return pref == AGENT_LATHIST_AUTO || pref == AGENT_LATHIST_BPF;
}

int agent_lathist_decide(int pref, const char *bpf_error, int *mode, char **why,
                         struct iob_error **err) {
  *why = NULL;
  switch (pref) {
  case AGENT_LATHIST_OFF:
    *mode = AGENT_LATHIST_MODE_OFF;
    *why = xstrdup("latency_source = off");
    return 0;
  case AGENT_LATHIST_PRESSURE:
    *mode = AGENT_LATHIST_MODE_PRESSURE;
    *why = xstrdup("latency_source = pressure");
    return 0;
  case AGENT_LATHIST_BPF:
    if (bpf_error)
      return iob_error(err, 0, "latency_source = bpf, but %s", bpf_error);
    *mode = AGENT_LATHIST_MODE_BPF;
    return 0;
  case AGENT_LATHIST_AUTO:
    if (bpf_error) {
      *mode = AGENT_LATHIST_MODE_PRESSURE;
      *why = xstrdup(bpf_error);
      return 0;
    }
    *mode = AGENT_LATHIST_MODE_BPF;
    return 0;
  }
  return iob_error(err, 0, "invalid latency_source %d", pref);
}
