// SPDX-License-Identifier: Apache-2.0
/* simdisk's models (simdisk/hdd.c, ssd.c, model.c) driven without a clock,
 * and its option parser (simdisk/opts.c): the seek curve is monotonic and
 * meets its anchors; zones and rotation give the data sheet's rates; SPTF
 * gains from a queue; two sequential streams together are much slower
 * than one after the other; the FTL's GC amplifies random overwrites in
 * steady state but not sequential ones, and reads wait behind programs;
 * malformed options are rejected with a message naming them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/error.h"
#include "simdisk/hdd.h"
#include "simdisk/model.h"
#include "simdisk/opts.h"
#include "simdisk/ssd.h"

#define MiB (1ull << 20)
#define GiB (1ull << 30)

static void test_seek_curve(void **state) {
  (void)state;
  struct sd_seek_curve k;
  sd_hdd_fit_curve(&k);
  assert_true(k.x0 > 0 && k.x0 < 1);
  assert_float_equal(sd_hdd_seek_ms(&k, 1, false), HDD_T2T_MS, 1e-6);
  assert_float_equal(sd_hdd_seek_ms(&k, HDD_CYLINDERS, false), HDD_FULL_MS, 1e-6);
  assert_float_equal(sd_hdd_avg_seek_ms(&k), HDD_AVG_SEEK_MS, 1e-3);
  assert_float_equal(sd_hdd_seek_ms(&k, 0, false), 0, 0);
  /* the closed-form average against a sum over all distances */
  double sum = 0;
  for (uint64_t n = 1; n <= HDD_CYLINDERS; n++)
    sum += sd_hdd_seek_ms(&k, n, false) * 2.0 * (double)(HDD_CYLINDERS - n) / HDD_CYLINDERS;
  assert_float_equal(sum / HDD_CYLINDERS, HDD_AVG_SEEK_MS, 0.05);
  double prev = 0;
  for (uint64_t n = 1; n <= HDD_CYLINDERS; n++) {
    double t = sd_hdd_seek_ms(&k, n, false);
    assert_true(t >= prev);
    prev = t;
  }
  /* writes: the data sheet's write average */
  assert_float_equal(sd_hdd_seek_ms(&k, HDD_CYLINDERS / 3, true) /
                         sd_hdd_seek_ms(&k, HDD_CYLINDERS / 3, false),
                     HDD_AVG_SEEK_WRITE_MS / HDD_AVG_SEEK_MS, 1e-9);
}

static void test_zones(void **state) {
  (void)state;
  assert_float_equal(sd_hdd_zone_rate(0), HDD_OD_RATE, 1);
  assert_float_equal(sd_hdd_zone_rate(HDD_ZONES - 1), HDD_OD_RATE / 2, 1);
  for (unsigned z = 1; z < HDD_ZONES; z++)
    assert_true(sd_hdd_zone_rate(z) < sd_hdd_zone_rate(z - 1));
  assert_int_equal(HDD_REV_NS, 60 * 1000000000ll / 7200);
}

/* Run streams through a model, each with qd requests outstanding: stream
 * i reads (or writes) len bytes at a time, sequentially from start[i] or
 * at random (seeded), until it has moved total bytes; a new request comes
 * think ns after one completes.  Returns the model time it took. */
struct stream {
  uint64_t start, pos, moved;
  bool random;
  enum sd_op op;
};

