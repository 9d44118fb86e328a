// SPDX-License-Identifier: Apache-2.0
/* Penalties measured online (agent/plan/penalties.c): learning, when a pair
 * becomes evidence and replaces the matrix, the file (round trip,
 * malformed input set aside, nothing lost). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/plan/penalties.h"
#include "common/cleanup.h"

static void test_learn_and_apply(void **state) {
  (void)state;
  struct agent_penalties pen;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_penalties_init(&pen, NULL, &err), 0);
  /* two co-runs: not evidence yet */
  agent_penalties_observe(&pen, BATCH_RAND_WRITE, BATCH_SEQ_WRITE, 1.1, true, NULL);
  agent_penalties_observe(&pen, BATCH_RAND_WRITE, BATCH_SEQ_WRITE, 1.1, false, NULL);
  agent_penalties_observe(&pen, BATCH_RAND_WRITE, BATCH_SEQ_WRITE, 1.1, true, NULL);
  assert_int_equal(pen.p[BATCH_RAND_WRITE][BATCH_SEQ_WRITE].t.samples, 3);
  assert_int_equal(pen.p[BATCH_RAND_WRITE][BATCH_SEQ_WRITE].t.coruns, 2);
  assert_false(agent_penalties_in_use(&pen, BATCH_RAND_WRITE, BATCH_SEQ_WRITE));
  struct batch_config cfg;
  batch_config_default(&cfg);
  agent_penalties_apply(&pen, &cfg);
  assert_false(cfg.known[BATCH_RAND_WRITE][BATCH_SEQ_WRITE]);
  assert_true(cfg.s[BATCH_RAND_WRITE][BATCH_SEQ_WRITE] == 2.0); /* the default */
  /* the third co-run makes it evidence: 1.1x -> s = 0.1 / 2 */
  agent_penalties_observe(&pen, BATCH_RAND_WRITE, BATCH_SEQ_WRITE, 1.1, true, NULL);
  assert_true(agent_penalties_in_use(&pen, BATCH_RAND_WRITE, BATCH_SEQ_WRITE));
  agent_penalties_apply(&pen, &cfg);
  assert_true(cfg.known[BATCH_RAND_WRITE][BATCH_SEQ_WRITE]);
  assert_true(cfg.measured[BATCH_RAND_WRITE][BATCH_SEQ_WRITE]);
  assert_true(fabs(cfg.s[BATCH_RAND_WRITE][BATCH_SEQ_WRITE] - 0.05) < 1e-9);
  /* faster than alone counts as no penalty (never negative) */
  for (int i = 0; i < 3; i++)
    agent_penalties_observe(&pen, BATCH_SEQ_READ, BATCH_SEQ_READ, 0.8, true, NULL);
  agent_penalties_apply(&pen, &cfg);
  assert_true(cfg.s[BATCH_SEQ_READ][BATCH_SEQ_READ] == 0);
  /* ignored: classes without I/O, nonsense slowdowns; clamped: huge ones */
  agent_penalties_observe(&pen, BATCH_IDLE, BATCH_SEQ_WRITE, 3, true, NULL);
  agent_penalties_observe(&pen, BATCH_RAND_READ, BATCH_SEQ_WRITE, NAN, true, NULL);
  agent_penalties_observe(&pen, BATCH_RAND_READ, BATCH_SEQ_WRITE, -1, true, NULL);
  assert_int_equal(pen.p[BATCH_IDLE][BATCH_SEQ_WRITE].t.samples, 0);
  assert_int_equal(pen.p[BATCH_RAND_READ][BATCH_SEQ_WRITE].t.samples, 0);
  agent_penalties_observe(&pen, BATCH_RAND_READ, BATCH_SEQ_WRITE, 1e9, true, NULL);
  assert_true(pen.p[BATCH_RAND_READ][BATCH_SEQ_WRITE].t.slowdown == AGENT_PEN_MAX_SLOWDOWN);
  agent_penalties_release(&pen);
}

