// SPDX-License-Identifier: Apache-2.0
/* Per-container block I/O latency (agent/sample/lathist.c): the bucket rule the
 * BPF program shares, percentiles of a window's histogram (empty, one
 * bucket, the overflow bucket, counters that started again), the
 * io.pressure approximation fed by the real io.pressure parser with
 * malformed files, and which source the agent uses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/sample/lathist.h"
#include "cgroupv2/pressure.h"
#include "common/cleanup.h"

#define N AGENT_LATHIST_BUCKETS

static void test_buckets(void **state) {
  (void)state;
  /* 0-3 us one bucket each, then 4 per power of two */
  for (uint64_t us = 0; us < 4; us++)
    assert_int_equal(agent_lathist_bucket(us), us);
  assert_int_equal(agent_lathist_bucket(4), 4);
  assert_int_equal(agent_lathist_bucket(5), 5);
  assert_int_equal(agent_lathist_bucket(7), 7);
  assert_int_equal(agent_lathist_bucket(8), 8);
  assert_int_equal(agent_lathist_bucket(9), 8); /* [8, 10) */
  assert_int_equal(agent_lathist_bucket(10), 9);
  assert_int_equal(agent_lathist_bucket(15), 11);
  assert_int_equal(agent_lathist_bucket(16), 12);
  /* every bucket's bounds hold what the rule puts there, and meet */
  for (unsigned b = 0; b + 1 < N; b++) {
    uint64_t lo = agent_lathist_lower(b), hi = agent_lathist_upper(b);
    assert_true(lo < hi);
    assert_int_equal(agent_lathist_bucket(lo), b);
    if (b + 2 < N)
      assert_int_equal(agent_lathist_bucket(hi - 1), b);
    assert_int_equal(agent_lathist_lower(b + 1), hi);
  }
  /* anything beyond the last bound lands in the overflow bucket */
  assert_int_equal(agent_lathist_bucket(UINT64_MAX), N - 1);
  assert_int_equal(agent_lathist_bucket(agent_lathist_lower(N - 1)), N - 1);
  assert_true(agent_lathist_upper(N - 1) == UINT64_MAX);
  assert_int_equal(agent_lathist_lower(N - 1), (1u << 24) + 3u * (1u << 22)); /* 29.4 s */
}

static void test_window_empty(void **state) {
  (void)state;
  uint64_t a[N] = {0}, b[N] = {0};
  struct agent_lathist_window w;
  agent_lathist_window(b, a, N, &w);
  assert_true(w.count == 0 && w.p50_us == 0 && w.p99_us == 0 && !w.overflow);
  /* the same counts twice: nothing completed in between */
  a[10] = b[10] = 500;
  agent_lathist_window(b, a, N, &w);
  assert_true(w.count == 0 && w.p50_us == 0 && w.p99_us == 0);
  /* no reading before: all of now */
  agent_lathist_window(b, NULL, N, &w);
  assert_int_equal(w.count, 500);
}

static void test_window_one_bucket(void **state) {
  (void)state;
  uint64_t a[N] = {0}, b[N] = {0};
  unsigned k = agent_lathist_bucket(100); /* [96, 112) */
  assert_int_equal(agent_lathist_lower(k), 96);
  assert_int_equal(agent_lathist_upper(k), 112);
  a[k] = 7;
  b[k] = 107; /* 100 requests in the window, all in one bucket */
  struct agent_lathist_window w;
  agent_lathist_window(b, a, N, &w);
  assert_int_equal(w.count, 100);
  /* interpolated inside the bucket: the 50th of 100 at half of it */
  assert_float_equal(w.p50_us, 96 + 16 * 0.5, 1e-9);
  assert_float_equal(w.p99_us, 96 + 16 * 0.99, 1e-9);
  assert_false(w.overflow);
  /* one request alone: both quantiles at its bucket's top */
  memset(b, 0, sizeof(b));
  b[3] = 1;
  agent_lathist_window(b, NULL, N, &w);
  assert_int_equal(w.count, 1);
  assert_float_equal(w.p50_us, 4, 1e-9);
  assert_float_equal(w.p99_us, 4, 1e-9);
}

