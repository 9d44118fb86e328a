// SPDX-License-Identifier: Apache-2.0
/* Workload character detector: classes from synthetic windows whose numbers
 * match what fio produced on this host (CALIBRATION.md), thresholds config
 * parsing, workload key. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cg2_fixture.h"
#include "common/cleanup.h"
#include "wcd/wcd.h"

#define KiB 1024ull
#define MiB (1024ull * 1024)
#define SEC 1000000000ull

/* Two samples 2 s apart with the given deltas. */
static void window(struct cg2_sample s[2], enum cg2_source src, uint64_t rb, uint64_t rios,
                   uint64_t wb, uint64_t wios) {
  memset(s, 0, 2 * sizeof(*s));
  s[0].source = s[1].source = src;
  s[0].t_ns = 100 * SEC;
  s[1].t_ns = 102 * SEC;
  s[0].io = (struct cg2_io_counters){.rbytes = 5 * MiB, .wbytes = 7 * MiB, .rios = 10, .wios = 20};
  s[1].io = s[0].io;
  s[1].io.rbytes += rb;
  s[1].io.rios += rios;
  s[1].io.wbytes += wb;
  s[1].io.wios += wios;
  /* psync-like: the syscalls moved the bytes */
  s[1].rchar = rb;
  s[1].wchar = wb;
}

static enum batch_class classify(enum cg2_source src, uint64_t rb, uint64_t rios, uint64_t wb,
                                 uint64_t wios, double *conf) {
  struct wcd_config cfg;
  struct cg2_sample s[2];
  struct wcd_result r;
  wcd_config_default(&cfg);
  window(s, src, rb, rios, wb, wios);
  wcd_classify(&cfg, s, 2, &r);
  if (conf)
    *conf = r.confidence;
  return r.cls;
}

static void test_pure_classes(void **state) {
  (void)state;
  double c;
  /* 1 MiB sequential writer: 200 MiB in 2 s */
  assert_int_equal(classify(CG2_SOURCE_IOSTAT, 0, 0, 200 * MiB, 200, &c), BATCH_SEQ_WRITE);
  assert_true(c > 0.99);
  /* 4 KiB random writer */
  assert_int_equal(classify(CG2_SOURCE_IOSTAT, 0, 0, 40000 * 4 * KiB, 40000, &c), BATCH_RAND_WRITE);
  assert_true(c > 0.99);
  assert_int_equal(classify(CG2_SOURCE_IOSTAT, 300 * MiB, 2400, 0, 0, NULL), BATCH_SEQ_READ);
  assert_int_equal(classify(CG2_SOURCE_IOSTAT, 80 * MiB, 20480, 1 * KiB, 1, NULL), BATCH_RAND_READ);
  /* 50/50 */
  assert_int_equal(classify(CG2_SOURCE_IOSTAT, 50 * MiB, 400, 50 * MiB, 12800, &c), BATCH_MIXED);
  assert_true(c > 0.99);
  /* procfs with libaio: bytes but no syscalls, no size signal */
  assert_int_equal(classify(CG2_SOURCE_PROCIO, 0, 0, 200 * MiB, 0, &c), BATCH_UNKNOWN);
  assert_true(c == 0.0);
  /* procfs with libaio plus a few config reads: block bytes far above
   * what the syscalls moved; bytes / syscalls is not a request size */
  {
    struct wcd_config cfg;
    struct cg2_sample w[2];
    struct wcd_result r;
    wcd_config_default(&cfg);
    window(w, CG2_SOURCE_PROCIO, 300 * MiB, 60, 0, 0);
    w[1].rchar = 60 * 4096;
    wcd_classify(&cfg, w, 2, &r);
    assert_int_equal(r.cls, BATCH_UNKNOWN);
    assert_false(r.m.rsize_known);
    /* psync: the syscalls moved what the block layer saw */
    w[1].rchar = 300 * MiB;
    wcd_classify(&cfg, w, 2, &r);
    assert_int_equal(r.cls, BATCH_SEQ_READ);
  }
  /* the procfs source is trusted less */
  assert_int_equal(classify(CG2_SOURCE_PROCIO, 0, 0, 200 * MiB, 200, &c), BATCH_SEQ_WRITE);
  assert_true(c > 0.79 && c < 0.81);
}

