/* Protection of latency-sensitive containers: the cap level's AIMD
 * (agent/protect.c) and, through the admission state machine with a fake
 * clock, batch containers held while a victim is short of its target and
 * admitted (the oldest first) once it has slack again. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "agent/admission.h"
#include "agent/protect.h"
#include "common/cleanup.h"

#define MiB (1024.0 * 1024)

static void test_aimd(void **state) {
  (void)state;
  struct agent_protect_cfg cfg;
  agent_protect_cfg_default(&cfg);
  struct agent_protect p;
  agent_protect_init(&p, &cfg);
  struct agent_protect_obs db = {.id = "db", .share = -1, .stall = -1};
  /* nothing protected: no cap */
  assert_false(agent_protect_update(&p, NULL, 0));
  assert_true(p.level_bps == 0 && !p.active);
  /* a victim appears: batch starts capped */
  assert_true(agent_protect_update(&p, &db, 1));
  assert_true(p.level_bps == 64 * MiB && !p.short_);
  /* short of its target: cut in half, hold */
  db.share = 0.6;
  agent_protect_update(&p, &db, 1);
  assert_true(p.short_);
  assert_true(p.level_bps == 32 * MiB);
  assert_string_equal(p.victim, "db");
  assert_true(fabs(p.worst_share - 0.6) < 1e-9);
  for (int i = 0; i < 20; i++)
    agent_protect_update(&p, &db, 1);
  assert_true(p.level_bps == 2 * MiB); /* the floor */
  /* slack: raised by 1.25 each window, lifted past the max */
  db.share = 0.95;
  agent_protect_update(&p, &db, 1);
  assert_true(p.short_); /* one window of slack is not enough to release holds */
  assert_true(fabs(p.level_bps - 2.5 * MiB) < 1);
  agent_protect_update(&p, &db, 1);
  assert_false(p.short_);
  int windows = 0;
  while (p.level_bps > 0 && windows < 100) {
    agent_protect_update(&p, &db, 1);
    windows++;
  }
  assert_true(p.level_bps == 0 && windows < 40);
  /* the stall criterion alone makes it short too */
  db.share = -1;
  db.stall = 2;
  agent_protect_update(&p, &db, 1);
  assert_true(p.short_);
  assert_true(p.level_bps == 1024 * MiB);
  /* the victim gone: everything lifted */
  assert_true(agent_protect_update(&p, NULL, 0));
  assert_true(p.level_bps == 0 && !p.short_ && !p.active);
}

static int n_admitted;
static void on_admitted(struct agent_adm *adm, struct agent_ctr *c, void *user) {
  (void)adm;
  (void)user;
  (void)c;
  n_admitted++;
}
static const struct agent_adm_ops ops = {.admitted = on_admitted};

static struct agent_ctr *reg(struct agent_adm *adm, const char *id, const char *cls, uint64_t now) {
  cleanup_error struct iob_error *err = NULL;
  struct agent_ctr_info in = {.id = id, .ns = "default", .declared_class = cls};
  struct agent_ctr *c = NULL;
  if (agent_adm_register(adm, &in, now, &c, &err) < 0)
    fail_msg("register %s: %s", id, err->msg);
  return c;
}

static void run_until(struct agent_adm *adm, uint64_t until) {
  cleanup_error struct iob_error *err = NULL;
  for (int guard = 0; guard < 1000; guard++) {
    uint64_t w = agent_adm_next_wake(adm);
    if (w > until)
      return;
    if (agent_adm_tick(adm, w, &err) < 0)
      fail_msg("tick: %s", err->msg);
  }
  fail_msg("tick loop does not settle");
}

static void test_holds_while_short(void **state) {
  (void)state;
  struct agent_adm adm;
  struct batch_config cfg;
  batch_config_default(&cfg);
  agent_adm_init(&adm, &cfg, 0, 300000, &ops, NULL);
  /* a declared latency container: protected, planned as a service */
  struct agent_ctr *db = reg(&adm, "db", "latency", 0);
  assert_true(db->protect && db->protect_declared);
  assert_int_equal(db->cls, BATCH_UNKNOWN); /* its I/O class is still detected */
  agent_adm_admit(&adm, db, 0, 0, 0);
  run_until(&adm, 0);
  assert_int_equal(db->state, AGENT_RUNNING);
  assert_int_equal(db->reason, BATCH_ADMIT_SERVICE);
  /* within target: a batch writer starts (capped, by the daemon) */
  struct agent_protect_obs o = {.id = "db", .share = 0.9, .stall = -1};
  agent_protect_update(&adm.prot, &o, 1);
  struct agent_ctr *w1 = reg(&adm, "w1", "seq-write", 10);
  agent_adm_admit(&adm, w1, 0, 0, 10);
  run_until(&adm, 10);
  assert_int_equal(w1->state, AGENT_RUNNING);
  assert_true(agent_ctr_is_batch(w1));
  assert_false(agent_ctr_is_batch(db));
  /* the victim falls short: the next two batch containers are held */
  o.share = 0.5;
  agent_protect_update(&adm.prot, &o, 1);
  struct agent_ctr *w2 = reg(&adm, "w2", "seq-write", 20);
  agent_adm_admit(&adm, w2, 0, 0, 20);
  struct agent_ctr *w3 = reg(&adm, "w3", "rand-read", 30);
  agent_adm_admit(&adm, w3, 0, 0, 30);
  run_until(&adm, 1000);
  assert_int_equal(w2->state, AGENT_PENDING);
  assert_int_equal(w2->reason, BATCH_HOLD_PROTECT);
  assert_string_equal(w2->conflict, "db");
  assert_int_equal(w3->state, AGENT_PENDING);
  assert_true(adm.protect_holds >= 2);
  /* a probe (unknown) is a batch container too: held */
  struct agent_ctr *u = reg(&adm, "u", NULL, 40);
  agent_adm_admit(&adm, u, 0, 0, 40);
  agent_adm_schedule(&adm, 1100);
  run_until(&adm, 1100);
  assert_int_equal(u->state, AGENT_PENDING);
  /* the protected one's weight is the highest where weights are enforced */
  assert_true(db->weight == 10000 && w1->weight <= 100);
  /* slack again, two windows in a row: the held ones start, oldest first */
  o.share = 0.95;
  agent_protect_update(&adm.prot, &o, 1);
  agent_protect_update(&adm.prot, &o, 1);
  agent_adm_schedule(&adm, 2000);
  run_until(&adm, 2000);
  assert_int_equal(w2->state, AGENT_RUNNING);
  assert_int_equal(w3->state, AGENT_RUNNING);
  assert_int_equal(u->state, AGENT_RUNNING);
  assert_true(w2->admitted_ms <= w3->admitted_ms);
  /* at its max hold a batch container starts even while the victim is short */
  o.share = 0.5;
  agent_protect_update(&adm.prot, &o, 1);
  struct agent_ctr *w4 = reg(&adm, "w4", "seq-write", 3000);
  agent_adm_admit(&adm, w4, 5000, 0, 3000);
  run_until(&adm, 7999);
  assert_int_equal(w4->state, AGENT_PENDING);
  run_until(&adm, 8000);
  assert_int_equal(w4->state, AGENT_RUNNING);
  assert_int_equal(w4->reason, BATCH_ADMIT_DEADLINE);
  agent_adm_release(&adm);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_aimd),
      cmocka_unit_test(test_holds_while_short),
  };
  return cmocka_run_group_tests_name("agent_protect", tests, NULL, NULL);
}