/* A neighbour that takes the disk by turns (an HDD serving one stream's
 * queue, then the other's) leaves the pair's makespan as it was: the
 * victim moves half its solo bytes over the co-run, so the slowdown that
 * decides holding is 2, not the mean of its windows' ratios (1x and 100x
 * by turns: about 50). */
/* A sample from a co-run beside four neighbours says a quarter as much
 * of each pair as one beside one: from 2x, a pair measured at 4x moves
 * the share it got (1/slowdown) by 0.2 x the gap, a quarter-weight
 * sample by 0.05 x; a weight of 0 or less teaches nothing. */
static void test_weighted_share(void **state) {
  (void)state;
  struct agent_penalties pen;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_penalties_init(&pen, NULL, &err), 0);
  const enum batch_class v = BATCH_SEQ_WRITE, a = BATCH_RAND_WRITE, b = BATCH_SEQ_READ;
  agent_penalties_observe(&pen, v, a, 2, true, NULL);
  agent_penalties_observe_share(&pen, v, b, 2, 0.25, true, NULL);
  agent_penalties_observe_share(&pen, v, a, 4, 1, true, NULL);
  agent_penalties_observe_share(&pen, v, b, 4, 0.25, true, NULL);
  assert_true(fabs(pen.p[v][a].t.slowdown - 1 / (0.5 + 0.2 * (0.25 - 0.5))) < 1e-9);
  assert_true(fabs(pen.p[v][b].t.slowdown - 1 / (0.5 + 0.05 * (0.25 - 0.5))) < 1e-9);
  agent_penalties_observe_share(&pen, v, b, 100, 0, true, NULL);
  assert_int_equal(pen.p[v][b].t.samples, 2);
  agent_penalties_release(&pen);
}

static void test_unfair_sharing(void **state) {
  (void)state;
  struct agent_penalties pen;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_penalties_init(&pen, NULL, &err), 0);
  for (int i = 0; i < 200; i++)
    agent_penalties_observe(&pen, BATCH_SEQ_READ, BATCH_SEQ_READ, i % 2 ? 100 : 1, i < 3, NULL);
  double s = pen.p[BATCH_SEQ_READ][BATCH_SEQ_READ].t.slowdown;
  assert_true(s > 1.5 && s < 3);
  /* steady sharing: the same as before */
  for (int i = 0; i < 200; i++)
    agent_penalties_observe(&pen, BATCH_RAND_READ, BATCH_SEQ_READ, 4, i < 3, NULL);
  assert_true(fabs(pen.p[BATCH_RAND_READ][BATCH_SEQ_READ].t.slowdown - 4) < 1e-9);
  agent_penalties_release(&pen);
}

static void test_file(void **state) {
  (void)state;
  char dir[] = "/tmp/iob-pen-XXXXXX";
  assert_non_null(mkdtemp(dir));
  struct agent_penalties pen, back;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_penalties_init(&pen, dir, &err), 0);
  assert_int_equal(agent_penalties_load(&pen, &err), 0); /* missing: empty */
  for (int i = 0; i < 4; i++)
    agent_penalties_observe(&pen, BATCH_RAND_WRITE, BATCH_SEQ_WRITE, 2.5, true, NULL);
  assert_int_equal(agent_penalties_save(&pen, &err), 0);
  assert_false(pen.dirty);
  assert_int_equal(agent_penalties_init(&back, dir, &err), 0);
  assert_int_equal(agent_penalties_load(&back, &err), 0);
  assert_int_equal(back.p[BATCH_RAND_WRITE][BATCH_SEQ_WRITE].t.coruns, 4);
  assert_true(fabs(back.p[BATCH_RAND_WRITE][BATCH_SEQ_WRITE].t.slowdown - 2.5) < 1e-9);
  /* a corrupted file is set aside, named in the error, and the store is
   * empty and usable */
  FILE *f = fopen(pen.path, "w");
  fputs("{\"version\": 1, \"pairs\": [{\"victim\": \"rand-write\"", f);
  fclose(f);
  assert_int_equal(agent_penalties_load(&back, &err), -1);
  assert_non_null(strstr(err->msg, "kept aside as"));
  assert_int_equal(back.p[BATCH_RAND_WRITE][BATCH_SEQ_WRITE].t.samples, 0);
  struct stat sb;
  assert_int_equal(stat(pen.path, &sb), -1);
  char cmd[256];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
  agent_penalties_release(&pen);
  agent_penalties_release(&back);
}