/* The defaults against the average request sizes the calibration measured
 * (wcd/CALIBRATION.md): host procfs runs and VM io.stat runs, where
 * 1 MiB requests arrive as 341-512 KiB bios. */
static void test_defaults_against_calibration(void **state) {
  (void)state;
  static const struct {
    enum cg2_source src;
    int reads;
    uint64_t avg;
    enum batch_class want;
  } runs[] = {
      {CG2_SOURCE_PROCIO, 1, 981 * KiB, BATCH_SEQ_READ},
      {CG2_SOURCE_PROCIO, 1, 127 * KiB, BATCH_SEQ_READ},
      {CG2_SOURCE_PROCIO, 1, 4 * KiB, BATCH_RAND_READ},
      {CG2_SOURCE_PROCIO, 1, 16 * KiB, BATCH_RAND_READ},
      {CG2_SOURCE_PROCIO, 0, 1024 * KiB, BATCH_SEQ_WRITE},
      {CG2_SOURCE_PROCIO, 0, 128 * KiB, BATCH_SEQ_WRITE},
      {CG2_SOURCE_PROCIO, 0, 4 * KiB, BATCH_RAND_WRITE},
      {CG2_SOURCE_PROCIO, 0, 16 * KiB, BATCH_RAND_WRITE},
      {CG2_SOURCE_IOSTAT, 1, 512 * KiB, BATCH_SEQ_READ},
      {CG2_SOURCE_IOSTAT, 1, 128 * KiB, BATCH_SEQ_READ},
      {CG2_SOURCE_IOSTAT, 0, 341 * KiB, BATCH_SEQ_WRITE},
      {CG2_SOURCE_IOSTAT, 0, 498 * KiB, BATCH_SEQ_WRITE},
      {CG2_SOURCE_IOSTAT, 0, 4 * KiB, BATCH_RAND_WRITE},
      {CG2_SOURCE_IOSTAT, 1, 16 * KiB, BATCH_RAND_READ},
  };
  for (size_t i = 0; i < IOB_ARRAY_SIZE(runs); i++) {
    uint64_t n = 1000, bytes = n * runs[i].avg;
    double c;
    enum batch_class got = runs[i].reads ? classify(runs[i].src, bytes, n, 0, 0, &c)
                                         : classify(runs[i].src, 0, 0, bytes, n, &c);
    if (got != runs[i].want)
      fail_msg("calibration run #%zu (avg %llu): got %s, want %s", i,
               (unsigned long long)runs[i].avg, batch_class_name(got),
               batch_class_name(runs[i].want));
    /* clear cases are at full confidence for the source */
    assert_true(c >= (runs[i].src == CG2_SOURCE_PROCIO ? 0.79 : 0.99));
  }
}

static void test_ambiguous_sizes(void **state) {
  (void)state;
  double c1, c2;
  /* 32 KiB is nearer 16 than 128 on a log scale: random, less sure */
  assert_int_equal(classify(CG2_SOURCE_IOSTAT, 0, 0, 1000 * 32 * KiB, 1000, &c1), BATCH_RAND_WRITE);
  assert_true(c1 < 0.9 && c1 >= 0.5);
  /* 64 KiB: sequential side */
  assert_int_equal(classify(CG2_SOURCE_IOSTAT, 0, 0, 1000 * 64 * KiB, 1000, &c2), BATCH_SEQ_WRITE);
  assert_true(c2 < 0.9);
  /* at 16 KiB exactly and at 128 KiB exactly the decision is certain */
  assert_int_equal(classify(CG2_SOURCE_IOSTAT, 0, 0, 1000 * 16 * KiB, 1000, &c1), BATCH_RAND_WRITE);
  assert_true(c1 > 0.99);
  assert_int_equal(classify(CG2_SOURCE_IOSTAT, 0, 0, 1000 * 128 * KiB, 1000, &c1), BATCH_SEQ_WRITE);
  /* 85 % writes: write, less confident than 100 % */
  assert_int_equal(classify(CG2_SOURCE_IOSTAT, 15 * MiB, 15, 85 * MiB, 85, &c1), BATCH_SEQ_WRITE);
  assert_true(c1 < 0.8);
}

