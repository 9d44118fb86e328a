// SPDX-License-Identifier: Apache-2.0
/* io.stat, io.pressure and /proc/PID/io parsers: real formats and hostile
 * input. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cg2_fixture.h"
#include "cgroupv2/iostat.h"
#include "cgroupv2/pressure.h"
#include "cgroupv2/procio.h"
#include "cgroupv2/sample.h"
#include "common/cleanup.h"

static int iostat(const char *text, struct cg2_iostat *out, struct iob_error **err) {
  return cg2_iostat_parse(text, strlen(text), out, err);
}

static void test_iostat_real_format(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  cleanup_free char *dir = fx("v2/sys/fs/cgroup/kubepods.slice/pod1/ctr");
  struct cg2_iostat s;
  assert_int_equal(cg2_iostat_read(dir, &s, &err), 0);
  assert_int_equal(s.n, 2);
  const struct cg2_io_counters *c = cg2_iostat_find(&s, 254, 0);
  assert_non_null(c);
  assert_int_equal(c->rbytes, 90430464);
  assert_int_equal(c->wbytes, 299008000);
  assert_int_equal(c->rios, 8950);
  assert_int_equal(c->wios, 1252);
  assert_int_equal(c->dbytes, 50331648);
  assert_int_equal(c->dios, 3021);
  /* iocost extras on the second line are skipped, base keys still read */
  c = cg2_iostat_find(&s, 259, 0);
  assert_non_null(c);
  assert_int_equal(c->wios, 4);
  assert_null(cg2_iostat_find(&s, 8, 0)); /* no line: zeros */
  struct cg2_io_counters sum;
  cg2_iostat_sum(&s, &sum);
  assert_int_equal(sum.rbytes, 90430464 + 1048576);
  assert_int_equal(sum.rios, 8951);
  cg2_iostat_release(&s);
}

static void test_iostat_tolerated(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct cg2_iostat s;
  /* empty file: a cgroup that has done no I/O */
  assert_int_equal(iostat("", &s, &err), 0);
  assert_int_equal(s.n, 0);
  cg2_iostat_release(&s);
  /* io.latency keys, unordered devices, no final newline, old kernel without
   * the discard keys */
  assert_int_equal(iostat("8:16 rbytes=1 wbytes=2 rios=3 wios=4 depth=max avg_lat=12 win=100\n"
                          "8:0 wbytes=7 rbytes=5 rios=1 wios=1",
                          &s, &err),
                   0);
  assert_int_equal(s.n, 2);
  assert_int_equal(s.dev[0].minor, 0); /* sorted */
  assert_int_equal(s.dev[0].c.rbytes, 5);
  assert_int_equal(s.dev[1].c.dios, 0);
  cg2_iostat_release(&s);
  /* the largest value that fits */
  assert_int_equal(iostat("8:0 rbytes=18446744073709551615\n", &s, &err), 0);
  assert_true(s.dev[0].c.rbytes == UINT64_MAX);
  cg2_iostat_release(&s);
  assert_null(err);
}

static void test_iostat_malformed(void **state) {
  (void)state;
  static const char *const bad[] = {
      "8:0 rbytes=18446744073709551616\n", /* 2^64 */
      "8:0 rbytes=99999999999999999999999\n",
      "8:0 rbytes=-1\n",
      "8:0 rbytes=\n",
      "8:0 rbytes=12x\n",
      "8:0 rbytes\n",     /* truncated inside a key */
      "8:0 rbyt",         /* truncated */
      "8:0 =5\n",         /* no key */
      "8 rbytes=1\n",     /* no minor */
      ":0 rbytes=1\n",    /* no major */
      "8:0:1 rbytes=1\n", /* garbage device */
      "99999999999:0 rbytes=1\n",
      "sda rbytes=1\n",
      "8:0 rbytes=1 rbytes=2\n",      /* key twice */
      "8:0 rbytes=1\n8:0 wbytes=2\n", /* device twice */
      "\x01\x02\xff garbage\n",
      "8:0 rbytes=1\0\n",
  };
  for (size_t i = 0; i < IOB_ARRAY_SIZE(bad); i++) {
    cleanup_error struct iob_error *err = NULL;
    struct cg2_iostat s = {0};
    size_t len = strlen(bad[i]) + (i == IOB_ARRAY_SIZE(bad) - 1 ? 2 : 0);
    if (cg2_iostat_parse(bad[i], len, &s, &err) != -1)
      fail_msg("accepted bad io.stat #%zu '%s'", i, bad[i]);
    assert_non_null(err);
    assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
    assert_non_null(strstr(err->msg, "io.stat"));
  }
}

