// SPDX-License-Identifier: Apache-2.0
/* Protection's interface (agent/protect/protection.h) against hand-made
 * containers, with no cgroup behind them (its levers find nothing to
 * write): the plan's question (agent_protection_ask: may it start now,
 * and until when must it wait), the call after each sampling window
 * (agent_protection_window), the sampler's facts of a protected
 * container (agent_protection_observe) and the view status and metrics
 * read (agent_protection_view, agent_protection_debt). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "agent/plan/admission.h"
#include "agent/protect/protection.h"
#include "common/cleanup.h"

#define MiB (1024.0 * 1024)

static const struct agent_adm_ops ops = {0};

struct env {
  struct agent_adm adm;
  struct agent_protection prot;
};

static void env_init(struct env *e) {
  struct batch_config cfg;
  batch_config_default(&cfg);
  agent_adm_init(&e->adm, &cfg, 0, 300000, &ops, NULL);
  agent_protection_init(&e->prot, &e->adm, NULL, NULL, NULL, NULL, NULL);
  e->adm.protection = &e->prot;
}

static void env_release(struct env *e) {
  agent_protection_release(&e->prot);
  agent_ctr_free_all(&e->adm);
}

/* A container made by hand: registered, then put in STATE at NOW (a
 * running one has done I/O; a pending one waits until NOW + 60 s). */
static struct agent_ctr *ctr(struct env *e, const char *id, const char *cls, enum agent_state state,
                             uint64_t now) {
  cleanup_error struct iob_error *err = NULL;
  struct agent_ctr_info in = {.id = id, .ns = "default", .declared_class = cls};
  struct agent_ctr *c = NULL;
  if (agent_adm_register(&e->adm, &in, now, &c, &err) < 0)
    fail_msg("register %s: %s", id, err->msg);
  c->state = state;
  c->plan.arrival_ms = now;
  c->plan.admitted_ms = state == AGENT_RUNNING ? now : 0;
  c->plan.deadline_ms = now + 60000;
  c->sample.first_io = state == AGENT_RUNNING;
  return c;
}

/* The sampler's last window of C: RATE bytes/s. */
static void rate(struct agent_ctr *c, double bps) {
  c->sample.write_bps = bps;
  c->sample.read_bps = 0;
  c->sample.io_now = bps > 0;
}

/* The plan's question, asked for one container the batcher would start. */
static bool may_start(struct env *e, struct agent_ctr *c, bool forced, uint64_t now,
                      uint64_t *until) {
  struct agent_protect_q q = {.c = c, .admit = true, .forced = forced};
  agent_protection_ask(&e->prot, &q, 1, now);
  *until = q.until_ms;
  return !q.hold;
}

/* Nothing protected: every batch container may start; a victim short of
 * its target: a writer is held until its deadline, a reader (scope
 * writers) and one the batcher forces in are not; its budget ends the
 * hold sooner. */
static void test_ask(void **state) {
  (void)state;
  struct env e;
  env_init(&e);
  e.prot.ctl.cfg.batch_budget = 0; /* no bound: the hold lasts until the deadline */
  struct agent_ctr *w = ctr(&e, "w", "seq-write", AGENT_PENDING, 0);
  struct agent_ctr *r = ctr(&e, "r", "seq-read", AGENT_PENDING, 0);
  uint64_t until = 0;
  assert_true(may_start(&e, w, false, 100, &until));
  assert_int_equal(until, UINT64_MAX);
  /* a victim runs, short of its target */
  e.prot.ctl.active = e.prot.ctl.short_ = true;
  snprintf(e.prot.ctl.victim, sizeof(e.prot.ctl.victim), "db");
  assert_false(may_start(&e, w, false, 100, &until));
  assert_int_equal(until, w->plan.deadline_ms);
  assert_int_equal(e.prot.holds, 1);
  assert_true(w->budget.held_since_ms > 0); /* held by protection: its debt grows */
  assert_true(may_start(&e, r, false, 100, &until));
  assert_true(may_start(&e, w, true, 100, &until));
  assert_int_equal(w->budget.held_since_ms, 0);
  /* with a budget the hold ends when it is spent: a learned 20 s job may
   * wait 10 s; one of unknown runtime has earned nothing, so waits not */
  e.prot.ctl.cfg.batch_budget = 1.5;
  w->plan.deadline_ms = 300000;
  w->profile.solo_s = 20;
  assert_false(may_start(&e, w, false, 1000, &until));
  assert_int_equal(until, 11000);
  w->profile.solo_s = 0;
  assert_true(may_start(&e, w, false, 1000, &until));
  w->profile.solo_s = 20;
  /* the victim the held ones wait for */
  struct agent_protect_q q = {.c = w, .admit = true};
  assert_string_equal(agent_protection_ask(&e.prot, &q, 1, 2000), "db");
  assert_true(q.hold);
  env_release(&e);
}