static void test_idle_unknown_pressure(void **state) {
  (void)state;
  struct wcd_config cfg;
  struct cg2_sample s[3];
  struct wcd_result r;
  wcd_config_default(&cfg);
  /* nothing moved */
  assert_int_equal(classify(CG2_SOURCE_IOSTAT, 0, 0, 0, 0, NULL), BATCH_IDLE);
  /* a few KiB/s of logging */
  assert_int_equal(classify(CG2_SOURCE_IOSTAT, 0, 0, 8 * KiB, 2, NULL), BATCH_IDLE);
  /* few bytes but stalled 50 % of the time: starved, not idle */
  window(s, CG2_SOURCE_IOSTAT, 0, 0, 64 * KiB, 16);
  s[0].has_pressure = s[1].has_pressure = 1;
  s[0].pressure.some.total = 1000000;
  s[1].pressure.some.total = 2000000; /* 1 s of 2 */
  wcd_classify(&cfg, s, 2, &r);
  assert_int_equal(r.cls, BATCH_RAND_WRITE);
  assert_true(r.m.stall_some > 49.9 && r.m.stall_some < 50.1);
  /* fewer than two samples, a short window, mixed sources, clock backwards */
  wcd_classify(&cfg, s, 1, &r);
  assert_int_equal(r.cls, BATCH_UNKNOWN);
  assert_true(r.confidence == 0.0);
  window(s, CG2_SOURCE_IOSTAT, 0, 0, 200 * MiB, 200);
  s[1].t_ns = s[0].t_ns + 100000000; /* 100 ms */
  wcd_classify(&cfg, s, 2, &r);
  assert_int_equal(r.cls, BATCH_UNKNOWN);
  window(s, CG2_SOURCE_IOSTAT, 0, 0, 200 * MiB, 200);
  s[1].source = CG2_SOURCE_PROCIO;
  wcd_classify(&cfg, s, 2, &r);
  assert_int_equal(r.cls, BATCH_UNKNOWN);
  window(s, CG2_SOURCE_IOSTAT, 0, 0, 200 * MiB, 200);
  s[1].t_ns = s[0].t_ns - 1;
  wcd_classify(&cfg, s, 2, &r);
  assert_int_equal(r.cls, BATCH_UNKNOWN);
}

static void test_reset_inside_window(void **state) {
  (void)state;
  struct wcd_config cfg;
  struct cg2_sample s[3];
  struct wcd_result r;
  wcd_config_default(&cfg);
  memset(s, 0, sizeof(s));
  for (int i = 0; i < 3; i++) {
    s[i].source = CG2_SOURCE_PROCIO;
    s[i].t_ns = (uint64_t)(10 + i) * SEC;
  }
  s[0].io.wbytes = 500 * MiB;
  s[0].io.wios = 500;
  s[1].io.wbytes = 600 * MiB; /* +100 MiB in 100 writes */
  s[1].io.wios = 600;
  s[2].io.wbytes = 100 * MiB; /* the big process exited: restart, 100 MiB new */
  s[2].io.wios = 100;
  for (int i = 0; i < 3; i++)
    s[i].wchar = s[i].io.wbytes;
  wcd_classify(&cfg, s, 3, &r);
  assert_int_equal(r.m.resets, 1);
  assert_int_equal(r.cls, BATCH_SEQ_WRITE);
  assert_true(r.m.wbps > 99.0 * MiB && r.m.wbps < 101.0 * MiB);
  assert_true(r.m.wavg > 1023.0 * KiB && r.m.wavg < 1025.0 * KiB);
}