static void test_iostat_bounds(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct cg2_iostat s;
  /* too many devices */
  size_t n = CG2_IOSTAT_MAX_DEVS + 1;
  cleanup_free char *buf = malloc(n * 32);
  size_t o = 0;
  for (size_t i = 0; i < n; i++)
    o += (size_t)sprintf(buf + o, "%zu:%zu rbytes=1\n", i / 1000 + 1, i % 1000);
  assert_int_equal(cg2_iostat_parse(buf, o, &s, &err), -1);
  assert_int_equal(err->code, IOB_CODE_RESOURCE_EXHAUSTED);
  iob_error_release(&err);
  /* one endless line */
  cleanup_free char *line = malloc(CG2_IOSTAT_LINE_MAX + 100);
  memset(line, 'a', CG2_IOSTAT_LINE_MAX + 100);
  memcpy(line, "8:0 ", 4);
  assert_int_equal(cg2_iostat_parse(line, CG2_IOSTAT_LINE_MAX + 100, &s, &err), -1);
  assert_non_null(strstr(err->msg, "longer than"));
  iob_error_release(&err);
  /* a missing io.stat names the path */
  assert_int_equal(cg2_iostat_read("/nonexistent/cg", &s, &err), -1);
  assert_string_equal(err->msg, "cannot open '/nonexistent/cg/io.stat': No such file or directory");
}

static void test_iostat_delta_and_reset(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct cg2_iostat a, b, d;
  assert_int_equal(iostat("8:0 rbytes=100 wbytes=100 rios=10 wios=10\n"
                          "8:16 rbytes=50 wbytes=0 rios=5 wios=0\n",
                          &a, &err),
                   0);
  assert_int_equal(iostat("8:0 rbytes=300 wbytes=150 rios=30 wios=15\n"
                          "259:0 rbytes=7 wbytes=0 rios=1 wios=0\n",
                          &b, &err),
                   0);
  /* 8:16 vanished: reset; 259:0 is new: counted from zero */
  assert_int_equal(cg2_iostat_delta(&a, &b, &d), 1);
  assert_int_equal(d.n, 3);
  const struct cg2_io_counters *c = cg2_iostat_find(&d, 8, 0);
  assert_int_equal(c->rbytes, 200);
  assert_int_equal(c->wios, 5);
  c = cg2_iostat_find(&d, 8, 16);
  assert_int_equal(c->rbytes, 0);
  c = cg2_iostat_find(&d, 259, 0);
  assert_int_equal(c->rbytes, 7);
  cg2_iostat_release(&d);
  /* counters going down on one key restart all keys of that device */
  struct cg2_io_counters p = {.rbytes = 1000, .wbytes = 1000, .rios = 10, .wios = 10};
  struct cg2_io_counters q = {.rbytes = 10, .wbytes = 2000, .rios = 1, .wios = 20};
  struct cg2_io_counters o;
  assert_int_equal(cg2_counters_delta(&p, &q, &o), 1);
  assert_int_equal(o.rbytes, 10);
  assert_int_equal(o.wbytes, 2000);
  q.rbytes = 1000;
  q.rios = 10;
  assert_int_equal(cg2_counters_delta(&p, &q, &o), 0);
  assert_int_equal(o.wbytes, 1000);
  assert_int_equal(o.rbytes, 0);
  cg2_iostat_release(&a);
  cg2_iostat_release(&b);
}

static void test_iostat_sum_saturates(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct cg2_iostat s;
  assert_int_equal(iostat("8:0 rbytes=18446744073709551615\n8:1 rbytes=5\n", &s, &err), 0);
  struct cg2_io_counters sum;
  cg2_iostat_sum(&s, &sum);
  assert_true(sum.rbytes == UINT64_MAX);
  cg2_iostat_release(&s);
}