static void test_window_tail(void **state) {
  (void)state;
  uint64_t b[N] = {0};
  /* 990 fast requests (~50 us) and 10 slow ones (~10 ms): p50 fast, p99
   * at the edge of the slow ones */
  b[agent_lathist_bucket(50)] = 990;
  b[agent_lathist_bucket(10000)] = 10;
  struct agent_lathist_window w;
  agent_lathist_window(b, NULL, N, &w);
  assert_int_equal(w.count, 1000);
  assert_true(w.p50_us >= 48 && w.p50_us < 56);
  assert_true(w.p99_us >= 48 && w.p99_us <= 56); /* rank 990: still the fast bucket */
  b[agent_lathist_bucket(10000)] = 11;
  agent_lathist_window(b, NULL, N, &w);
  assert_true(w.p99_us >= 8192 && w.p99_us < 10240); /* rank 991 of 1001: a slow one */
  assert_true(w.p50_us <= w.p99_us);
}

static void test_window_overflow(void **state) {
  (void)state;
  uint64_t b[N] = {0};
  b[N - 1] = 5; /* beyond the last bound: no upper edge to interpolate to */
  struct agent_lathist_window w;
  agent_lathist_window(b, NULL, N, &w);
  assert_int_equal(w.count, 5);
  assert_true(w.overflow);
  assert_float_equal(w.p99_us, (double)agent_lathist_lower(N - 1), 1e-9);
  /* only the tail in overflow: p50 is exact, p99 flags it */
  b[0] = 95;
  agent_lathist_window(b, NULL, N, &w);
  assert_true(w.overflow);
  assert_true(w.p50_us <= 1);
}

static void test_window_restarted(void **state) {
  (void)state;
  /* a bucket that went down: the entry was removed and made anew (the
   * container's cgroup id reused): the new counts are the window */
  uint64_t a[N] = {0}, b[N] = {0};
  a[20] = 1000;
  b[20] = 3;
  b[21] = 4;
  struct agent_lathist_window w;
  agent_lathist_window(b, a, N, &w);
  assert_int_equal(w.count, 7);
}

/* The Prometheus histogram: bounds 2^5 .. 2^24 us; every bin of the
 * program's falls wholly in one bucket (its requests all took at most
 * that bucket's bound, and more than the one before's), the open last
 * bin in +Inf; the sum adds midpoints. */
static void test_hist_bins(void **state) {
  (void)state;
  assert_int_equal(agent_lathist_hist_le_us(0), 32);
  assert_int_equal(agent_lathist_hist_le_us(AGENT_LATHIST_HIST_BUCKETS - 1), 16777216);
  for (unsigned b = 0; b < N; b++) {
    uint64_t one[N] = {0};
    one[b] = 1;
    struct agent_lathist_hist h = {0};
    agent_lathist_hist_add_window(&h, one, NULL, N);
    assert_int_equal(h.count, 1);
    unsigned i = 0;
    while (h.bucket[i] == 0)
      i++;
    uint64_t lo = agent_lathist_lower(b), hi = agent_lathist_upper(b);
    if (i == AGENT_LATHIST_HIST_BUCKETS) {
      assert_true(hi == UINT64_MAX || hi > agent_lathist_hist_le_us(i - 1));
      continue;
    }
    /* [lo, hi) whole us: at most hi, more than the bound before */
    assert_true(hi <= agent_lathist_hist_le_us(i));
    assert_true(i == 0 || lo >= agent_lathist_hist_le_us(i - 1));
    assert_true(h.sum_us == ((double)lo + (double)hi) / 2);
  }
}

/* Windows add up; a window whose bins went down (the entry made anew)
 * adds the new counts, never takes any away. */
static void test_hist_windows(void **state) {
  (void)state;
  uint64_t a[N] = {0}, b[N] = {0}, c[N] = {0};
  a[agent_lathist_bucket(100)] = 5;
  b[agent_lathist_bucket(100)] = 7;
  b[agent_lathist_bucket(3000)] = 1;
  c[agent_lathist_bucket(100)] = 1;
  struct agent_lathist_hist h = {0};
  agent_lathist_hist_add_window(&h, a, NULL, N);
  agent_lathist_hist_add_window(&h, b, a, N);
  assert_int_equal(h.count, 8);
  agent_lathist_hist_add_window(&h, c, b, N);
  assert_int_equal(h.count, 9);
  assert_int_equal(h.bucket[2], 8); /* 96-111 us: le 128 us */
  assert_int_equal(h.bucket[7], 1); /* 2560-3071 us: le 4096 us */
  /* the io.pressure approximation: n requests of the same time; a bound
   * itself is in its bucket (le is inclusive) */
  struct agent_lathist_hist p = {0};
  agent_lathist_hist_observe(&p, 32, 4);
  agent_lathist_hist_observe(&p, 32.5, 1);
  agent_lathist_hist_observe(&p, 1e9, 2);
  agent_lathist_hist_observe(&p, 50, 0);
  assert_int_equal(p.bucket[0], 4);
  assert_int_equal(p.bucket[1], 1);
  assert_int_equal(p.bucket[AGENT_LATHIST_HIST_BUCKETS], 2);
  assert_int_equal(p.count, 7);
  assert_true(p.sum_us == 4 * 32 + 32.5 + 2e9);
}