/* Judged by share with slack: batch containers start one at a time, the
 * oldest first, gap_ms apart; the next one is asked again right after. */
static void test_ask_one_at_a_time(void **state) {
  (void)state;
  struct env e;
  env_init(&e);
  e.prot.ctl.cfg.batch_budget = 0; /* the spacing alone */
  e.prot.gap_ms = 2000;
  e.prot.ctl.active = true;
  struct agent_ctr *old = ctr(&e, "old", "seq-write", AGENT_PENDING, 10);
  struct agent_ctr *young = ctr(&e, "young", "rand-write", AGENT_PENDING, 20);
  struct agent_protect_q q[2] = {{.c = young, .admit = true}, {.c = old, .admit = true}};
  agent_protection_ask(&e.prot, q, 2, 1000);
  assert_true(q[0].hold && !q[1].hold);
  assert_int_equal(q[0].until_ms, 1001);
  assert_int_equal(e.prot.last_ms, 1000);
  /* the next plan: the young one alone, before the gap: held until it */
  struct agent_protect_q q1 = {.c = young, .admit = true};
  agent_protection_ask(&e.prot, &q1, 1, 1001);
  assert_true(q1.hold);
  assert_int_equal(q1.until_ms, 3000);
  agent_protection_ask(&e.prot, &q1, 1, 3000);
  assert_false(q1.hold);
  env_release(&e);
}

/* The window call: a protected container's share moves the cap level on
 * batch containers; short, new ones are held; with slack again for
 * PROTECT_SLACK_WINDOWS windows the call says held ones may start.  The
 * view shows it. */
static void test_window(void **state) {
  (void)state;
  struct env e;
  env_init(&e);
  e.prot.objective = AGENT_PROTECT_OBJECTIVE_OFF; /* by share */
  e.prot.ctl.cfg.hold_at_floor = false;
  e.prot.ctl.cfg.batch_budget = 0; /* the controller alone */
  struct agent_ctr *db = ctr(&e, "db", "latency", AGENT_RUNNING, 0);
  struct agent_ctr *w = ctr(&e, "w", "seq-write", AGENT_RUNNING, 0);
  struct agent_ctr *p = ctr(&e, "p", "seq-write", AGENT_PENDING, 0);
  assert_true(db->plan.protect);
  struct agent_protection_view v;
  agent_protection_view(&e.prot, &v);
  assert_false(v.active);
  assert_string_equal(v.victim, "");
  /* first window: the victim within its target, the batch capped */
  db->protect.share = 0.9;
  rate(db, 10 * MiB);
  rate(w, 100 * MiB);
  assert_false(agent_protection_window(&e.prot, 1000, 1.0));
  agent_protection_view(&e.prot, &v);
  assert_true(v.active && !v.holding && !v.objective);
  assert_true(v.level_bps == 64 * MiB);
  assert_string_equal(v.victim, "db");
  uint64_t until;
  assert_true(may_start(&e, p, false, 1000, &until));
  /* short of its target: cut, and held */
  db->protect.share = 0.5;
  assert_false(agent_protection_window(&e.prot, 2000, 1.0));
  agent_protection_view(&e.prot, &v);
  assert_true(v.holding && v.level_bps == 32 * MiB);
  assert_false(may_start(&e, p, false, 2000, &until));
  /* slack: one window is not enough, the second releases the hold */
  db->protect.share = 0.95;
  assert_false(agent_protection_window(&e.prot, 3000, 1.0));
  assert_true(agent_protection_window(&e.prot, 4000, 1.0));
  agent_protection_view(&e.prot, &v);
  assert_false(v.holding);
  /* the batch job's account: held by protection from 2 s to 4 s so far */
  struct agent_protection_debt b;
  agent_protection_debt(&e.prot, p, 4000, &b);
  assert_true(b.batch && !b.spent);
  assert_true(fabs(b.held_s - 2.0) < 1e-9);
  assert_true(isinf(b.bound_s)); /* no budget */
  agent_protection_debt(&e.prot, db, 4000, &b);
  assert_false(b.batch); /* a protected container owes nothing */
  /* the victim leaves: everything lifted */
  db->state = AGENT_CREATED;
  agent_protection_window(&e.prot, 5000, 1.0);
  agent_protection_view(&e.prot, &v);
  assert_false(v.active);
  assert_true(v.level_bps == 0);
  env_release(&e);
}

/* A protected container with a declared objective of 2 ms whose last
 * window's block I/O p99 was 3 ms (1.5 x it), doing I/O. */