static void test_pressure(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  cleanup_free char *dir = fx("hybrid/sys/fs/cgroup/unified/ctr1");
  struct cg2_pressure p;
  assert_int_equal(cg2_pressure_read(dir, &p, &err), 0);
  assert_true(p.some.avg10 > 8.93 && p.some.avg10 < 8.95);
  assert_true(p.full.avg300 > 0.83 && p.full.avg300 < 0.85);
  assert_int_equal(p.some.total, 6325047);
  assert_int_equal(p.full.total, 5774413);
  assert_true(p.has_full);
  /* "some" alone (old cpu.pressure layout) and reordered keys */
  const char *t = "some total=5 avg300=1.00 avg60=2 avg10=100.00";
  assert_int_equal(cg2_pressure_parse(t, strlen(t), &p, &err), 0);
  assert_false(p.has_full);
  assert_int_equal(p.some.total, 5);
  assert_true(p.some.avg10 == 100.0);
}

static void test_pressure_malformed(void **state) {
  (void)state;
  static const char *const bad[] = {
      "",
      "\n",
      "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", /* no some */
      "some avg10=0.00 avg60=0.00 avg300=0.00\n",         /* missing total */
      "some avg10=0.00 avg60=0.00 avg300=0.00 total=",    /* truncated */
      "some avg10=0.00 avg60=0.00 av",
      "some avg10=100.01 avg60=0.00 avg300=0.00 total=0\n",
      "some avg10=nan avg60=0.00 avg300=0.00 total=0\n",
      "some avg10=1e2 avg60=0.00 avg300=0.00 total=0\n",
      "some avg10=-1 avg60=0.00 avg300=0.00 total=0\n",
      "some avg10=1. avg60=0.00 avg300=0.00 total=0\n",
      "some avg10=1..0 avg60=0.00 avg300=0.00 total=0\n",
      "some avg10=0 avg60=0 avg300=0 total=18446744073709551616\n",
      "some avg10=0 avg10=0 avg60=0 avg300=0 total=0\n",
      "some avg10=0 avg60=0 avg300=0 total=0\nsome avg10=0 avg60=0 avg300=0 total=0\n",
      "most avg10=0 avg60=0 avg300=0 total=0\n",
      "some avg10 avg60=0 avg300=0 total=0\n",
      "\xff\xfe\n",
  };
  for (size_t i = 0; i < IOB_ARRAY_SIZE(bad); i++) {
    cleanup_error struct iob_error *err = NULL;
    struct cg2_pressure p;
    if (cg2_pressure_parse(bad[i], strlen(bad[i]), &p, &err) != -1)
      fail_msg("accepted bad io.pressure #%zu '%s'", i, bad[i]);
    assert_non_null(strstr(err->msg, "io.pressure"));
  }
}

static void test_pressure_unterminated(void **state) {
  (void)state;
  /* found by fuzz_cg2_pressure: a first word running to the end of a buffer
   * without NUL must not be scanned past its length (ASan build) */
  cleanup_error struct iob_error *err = NULL;
  struct cg2_pressure p;
  char *b = malloc(8);
  memcpy(b, "somavgso", 8);
  assert_int_equal(cg2_pressure_parse(b, 8, &p, &err), -1);
  free(b);
}

static void test_procio(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct cg2_procio p;
  cleanup_free char *root = fx("hybrid");
  assert_int_equal(cg2_procio_read_pid(root, 4242, &p, &err), 0);
  assert_int_equal(p.write_bytes, 1048576);
  assert_int_equal(p.syscw, 20);
  static const char *const bad[] = {
      "",
      "rchar: 1\n",          /* missing keys */
      "rchar 1\nwchar: 2\n", /* no colon */
      "rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: 5\nwrite_bytes: x\n"
      "cancelled_write_bytes: 0\n",
      "rchar: 1\nrchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: 5\nwrite_bytes: 6\n"
      "cancelled_write_bytes: 0\n",
      "rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: 5\nwrite_bytes: 6\n"
      "cancelled_write_bytes: 99999999999999999999999\n",
      "rchar:",
  };
  for (size_t i = 0; i < IOB_ARRAY_SIZE(bad); i++) {
    iob_error_release(&err);
    if (cg2_procio_parse(bad[i], strlen(bad[i]), &p, &err) != -1)
      fail_msg("accepted bad proc io #%zu", i);
  }
}

/* Each sample carries its source; samples of two are never diffed (a
 * procfs baseline against io.stat would read as a burst or a reset). */