/* The fallback end to end from the io.pressure texts: the parser refuses
 * what is malformed, and the approximation refuses totals that went back. */
static void test_pressure_window(void **state) {
  (void)state;
  const char *t0 = "some avg10=0.00 avg60=0.00 avg300=0.00 total=1000000\n"
                   "full avg10=0.00 avg60=0.00 avg300=0.00 total=900000\n";
  const char *t1 = "some avg10=40.00 avg60=10.00 avg300=2.00 total=1400000\n"
                   "full avg10=30.00 avg60=8.00 avg300=1.00 total=1200000\n";
  struct cg2_pressure a, b;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(cg2_pressure_parse(t0, strlen(t0), &a, &err), 0);
  assert_int_equal(cg2_pressure_parse(t1, strlen(t1), &b, &err), 0);
  struct agent_lathist_window w;
  double stall = -1;
  /* 400 ms stalled in a 1 s window, 2000 requests: 200 us each */
  assert_int_equal(
      agent_lathist_pressure_window(a.some.total, b.some.total, 2000, 1000000000u, &w, &stall), 0);
  assert_int_equal(w.count, 2000);
  assert_float_equal(w.p50_us, 200, 1e-9);
  assert_float_equal(w.p99_us, 200, 1e-9);
  assert_float_equal(stall, 0.4, 1e-9);
  /* no request: count 0, latency 0, the stall still told */
  assert_int_equal(
      agent_lathist_pressure_window(a.some.total, b.some.total, 0, 1000000000u, &w, &stall), 0);
  assert_true(w.count == 0 && w.p99_us == 0);
  /* stalled longer than the window (rounding between reads): capped at 1 */
  assert_int_equal(agent_lathist_pressure_window(0, 2000000, 1, 1000000000u, &w, &stall), 0);
  assert_float_equal(stall, 1, 1e-9);
  /* totals that went back (a new cgroup of the same path), no window */
  w.count = 42;
  assert_int_equal(
      agent_lathist_pressure_window(b.some.total, a.some.total, 5, 1000000000u, &w, &stall), -1);
  assert_int_equal(w.count, 42);
  assert_int_equal(agent_lathist_pressure_window(1, 2, 5, 0, &w, &stall), -1);
  /* malformed io.pressure never reaches the approximation */
  static const char *const bad[] = {
      "",
      "some\n",
      "some avg10=0.00 avg60=0.00 avg300=0.00\n",                            /* no total */
      "some avg10=0.00 avg60=0.00 avg300=0.00 total=-5\n",                   /* negative */
      "some avg10=0.00 avg60=0.00 avg300=0.00 total=99999999999999999999\n", /* overflow */
      "some avg10=101.00 avg60=0.00 avg300=0.00 total=1\n",                  /* > 100 % */
      "some avg10=0.00 avg10=0.00 avg60=0.00 avg300=0.00 total=1\n",         /* twice */
      "full avg10=0.00 avg60=0.00 avg300=0.00 total=1\n",                    /* no some */
      "some avg10=x avg60=0.00 avg300=0.00 total=1\n",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    struct cg2_pressure p;
    struct iob_error *e = NULL;
    if (cg2_pressure_parse(bad[i], strlen(bad[i]), &p, &e) != -1)
      fail_msg("accepted bad io.pressure #%zu '%s'", i, bad[i]);
    assert_non_null(e);
    iob_error_release(&e);
  }
}