/* Latency-sensitive: a pgbench-like writer (8 KiB pages and WAL with
 * fsync: ~1500 writes/s, 12 MiB/s) and an fio QD1 sync writer (4 KiB, one
 * at a time with a flush: ~2000/s) come out latency-sensitive beside their
 * I/O class; batch random I/O at tens of thousands of requests/s, large
 * sequential streams and idle containers do not. */
static bool latency(uint64_t rb, uint64_t rios, uint64_t wb, uint64_t wios) {
  struct wcd_config cfg;
  struct cg2_sample s[2];
  struct wcd_result r;
  wcd_config_default(&cfg);
  window(s, CG2_SOURCE_IOSTAT, rb, rios, wb, wios);
  wcd_classify(&cfg, s, 2, &r);
  return r.latency;
}

static void test_latency(void **state) {
  (void)state;
  assert_true(latency(0, 0, 2 * 1500 * 8 * KiB, 2 * 1500));                       /* pgbench-like */
  assert_true(latency(2 * 200 * 8 * KiB, 2 * 200, 2 * 1200 * 8 * KiB, 2 * 1200)); /* with reads */
  assert_true(latency(0, 0, 2 * 2000 * 4 * KiB, 2 * 2000));                       /* fio QD1 sync */
  assert_true(latency(2 * 1000 * 4 * KiB, 2 * 1000, 0, 0));    /* QD1 random reader */
  assert_false(latency(0, 0, 2 * 40000 * 4 * KiB, 2 * 40000)); /* batch random writer */
  assert_false(latency(0, 0, 200 * MiB, 200));                 /* sequential writer */
  assert_false(latency(0, 0, 0, 0));                           /* idle */
  /* declared: latency whatever the window says */
  struct wcd_config cfg;
  struct cg2_sample s[2];
  struct wcd_result r;
  cleanup_error struct iob_error *err = NULL;
  wcd_config_default(&cfg);
  window(s, CG2_SOURCE_IOSTAT, 0, 0, 200 * MiB, 200);
  assert_int_equal(wcd_resolve(&cfg, "latency", s, 2, &r, &err), 0);
  assert_int_equal(r.cls, BATCH_LATENCY);
  assert_true(r.latency);
  /* the thresholds are config keys */
  const char *t = "lat_max_iops = 100\nlat_max_req = 4k\nlat_max_bps = 1e6\n";
  assert_int_equal(wcd_config_parse(t, strlen(t), "w.conf", &cfg, &err), 0);
  assert_true(cfg.lat_max_iops == 100 && cfg.lat_max_req == 4096 && cfg.lat_max_bps == 1e6);
  const char *bad = "lat_max_iops = -1\n";
  assert_int_equal(wcd_config_parse(bad, strlen(bad), "w.conf", &cfg, &err), -1);
}

/* The procfs source: the size is what the syscalls asked for, as long as
 * the block bytes can be theirs.  Numbers from bench/calibrate-wcd.sh on
 * this host (kernel 6.18, ext4 with large folios): PostgreSQL under pgbench
 * wrote ~80 KiB of write_bytes per 8 KiB write syscall. */
static bool latency_procfs(uint64_t rb, uint64_t rchar, uint64_t rios, uint64_t wb, uint64_t wchar,
                           uint64_t wios) {
  struct wcd_config cfg;
  struct cg2_sample s[2];
  struct wcd_result r;
  wcd_config_default(&cfg);
  window(s, CG2_SOURCE_PROCIO, rb, rios, wb, wios);
  s[1].rchar = rchar;
  s[1].wchar = wchar;
  wcd_classify(&cfg, s, 2, &r);
  return r.latency;
}