static void test_sample_delta_sources(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct cg2_sample a = {.t_ns = 1000000000, .source = CG2_SOURCE_PROCIO,
                         .io = {.rbytes = 100, .wbytes = 200, .rios = 1, .wios = 2}};
  struct cg2_sample b = {.t_ns = 3000000000, .source = CG2_SOURCE_PROCIO,
                         .io = {.rbytes = 400, .wbytes = 200, .rios = 4, .wios = 2}};
  struct cg2_io_counters d;
  double dt = 0;
  assert_int_equal(cg2_sample_delta(&a, &b, &d, &dt, &err), 0);
  assert_int_equal(d.rbytes, 300);
  assert_int_equal(d.rios, 3);
  assert_int_equal(d.wbytes, 0);
  assert_true(dt > 1.999 && dt < 2.001);
  /* counters that went down: a restart, counted from it */
  b.io.wbytes = 50;
  assert_int_equal(cg2_sample_delta(&a, &b, &d, &dt, &err), 1);
  assert_int_equal(d.wbytes, 50);
  assert_null(err);
  /* io.stat after a procfs baseline: an error, nothing diffed */
  b.source = CG2_SOURCE_IOSTAT;
  memset(&d, 0xff, sizeof(d));
  assert_int_equal(cg2_sample_delta(&a, &b, &d, &dt, &err), -1);
  assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
  assert_non_null(strstr(err->msg, "io.stat"));
  assert_non_null(strstr(err->msg, "procfs"));
  assert_int_equal(d.rbytes, UINT64_MAX);
  iob_error_release(&err);
  /* a baseline that does not say its source is not one either */
  a.source = CG2_SOURCE_NONE;
  assert_int_equal(cg2_sample_delta(&a, &b, &d, &dt, &err), -1);
}

/* The sources as a table: names round-trip, only real sources have ops. */
static void test_source_ops(void **state) {
  (void)state;
  const enum cg2_source all[] = {CG2_SOURCE_IOSTAT, CG2_SOURCE_PROCIO, CG2_SOURCE_BLKIO_V1};
  for (size_t i = 0; i < IOB_ARRAY_SIZE(all); i++) {
    const struct cg2_source_ops *ops = cg2_source_ops(all[i]);
    assert_non_null(ops);
    assert_int_equal(ops->source, all[i]);
    assert_non_null(ops->read);
    assert_int_equal(cg2_source_from_name(cg2_source_name(all[i])), all[i]);
  }
  assert_string_equal(cg2_source_name(CG2_SOURCE_IOSTAT), "io.stat");
  assert_string_equal(cg2_source_name(CG2_SOURCE_PROCIO), "procfs");
  assert_string_equal(cg2_source_name(CG2_SOURCE_BLKIO_V1), "blkio-v1");
  assert_true(cg2_source_ops(CG2_SOURCE_PROCIO)->lower_fidelity);
  assert_false(cg2_source_ops(CG2_SOURCE_IOSTAT)->counts_pids);
  assert_true(cg2_source_ops(CG2_SOURCE_BLKIO_V1)->counts_pids);
  assert_null(cg2_source_ops(CG2_SOURCE_NONE));
  assert_null(cg2_source_ops((enum cg2_source)42));
  assert_string_equal(cg2_source_name(CG2_SOURCE_NONE), "unknown");
  assert_int_equal(cg2_source_from_name("unknown"), -1);
  assert_int_equal(cg2_source_from_name(""), -1);
  cleanup_error struct iob_error *err = NULL;
  struct cg2_sample s;
  assert_int_equal(cg2_sample_take(NULL, "/nonexistent", CG2_SOURCE_NONE, &s, &err), -1);
  assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_iostat_real_format),
      cmocka_unit_test(test_iostat_tolerated),
      cmocka_unit_test(test_iostat_malformed),
      cmocka_unit_test(test_iostat_bounds),
      cmocka_unit_test(test_iostat_delta_and_reset),
      cmocka_unit_test(test_iostat_sum_saturates),
      cmocka_unit_test(test_pressure),
      cmocka_unit_test(test_pressure_malformed),
      cmocka_unit_test(test_pressure_unterminated),
      cmocka_unit_test(test_procio),
      cmocka_unit_test(test_sample_delta_sources),
      cmocka_unit_test(test_source_ops),
  };
  return cmocka_run_group_tests_name("cg2_iostat", tests, NULL, NULL);
}
