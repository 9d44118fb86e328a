// SPDX-License-Identifier: Apache-2.0
/* Block I/O latency per container: the histogram arithmetic of the BPF
 * program's buckets (agent/sample/bpf/blklat.h) and the choice of the latency
 * source.  Plain C, no I/O: agent/sample/latency.c reads the histograms, the
 * sampler turns each window's difference into a p50, a p99 and a count. */
#ifndef IOB_AGENT_LATHIST_H
#define IOB_AGENT_LATHIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/sample/bpf/blklat.h"
#include "common/error.h"

#define AGENT_LATHIST_BUCKETS BLKLAT_BUCKETS

/* The bucket of a latency of us microseconds: buckets 0-3 hold 0-3 us,
 * then 4 per power of two ([2^p + k 2^(p-2), 2^p + (k+1) 2^(p-2)), k 0..3),
 * the last everything from its lower bound up.  The BPF program applies
 * the same rule. */
unsigned agent_lathist_bucket(uint64_t us);
/* The least latency a bucket holds, and the least the next one holds
 * (UINT64_MAX for the last). */
uint64_t agent_lathist_lower(unsigned b);
uint64_t agent_lathist_upper(unsigned b);

/* One window of a container's requests: how many completed, and their
 * p50 and p99 (microseconds; 0 when count is 0), each interpolated
 * linearly inside its bucket; a quantile in the last bucket is that
 * bucket's lower bound and sets overflow. */
struct agent_lathist_window {
  uint64_t count;
  double p50_us, p99_us;
  bool overflow;
};

/* The window between two readings of one cgroup's histogram (n buckets):
 * now - before per bucket.  A bucket that went down means the counters
 * started again (the entry was removed and made anew): now is the
 * window then. */
void agent_lathist_window(const uint64_t *now, const uint64_t *before, size_t n,
                          struct agent_lathist_window *out);
/* The q quantile (0 < q <= 1) of a histogram of total requests. */
double agent_lathist_quantile(const uint64_t *h, size_t n, uint64_t total, double q,
                              bool *overflow);

/* A container's latency as a Prometheus histogram, cumulative since it
 * was registered.  The upper bounds are 2^5 to 2^24 us (32 us to 16.8 s,
 * doubling: the log2 buckets block I/O tools such as bcc's biolatency
 * print), which covers 50 us to 10 s and are bin boundaries of the BPF
 * program's histogram: every bin falls wholly in one bucket, and the
 * counts are exact. */
#define AGENT_LATHIST_HIST_BUCKETS 20
struct agent_lathist_hist {
  uint64_t bucket[AGENT_LATHIST_HIST_BUCKETS + 1]; /* per bucket, not cumulative; the last: +Inf */
  uint64_t count;
  double sum_us;
};
/* The upper bound of bucket i (i < AGENT_LATHIST_HIST_BUCKETS), in us. */
uint64_t agent_lathist_hist_le_us(unsigned i);
/* Add the window between two readings of the BPF histogram (n bins; the
 * rule of agent_lathist_window for a bin that went down).  The program
 * keeps no sum: each request adds its bin's midpoint (its lower bound in
 * the last, open bin), which is within an eighth of an octave of it. */
void agent_lathist_hist_add_window(struct agent_lathist_hist *h, const uint64_t *now,
                                   const uint64_t *before, size_t n);
/* Add n requests of us microseconds each (the io.pressure approximation:
 * the window's stall time per request). */
void agent_lathist_hist_observe(struct agent_lathist_hist *h, double us, uint64_t n);

/* The io.pressure approximation of a window (latency_source = pressure,
 * or BPF not loaded): some_a and some_b the "some" stall totals (us) at
 * its start and end, ios the requests the sampler counted in it, dt_ns
 * its length.  p50 = p99 = stall time per request (exact for one task
 * issuing one request at a time; requests in parallel stall together, so
 * less otherwise), count = ios, *stall the share of the window stalled.
 * Fails (out untouched) when the totals went backwards or dt_ns is 0. */
int agent_lathist_pressure_window(uint64_t some_a, uint64_t some_b, uint64_t ios, uint64_t dt_ns,
                                  struct agent_lathist_window *out, double *stall);

/* One reading of the BPF program's whole map (agent_latency_snapshot):
 * n entries, keys[i] -> vals[i], and an index for agent_lathist_snap_find.
 * Read once per window with one batched lookup instead of one system
 * call per container (at 1000 containers, one lookup each is most of the
 * agent's CPU).  The buffers grow to the largest map seen and are
 * kept: no allocation per window once they have. */
struct agent_lathist_snap {
  size_t n, cap;
  uint64_t *keys;
  struct blklat_val *vals;
  uint32_t *slots; /* open addressing: an entry's index + 1, 0 empty */
  size_t nslots;   /* a power of two, at least 2 n */
  bool valid;      /* read this window */
};
/* Room for at least want entries in keys and vals (kept: n unchanged). */
void agent_lathist_snap_reserve(struct agent_lathist_snap *s, size_t want);
/* Index keys[0..n) (after they are read); a key read twice keeps its
 * first value. */
void agent_lathist_snap_index(struct agent_lathist_snap *s);
/* key's counters, NULL when the map has no entry for it. */
const struct blklat_val *agent_lathist_snap_find(const struct agent_lathist_snap *s, uint64_t key);
void agent_lathist_snap_free(struct agent_lathist_snap *s);

/* latency_source in iobatchd.conf. */
enum agent_lathist_pref {
  AGENT_LATHIST_AUTO = 0, /* BPF where it loads, else io.pressure */
  AGENT_LATHIST_BPF,      /* BPF or the agent does not start */
  AGENT_LATHIST_PRESSURE, /* io.pressure (approximate) */
  AGENT_LATHIST_OFF,
};
/* "auto", "bpf", "pressure", "off"; "invalid" otherwise. */
const char *agent_lathist_pref_name(int pref);

/* What the agent measures latency with. */
enum agent_lathist_mode {
  AGENT_LATHIST_MODE_OFF = 0,
  AGENT_LATHIST_MODE_BPF,
  AGENT_LATHIST_MODE_PRESSURE,
};
const char *agent_lathist_mode_name(int mode);

/* Whether to try loading the BPF program for pref. */
bool agent_lathist_wants_bpf(int pref);
/* The mode for pref once BPF was tried (bpf_error: why it did not load,
 * NULL when it did; ignored when it was not tried).  *why is a static or
 * bpf_error-based reason for a mode other than BPF, for the one log line
 * at start, or NULL.  Fails when pref is bpf and BPF did not load. */
int agent_lathist_decide(int pref, const char *bpf_error, int *mode, char **why,
                         struct iob_error **err);

#endif