static void test_latency_procfs(void **state) {
  (void)state;
  /* pgbench: 8 KiB writes counted as 80 KiB (whole folios dirtied), reads
   * from the page cache (syscalls, no block bytes) */
  assert_true(latency_procfs(0, 2 * 450 * 8 * KiB, 2 * 450, 2 * 250 * 80 * KiB, 2 * 250 * 8 * KiB,
                             2 * 250));
  /* 8 KiB written into a cached file: 64 KiB each */
  assert_true(latency_procfs(0, 0, 0, 2 * 500 * 64 * KiB, 2 * 500 * 8 * KiB, 2 * 500));
  /* direct psync, the syscalls are the requests: as io.stat */
  assert_true(latency_procfs(0, 0, 0, 2 * 1200 * 8 * KiB, 2 * 1200 * 8 * KiB, 2 * 1200));
  assert_false(latency_procfs(0, 0, 0, 2 * 20000 * 8 * KiB, 2 * 20000 * 8 * KiB, 2 * 20000));
  /* libaio: block bytes without syscalls (fio's own 4 KiB writes) */
  assert_false(latency_procfs(0, 0, 0, 2 * 30 * MiB, 2 * 30 * 4 * KiB, 2 * 30));
  assert_false(latency_procfs(2 * 40 * MiB, 2 * 25 * 4 * KiB, 2 * 25, 0, 0, 0));
  /* 1 MiB buffered writes: large syscalls */
  assert_false(latency_procfs(0, 0, 0, 2 * 20 * MiB, 2 * 20 * MiB, 2 * 20));
  /* one past the slack: 8 KiB syscalls, 17 times the bytes */
  assert_false(latency_procfs(0, 0, 0, 2 * 100 * 136 * KiB, 2 * 100 * 8 * KiB, 2 * 100));
  /* io.stat counts requests: 80 KiB requests are not small there */
  assert_false(latency(0, 0, 2 * 250 * 80 * KiB, 2 * 250));
  /* PostgreSQL's grouped WAL writes: 32 KiB each at a few hundred per
   * second (pgbench -c 4 on a busy disk) */
  assert_true(
      latency_procfs(0, 2 * 140 * 7 * KiB, 2 * 140, 2 * 36 * 80 * KiB, 2 * 36 * 32 * KiB, 2 * 36));
  assert_true(latency(0, 0, 2 * 300 * 32 * KiB, 2 * 300));
  /* 128 KiB (a sequential stream's readahead) is not small, however slow */
  assert_false(latency(2 * 20 * 128 * KiB, 2 * 20, 0, 0));
  assert_false(latency_procfs(2 * 20 * 128 * KiB, 2 * 20 * 128 * KiB, 2 * 20, 0, 0, 0));
}

static void test_class_names(void **state) {
  (void)state;
  enum batch_class c;
  for (int i = 0; i < BATCH_NCLASS_ALL; i++) {
    assert_int_equal(batch_class_parse(batch_class_name((enum batch_class)i), &c), 0);
    assert_int_equal(c, i);
  }
  assert_int_equal(batch_class_parse("SEQ-READ", &c), -1);
  assert_int_equal(batch_class_parse("", &c), -1);
  assert_string_equal(batch_class_name((enum batch_class)99), "invalid");
}

static void test_resolve_declared(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct wcd_config cfg;
  struct cg2_sample s[2];
  struct wcd_result r;
  wcd_config_default(&cfg);
  window(s, CG2_SOURCE_IOSTAT, 0, 0, 200 * MiB, 200); /* looks seq-write */
  assert_int_equal(wcd_resolve(&cfg, NULL, s, 2, &r, &err), 0);
  assert_int_equal(r.cls, BATCH_SEQ_WRITE);
  assert_int_equal(wcd_resolve(&cfg, "rand-read", s, 2, &r, &err), 0);
  assert_int_equal(r.cls, BATCH_RAND_READ);
  assert_true(r.confidence == 1.0);
  assert_true(r.m.wbps > 0); /* metrics still measured */
  assert_int_equal(wcd_resolve(&cfg, "unknown", s, 2, &r, &err), -1);
  assert_int_equal(wcd_resolve(&cfg, "bogus", s, 2, &r, &err), -1);
  assert_string_equal(err->msg, "invalid annotation 'io.iobatch.class': 'bogus' (want seq-read, "
                                "rand-read, seq-write, rand-write, mixed, idle or latency)");
  /* no samples (the hook at container birth) */
  assert_int_equal(wcd_resolve(NULL, "idle", NULL, 0, &r, &err), 0);
  assert_int_equal(r.cls, BATCH_IDLE);
}