static uint64_t rng = 88172645463325252ull;
static uint64_t xorshift(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static int64_t run(struct sd_model *m, struct stream *s, int ns, int qd, uint64_t len,
                   uint64_t total, uint64_t size, int64_t think, int64_t t0) {
  /* counts from the callers' literals; unsigned for the allocations */
  size_t nstreams = ns > 0 ? (size_t)ns : 0, nreqs = nstreams * (qd > 0 ? (size_t)qd : 0);
  struct sd_req *r = calloc(nreqs + 1, sizeof(*r));
  int left = 0;
  int64_t now = t0;
  for (int i = 0; i < ns; i++) {
    s[i].pos = s[i].start;
    s[i].moved = 0;
  }
  for (int i = 0; i < ns * qd; i++) {
    struct stream *st = &s[i / qd];
    uint64_t off = st->random ? xorshift() % (size / len) * len : st->pos;
    st->pos += len;
    r[i] = (struct sd_req){.off = off, .len = len, .op = st->op, .arrival = now};
    sd_model_submit(m, &r[i]);
    left++;
  }
  uint64_t *issued = calloc(nstreams + 1, sizeof(*issued));
  for (int i = 0; i < ns; i++)
    issued[i] = (uint64_t)qd * len;
  while (left > 0) {
    int64_t next;
    struct sd_req *x = sd_model_complete(m, now, &next);
    if (x == NULL) {
      assert_true(next != SD_NEVER);
      now = next;
      continue;
    }
    left--;
    int i = (int)(x - r) / qd;
    s[i].moved += len;
    if (issued[i] >= total)
      continue;
    issued[i] += len;
    uint64_t off = s[i].random ? xorshift() % (size / len) * len : s[i].pos;
    s[i].pos += len;
    *x = (struct sd_req){.off = off, .len = len, .op = s[i].op, .arrival = now + think};
    sd_model_submit(m, x);
    left++;
  }
  free(issued);
  free(r);
  return now - t0;
}

static void test_hdd_sequential(void **state) {
  (void)state;
  struct sd_model *m;
  struct iob_error *err = NULL;
  assert_int_equal(sd_hdd_new(GiB, true, &m, &err), 0);
  /* one reader at the outer edge streams at the OD rate: read-ahead
   * hides the host's 50 us turnaround */
  struct stream s = {.start = 0, .op = SD_READ};
  int64_t t = run(m, &s, 1, 1, 128 << 10, 64 * MiB, GiB, 50000, 0);
  double rate = 64.0 * MiB / ((double)t / 1e9);
  assert_true(rate > 0.97 * HDD_OD_RATE && rate < 1.01 * HDD_OD_RATE);
  /* at the inner edge, about half that */
  s.start = GiB - 64 * MiB;
  t = run(m, &s, 1, 1, 128 << 10, 64 * MiB, GiB, 50000, t + 1000000000);
  rate = 64.0 * MiB / ((double)t / 1e9);
  assert_true(rate > 0.48 * HDD_OD_RATE && rate < 0.56 * HDD_OD_RATE);
  sd_model_free(m);

  /* two readers far apart: together much slower than one after the
   * other (each switch costs a seek and a rotation) */
  assert_int_equal(sd_hdd_new(GiB, true, &m, &err), 0);
  struct stream two[2] = {{.start = 0, .op = SD_READ}, {.start = GiB / 2, .op = SD_READ}};
  int64_t serial = run(m, &two[0], 1, 1, 128 << 10, 32 * MiB, GiB, 50000, 0);
  serial += run(m, &two[1], 1, 1, 128 << 10, 32 * MiB, GiB, 50000, serial + 1000000000);
  int64_t together = run(m, two, 2, 1, 128 << 10, 32 * MiB, GiB, 50000, 10 * serial);
  assert_true((double)together / (double)serial > 5);
  struct sd_hdd_stats st;
  sd_hdd_stats(m, &st);
  assert_true(st.seeks > 256);
  sd_model_free(m);
}

static void test_hdd_random(void **state) {
  (void)state;
  struct sd_model *m;
  struct iob_error *err = NULL;
  assert_int_equal(sd_hdd_new(GiB, false, &m, &err), 0);
  /* QD1 random 4 KiB reads: a seek over a random distance plus half a
   * revolution on average (the zone-weighted mapping shortens seeks a
   * little: more bytes sit on the outer tracks) */
  struct stream s = {.random = true, .op = SD_READ};
  int64_t t1 = run(m, &s, 1, 1, 4096, 2000 * 4096, GiB, 50000, 0);
  double per = (double)t1 / 2000 / 1e6;
  assert_true(per > 9.0 && per < 14.0);
  /* SPTF over a full queue of 32 does far better */
  int64_t t32 = run(m, &s, 1, 32, 4096, 2000 * 4096, GiB, 50000, t1 + 1000000000);
  assert_true((double)t1 / (double)t32 > 2.0);
  sd_model_free(m);
}

static void test_hdd_write_cache(void **state) {
  (void)state;
  struct sd_model *m;
  struct iob_error *err = NULL;
  /* write cache off: each sequential QD1 write has just missed its sector
   * and waits most of a revolution */
  assert_int_equal(sd_hdd_new(GiB, false, &m, &err), 0);
  struct stream s = {.op = SD_WRITE};
  int64_t off = run(m, &s, 1, 1, 128 << 10, 16 * MiB, GiB, 50000, 0);
  sd_model_free(m);
  assert_true((double)off / 128 > 0.8 * HDD_REV_NS);
  /* on: near the media rate, also past the cache's size (destaging) */
  assert_int_equal(sd_hdd_new(GiB, true, &m, &err), 0);
  int64_t on = run(m, &s, 1, 1, 128 << 10, 128 * MiB, GiB, 50000, 0);
  double rate = 128.0 * MiB / ((double)on / 1e9);
  assert_true(rate > 0.8 * HDD_OD_RATE);
  /* a flush waits until the cache is empty */
  struct sd_req f = {.op = SD_FLUSH, .arrival = on};
  sd_model_submit(m, &f);
  int64_t next, now = on;
  struct sd_req *x;
  while ((x = sd_model_complete(m, now, &next)) == NULL)
    now = next;
  assert_ptr_equal(x, &f);
  struct sd_hdd_stats st;
  sd_hdd_stats(m, &st);
  assert_int_equal(st.destaged_bytes, 128 * MiB);
  sd_model_free(m);
}

static void test_pass(void **state) {
  (void)state;
  struct sd_model *m;
  assert_int_equal(sd_pass_new(&m), 0);
  struct sd_req a = {.op = SD_READ, .len = 4096, .arrival = 5};
  sd_model_submit(m, &a);
  int64_t next;
  assert_ptr_equal(sd_model_complete(m, 5, &next), &a);
  assert_int_equal(a.done, 5);
  assert_null(sd_model_complete(m, 6, &next));
  assert_true(next == SD_NEVER);
  sd_model_free(m);
}

/* Write amplification of a phase: flash units over host units. */
static double wa(struct sd_model *m, const struct sd_ssd_stats *before) {
  struct sd_ssd_stats s;
  sd_ssd_stats(m, &s);
  return (double)(s.flash_units - before->flash_units) /
         (double)(s.host_units - before->host_units);
}

static void test_ssd_gc(void **state) {
  (void)state;
  struct sd_model *m;
  struct iob_error *err = NULL;
  uint64_t size = GiB;
  assert_int_equal(sd_ssd_new(size, &m, &err), 0);
  /* fill it once, then overwrite twice sequentially: whole blocks go
   * stale together, GC moves nothing */
  struct stream s = {.op = SD_WRITE};
  int64_t t = run(m, &s, 1, 8, MiB, size, size, 0, 0);
  struct sd_ssd_stats st;
  sd_ssd_stats(m, &st);
  t += run(m, &s, 1, 8, MiB, 2 * size, size, 0, t);
  double seq = wa(m, &st);
  assert_true(seq < 1.02);
  /* random 4 KiB overwrites in steady state: GC moves valid units */
  sd_ssd_stats(m, &st);
  struct stream r = {.op = SD_WRITE, .random = true};
  t += run(m, &r, 1, 32, 4096, size, size, 0, t);
  sd_ssd_stats(m, &st);
  t += run(m, &r, 1, 32, 4096, size, size, 0, t);
  double rnd = wa(m, &st);
  assert_true(rnd > 1.2);
  sd_ssd_stats(m, &st);
  assert_true(st.erases > 0 && st.gc_moved > 0);

  /* a read on an idle device takes a page read and a transfer; one that
   * arrives behind a burst of writes waits for their programs */
  /* host writes complete when buffered: let the programs finish */
  t += 10000000000;
  struct sd_req rd = {.op = SD_READ, .off = 0, .len = 4096, .arrival = t};
  sd_model_submit(m, &rd);
  int64_t next;
  assert_ptr_equal(sd_model_complete(m, rd.arrival + 10000000, &next), &rd);
  int64_t idle = rd.done - rd.arrival;
  assert_true(idle >= SSD_READ_NS && idle < 4 * SSD_READ_NS);
  struct stream w = {.op = SD_WRITE, .start = 0};
  run(m, &w, 1, 32, MiB, 64 * MiB, size, 0, t + 20000000);
  /* the writes were accepted into the buffer; the programs go on */
  struct sd_req rd2 = {.op = SD_READ, .off = 512 * MiB, .len = 4096, .arrival = t + 20000000 + 1};
  sd_model_submit(m, &rd2);
  while (sd_model_complete(m, INT64_MAX - 1, &next) != &rd2)
    ;
  assert_true(rd2.done - rd2.arrival > 10 * idle);
  sd_model_free(m);
}

static void test_ssd_small(void **state) {
  (void)state;
  struct sd_model *m;
  struct iob_error *err = NULL;
  /* a small device still has the blocks GC needs */
  assert_int_equal(sd_ssd_new(64 * MiB, &m, &err), 0);
  struct stream r = {.op = SD_WRITE, .random = true};
  run(m, &r, 1, 4, 4096, 256 * MiB, 64 * MiB, 0, 0);
  sd_model_free(m);
}

/* parse "simdisk ARGS..." and return the error message, or NULL */
static char *parse(struct sd_opts *o, const char *line) {
  static char copy[256]; /* o points into it until the next parse */
  snprintf(copy, sizeof(copy), "%s", line);
  char *argv[32];
  int argc = 0;
  argv[argc++] = "simdisk";
  for (char *tok = strtok(copy, " "); tok && argc < 31; tok = strtok(NULL, " "))
    argv[argc++] = strcmp(tok, "''") == 0 ? "" : tok;
  argv[argc] = NULL;
  struct iob_error *err = NULL;
  int r = sd_opts_parse(argc, argv, o, &err);
  char *msg = NULL;
  if (r < 0) {
    msg = strdup(err->msg);
    iob_error_release(&err);
  } else {
    assert_int_equal(r, 0);
  }
  return msg;
}

static void rejects(const char *line, const char *want) {
  struct sd_opts o;
  char *msg = parse(&o, line);
  if (msg == NULL)
    fail_msg("'%s' was accepted", line);
  if (strstr(msg, want) == NULL)
    fail_msg("'%s': got '%s', want '%s'", line, msg, want);
  free(msg);
}

static void test_opts(void **state) {
  (void)state;
  struct sd_opts o;
  assert_null(parse(&o, "mnt"));
  assert_int_equal(o.model, SD_MODEL_HDD);
  assert_int_equal(o.size, SD_SIZE_DEFAULT);
  assert_true(o.write_cache);
  assert_float_equal(o.scale, 1.0, 0);
  assert_false(o.foreground);
  assert_string_equal(o.mountpoint, "mnt");
  assert_null(parse(&o, "-m ssd -s 2G -w off -x 2.5 -f --stats st --trace tr m"));
  assert_int_equal(o.model, SD_MODEL_SSD);
  assert_int_equal(o.size, 2 * GiB);
  assert_false(o.write_cache);
  assert_float_equal(o.scale, 2.5, 0);
  assert_true(o.foreground);
  assert_string_equal(o.stats, "st");
  assert_string_equal(o.trace, "tr");
  assert_null(parse(&o, "--model=pass --size=512M --write-cache=on --scale=100 m"));
  assert_int_equal(o.model, SD_MODEL_PASS);
  assert_int_equal(o.size, 512 * MiB);
  assert_null(parse(&o, "-s 67108864 m"));
  assert_int_equal(o.size, 64 * MiB);

  rejects("-m hdd2 m", "invalid model 'hdd2'");
  rejects("-m '' m", "invalid model ''");
  rejects("-s 12Q m", "invalid size '12Q'");
  rejects("-s 1.5G m", "invalid size '1.5G'");
  rejects("-s -1G m", "invalid size '-1G'");
  rejects("-s +1G m", "invalid size '+1G'");
  rejects("-s 1GG m", "invalid size '1GG'");
  rejects("-s '' m", "invalid size ''");
  rejects("-s 99999999999999999999 m", "invalid size '99999999999999999999': too large");
  rejects("-s 99999999999T m", "too large");
  rejects("-s 63M m", "want a multiple of 1M from 64M to 64G");
  rejects("-s 65G m", "want a multiple of 1M from 64M to 64G");
  rejects("-s 67108865 m", "want a multiple of 1M");
  rejects("-w maybe m", "invalid write cache 'maybe'");
  rejects("-w ON m", "invalid write cache 'ON'");
  rejects("-x 0.5 m", "invalid scale '0.5'");
  rejects("-x 101 m", "invalid scale '101'");
  rejects("-x nan m", "invalid scale 'nan'");
  rejects("-x inf m", "invalid scale 'inf'");
  rejects("-x 0x2 m", "invalid scale '0x2'");
  rejects("-x 2x m", "invalid scale '2x'");
  rejects("-x '' m", "invalid scale ''");
  rejects("--stats '' m", "invalid stats file ''");
  rejects("--trace '' m", "invalid trace file ''");
  rejects("--bogus m", "unknown option '--bogus'");
  rejects("-q m", "unknown option");
  rejects("m -m", "option '-m' needs a value");
  rejects("", "missing mountpoint");
  rejects("a b", "too many arguments");

  struct iob_error *err = NULL;
  uint64_t v;
  assert_int_equal(sd_parse_size("3K", &v, &err), 0);
  assert_int_equal(v, 3072);
  assert_int_equal(sd_parse_size("1T", &v, &err), 0);
  assert_int_equal(v, 1ull << 40);
}

static void test_model_sizes(void **state) {
  (void)state;
  struct sd_model *m = NULL;
  struct iob_error *err = NULL;
  struct sd_opts o = {.model = SD_MODEL_HDD, .size = 8 * MiB, .scale = 1};
  assert_int_equal(sd_model_new(&o, &m, &err), -1);
  assert_non_null(strstr(err->msg, "too small for the hdd model"));
  iob_error_release(&err);
  o.size = SD_SIZE_MIN;
  for (int k = SD_MODEL_PASS; k <= SD_MODEL_SSD; k++) {
    o.model = (enum sd_model_kind)k;
    assert_int_equal(sd_model_new(&o, &m, &err), 0);
    sd_model_free(m);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_seek_curve),
      cmocka_unit_test(test_zones),
      cmocka_unit_test(test_hdd_sequential),
      cmocka_unit_test(test_hdd_random),
      cmocka_unit_test(test_hdd_write_cache),
      cmocka_unit_test(test_pass),
      cmocka_unit_test(test_ssd_gc),
      cmocka_unit_test(test_ssd_small),
      cmocka_unit_test(test_opts),
      cmocka_unit_test(test_model_sizes),
  };
  return cmocka_run_group_tests_name("simdisk", tests, NULL, NULL);
}