static void test_decide(void **state) {
  (void)state;
  int mode = -1;
  char *why = NULL;
  cleanup_error struct iob_error *err = NULL;
  /* auto: BPF when it loaded, else io.pressure with the reason */
  assert_true(agent_lathist_wants_bpf(AGENT_LATHIST_AUTO));
  assert_int_equal(agent_lathist_decide(AGENT_LATHIST_AUTO, NULL, &mode, &why, &err), 0);
  assert_int_equal(mode, AGENT_LATHIST_MODE_BPF);
  assert_null(why);
  assert_int_equal(agent_lathist_decide(AGENT_LATHIST_AUTO, "no kernel BTF at '/sys/kernel/btf/vmlinux'",
                                    &mode, &why, &err),
                   0);
  assert_int_equal(mode, AGENT_LATHIST_MODE_PRESSURE);
  assert_string_equal(why, "no kernel BTF at '/sys/kernel/btf/vmlinux'");
  free(why);
  /* bpf: required */
  assert_true(agent_lathist_wants_bpf(AGENT_LATHIST_BPF));
  assert_int_equal(agent_lathist_decide(AGENT_LATHIST_BPF, NULL, &mode, &why, &err), 0);
  assert_int_equal(mode, AGENT_LATHIST_MODE_BPF);
  assert_int_equal(agent_lathist_decide(AGENT_LATHIST_BPF,
                                    "cannot load the BPF program: Operation not "
                                    "permitted",
                                    &mode, &why, &err),
                   -1);
  assert_string_equal(err->msg,
                      "latency_source = bpf, but cannot load the BPF program: Operation not "
                      "permitted");
  iob_error_release(&err);
  /* pressure and off: BPF is not even tried */
  assert_false(agent_lathist_wants_bpf(AGENT_LATHIST_PRESSURE));
  assert_false(agent_lathist_wants_bpf(AGENT_LATHIST_OFF));
  assert_int_equal(agent_lathist_decide(AGENT_LATHIST_PRESSURE, NULL, &mode, &why, &err), 0);
  assert_int_equal(mode, AGENT_LATHIST_MODE_PRESSURE);
  assert_string_equal(why, "latency_source = pressure");
  free(why);
  assert_int_equal(agent_lathist_decide(AGENT_LATHIST_OFF, NULL, &mode, &why, &err), 0);
  assert_int_equal(mode, AGENT_LATHIST_MODE_OFF);
  free(why);
  assert_int_equal(agent_lathist_decide(17, NULL, &mode, &why, &err), -1);
  iob_error_release(&err);
  /* the names the config key takes */
  assert_string_equal(agent_lathist_pref_name(AGENT_LATHIST_AUTO), "auto");
  assert_string_equal(agent_lathist_pref_name(AGENT_LATHIST_PRESSURE), "pressure");
  assert_string_equal(agent_lathist_pref_name(9), "invalid");
  assert_string_equal(agent_lathist_mode_name(AGENT_LATHIST_MODE_BPF), "bpf");
}

/* The window's snapshot of the map: every key read is found with its
 * value, a key not read is not, whatever the number of entries (the
 * index grows and is rebuilt), consecutive ids (inodes) included. */
static void test_snap(void **state) {
  (void)state;
  struct agent_lathist_snap s = {0};
  assert_null(agent_lathist_snap_find(&s, 7)); /* never indexed */
  for (size_t n = 0; n <= 3000; n += n < 10 ? 1 : 997) {
    agent_lathist_snap_reserve(&s, n);
    assert_true(s.cap >= n);
    for (size_t i = 0; i < n; i++) {
      s.keys[i] = 4000 + i;
      memset(&s.vals[i], 0, sizeof(s.vals[i]));
      s.vals[i].rios = i;
    }
    s.n = n;
    agent_lathist_snap_index(&s);
    assert_true(s.valid);
    assert_true(s.nslots >= 2 * n);
    for (size_t i = 0; i < n; i++) {
      const struct blklat_val *v = agent_lathist_snap_find(&s, 4000 + i);
      assert_non_null(v);
      assert_int_equal(v->rios, i);
    }
    assert_null(agent_lathist_snap_find(&s, 3999));
    assert_null(agent_lathist_snap_find(&s, 4000 + n));
    assert_null(agent_lathist_snap_find(&s, 0));
  }
  /* a key read twice (the map changed between two batches) keeps its
   * first value */
  s.keys[0] = s.keys[1] = 42;
  s.vals[0].rios = 1;
  s.vals[1].rios = 2;
  s.n = 2;
  agent_lathist_snap_index(&s);
  assert_int_equal(agent_lathist_snap_find(&s, 42)->rios, 1);
  agent_lathist_snap_free(&s);
  assert_null(agent_lathist_snap_find(&s, 42));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_buckets),
      cmocka_unit_test(test_window_empty),
      cmocka_unit_test(test_window_one_bucket),
      cmocka_unit_test(test_window_tail),
      cmocka_unit_test(test_window_overflow),
      cmocka_unit_test(test_window_restarted),
      cmocka_unit_test(test_hist_bins),
      cmocka_unit_test(test_hist_windows),
      cmocka_unit_test(test_pressure_window),
      cmocka_unit_test(test_decide),
      cmocka_unit_test(test_snap),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