static struct agent_ctr *victim_missing(struct env *e) {
  struct agent_ctr *db = ctr(e, "db", "latency", AGENT_RUNNING, 0);
  db->lat.target_declared_us = 2000;
  db->lat.valid = true;
  db->lat.p99_us = 3000;
  db->lat.count = 100;
  rate(db, 10 * MiB);
  return db;
}

/* The window call sets a protected container's objective: a declared
 * p99 once the block layer measures one, and the controller judges by
 * it. */
static void test_window_objective(void **state) {
  (void)state;
  struct env e;
  env_init(&e);
  struct agent_ctr *db = victim_missing(&e);
  struct agent_ctr *w = ctr(&e, "w", "seq-write", AGENT_RUNNING, 0);
  rate(w, 80 * MiB);
  agent_protection_window(&e.prot, 1000, 1.0);
  assert_true(db->lat.target == 2000);
  assert_int_equal(db->lat.target_source, AGENT_LAT_TARGET_DECLARED);
  struct agent_protection_view v;
  agent_protection_view(&e.prot, &v);
  assert_true(v.objective && v.missed);
  assert_true(fabs(v.worst_lat_ratio - 1.5) < 1e-9);
  /* a miss cuts from the batch's measured rate: 80 MiB/s x 1 / 1.5 */
  assert_true(fabs(v.level_bps - 80 * MiB / 1.5) < 1);
  env_release(&e);
}

/* A victim starved of completions (stalled most of the window, nothing
 * completed) is neither idle nor within its objective: it has waited at
 * least its stalled share of the window, a miss that cuts further.  One
 * that stalls little and completes nothing is idle: everything lifted. */
static void test_window_starved(void **state) {
  (void)state;
  struct env e;
  env_init(&e);
  struct agent_ctr *db = victim_missing(&e);
  db->protect.stall = 0.2;
  struct agent_ctr *w = ctr(&e, "w", "seq-write", AGENT_RUNNING, 0);
  rate(w, 80 * MiB);
  agent_protection_window(&e.prot, 1000, 1.0);
  struct agent_protection_view v;
  agent_protection_view(&e.prot, &v);
  double first = v.level_bps;
  assert_true(fabs(first - 80 * MiB / 1.5) < 1);
  /* recorded in the demo: PostgreSQL at 11 tps beside the batch, its
   * requests 200-500 ms each: no completion in a 250 ms window */
  rate(db, 0);
  db->lat.p99_us = 0;
  db->lat.count = 0;
  db->protect.stall = 0.9;
  agent_protection_window(&e.prot, 1250, 0.25);
  agent_protection_view(&e.prot, &v);
  assert_true(v.active && v.objective && v.missed);
  assert_true(fabs(v.worst_lat_ratio - 0.9 * 0.25e6 / 2000) < 1e-6);
  assert_true(fabs(v.level_bps - first * 0.5) < 1); /* cut, not lifted */
  /* idle of its own accord: no stall, nothing completed */
  db->protect.stall = 0.05;
  agent_protection_window(&e.prot, 1500, 0.25);
  agent_protection_view(&e.prot, &v);
  assert_true(v.level_bps == 0 && !v.missed);
  env_release(&e);
}

/* The sampler's facts: windows alone teach a protected container's pace
 * alone; a shared window gives its share of it. */
static void test_observe(void **state) {
  (void)state;
  struct agent_ctr c = {.protect.share = -1, .protect.stall = -1, .protect.stall_alone = -1, .sample.io_now = true};
  agent_protection_observe(&c, AGENT_PROTECT_SIGNAL_RATE, 100 * MiB, 0.1, 0);
  assert_true(c.protect.alone_bps == 100 * MiB);
  assert_true(fabs(c.protect.stall_alone - 0.1) < 1e-9);
  assert_true(c.protect.share == -1); /* alone: no share */
  agent_protection_observe(&c, AGENT_PROTECT_SIGNAL_RATE, 50 * MiB, 0.4, 2);
  assert_true(fabs(c.protect.share - 0.5) < 1e-9);
  assert_true(fabs(c.protect.stall - 0.4) < 1e-9);
  /* by pressure: (1 - 0.4) / (1 - 0.1) */
  agent_protection_observe(&c, AGENT_PROTECT_SIGNAL_PRESSURE, 50 * MiB, 0.4, 2);
  assert_true(fabs(c.protect.share - 0.6 / 0.9) < 1e-9);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ask),     cmocka_unit_test(test_ask_one_at_a_time),
      cmocka_unit_test(test_window),  cmocka_unit_test(test_window_objective),
      cmocka_unit_test(test_window_starved),
      cmocka_unit_test(test_observe),
  };
  return cmocka_run_group_tests_name("agent_protection", tests, NULL, NULL);
}