static void test_config(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct wcd_config c;
  wcd_config_default(&c);
  const char *t = "# thresholds\n\n  rand_max_bytes = 8k   # 8 KiB\n"
                  "seq_min_bytes=1M\r\ndir_share = 0.9\nmin_window_ms = 250\n"
                  "idle_bytes_per_s = 1e5\nfallback_factor = 0.5\nidle_max_stall = 5";
  assert_int_equal(wcd_config_parse(t, strlen(t), "t.conf", &c, &err), 0);
  assert_int_equal(c.rand_max_bytes, 8192);
  assert_int_equal(c.seq_min_bytes, 1048576);
  assert_true(c.dir_share == 0.9);
  assert_int_equal(c.min_window_ms, 250);
  assert_true(c.idle_bytes_per_s == 1e5);
  assert_true(c.idle_max_stall == 5);
  /* empty file keeps the defaults */
  struct wcd_config d, e;
  wcd_config_default(&d);
  e = d;
  assert_int_equal(wcd_config_parse("", 0, "e.conf", &e, &err), 0);
  assert_memory_equal(&d, &e, sizeof(d));
}

static void test_config_errors(void **state) {
  (void)state;
  static const struct {
    const char *text, *msg;
  } bad[] = {
      {"dir_share = 0.9\nbogus = 1\n", "unknown key 'bogus' in 'x.conf' line 2"},
      {"dir_share\n", "expected 'key = value' in 'x.conf' line 1, got 'dir_share'"},
      {"dir_share = \n", "missing value for 'dir_share' in 'x.conf' line 1"},
      {"dir_share = 0.4\n", "invalid value '0.4' for 'dir_share' in 'x.conf' line 1"},
      {"dir_share = nan\n", "invalid value 'nan'"},
      {"dir_share = 0.9x\n", "invalid value '0.9x'"},
      {"rand_max_bytes = 99999999999999999999\n", "invalid value"},
      {"rand_max_bytes = 17179869184G\n", "invalid value"},
      {"rand_max_bytes = -1\n", "invalid value"},
      {"rand_max_bytes = 1T\n", "invalid value"},
      {"min_window_ms = 0\n", "invalid value '0' for 'min_window_ms'"},
      {"dir_share = 0.9\ndir_share = 0.8\n", "key 'dir_share' given twice in 'x.conf' line 2"},
      {"rand_max_bytes = 256k\n", "rand_max_bytes (262144) must be below seq_min_bytes"},
      {"= 5\n", "unknown key ''"},
  };
  for (size_t i = 0; i < IOB_ARRAY_SIZE(bad); i++) {
    cleanup_error struct iob_error *err = NULL;
    struct wcd_config c, before;
    wcd_config_default(&c);
    before = c;
    if (wcd_config_parse(bad[i].text, strlen(bad[i].text), "x.conf", &c, &err) != -1)
      fail_msg("accepted bad config #%zu", i);
    if (strstr(err->msg, bad[i].msg) == NULL)
      fail_msg("config #%zu: got '%s', want '%s'", i, err->msg, bad[i].msg);
    assert_memory_equal(&c, &before, sizeof(c)); /* nothing half-applied */
  }
  cleanup_error struct iob_error *err = NULL;
  struct wcd_config c;
  /* NUL, a huge line, a missing file */
  assert_int_equal(wcd_config_parse("a\0b", 3, "x.conf", &c, &err), -1);
  cleanup_free char *big = malloc(5000);
  memset(big, 'a', 5000);
  assert_int_equal(wcd_config_parse(big, 5000, "x.conf", &c, &err), -1);
  assert_non_null(strstr(err->msg, "line too long in 'x.conf' line 1"));
  assert_int_equal(wcd_config_load("/nonexistent/wcd.conf", &c, &err), -1);
  assert_string_equal(err->msg, "cannot open '/nonexistent/wcd.conf': No such file or directory");
}