static void expect_bad(const char *text, const char *msg) {
  struct agent_penalties pen;
  cleanup_error struct iob_error *err = NULL;
  agent_penalties_init(&pen, NULL, &err);
  pen.p[BATCH_SEQ_READ][BATCH_SEQ_READ].t.samples = 7; /* cleared on error */
  if (agent_penalties_parse(&pen, "p.json", text, strlen(text), &err) == 0)
    fail_msg("accepted: %s", text);
  if (strstr(err->msg, msg) == NULL)
    fail_msg("'%s': got '%s', want '%s'", text, err->msg, msg);
  assert_int_equal(pen.p[BATCH_SEQ_READ][BATCH_SEQ_READ].t.samples, 0);
  agent_penalties_release(&pen);
}

static void test_malformed(void **state) {
  (void)state;
  expect_bad("", "cannot parse 'p.json'");
  expect_bad("[]", "top level is not an object");
  expect_bad("{\"version\": 2, \"pairs\": []}", "unsupported 'version'");
  expect_bad("{\"version\": 1, \"pairs\": {}}", "'pairs' is not an array");
  expect_bad("{\"version\": 1, \"pairs\": [{\"victim\": \"rand-write\"}]}", "pair 0");
  expect_bad("{\"version\": 1, \"pairs\": [{\"victim\": \"idle\", \"neighbour\": \"seq-write\", "
             "\"slowdown\": 2, \"samples\": 3, \"coruns\": 3}]}",
             "not a pair of I/O classes");
  expect_bad("{\"version\": 1, \"pairs\": [{\"victim\": \"rand-write\", \"neighbour\": "
             "\"seq-write\", \"slowdown\": -2, \"samples\": 3, \"coruns\": 3}]}",
             "invalid values");
  expect_bad("{\"version\": 1, \"pairs\": [{\"victim\": \"rand-write\", \"neighbour\": "
             "\"seq-write\", \"slowdown\": 2, \"samples\": 3, \"coruns\": 4}]}",
             "invalid values");
  expect_bad("{\"version\": 1, \"pairs\": [{\"victim\": \"rand-write\", \"neighbour\": "
             "\"seq-write\", \"slowdown\": 2, \"samples\": 3, \"coruns\": 3, \"x\": 1}]}",
             "pair 0");
  const char *twice = "{\"version\": 1, \"pairs\": ["
                      "{\"victim\": \"rand-write\", \"neighbour\": \"seq-write\", \"slowdown\": 2, "
                      "\"samples\": 3, \"coruns\": 3},"
                      "{\"victim\": \"rand-write\", \"neighbour\": \"seq-write\", \"slowdown\": 2, "
                      "\"samples\": 3, \"coruns\": 3}]}";
  expect_bad(twice, "given twice");
  /* the untrusted stream: its own fields, two tenants, never empty */
  const char *pre = "{\"version\": 1, \"pairs\": [{\"victim\": \"seq-read\", \"neighbour\": "
                    "\"seq-read\", \"slowdown\": 0, \"samples\": 0, \"coruns\": 0";
  char buf[512];
  snprintf(buf, sizeof(buf), "%s}]}", pre);
  expect_bad(buf, "invalid values"); /* no stream at all */
  snprintf(buf, sizeof(buf), "%s, \"untrusted\": 3}]}", pre);
  expect_bad(buf, "untrusted");
  snprintf(buf, sizeof(buf),
           "%s, \"untrusted\": {\"slowdown\": 2, \"samples\": 3, \"coruns\": 3}}]}", pre);
  expect_bad(buf, "untrusted");
  snprintf(buf, sizeof(buf),
           "%s, \"untrusted\": {\"slowdown\": 2, \"samples\": 3, \"coruns\": 3, "
           "\"tenants\": [5, 5]}}]}",
           pre);
  expect_bad(buf, "invalid values");
  snprintf(buf, sizeof(buf),
           "%s, \"untrusted\": {\"slowdown\": 2, \"samples\": 3, \"coruns\": 3, "
           "\"tenants\": [0, 5]}}]}",
           pre);
  expect_bad(buf, "invalid values");
  snprintf(buf, sizeof(buf),
           "%s, \"untrusted\": {\"slowdown\": 2, \"samples\": 0, \"coruns\": 0, "
           "\"tenants\": [4, 5]}}]}",
           pre);
  expect_bad(buf, "invalid values");
  expect_bad("{\"version\": 1, \"pairs\": [{\"victim\": \"rand-write\", \"neighbour\": "
             "\"seq-write\", \"slowdown\": 2, \"samples\": 0, \"coruns\": 0}]}",
             "invalid values");
  char big[AGENT_PENALTIES_MAX_BYTES + 2];
  memset(big, ' ', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  expect_bad(big, "too large");
}

/* A tenant whose declarations do not count never makes evidence alone:
 * its two containers, or a slowdown it fakes beside another tenant's,
 * stay a note until a second tenant measures the same; a trusted victim's
 * measurement is what is used once there is one. */
static void test_untrusted_tenants(void **state) {
  (void)state;
  struct agent_penalties pen;
  cleanup_error struct iob_error *err = NULL;
  agent_penalties_init(&pen, NULL, &err);
  for (int i = 0; i < 10; i++)
    agent_penalties_observe(&pen, BATCH_SEQ_READ, BATCH_SEQ_WRITE, 50, true, "mallory");
  assert_int_equal(pen.p[BATCH_SEQ_READ][BATCH_SEQ_WRITE].u.coruns, 10);
  assert_false(agent_penalties_in_use(&pen, BATCH_SEQ_READ, BATCH_SEQ_WRITE));
  struct batch_config cfg;
  batch_config_default(&cfg);
  agent_penalties_apply(&pen, &cfg);
  assert_false(cfg.measured[BATCH_SEQ_READ][BATCH_SEQ_WRITE]);
  agent_penalties_observe(&pen, BATCH_SEQ_READ, BATCH_SEQ_WRITE, 50, true, "alice");
  assert_true(agent_penalties_in_use(&pen, BATCH_SEQ_READ, BATCH_SEQ_WRITE));
  /* a trusted measurement replaces the untrusted stream at once */
  agent_penalties_observe(&pen, BATCH_SEQ_READ, BATCH_SEQ_WRITE, 1.2, true, NULL);
  assert_false(agent_penalties_in_use(&pen, BATCH_SEQ_READ, BATCH_SEQ_WRITE));
  agent_penalties_observe(&pen, BATCH_SEQ_READ, BATCH_SEQ_WRITE, 1.2, true, NULL);
  agent_penalties_observe(&pen, BATCH_SEQ_READ, BATCH_SEQ_WRITE, 1.2, true, NULL);
  assert_true(agent_penalties_in_use(&pen, BATCH_SEQ_READ, BATCH_SEQ_WRITE));
  assert_true(fabs(agent_penalties_stream(&pen, BATCH_SEQ_READ, BATCH_SEQ_WRITE)->slowdown - 1.2) <
              1e-9);
  for (int i = 0; i < 10; i++)
    agent_penalties_observe(&pen, BATCH_SEQ_READ, BATCH_SEQ_WRITE, 90, true, "mallory");
  assert_true(fabs(agent_penalties_stream(&pen, BATCH_SEQ_READ, BATCH_SEQ_WRITE)->slowdown - 1.2) <
              1e-9);
  agent_penalties_release(&pen);
}

/* What the administrator's matrix says is a floor: a measured pair raises
 * it, never lowers it; a pair the matrix left alone takes the measure. */
static void test_admin_matrix_floor(void **state) {
  (void)state;
  struct agent_penalties pen;
  cleanup_error struct iob_error *err = NULL;
  agent_penalties_init(&pen, NULL, &err);
  for (int i = 0; i < 3; i++) {
    agent_penalties_observe(&pen, BATCH_RAND_WRITE, BATCH_SEQ_WRITE, 0.5, true, NULL);
    agent_penalties_observe(&pen, BATCH_RAND_READ, BATCH_SEQ_WRITE, 0.5, true, NULL);
    agent_penalties_observe(&pen, BATCH_SEQ_READ, BATCH_SEQ_WRITE, 9, true, NULL);
  }
  struct batch_config cfg;
  batch_config_default(&cfg);
  cfg.s[BATCH_RAND_WRITE][BATCH_SEQ_WRITE] = 2;
  cfg.known[BATCH_RAND_WRITE][BATCH_SEQ_WRITE] = true;
  cfg.s[BATCH_SEQ_READ][BATCH_SEQ_WRITE] = 1;
  cfg.known[BATCH_SEQ_READ][BATCH_SEQ_WRITE] = true;
  bool rr_known = cfg.known[BATCH_RAND_READ][BATCH_SEQ_WRITE];
  agent_penalties_apply(&pen, &cfg);
  assert_true(cfg.s[BATCH_RAND_WRITE][BATCH_SEQ_WRITE] == 2);
  assert_false(cfg.measured[BATCH_RAND_WRITE][BATCH_SEQ_WRITE]);
  assert_true(cfg.s[BATCH_SEQ_READ][BATCH_SEQ_WRITE] > 1);
  assert_true(cfg.measured[BATCH_SEQ_READ][BATCH_SEQ_WRITE]);
  if (!rr_known) {
    assert_true(cfg.s[BATCH_RAND_READ][BATCH_SEQ_WRITE] == 0);
    assert_true(cfg.measured[BATCH_RAND_READ][BATCH_SEQ_WRITE]);
  }
  agent_penalties_release(&pen);
}

/* Both streams survive a save and a load, tenants included. */
static void test_untrusted_file(void **state) {
  (void)state;
  struct agent_penalties pen, back;
  cleanup_error struct iob_error *err = NULL;
  agent_penalties_init(&pen, NULL, &err);
  agent_penalties_init(&back, NULL, &err);
  for (int i = 0; i < 3; i++)
    agent_penalties_observe(&pen, BATCH_SEQ_READ, BATCH_SEQ_READ, 4, true, "a");
  agent_penalties_observe(&pen, BATCH_SEQ_READ, BATCH_SEQ_READ, 4, true, "b");
  char dir[] = "/tmp/iob-pen-XXXXXX";
  assert_non_null(mkdtemp(dir));
  agent_penalties_release(&pen);
  assert_int_equal(agent_penalties_init(&pen, dir, &err), 0);
  for (int i = 0; i < 3; i++)
    agent_penalties_observe(&pen, BATCH_SEQ_READ, BATCH_SEQ_READ, 4, true, "a");
  agent_penalties_observe(&pen, BATCH_SEQ_READ, BATCH_SEQ_READ, 4, true, "b");
  assert_int_equal(agent_penalties_save(&pen, &err), 0);
  agent_penalties_release(&back);
  assert_int_equal(agent_penalties_init(&back, dir, &err), 0);
  assert_int_equal(agent_penalties_load(&back, &err), 0);
  assert_int_equal(back.p[BATCH_SEQ_READ][BATCH_SEQ_READ].t.samples, 0);
  assert_int_equal(back.p[BATCH_SEQ_READ][BATCH_SEQ_READ].u.coruns, 4);
  assert_true(agent_penalties_in_use(&back, BATCH_SEQ_READ, BATCH_SEQ_READ));
  char cmd[256];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
  agent_penalties_release(&pen);
  agent_penalties_release(&back);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_learn_and_apply),
      cmocka_unit_test(test_unfair_sharing),
      cmocka_unit_test(test_weighted_share),
      cmocka_unit_test(test_file),
      cmocka_unit_test(test_malformed),
      cmocka_unit_test(test_untrusted_tenants),
      cmocka_unit_test(test_admin_matrix_floor),
      cmocka_unit_test(test_untrusted_file),
  };
  return cmocka_run_group_tests_name("agent_penalties", tests, NULL, NULL);
}