static void test_workload_key(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  char *k = NULL;
  const char *argv[] = {"fio", "--name=x", "--bs=4k"};
  assert_int_equal(wcd_workload_key("db-load", "docker.io/library/pg:16", argv, 3, &k, &err), 0);
  assert_string_equal(k, "db-load");
  free(k);
  assert_int_equal(wcd_workload_key("", "docker.io/library/pg:16", argv, 3, &k, &err), 0);
  assert_string_equal(k, "docker.io/library/pg:16");
  free(k);
  assert_int_equal(wcd_workload_key(NULL, NULL, argv, 3, &k, &err), 0);
  assert_string_equal(k, "fio --name=x --bs=4k");
  free(k);
  assert_int_equal(wcd_workload_key(NULL, NULL, NULL, 0, &k, &err), -1);
  assert_int_equal(err->code, IOB_CODE_NOT_FOUND);
  /* long command lines are cut at WCD_KEY_MAX */
  cleanup_free char *huge = malloc(3000);
  memset(huge, 'x', 2999);
  huge[2999] = '\0';
  const char *av2[] = {"a", huge, "b"};
  assert_int_equal(wcd_workload_key(NULL, NULL, av2, 3, &k, &err), 0);
  assert_int_equal(strlen(k), WCD_KEY_MAX);
  free(k);
  /* cut before a character, never inside one (the agent refuses a key
   * that is not UTF-8): 'é' is two bytes, and one of them would sit at the
   * limit */
  cleanup_free char *wide = malloc(3000);
  for (size_t i = 0; i + 1 < 2998; i += 2)
    memcpy(wide + i, "\xc3\xa9", 2);
  wide[2998] = '\0';
  for (int pad = 0; pad < 4; pad++) {
    char lead[8] = "aaaa";
    lead[pad] = '\0';
    const char *av3[] = {lead, wide, "b"};
    assert_int_equal(wcd_workload_key(NULL, NULL, pad ? av3 : av3 + 1, pad ? 3 : 2, &k, &err), 0);
    size_t n = strlen(k);
    assert_true(n <= WCD_KEY_MAX && n >= WCD_KEY_MAX - 1);
    /* whole characters only: every 0xc3 is followed by its 0xa9 */
    for (size_t i = 0; i < n; i++)
      if ((unsigned char)k[i] == 0xc3)
        assert_true(i + 1 < n && (unsigned char)k[i + 1] == 0xa9);
    assert_true((unsigned char)k[n - 1] != 0xc3);
    free(k);
  }
  /* an annotation that long is refused */
  assert_int_equal(wcd_workload_key(huge, NULL, NULL, 0, &k, &err), -1);
  assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pure_classes),
      cmocka_unit_test(test_defaults_against_calibration),
      cmocka_unit_test(test_ambiguous_sizes),
      cmocka_unit_test(test_idle_unknown_pressure),
      cmocka_unit_test(test_reset_inside_window),
      cmocka_unit_test(test_class_names),
      cmocka_unit_test(test_latency),
      cmocka_unit_test(test_latency_procfs),
      cmocka_unit_test(test_resolve_declared),
      cmocka_unit_test(test_config),
      cmocka_unit_test(test_config_errors),
      cmocka_unit_test(test_workload_key),
  };
  return cmocka_run_group_tests_name("wcd", tests, NULL, NULL);
}
