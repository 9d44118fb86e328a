// SPDX-License-Identifier: Apache-2.0
/* The admission state machine with a fake clock: holds, admissions on
 * exit, deadlines, the batch window, cancellation, re-registration. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <sys/stat.h>
#include <unistd.h>

#include "agent/plan/admission.h"
#include "agent/plan/penalties.h"
#include "agent/config.h"
#include "agent/daemon.h"
#include "agent/store/profiles.h"
#include "agent/protect/protection.h"
#include "agent/serve/requests.h"
#include "client/annotations.h"
#include "common/cleanup.h"
#include "common/xalloc.h"
#include "iobatch/agent.pb-c.h"
#include "runtime-hook/hook.h"
#include "wcd/kind.h"

static int n_admitted;
static char last_admitted[64];

static void on_admitted(struct agent_adm *adm, struct agent_ctr *c, void *user) {
  (void)adm;
  (void)user;
  n_admitted++;
  snprintf(last_admitted, sizeof(last_admitted), "%s", c->id);
  c->serve.waiter = NULL;
}

static const struct agent_adm_ops ops = {.admitted = on_admitted};

static void setup_adm(struct agent_adm *adm, enum batch_policy policy, uint64_t window) {
  struct batch_config cfg;
  batch_config_default(&cfg);
  cfg.policy = policy;
  /* For two jobs the paper's objective ties at alpha = 0.5 (alpha vs
   * 1 - alpha whatever the penalty) and the batcher admits on a tie; a
   * little more weight on the penalty makes the conflict count. */
  cfg.alpha = 0.6;
  agent_adm_init(adm, &cfg, window, 60000, &ops, NULL);
  n_admitted = 0;
  last_admitted[0] = '\0';
}

static struct agent_ctr *reg(struct agent_adm *adm, const char *id, const char *cls, uint64_t now) {
  cleanup_error struct iob_error *err = NULL;
  struct agent_ctr_info in = {.id = id, .ns = "default", .declared_class = cls, .source = "test"};
  struct agent_ctr *c = NULL;
  if (agent_adm_register(adm, &in, now, &c, &err) < 0)
    fail_msg("register %s: %s", id, err->msg);
  return c;
}

/* Run every due tick up to and including `until`, the way the daemon's
 * timer does. */
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

static void test_paper_hold_until_exit(void **state) {
  (void)state;
  struct agent_adm adm;
  setup_adm(&adm, BATCH_POLICY_PAPER, 200);
  struct agent_ctr *sw = reg(&adm, "seq", "seq-write", 0);
  assert_int_equal(sw->state, AGENT_CREATED);
  assert_int_equal(sw->cls, BATCH_SEQ_WRITE);
  assert_int_equal(sw->class_source, AGENT_CLASS_DECLARED);
  assert_int_equal(agent_adm_admit(&adm, sw, 0, 0, 0), 0);
  assert_int_equal(sw->state, AGENT_PENDING);
  /* alone on an idle agent: planned at once, no batch window */
  assert_int_equal(agent_adm_next_wake(&adm), 0);
  run_until(&adm, 0);
  assert_int_equal(sw->state, AGENT_RUNNING);
  assert_int_equal(n_admitted, 1);
  assert_int_equal(sw->plan.admitted_ms, 0);

  struct agent_ctr *rw = reg(&adm, "rand", "rand-write", 1000);
  assert_int_equal(agent_adm_admit(&adm, rw, 0, 0, 1000), 0);
  /* nothing else pending: decided at once (held) */
  assert_int_equal(agent_adm_next_wake(&adm), 1000);
  run_until(&adm, 1000);
  assert_int_equal(rw->state, AGENT_PENDING);
  assert_int_equal(rw->plan.reason, BATCH_HOLD_PLAN);
  run_until(&adm, 5000);
  assert_int_equal(rw->state, AGENT_PENDING);
  assert_int_equal(rw->plan.reason, BATCH_HOLD_PLAN);
  assert_string_equal(rw->plan.conflict, "seq");
  assert_int_equal(n_admitted, 1);
  /* the deadline (60 s default) is the next wake-up */
  assert_int_equal(agent_adm_next_wake(&adm), 61000);

  agent_adm_detach(&adm, sw, 6000);
  agent_ctr_free(sw);
  run_until(&adm, 6000);
  assert_int_equal(rw->state, AGENT_RUNNING);
  assert_int_equal(n_admitted, 2);
  assert_string_equal(last_admitted, "rand");
  assert_false(rw->plan.forced);
  assert_int_equal(agent_adm_next_wake(&adm), UINT64_MAX);
  agent_ctr_free_all(&adm);
}

static void test_deadline_forces(void **state) {
  (void)state;
  struct agent_adm adm;
  setup_adm(&adm, BATCH_POLICY_PAPER, 0);
  struct agent_ctr *sw = reg(&adm, "seq", "seq-write", 0);
  agent_adm_admit(&adm, sw, 0, 0, 0);
  run_until(&adm, 0);
  assert_int_equal(sw->state, AGENT_RUNNING);
  struct agent_ctr *rw = reg(&adm, "rand", "rand-write", 100);
  agent_adm_admit(&adm, rw, 3000, 0, 100); /* max hold 3 s */
  run_until(&adm, 3099);
  assert_int_equal(rw->state, AGENT_PENDING);
  run_until(&adm, 3100);
  assert_int_equal(rw->state, AGENT_RUNNING);
  assert_true(rw->plan.forced);
  assert_int_equal(rw->plan.reason, BATCH_ADMIT_DEADLINE);
  assert_int_equal(adm.forced_admissions, 1);
  /* forced in beside a conflicting one: the victim gets the larger weight */
  assert_true(rw->plan.weight > sw->plan.weight);
  agent_ctr_free_all(&adm);
}

static void test_caller_deadline_caps_hold(void **state) {
  (void)state;
  struct agent_adm adm;
  setup_adm(&adm, BATCH_POLICY_PAPER, 0);
  struct agent_ctr *sw = reg(&adm, "seq", "seq-write", 0);
  agent_adm_admit(&adm, sw, 0, 0, 0);
  run_until(&adm, 0);
  struct agent_ctr *rw = reg(&adm, "rand", "rand-write", 0);
  agent_adm_admit(&adm, rw, 0, 1500, 0); /* the caller gives up at 1.5 s */
  assert_int_equal(rw->plan.deadline_ms, 1500);
  run_until(&adm, 1500);
  assert_int_equal(rw->state, AGENT_RUNNING);
  assert_true(rw->plan.forced);
  agent_ctr_free_all(&adm);
}

static void test_cancel_pending(void **state) {
  (void)state;
  struct agent_adm adm;
  setup_adm(&adm, BATCH_POLICY_PAPER, 0);
  struct agent_ctr *sw = reg(&adm, "seq", "seq-write", 0);
  agent_adm_admit(&adm, sw, 0, 0, 0);
  run_until(&adm, 0);
  struct agent_ctr *rw = reg(&adm, "rand", "rand-write", 0);
  agent_adm_admit(&adm, rw, 0, 0, 0);
  run_until(&adm, 10);
  assert_int_equal(rw->state, AGENT_PENDING);
  assert_int_equal(agent_ctr_count(&adm, AGENT_PENDING), 1);
  agent_adm_detach(&adm, rw, 20);
  agent_ctr_free(rw);
  run_until(&adm, 100000);
  assert_int_equal(agent_ctr_count(&adm, AGENT_PENDING), 0);
  assert_int_equal(adm.n, 1);
  assert_null(agent_ctr_find(&adm, "default", "rand"));
  assert_ptr_equal(agent_ctr_find(&adm, "default", "seq"), sw);
  assert_null(agent_ctr_find(&adm, "other", "seq"));
  agent_ctr_free_all(&adm);
}

static void test_no_conflict_admitted_at_once(void **state) {
  (void)state;
  /* Defaults (predictive): a random reader beside a running random writer
   * is admitted at once (nothing else pending: no batch window). */
  struct agent_adm adm;
  setup_adm(&adm, BATCH_POLICY_PREDICTIVE, 100);
  struct agent_ctr *rw = reg(&adm, "rw", "rand-write", 0);
  agent_adm_admit(&adm, rw, 0, 0, 0);
  run_until(&adm, 100);
  struct agent_ctr *rr = reg(&adm, "rr", "rand-read", 200);
  agent_adm_admit(&adm, rr, 0, 0, 200);
  run_until(&adm, 200);
  assert_int_equal(rr->state, AGENT_RUNNING);
  assert_int_equal(rr->plan.admitted_ms, 200);
  /* no profiles yet: the small rand-read/rand-write penalty does not pay
   * for a hold */
  assert_true(rr->plan.reason == BATCH_ADMIT_FREE || rr->plan.reason == BATCH_ADMIT_PAYS);
  agent_ctr_free_all(&adm);
}

/* Arrivals together: the first (nothing else pending) is planned at once,
 * the others gather in its batch window (and are held when they conflict
 * with the first). */
static void test_idle_first_arrival(void **state) {
  (void)state;
  struct agent_adm adm;
  setup_adm(&adm, BATCH_POLICY_PAPER, 200);
  struct agent_ctr *s1 = reg(&adm, "s1", "seq-write", 0);
  struct agent_ctr *r1 = reg(&adm, "r1", "rand-write", 0);
  struct agent_ctr *r2 = reg(&adm, "r2", "rand-write", 0);
  agent_adm_admit(&adm, s1, 0, 0, 0);
  run_until(&adm, 0);
  assert_int_equal(s1->state, AGENT_RUNNING);
  agent_adm_admit(&adm, r1, 0, 0, 1);
  agent_adm_admit(&adm, r2, 0, 0, 1);
  /* within the window of s1's arrival: planned when it ends */
  assert_int_equal(agent_adm_next_wake(&adm), 200);
  run_until(&adm, 199);
  assert_int_equal(adm.plans, 1);
  run_until(&adm, 200);
  assert_int_equal(adm.plans, 2);
  assert_int_equal(r1->state, AGENT_PENDING);
  assert_int_equal(r2->state, AGENT_PENDING);
  /* an arrival while others are pending gathers in the window */
  struct agent_ctr *r3 = reg(&adm, "r3", "rand-write", 500);
  agent_adm_admit(&adm, r3, 0, 0, 500);
  assert_int_equal(agent_adm_next_wake(&adm), 700);
  run_until(&adm, 1000);
  assert_int_equal(r3->state, AGENT_PENDING);
  assert_int_equal(n_admitted, 1);
  /* a pending one that is not alone waits for the window too */
  agent_adm_detach(&adm, s1, 2000);
  agent_ctr_free(s1);
  run_until(&adm, 2000);
  assert_int_equal(n_admitted, 4);
  agent_ctr_free_all(&adm);
}

/* The batch window is waited only when there is company: a lone arrival
 * on an idle agent is decided at once; a second one within the window of
 * the first's arrival is planned with what else comes in that window,
 * when it ends; so is one within the window of an admission (a container
 * starting); one with nothing pending, starting or recent is decided at
 * once again. */
static void test_window_only_with_company(void **state) {
  (void)state;
  struct agent_adm adm;
  setup_adm(&adm, BATCH_POLICY_PREDICTIVE, 200);
  struct agent_ctr *a = reg(&adm, "a", "seq-read", 0);
  struct agent_ctr *b = reg(&adm, "b", "seq-read", 0);
  struct agent_ctr *c = reg(&adm, "c", "seq-read", 0);
  agent_adm_admit(&adm, a, 0, 0, 1000);
  assert_int_equal(agent_adm_next_wake(&adm), 1000);
  run_until(&adm, 1000);
  assert_int_equal(a->state, AGENT_RUNNING);
  assert_int_equal(a->plan.admitted_ms, 1000);
  assert_int_equal(adm.plans, 1);
  /* b arrives 50 ms into a's window: it batches with what comes */
  agent_adm_admit(&adm, b, 0, 0, 1050);
  assert_int_equal(agent_adm_next_wake(&adm), 1200);
  run_until(&adm, 1199);
  assert_int_equal(b->state, AGENT_PENDING);
  assert_int_equal(adm.plans, 1);
  agent_adm_admit(&adm, c, 0, 0, 1100);
  assert_int_equal(agent_adm_next_wake(&adm), 1200);
  run_until(&adm, 1200);
  /* one plan decided both */
  assert_int_equal(adm.plans, 2);
  assert_int_not_equal(b->plan.reason, -1);
  assert_int_not_equal(c->plan.reason, -1);
  assert_int_equal(b->state, AGENT_RUNNING);
  assert_int_equal(c->state, AGENT_RUNNING);
  assert_int_equal(b->plan.admitted_ms, 1200);
  /* long after: alone again, decided at once */
  struct agent_ctr *d = reg(&adm, "d", "seq-read", 5000);
  agent_adm_admit(&adm, d, 0, 0, 5000);
  assert_int_equal(agent_adm_next_wake(&adm), 5000);
  run_until(&adm, 5000);
  assert_int_equal(d->state, AGENT_RUNNING);
  assert_int_equal(d->plan.admitted_ms, 5000);
  agent_ctr_free_all(&adm);
}

/* A container admitted by a plan (here when its conflict exits) is
 * starting for a window: an arrival then is planned at the window's end. */
static void test_window_after_admission(void **state) {
  (void)state;
  struct agent_adm adm;
  setup_adm(&adm, BATCH_POLICY_PAPER, 200);
  struct agent_ctr *sw = reg(&adm, "sw", "seq-write", 0);
  struct agent_ctr *rw = reg(&adm, "rw", "rand-write", 0);
  agent_adm_admit(&adm, sw, 0, 0, 0);
  run_until(&adm, 0);
  agent_adm_admit(&adm, rw, 0, 0, 1000);
  run_until(&adm, 1000);
  assert_int_equal(rw->state, AGENT_PENDING); /* held beside the writer */
  agent_adm_detach(&adm, sw, 3000);
  agent_ctr_free(sw);
  run_until(&adm, 3000);
  assert_int_equal(rw->state, AGENT_RUNNING);
  assert_int_equal(rw->plan.admitted_ms, 3000);
  struct agent_ctr *sr = reg(&adm, "sr", "seq-read", 3050);
  agent_adm_admit(&adm, sr, 0, 0, 3050);
  assert_int_equal(agent_adm_next_wake(&adm), 3200);
  agent_ctr_free_all(&adm);
}

/* A (re)started agent settles: nothing is planned before the end of the
 * settle time, except what a held container's deadline forces. */
static void test_settle(void **state) {
  (void)state;
  struct agent_adm adm;
  setup_adm(&adm, BATCH_POLICY_PAPER, 100);
  agent_adm_settle(&adm, 1000);
  struct agent_ctr *rw = reg(&adm, "rw", "rand-write", 0);
  agent_adm_admit(&adm, rw, 0, 0, 0);
  assert_int_equal(agent_adm_next_wake(&adm), 1000);
  /* a running container registered again meanwhile is planned with it */
  struct agent_ctr_info in = {
      .id = "sw", .ns = "default", .declared_class = "seq-write", .running = true};
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_adm_register(&adm, &in, 300, NULL, &err), 0);
  assert_int_equal(agent_adm_next_wake(&adm), 1000);
  run_until(&adm, 999);
  assert_int_equal(rw->state, AGENT_PENDING);
  run_until(&adm, 1000);
  assert_int_equal(rw->state, AGENT_PENDING); /* held beside the writer */
  assert_int_equal(rw->plan.reason, BATCH_HOLD_PLAN);
  /* a deadline before the end of the settle time is kept */
  struct agent_adm adm2;
  setup_adm(&adm2, BATCH_POLICY_PAPER, 100);
  agent_adm_settle(&adm2, 5000);
  struct agent_ctr *r2 = reg(&adm2, "r2", "rand-write", 0);
  agent_adm_admit(&adm2, r2, 0, 700, 0);
  assert_int_equal(agent_adm_next_wake(&adm2), 700);
  run_until(&adm2, 700);
  assert_int_equal(r2->state, AGENT_RUNNING);
  agent_ctr_free_all(&adm2);
  agent_ctr_free_all(&adm);
}

static void test_register_rules(void **state) {
  (void)state;
  struct agent_adm adm;
  setup_adm(&adm, BATCH_POLICY_PAPER, 0);
  cleanup_error struct iob_error *err = NULL;
  struct agent_ctr_info in = {.id = "", .ns = "default"};
  assert_int_equal(agent_adm_register(&adm, &in, 0, NULL, &err), -1);
  assert_string_equal(err->msg, "container id is empty");
  in.id = "a";
  in.declared_class = "fast";
  assert_int_equal(agent_adm_register(&adm, &in, 0, NULL, &err), -1);
  assert_string_equal(err->msg, "invalid annotation 'io.iobatch.class': unknown class 'fast' "
                                "(expected seq-read, rand-read, seq-write, rand-write, mixed, "
                                "idle, unknown or latency)");
  in.declared_class = NULL;
  in.cgroup = "/a/../../etc";
  assert_int_equal(agent_adm_register(&adm, &in, 0, NULL, &err), -1);
  assert_string_equal(err->msg, "invalid cgroup path '/a/../../etc': must be absolute, "
                                "without '..'");
  assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
  in.cgroup = NULL;
  /* names that are not UTF-8 (profiles.json could not be saved with them) */
  const char *bad[] = {"\xff",         "ns\xc3",           "\xc0\xaf",
                       "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    in.ns = bad[i];
    iob_error_release(&err);
    assert_int_equal(agent_adm_register(&adm, &in, 0, NULL, &err), -1);
    assert_string_equal(err->msg, "namespace is not UTF-8");
    assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
  }
  in.ns = "default";
  in.workload_key = "img\x80";
  iob_error_release(&err);
  assert_int_equal(agent_adm_register(&adm, &in, 0, NULL, &err), -1);
  assert_string_equal(err->msg, "workload key is not UTF-8");
  in.workload_key = NULL;
  assert_int_equal(adm.n, 0);
  /* UTF-8 of every length is fine */
  in.ns = "caf\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x98\x80";
  assert_int_equal(agent_adm_register(&adm, &in, 0, NULL, &err), 0);
  assert_int_equal(adm.n, 1);
  agent_ctr_free_all(&adm);
  setup_adm(&adm, BATCH_POLICY_PAPER, 0);
  in.ns = "default";

  /* hook then shim: the second registration fills in, never erases */
  in = (struct agent_ctr_info){.id = "a",
                               .ns = "k8s.io",
                               .cgroup = "/pod/a",
                               .pid = 42,
                               .source = "hook",
                               .workload_key = "img"};
  struct agent_ctr *c = NULL;
  assert_int_equal(agent_adm_register(&adm, &in, 0, &c, &err), 0);
  in = (struct agent_ctr_info){.id = "a", .ns = "k8s.io", .source = "shim"};
  struct agent_ctr *c2 = NULL;
  assert_int_equal(agent_adm_register(&adm, &in, 5, &c2, &err), 0);
  assert_ptr_equal(c, c2);
  assert_string_equal(c->cgroup, "/pod/a");
  assert_string_equal(c->workload_key, "img");
  assert_string_equal(c->source, "shim");
  assert_int_equal(c->pid, 42);
  assert_int_equal(adm.n, 1);

  /* detection does not replace a declared class; it does replace a profile */
  agent_adm_set_class(&adm, c, BATCH_SEQ_READ, 0.5, AGENT_CLASS_PROFILE, 0);
  assert_int_equal(c->cls, BATCH_SEQ_READ);
  agent_adm_set_class(&adm, c, BATCH_RAND_READ, 0.9, AGENT_CLASS_DETECTED, 0);
  assert_int_equal(c->cls, BATCH_RAND_READ);
  agent_adm_set_class(&adm, c, BATCH_IDLE, 1, AGENT_CLASS_DECLARED, 0);
  agent_adm_set_class(&adm, c, BATCH_SEQ_WRITE, 0.9, AGENT_CLASS_DETECTED, 0);
  assert_int_equal(c->cls, BATCH_IDLE);

  /* a container that re-registers after an agent restart as running is
   * running, and an Admit for it is answered at once */
  in = (struct agent_ctr_info){
      .id = "b", .ns = "k8s.io", .running = true, .declared_class = "seq-write"};
  assert_int_equal(agent_adm_register(&adm, &in, 10, &c, &err), 0);
  assert_int_equal(c->state, AGENT_RUNNING);
  assert_int_equal(agent_adm_admit(&adm, c, 0, 0, 10), 1);
  agent_ctr_free_all(&adm);
}

static void test_capacity_fifo(void **state) {
  (void)state;
  /* max_batch = 2: the third waits for capacity; the oldest goes first.
   * (Predictive: the paper objective is indifferent between the two.) */
  struct agent_adm adm;
  struct batch_config cfg;
  batch_config_default(&cfg);
  cfg.max_batch = 2;
  cfg.cap_running = true; /* as max_concurrency = 2 in iobatchd.conf */
  agent_adm_init(&adm, &cfg, 0, 60000, &ops, NULL);
  struct agent_ctr *c[4];
  char id[16];
  for (int i = 0; i < 4; i++) {
    snprintf(id, sizeof(id), "r%d", i);
    c[i] = reg(&adm, id, "rand-read", (uint64_t)i);
    agent_adm_admit(&adm, c[i], 0, 0, (uint64_t)i);
    run_until(&adm, (uint64_t)i);
  }
  assert_int_equal(agent_ctr_count(&adm, AGENT_RUNNING), 2);
  assert_int_equal(c[2]->state, AGENT_PENDING);
  assert_int_equal(c[3]->state, AGENT_PENDING);
  assert_int_equal(c[2]->plan.reason, BATCH_HOLD_FULL);
  agent_adm_detach(&adm, c[0], 100);
  agent_ctr_free(c[0]);
  run_until(&adm, 100);
  assert_int_equal(c[2]->state, AGENT_RUNNING);
  assert_int_equal(c[3]->state, AGENT_PENDING);
  agent_ctr_free_all(&adm);
}

/* Admission that never holds up a node, at the agent: a pod sandbox is admitted at once and never
 * planned; a service and an unknown container are never held; a new
 * container beside six idle ones and two sandboxes starts at once (the
 * default configuration: nothing is evidence, no cap). */
static void test_sandbox_service_probe(void **state) {
  (void)state;
  struct agent_adm adm;
  struct batch_config cfg;
  batch_config_default(&cfg);
  agent_adm_init(&adm, &cfg, 200, 300000, &ops, NULL);
  n_admitted = 0;
  cleanup_error struct iob_error *err = NULL;
  char id[32];
  for (int i = 0; i < 6; i++) {
    snprintf(id, sizeof(id), "idle%d", i);
    /* a second apart: each alone, not in another's batch window */
    uint64_t t = (uint64_t)i * 1000;
    struct agent_ctr *c = reg(&adm, id, "idle", t);
    assert_int_equal(agent_adm_admit(&adm, c, 0, 0, t), 0);
    run_until(&adm, t);
    assert_int_equal(c->state, AGENT_RUNNING);
  }
  for (int i = 0; i < 2; i++) {
    snprintf(id, sizeof(id), "pause%d", i);
    struct agent_ctr_info in = {.id = id, .ns = "k8s.io", .kind = "sandbox", .source = "shim"};
    struct agent_ctr *c = NULL;
    assert_int_equal(agent_adm_register(&adm, &in, 10000, &c, &err), 0);
    assert_int_equal(c->kind, AGENT_KIND_SANDBOX);
    /* answered at once: no plan, no batch window */
    assert_int_equal(agent_adm_admit(&adm, c, 0, 0, 10000), 1);
    assert_int_equal(c->state, AGENT_RUNNING);
  }
  assert_int_equal(n_admitted, 8);
  /* an unknown newcomer: a probe, admitted by the first plan */
  struct agent_ctr *u = reg(&adm, "new", NULL, 11000);
  assert_int_equal(agent_adm_admit(&adm, u, 0, 0, 11000), 0);
  run_until(&adm, 11000);
  assert_int_equal(u->state, AGENT_RUNNING);
  assert_int_equal(u->plan.reason, BATCH_ADMIT_PROBE);
  /* a declared service beside a running seq writer, even under the paper
   * policy's objective: never held */
  adm.bcfg.policy = BATCH_POLICY_PAPER;
  struct agent_ctr *w = reg(&adm, "writer", "seq-write", 12000);
  agent_adm_admit(&adm, w, 0, 0, 12000);
  run_until(&adm, 12000);
  struct agent_ctr_info si = {
      .id = "db", .ns = "default", .kind = "service", .declared_class = "rand-write"};
  struct agent_ctr *db = NULL;
  assert_int_equal(agent_adm_register(&adm, &si, 13000, &db, &err), 0);
  agent_adm_admit(&adm, db, 0, 0, 13000);
  run_until(&adm, 13000);
  assert_int_equal(db->state, AGENT_RUNNING);
  assert_int_equal(db->plan.reason, BATCH_ADMIT_SERVICE);
  /* an unknown kind is refused, naming it */
  struct agent_ctr_info bad = {.id = "x", .kind = "daemonset"};
  assert_int_equal(agent_adm_register(&adm, &bad, 14000, NULL, &err), -1);
  assert_non_null(strstr(err->msg, "unknown kind 'daemonset'"));
  agent_ctr_free_all(&adm);
}

/* Work left comes from progress: bytes done against the learned bytes;
 * far past them the job is open-ended. */
static void test_progress(void **state) {
  (void)state;
  struct agent_adm adm;
  struct batch_config cfg;
  batch_config_default(&cfg);
  agent_adm_init(&adm, &cfg, 0, 300000, &ops, NULL);
  struct agent_ctr *c = reg(&adm, "w", "seq-write", 0);
  agent_adm_admit(&adm, c, 0, 0, 0);
  run_until(&adm, 0);
  c->profile.solo_s = 10;
  c->profile.solo_bps = 100e6; /* a run moves 1 GB */
  c->sample.bytes_run = 250e6;
  struct batch_job j;
  agent_adm_job(&adm, c, 5000, &j); /* slowed: a quarter done after 5 s */
  assert_false(j.service);
  assert_true(fabs(j.remaining_s - 7.5) < 1e-9);
  c->sample.bytes_run = 1.1e9; /* past the learned bytes: a little more */
  agent_adm_job(&adm, c, 12000, &j);
  assert_true(fabs(j.remaining_s - 0.5) < 1e-9);
  c->sample.bytes_run = 3.5e9; /* far past: open-ended */
  agent_adm_job(&adm, c, 40000, &j);
  assert_true(j.service);
  /* nothing learned: the batcher sees no estimate (open-ended) */
  c->profile.solo_s = 0;
  c->profile.solo_bps = 0;
  agent_adm_job(&adm, c, 40000, &j);
  assert_true(isinf(batch_work_left(&adm.bcfg, &j, 40)));
  agent_ctr_free_all(&adm);
}

/* Two sequential writers whose measured pair slowdown (2.4x each) makes
 * holding the second one pay when a start costs the built-in 0.25 s, and
 * not once the agent has measured that its starts take 3 s (a start
 * path that slow makes holding lose). */
static void hold_second_writer(struct agent_adm *adm, int starts_measured, double start_s) {
  struct batch_config cfg;
  batch_config_default(&cfg);
  cfg.s[BATCH_SEQ_WRITE][BATCH_SEQ_WRITE] = 0.7; /* 1 + 2 x 0.7 = 2.4x */
  cfg.known[BATCH_SEQ_WRITE][BATCH_SEQ_WRITE] = true;
  cfg.measured[BATCH_SEQ_WRITE][BATCH_SEQ_WRITE] = true;
  agent_adm_init(adm, &cfg, 0, 300000, &ops, NULL);
  for (int i = 0; i < starts_measured; i++)
    agent_adm_observe_start(adm, start_s);
  struct agent_ctr *a = reg(adm, "a", "seq-write", 0);
  agent_adm_admit(adm, a, 0, 0, 0);
  run_until(adm, 0);
  assert_int_equal(a->state, AGENT_RUNNING);
  a->profile.solo_s = 3;
  a->profile.solo_bps = 100e6;
  a->sample.io_now = true;
  struct agent_ctr *b = reg(adm, "b", "seq-write", 100);
  b->profile.solo_s = 3;
  b->profile.solo_bps = 100e6;
  agent_adm_admit(adm, b, 0, 0, 100);
  run_until(adm, 100);
}

static void test_start_path_measured(void **state) {
  (void)state;
  struct agent_adm adm;
  hold_second_writer(&adm, 0, 0);
  struct agent_ctr *b = adm.list->next;
  assert_string_equal(b->id, "b");
  assert_int_equal(b->state, AGENT_PENDING);
  assert_int_equal(b->plan.reason, BATCH_HOLD_MAKESPAN);
  agent_ctr_free_all(&adm);

  /* Two measured starts are not enough yet. */
  hold_second_writer(&adm, 2, 3.0);
  assert_int_equal(adm.list->next->state, AGENT_PENDING);
  agent_ctr_free_all(&adm);

  /* Three are: holding now costs 3 s of start and does not pay. */
  hold_second_writer(&adm, 3, 3.0);
  b = adm.list->next;
  assert_int_equal(b->state, AGENT_RUNNING);
  assert_int_equal(b->plan.reason, BATCH_ADMIT_PAYS);
  agent_ctr_free_all(&adm);

  /* A measured start shorter than the built-in one never lowers it, and
   * observations outside [0, AGENT_START_MAX_S] are ignored. */
  struct batch_config cfg;
  batch_config_default(&cfg);
  agent_adm_init(&adm, &cfg, 0, 300000, &ops, NULL);
  assert_false(agent_adm_observe_start(&adm, -1));
  assert_false(agent_adm_observe_start(&adm, AGENT_START_MAX_S + 1));
  assert_false(agent_adm_observe_start(&adm, NAN));
  assert_int_equal(adm.start_n, 0);
  assert_false(agent_adm_observe_start(&adm, 1.0));
  assert_false(agent_adm_observe_start(&adm, 2.0));
  assert_true(agent_adm_observe_start(&adm, 2.0));
  assert_false(agent_adm_observe_start(&adm, 2.0));
  assert_int_equal(adm.start_n, 4);
  assert_true(adm.start_s > 1.0 && adm.start_s < 2.0);
  agent_ctr_free_all(&adm);
}

/* ---- trust_declared: whose io.iobatch.class counts ---- */

/* Only kube-system is trusted (what ops->trusts says for the daemon's
 * trust_declared = kube-system). */
/* A job of workload KEY, declared CLS, asking to start at NOW. */
static struct agent_ctr *arrive_keyed(struct agent_adm *adm, const char *id, const char *cls,
                                      const char *key, uint64_t now) {
  cleanup_error struct iob_error *err = NULL;
  struct agent_ctr_info in = {
      .id = id, .ns = "default", .declared_class = cls, .source = "shim", .workload_key = key};
  struct agent_ctr *c = NULL;
  if (agent_adm_register(adm, &in, now, &c, &err) < 0)
    fail_msg("register %s: %s", id, err->msg);
  agent_adm_admit(adm, c, 0, 0, now);
  return c;
}

/* Three arrive together; the first is of a known rate, the other two not:
 * a reader (a) after a writer (b), so a is measured first.
 * With the disk's measured penalties at SLOWDOWN, returns them after the
 * first plan. */
/* An admission state whose measured penalties say a sequential reader
 * runs SLOWDOWN times slower beside a random reader (evidence). */
static void setup_measured(struct agent_adm *adm, struct agent_penalties *pen, double slowdown) {
  setup_adm(adm, BATCH_POLICY_PREDICTIVE, 100);
  assert_int_equal(agent_penalties_init(pen, NULL, NULL), 0);
  for (int i = 0; i < AGENT_PEN_MIN_CORUNS; i++)
    agent_penalties_observe(pen, BATCH_SEQ_READ, BATCH_RAND_READ, slowdown, true, NULL);
  adm->pen = pen;
}

static void three_arrive(struct agent_adm *adm, struct agent_penalties *pen, double slowdown,
                         struct agent_ctr **known, struct agent_ctr **a, struct agent_ctr **b) {
  setup_measured(adm, pen, slowdown);
  *known = arrive_keyed(adm, "known", "seq-read", "k-known", 1000);
  (*known)->profile.solo_s = 3;
  (*known)->profile.solo_bps = 100e6;
  *b = arrive_keyed(adm, "b", "seq-write", "k-b", 1010);
  *a = arrive_keyed(adm, "a", "rand-read", "k-a", 1020);
  run_until(adm, 1200);
}

/* On a disk whose measured penalties show harm, a job of a workload whose
 * solo rate is unknown starts alone, the others waiting for it a bounded
 * time; then the next one, once nothing else runs. */
static void test_measure_alone(void **state) {
  (void)state;
  struct agent_adm adm;
  struct agent_penalties pen;
  struct agent_ctr *known, *a, *b;
  three_arrive(&adm, &pen, 10, &known, &a, &b);
  assert_int_equal(a->state, AGENT_RUNNING);
  assert_int_equal(a->plan.reason, BATCH_ADMIT_MEASURE);
  assert_int_equal(known->state, AGENT_PENDING);
  assert_int_equal(known->plan.reason, BATCH_HOLD_MEASURE);
  assert_string_equal(known->plan.conflict, "a");
  assert_int_equal(b->state, AGENT_PENDING);
  assert_int_equal(b->plan.reason, BATCH_HOLD_MEASURE);
  assert_int_equal(adm.measured_alone, 1);
  /* a exits before its time alone is over: b (the writer) is next, alone. */
  agent_adm_detach(&adm, a, 3000);
  agent_ctr_free(a);
  run_until(&adm, 3000);
  assert_int_equal(b->state, AGENT_RUNNING);
  assert_int_equal(b->plan.reason, BATCH_ADMIT_MEASURE);
  assert_int_equal(known->state, AGENT_PENDING);
  assert_int_equal(adm.measured_alone, 2);
  /* b's time alone is over: it runs on, and the batcher decides for the
   * rest (nothing is measured beside it). */
  run_until(&adm, 3000 + adm.measure_ms);
  assert_int_equal(known->state, AGENT_RUNNING);
  assert_int_not_equal(known->plan.reason, BATCH_ADMIT_MEASURE);
  assert_int_equal(adm.measured_alone, 2);
  assert_int_equal(adm.measuring, 0);
  agent_ctr_free_all(&adm);
}

/* The wait is bounded: a held job starts measure_wait_ms after it asked,
 * whatever runs alone. */
static void test_measure_wait_bound(void **state) {
  (void)state;
  struct agent_adm adm;
  struct agent_penalties pen;
  struct agent_ctr *known, *a, *b;
  three_arrive(&adm, &pen, 10, &known, &a, &b);
  adm.measure_ms = 60000; /* longer than the bound */
  adm.measure_until_ms = 1100 + adm.measure_ms;
  agent_adm_schedule(&adm, 1300);
  run_until(&adm, 1000 + adm.measure_wait_ms - 1);
  assert_int_equal(known->state, AGENT_PENDING);
  run_until(&adm, 1020 + adm.measure_wait_ms);
  assert_int_equal(known->state, AGENT_RUNNING);
  assert_int_equal(b->state, AGENT_RUNNING);
  assert_int_not_equal(b->plan.reason, BATCH_ADMIT_MEASURE);
  agent_ctr_free_all(&adm);
}

/* On a disk that punishes mixing a first arrival waits for the batch
 * window: a burst that follows is planned with it, and the one of
 * unknown rate among them starts alone. */
static void test_measure_first_arrival_gathers(void **state) {
  (void)state;
  struct agent_adm adm;
  struct agent_penalties pen;
  setup_measured(&adm, &pen, 10);
  struct agent_ctr *known = arrive_keyed(&adm, "known", "seq-read", "k-known", 10000);
  known->profile.solo_s = 3;
  known->profile.solo_bps = 100e6;
  run_until(&adm, 10000);
  assert_int_equal(known->state, AGENT_PENDING);
  struct agent_ctr *a = arrive_keyed(&adm, "a", "seq-write", "k-a", 10050);
  run_until(&adm, 10000 + adm.batch_window_ms);
  assert_int_equal(a->state, AGENT_RUNNING);
  assert_int_equal(a->plan.reason, BATCH_ADMIT_MEASURE);
  assert_int_equal(known->state, AGENT_PENDING);
  agent_ctr_free_all(&adm);
}

/* First, do no harm: without measured harm (a slowdown a fair share
 * explains) nothing is held to be measured. */
static void test_measure_needs_harm(void **state) {
  (void)state;
  struct agent_adm adm;
  struct agent_penalties pen;
  struct agent_ctr *known, *a, *b;
  three_arrive(&adm, &pen, 2.5, &known, &a, &b);
  assert_int_equal(known->state, AGENT_RUNNING);
  assert_int_equal(a->state, AGENT_RUNNING);
  assert_int_equal(b->state, AGENT_RUNNING);
  assert_int_equal(adm.measured_alone, 0);
  agent_ctr_free_all(&adm);
}

static bool trust_kube_system(const char *ns, void *user) {
  (void)user;
  return strcmp(ns, "kube-system") == 0;
}
static const struct agent_adm_ops trust_ops = {.admitted = on_admitted,
                                               .trusts = trust_kube_system};

static void setup_trust(struct agent_adm *adm) {
  struct batch_config cfg;
  batch_config_default(&cfg);
  agent_adm_init(adm, &cfg, 0, 60000, &trust_ops, NULL);
  n_admitted = 0;
}

static struct agent_ctr *reg_in(struct agent_adm *adm, const char *id, const char *ns,
                                const char *pod_ns, const char *cls, bool running, uint64_t now) {
  cleanup_error struct iob_error *err = NULL;
  struct agent_ctr_info in = {.id = id,
                              .ns = ns,
                              .pod_namespace = pod_ns,
                              .declared_class = cls,
                              .source = "test",
                              .running = running};
  struct agent_ctr *c = NULL;
  if (agent_adm_register(adm, &in, now, &c, &err) < 0)
    fail_msg("register %s: %s", id, err->msg);
  return c;
}

/* The namespace is the pod's when known, else containerd's. */
static void test_trust_namespace(void **state) {
  (void)state;
  struct agent_adm adm;
  setup_trust(&adm);
  struct agent_ctr *sys = reg_in(&adm, "sys", "k8s.io", "kube-system", "idle", false, 0);
  assert_string_equal(agent_ctr_tenant(sys), "kube-system");
  assert_int_equal(sys->class_source, AGENT_CLASS_DECLARED);
  assert_false(sys->decl.declared_untrusted);
  struct agent_ctr *plain = reg_in(&adm, "plain", "kube-system", NULL, "idle", false, 0);
  assert_string_equal(agent_ctr_tenant(plain), "kube-system");
  assert_int_equal(plain->class_source, AGENT_CLASS_DECLARED);
  /* a containerd namespace named like a trusted one does not help a pod */
  struct agent_ctr *pod = reg_in(&adm, "pod", "kube-system", "team-a", "idle", false, 0);
  assert_string_equal(agent_ctr_tenant(pod), "team-a");
  assert_int_equal(pod->class_source, AGENT_CLASS_HINT);
  assert_true(pod->decl.declared_untrusted);
  assert_string_equal(pod->decl.declared, "idle");
  /* the shim registered without the pod's names, the hook with them: the
   * second registration decides on the names both gave */
  struct agent_ctr *late = reg_in(&adm, "late", "k8s.io", NULL, "seq-write", false, 0);
  assert_int_equal(late->class_source, AGENT_CLASS_HINT);
  reg_in(&adm, "late", "k8s.io", "kube-system", "seq-write", false, 10);
  assert_int_equal(late->class_source, AGENT_CLASS_DECLARED);
  assert_false(late->decl.declared_untrusted);
  /* the default (no ops->trusts): every declaration is trusted */
  struct agent_adm all;
  setup_adm(&all, BATCH_POLICY_PREDICTIVE, 0);
  struct agent_ctr *any = reg_in(&all, "any", "k8s.io", "team-a", "idle", false, 0);
  assert_int_equal(any->class_source, AGENT_CLASS_DECLARED);
  agent_ctr_free_all(&all);
  agent_ctr_free_all(&adm);
}

/* Protection with its defaults (agent/protect/protection.h): whom it targets. */
static const struct agent_protection *prot_defaults(void) {
  static struct agent_protection p;
  agent_protection_init(&p, NULL, NULL, NULL, NULL, NULL, NULL);
  return &p;
}

/* Declared idle from an untrusted namespace: shown as idle (the hint
 * stands until measured) but planned as unknown: admitted as a probe, not
 * as a container that does no I/O, and a batch container for protection
 * from the start; reclassified by the first measurement,
 * reported once. */
static void test_trust_idle_hint_reclassified(void **state) {
  (void)state;
  struct agent_adm adm;
  setup_trust(&adm);
  struct agent_ctr *c = reg_in(&adm, "lazy", "k8s.io", "team-a", "idle", false, 0);
  assert_int_equal(c->cls, BATCH_IDLE);
  assert_int_equal(c->class_source, AGENT_CLASS_HINT);
  assert_true(c->confidence < 1);
  assert_int_equal(agent_adm_admit(&adm, c, 0, 0, 0), 0);
  run_until(&adm, 0);
  assert_int_equal(c->state, AGENT_RUNNING);
  assert_int_equal(c->plan.reason, BATCH_ADMIT_PROBE);
  assert_int_equal(agent_ctr_plan_class(c), BATCH_UNKNOWN);
  assert_true(agent_ctr_is_batch(c));
  assert_true(agent_ctr_protect_target(prot_defaults(), c));
  unsigned what = agent_adm_measured(&adm, c, BATCH_SEQ_WRITE, 0.9, false, false, 1000);
  assert_int_equal(what, AGENT_MEASURED_OVERRULED);
  assert_int_equal(c->cls, BATCH_SEQ_WRITE);
  assert_int_equal(c->class_source, AGENT_CLASS_DETECTED);
  assert_true(agent_ctr_is_batch(c));
  assert_true(c->decl.overruled);
  /* reported once; later measurements just move the class */
  assert_int_equal(agent_adm_measured(&adm, c, BATCH_RAND_WRITE, 0.9, false, false, 2000), 0);
  assert_int_equal(c->cls, BATCH_RAND_WRITE);
  /* a trusted idle declaration is never measured over */
  struct agent_ctr *t = reg_in(&adm, "sys", "k8s.io", "kube-system", "idle", true, 3000);
  assert_int_equal(agent_adm_measured(&adm, t, BATCH_SEQ_WRITE, 0.9, false, false, 4000), 0);
  assert_int_equal(t->cls, BATCH_IDLE);
  assert_int_equal(t->class_source, AGENT_CLASS_DECLARED);
  agent_ctr_free_all(&adm);
}

/* What plans and protection go by: a hint counts only as a
 * writing class; idle, readers and unknown are planned as unknown.  A
 * trusted declaration, a profile and a measurement count as they are. */
static void test_trust_plan_class(void **state) {
  (void)state;
  struct agent_adm adm;
  setup_trust(&adm);
  static const struct {
    const char *cls;
    enum batch_class plan;
  } hints[] = {
      {"idle", BATCH_UNKNOWN},    {"seq-read", BATCH_UNKNOWN},    {"rand-read", BATCH_UNKNOWN},
      {"unknown", BATCH_UNKNOWN}, {"seq-write", BATCH_SEQ_WRITE}, {"rand-write", BATCH_RAND_WRITE},
      {"mixed", BATCH_MIXED},
  };
  for (size_t i = 0; i < sizeof(hints) / sizeof(hints[0]); i++) {
    char id[32];
    snprintf(id, sizeof(id), "u%zu", i);
    struct agent_ctr *u = reg_in(&adm, id, "k8s.io", "team-a", hints[i].cls, false, 0);
    assert_int_equal(u->class_source, AGENT_CLASS_HINT);
    assert_int_equal(agent_ctr_plan_class(u), hints[i].plan);
    assert_true(agent_ctr_protect_target(prot_defaults(), u));
    snprintf(id, sizeof(id), "t%zu", i);
    struct agent_ctr *t = reg_in(&adm, id, "k8s.io", "kube-system", hints[i].cls, false, 0);
    assert_int_equal(agent_ctr_plan_class(t), t->cls);
    /* measured: the measurement counts as it is */
    agent_adm_measured(&adm, u, BATCH_SEQ_READ, 0.9, false, false, 10);
    assert_int_equal(agent_ctr_plan_class(u), BATCH_SEQ_READ);
  }
  agent_ctr_free_all(&adm);
}

/* A profile is taught by the namespace's own runs: an untrusted tenant can
 * train an idle profile under a key, then run a heavy writer under it.  So
 * from an untrusted namespace a profile's class goes through the same
 * filter as its declaration (only a writer's class stands until this
 * run is measured); from a trusted one it stands. */
static void test_trust_profile_class(void **state) {
  (void)state;
  struct agent_adm adm;
  setup_trust(&adm);
  struct agent_ctr *u = reg_in(&adm, "u", "k8s.io", "team-a", NULL, false, 0);
  agent_adm_set_class(&adm, u, BATCH_IDLE, 0.95, AGENT_CLASS_PROFILE, 0);
  assert_int_equal(u->class_source, AGENT_CLASS_PROFILE);
  assert_int_equal(agent_ctr_plan_class(u), BATCH_UNKNOWN);
  assert_true(agent_ctr_is_batch(u));
  assert_true(agent_ctr_protect_target(prot_defaults(), u));
  struct agent_ctr *w = reg_in(&adm, "w", "k8s.io", "team-a", NULL, false, 0);
  agent_adm_set_class(&adm, w, BATCH_SEQ_WRITE, 0.95, AGENT_CLASS_PROFILE, 0);
  assert_int_equal(agent_ctr_plan_class(w), BATCH_SEQ_WRITE);
  struct agent_ctr *t = reg_in(&adm, "t", "k8s.io", "kube-system", NULL, false, 0);
  agent_adm_set_class(&adm, t, BATCH_IDLE, 0.95, AGENT_CLASS_PROFILE, 0);
  assert_int_equal(agent_ctr_plan_class(t), BATCH_IDLE);
  /* this run measured: the measurement counts as it is */
  agent_adm_measured(&adm, u, BATCH_IDLE, 0.9, false, false, 10);
  assert_int_equal(agent_ctr_plan_class(u), BATCH_IDLE);
  agent_ctr_free_all(&adm);
}

/* io.iobatch.max-hold-ms: untrusted, ignored (the agent's
 * default); trusted, taken but never below AGENT_MIN_HOLD_MS nor the
 * batch window, nor above the default when that is lower still. */
static void test_trust_max_hold(void **state) {
  (void)state;
  struct agent_adm adm;
  setup_trust(&adm); /* default hold 60000, window 0 */
  assert_int_equal(agent_adm_hold_ms(&adm, 0, true), 60000);
  assert_int_equal(agent_adm_hold_ms(&adm, 0, false), 60000);
  assert_int_equal(agent_adm_hold_ms(&adm, 1, false), 60000);
  assert_int_equal(agent_adm_hold_ms(&adm, 1, true), AGENT_MIN_HOLD_MS);
  assert_int_equal(agent_adm_hold_ms(&adm, 1500, true), 1500);
  assert_int_equal(agent_adm_hold_ms(&adm, 90000, true), 90000);
  assert_int_equal(agent_adm_hold_ms(&adm, 90000, false), 60000);
  adm.batch_window_ms = 3000;
  assert_int_equal(agent_adm_hold_ms(&adm, 1500, true), 3000);
  adm.default_hold_ms = 500;
  assert_int_equal(agent_adm_hold_ms(&adm, 1, true), 500);
  adm.batch_window_ms = 0;
  adm.default_hold_ms = 60000;
  /* end to end: an untrusted 1 ms beside a conflicting writer is held to
   * the default deadline and flagged; a trusted one gets the floor */
  struct agent_ctr *w = reg_in(&adm, "w", "k8s.io", "kube-system", "seq-write", true, 0);
  (void)w;
  struct agent_ctr *u = reg_in(&adm, "u", "k8s.io", "team-a", "rand-write", false, 0);
  assert_int_equal(agent_adm_admit(&adm, u, 1, 0, 0), 0);
  assert_true(u->decl.hold_ignored);
  assert_int_equal(u->plan.deadline_ms, 60000);
  struct agent_ctr *t = reg_in(&adm, "t", "k8s.io", "kube-system", "rand-write", false, 0);
  assert_int_equal(agent_adm_admit(&adm, t, 1, 0, 0), 0);
  assert_false(t->decl.hold_ignored);
  assert_int_equal(t->plan.deadline_ms, AGENT_MIN_HOLD_MS);
  agent_ctr_free_all(&adm);
}

/* ---- the trust table (client/annotations.h): every row's rule, checked ---- */

static bool writing(enum batch_class c) {
  return c == BATCH_SEQ_WRITE || c == BATCH_RAND_WRITE || c == BATCH_MIXED;
}

/* io.iobatch.class = VALUE, not latency */
static void check_class_row(struct agent_adm *adm, const char *value) {
  struct agent_ctr *u = reg_in(adm, "u", "k8s.io", "team-a", value, false, 0);
  enum batch_class cls;
  assert_int_equal(batch_class_parse(value, &cls), 0);
  assert_int_equal(u->class_source, AGENT_CLASS_HINT); /* a hint, shown by status */
  assert_string_equal(u->decl.declared, value);
  assert_int_equal(agent_ctr_plan_class(u), writing(cls) ? cls : BATCH_UNKNOWN);
  assert_true(agent_ctr_protect_target(prot_defaults(), u));
  agent_adm_measured(adm, u, BATCH_SEQ_READ, 0.9, false, false, 10); /* the measurement wins */
  assert_int_equal(u->cls, BATCH_SEQ_READ);
  assert_int_equal(u->class_source, AGENT_CLASS_DETECTED);
  struct agent_ctr *t = reg_in(adm, "t", "k8s.io", "kube-system", value, false, 0);
  assert_int_equal(t->class_source, AGENT_CLASS_DECLARED);
  assert_int_equal(agent_ctr_plan_class(t), cls);
  agent_adm_measured(adm, t, BATCH_SEQ_READ, 0.9, false, false, 10); /* never measured over */
  assert_int_equal(t->cls, cls);
}

static void check_latency_row(struct agent_adm *adm) {
  struct agent_ctr *u = reg_in(adm, "u", "k8s.io", "team-a", "latency", false, 0);
  assert_false(u->plan.protect);
  assert_true(agent_ctr_is_batch(u)); /* until then a job */
  agent_adm_measured(adm, u, BATCH_RAND_READ, 0.9, false, false, 10);
  assert_false(u->plan.protect);
  agent_adm_measured(adm, u, BATCH_RAND_READ, 0.9, true, false, 20);
  assert_false(u->plan.protect); /* never raised by the declaration */
  agent_adm_measured(adm, u, BATCH_RAND_READ, 0.9, true, true, 30);
  assert_true(u->plan.protect); /* protect = detected: for what it does */
  agent_adm_measured(adm, u, BATCH_SEQ_WRITE, 0.9, false, true, 40);
  assert_false(u->plan.protect); /* re-checked: dropped */
  struct agent_ctr *t = reg_in(adm, "t", "k8s.io", "kube-system", "latency", false, 0);
  assert_true(t->plan.protect);
  struct batch_job j;
  agent_adm_job(adm, t, 0, &j);
  assert_true(j.service);
}

static void check_kind_row(struct agent_adm *adm) {
  static const struct {
    const char *kind;
    enum agent_kind want;
  } k[] = {
      {"job", AGENT_KIND_JOB}, {"service", AGENT_KIND_SERVICE}, {"sandbox", AGENT_KIND_SANDBOX}};
  for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
    struct agent_ctr c = {0};
    agent_ctr_set_kind(&c, k[i].kind, false, true);
    assert_int_equal(c.kind, k[i].want);
    agent_ctr_set_kind(&c, k[i].kind, false, false);
    assert_int_equal(c.kind, AGENT_KIND_JOB);
    assert_int_equal(c.decl.kind_ignored, k[i].want != AGENT_KIND_JOB);
  }
  (void)adm;
}

static void check_max_hold_row(struct agent_adm *adm) {
  assert_int_equal(agent_adm_hold_ms(adm, 1, false), adm->default_hold_ms);
  assert_int_equal(agent_adm_hold_ms(adm, 1, true), AGENT_MIN_HOLD_MS);
  assert_int_equal(agent_adm_hold_ms(adm, 5000, true), 5000);
}

static void check_workload_row(void) {
  char dir[] = "/tmp/iob-trust.XXXXXX";
  assert_non_null(mkdtemp(dir));
  cleanup_error struct iob_error *err = NULL;
  struct agent_profiles p;
  assert_int_equal(agent_profiles_init(&p, dir, &err), 0);
  p.per_ns_max = 1;
  struct agent_profile_update u = {.cls = "seq-write", .confidence = 1};
  assert_int_equal(agent_profiles_learn(&p, "kube-system", "k", &u, &err), 0);
  assert_int_equal(agent_profiles_learn(&p, "team-a", "k", &u, &err), 0);
  assert_int_equal(agent_profiles_learn(&p, "team-a", "k2", &u, &err), 0);
  /* its own namespace only, and at most per_ns_max of them */
  assert_non_null(agent_profiles_get(&p, "kube-system", "k"));
  assert_int_equal(p.n, 2);
  agent_profiles_release(&p);
  rmdir(dir);
}

static void check_latency_target_row(void) {
  char dir[] = "/tmp/iob-trust.XXXXXX";
  assert_non_null(mkdtemp(dir));
  struct agent_config cfg;
  agent_config_default(&cfg);
  cfg.state_dir = dir;
  cfg.trust_declared = (char *)",kube-system,";
  struct agent_daemon d;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_daemon_init_headless(&d, &cfg, &err), 0);
  static const char *const tenants[] = {"team-a", "kube-system"};
  for (int i = 0; i < 2; i++) {
    Iobatch__Agent__V1__RegisterRequest r = IOBATCH__AGENT__V1__REGISTER_REQUEST__INIT;
    r.id = (char *)tenants[i];
    r.namespace_ = (char *)"k8s.io";
    r.pod_namespace = (char *)tenants[i];
    r.source = (char *)"shim";
    r.latency_target_us = 2000;
    Iobatch__Agent__V1__RegisterResponse resp;
    if (agent_api_register(&d.api, &r, 1000, &resp, &err) < 0)
      fail_msg("register %s: %s", tenants[i], err->msg);
    struct agent_ctr *c = agent_ctr_find(&d.adm, "k8s.io", tenants[i]);
    assert_non_null(c);
    assert_int_equal(c->lat.target_declared_us, i ? 2000 : 0);
    assert_int_equal(c->lat.target_ignored, i == 0);
  }
  agent_daemon_release(&d);
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

/* The hook's first io.weight is journalled by the agent
 * at Register, for a class declared in a trusted namespace only, and only
 * for the directory the hook saw; the hook writes nothing otherwise. */
static void test_trust_hook_weight(void **state) {
  (void)state;
  char dir[] = "/tmp/iob-hookw.XXXXXX";
  assert_non_null(mkdtemp(dir));
  char cg[128], path[320];
  snprintf(cg, sizeof(cg), "%s/cg", dir);
  assert_int_equal(mkdir(cg, 0700), 0);
  for (const char *const *c = (const char *const[]){"team-a", "kube-system", "moved", NULL}; *c;
       c++) {
    snprintf(path, sizeof(path), "%s/%s", cg, *c);
    assert_int_equal(mkdir(path, 0700), 0);
  }
  struct agent_config cfg;
  agent_config_default(&cfg);
  cfg.state_dir = dir;
  cfg.trust_declared = (char *)",kube-system,";
  struct agent_daemon d;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_daemon_init_headless(&d, &cfg, &err), 0);
  d.sampler.has_io = true;
  d.sampler.cgroup_root = xstrdup(cg);
  static const char *const tenants[] = {"team-a", "kube-system", "moved"};
  for (int i = 0; i < 3; i++) {
    char rel[64];
    snprintf(rel, sizeof(rel), "/%s", tenants[i]);
    snprintf(path, sizeof(path), "%s%s", cg, rel);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    Iobatch__Agent__V1__RegisterRequest r = IOBATCH__AGENT__V1__REGISTER_REQUEST__INIT;
    r.id = (char *)tenants[i];
    r.namespace_ = (char *)"k8s.io";
    r.pod_namespace = (char *)(i == 0 ? "team-a" : "kube-system");
    r.source = (char *)"hook";
    r.declared_class = (char *)"rand-write";
    r.cgroup = rel;
    r.hook_weight = 400;
    r.hook_weight_was = (char *)"100";
    r.hook_bfq_weight_was = (char *)"";
    r.cgroup_inode = (uint64_t)sb.st_ino + (i == 2); /* "moved": not what the hook saw */
    Iobatch__Agent__V1__RegisterResponse resp;
    if (agent_api_register(&d.api, &r, 1000, &resp, &err) < 0)
      fail_msg("register %s: %s", tenants[i], err->msg);
    snprintf(path, sizeof(path), "%s%s/io.weight", cg, rel);
    /* journalled, with what was there and what the hook writes, only
     * where the hook may write it */
    assert_int_equal(resp.hook_weight_journalled, i == 1);
    assert_int_equal(agent_restore_has(&d.restore, path, 0, 0), i == 1);
  }
  assert_int_equal(d.restore.n, 1);
  assert_string_equal(d.restore.v[0].value, "100");
  assert_string_equal(d.restore.v[0].written, "400");
  /* the container leaves: its default line goes back (the hook wrote it) */
  snprintf(path, sizeof(path), "%s/kube-system/io.weight", cg);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("default 400\n", f);
  fclose(f);
  struct agent_ctr *c = agent_ctr_find(&d.adm, "k8s.io", "kube-system");
  assert_non_null(c);
  agent_daemon_remove(&d, c, "exited", 2000);
  assert_int_equal(d.restore.n, 0);
  char buf[64] = "";
  f = fopen(path, "r");
  assert_non_null(f);
  assert_non_null(fgets(buf, sizeof(buf), f));
  fclose(f);
  assert_string_equal(buf, "default 100\n");
  agent_daemon_release(&d);
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

static void test_trust_table(void **state) {
  (void)state;
  /* every io.iobatch.* key has a row (test_client_annotations checks it
   * too: this test is about the rules) */
  for (size_t i = 0; i < iob_ann_defs_len; i++) {
    bool found = false;
    for (size_t r = 0; r < iob_ann_trust_table_len; r++)
      found |= strcmp(iob_ann_trust_table[r].key, iob_ann_defs[i].key) == 0;
    if (!found)
      fail_msg("'%s' is parsed but has no row in iob_ann_trust_table", iob_ann_defs[i].key);
  }
  /* every row: its rule, on the state machine */
  for (size_t r = 0; r < iob_ann_trust_table_len; r++) {
    const struct iob_ann_trust *row = &iob_ann_trust_table[r];
    assert_true(*row->values && *row->trusted && *row->untrusted);
    struct agent_adm adm;
    setup_trust(&adm);
    if (strcmp(row->key, IOB_ANN_CLASS) == 0 && strcmp(row->values, "latency") == 0) {
      check_latency_row(&adm);
    } else if (strcmp(row->key, IOB_ANN_CLASS) == 0) {
      char vals[256];
      snprintf(vals, sizeof(vals), "%s", row->values);
      size_t n = 0;
      for (char *save = NULL, *v = strtok_r(vals, ", ", &save); v;
           v = strtok_r(NULL, ", ", &save)) {
        struct agent_adm one;
        setup_trust(&one);
        check_class_row(&one, v);
        agent_ctr_free_all(&one);
        n++;
      }
      assert_int_equal(n, 7);
    } else if (strcmp(row->key, IOB_ANN_KIND) == 0) {
      check_kind_row(&adm);
    } else if (strcmp(row->key, IOB_ANN_MAX_HOLD) == 0) {
      check_max_hold_row(&adm);
    } else if (strcmp(row->key, IOB_ANN_WORKLOAD) == 0) {
      check_workload_row();
    } else if (strcmp(row->key, IOB_ANN_LATENCY_TARGET) == 0) {
      check_latency_target_row();
    } else {
      fail_msg("row '%s' (%s) has no check", row->key, row->values);
    }
    agent_ctr_free_all(&adm);
  }
}

/* A hint that the measurement confirms is not "overruled". */
static void test_trust_hint_confirmed(void **state) {
  (void)state;
  struct agent_adm adm;
  setup_trust(&adm);
  struct agent_ctr *c = reg_in(&adm, "w", "k8s.io", "team-a", "seq-write", true, 0);
  assert_int_equal(agent_adm_measured(&adm, c, BATCH_SEQ_WRITE, 0.8, false, false, 1000), 0);
  assert_int_equal(c->class_source, AGENT_CLASS_DETECTED);
  assert_false(c->decl.overruled);
  /* a learned profile (measured, in the tenant's own namespace) replaces a
   * hint too, and a later re-registration does not bring the hint back */
  struct agent_ctr *p = reg_in(&adm, "p", "k8s.io", "team-a", "rand-write", false, 0);
  agent_adm_set_class(&adm, p, BATCH_SEQ_READ, 0.9, AGENT_CLASS_PROFILE, 10);
  assert_int_equal(p->cls, BATCH_SEQ_READ);
  reg_in(&adm, "p", "k8s.io", "team-a", "rand-write", false, 20);
  assert_int_equal(p->cls, BATCH_SEQ_READ);
  assert_int_equal(p->class_source, AGENT_CLASS_PROFILE);
  agent_ctr_free_all(&adm);
}

/* Declared rand-write from an untrusted namespace: the random writer's
 * weight while it is a hint, the measured class's weight after (the same
 * as a trusted sequential writer beside it). */
static void test_trust_rand_hint_weight(void **state) {
  (void)state;
  struct agent_adm adm;
  setup_trust(&adm);
  cleanup_error struct iob_error *err = NULL;
  struct agent_ctr *a = reg_in(&adm, "a", "k8s.io", "team-a", "rand-write", true, 0);
  struct agent_ctr *b = reg_in(&adm, "b", "k8s.io", "kube-system", "seq-write", true, 0);
  assert_int_equal(agent_adm_plan(&adm, 100, &err), 0);
  assert_true(a->plan.weight > b->plan.weight);
  unsigned what = agent_adm_measured(&adm, a, BATCH_SEQ_WRITE, 0.9, false, false, 1000);
  assert_int_equal(what, AGENT_MEASURED_OVERRULED);
  assert_int_equal(agent_adm_plan(&adm, 1100, &err), 0);
  assert_int_equal(a->plan.weight, b->plan.weight);
  agent_ctr_free_all(&adm);
}

/* Declared latency from an untrusted namespace: protected only once the
 * detector finds it latency-sensitive, whatever `protect` says; trusted,
 * protected at once. */
static void test_trust_latency(void **state) {
  (void)state;
  struct agent_adm adm;
  setup_trust(&adm);
  struct agent_ctr *u = reg_in(&adm, "u", "k8s.io", "team-a", "latency", true, 0);
  assert_false(u->plan.protect);
  assert_string_equal(u->decl.declared, "latency");
  assert_true(agent_ctr_is_batch(u));
  /* measured, not latency-like: not protected, reported once */
  assert_int_equal(agent_adm_measured(&adm, u, BATCH_SEQ_WRITE, 0.9, false, false, 1000),
                   AGENT_MEASURED_OVERRULED);
  assert_false(u->plan.protect);
  assert_int_equal(agent_adm_measured(&adm, u, BATCH_SEQ_WRITE, 0.9, false, false, 2000), 0);
  /* latency-like, protect = declared: the untrusted declaration does not
   * protect it (it would throttle everyone else) */
  assert_int_equal(agent_adm_measured(&adm, u, BATCH_RAND_READ, 0.9, true, false, 3000), 0);
  assert_false(u->plan.protect);
  assert_true(agent_ctr_is_batch(u));
  /* protect = detected: protected for what it does, as if undeclared */
  assert_int_equal(agent_adm_measured(&adm, u, BATCH_RAND_READ, 0.9, true, true, 3500),
                   AGENT_MEASURED_PROTECTED);
  assert_false(u->plan.protect_declared);
  assert_false(agent_ctr_is_batch(u));
  /* re-checked every window: an idle window says nothing; I/O that is not
   * latency-like drops it, and it is a batch container again */
  assert_int_equal(agent_adm_measured(&adm, u, BATCH_IDLE, 0.9, false, true, 3600), 0);
  assert_true(u->plan.protect);
  assert_int_equal(agent_adm_measured(&adm, u, BATCH_SEQ_WRITE, 0.9, false, true, 3700),
                   AGENT_MEASURED_UNPROTECTED);
  assert_false(u->plan.protect);
  assert_true(agent_ctr_is_batch(u));
  assert_true(agent_adm_next_wake(&adm) <= 3700); /* planned again at once */
  /* latency-like at the first measurement, protect = declared: not
   * protected, and the declaration is reported overruled */
  struct agent_ctr *v = reg_in(&adm, "v", "k8s.io", "team-a", "latency", true, 0);
  assert_int_equal(agent_adm_measured(&adm, v, BATCH_RAND_READ, 0.9, true, false, 1000),
                   AGENT_MEASURED_OVERRULED);
  assert_false(v->plan.protect);
  /* trusted: protected at registration, and it stands whatever is measured */
  struct agent_ctr *t = reg_in(&adm, "t", "k8s.io", "kube-system", "latency", true, 0);
  assert_true(t->plan.protect && t->plan.protect_declared);
  assert_int_equal(agent_adm_measured(&adm, t, BATCH_SEQ_WRITE, 0.9, false, true, 4000), 0);
  assert_true(t->plan.protect);
  /* nothing declared, protect = declared: latency-like is not enough */
  struct agent_ctr *n = reg_in(&adm, "n", "k8s.io", "team-a", NULL, true, 0);
  assert_int_equal(agent_adm_measured(&adm, n, BATCH_RAND_READ, 0.9, true, false, 1000), 0);
  assert_false(n->plan.protect);
  /* protect = detected: a job that looks latency-sensitive is protected */
  assert_int_equal(agent_adm_measured(&adm, n, BATCH_RAND_READ, 0.9, true, true, 2000),
                   AGENT_MEASURED_PROTECTED);
  agent_ctr_free_all(&adm);
}

/* ---- trust_declared and the kind: who may say service or sandbox ---- */

static struct agent_ctr *reg_kind(struct agent_adm *adm, const char *id, const char *pod_ns,
                                  const char *kind, bool from_runtime, const char *cls,
                                  uint64_t now) {
  cleanup_error struct iob_error *err = NULL;
  struct agent_ctr_info in = {.id = id,
                              .ns = "k8s.io",
                              .pod_namespace = pod_ns,
                              .kind = kind,
                              .kind_from_runtime = from_runtime,
                              .declared_class = cls,
                              .source = "test"};
  struct agent_ctr *c = NULL;
  if (agent_adm_register(adm, &in, now, &c, &err) < 0)
    fail_msg("register %s: %s", id, err->msg);
  return c;
}

/* One batch slot taken by a trusted sequential writer: a job asking to
 * start is held (BATCH_HOLD_FULL), a service is not. */
static struct agent_ctr *setup_full(struct agent_adm *adm) {
  struct batch_config cfg;
  batch_config_default(&cfg);
  cfg.cap_running = true;
  cfg.max_batch = 1;
  agent_adm_init(adm, &cfg, 0, 60000, &trust_ops, NULL);
  n_admitted = 0;
  struct agent_ctr *w = reg_in(adm, "w", "k8s.io", "kube-system", "seq-write", true, 0);
  assert_int_equal(w->state, AGENT_RUNNING);
  return w;
}

/* io.iobatch.kind=service from an untrusted namespace: a job, which takes
 * a slot and is held behind the writer; from a trusted one: a service,
 * never held. */
static void test_trust_kind_service(void **state) {
  (void)state;
  struct agent_adm adm;
  setup_full(&adm);
  struct agent_ctr *u = reg_kind(&adm, "u", "team-a", "service", false, "seq-write", 10);
  assert_int_equal(u->kind, AGENT_KIND_JOB);
  assert_string_equal(u->decl.declared_kind, "service");
  assert_true(u->decl.kind_untrusted && u->decl.kind_ignored);
  assert_true(agent_ctr_is_batch(u));
  assert_int_equal(agent_adm_admit(&adm, u, 0, 0, 10), 0);
  run_until(&adm, 10);
  assert_int_equal(u->state, AGENT_PENDING);
  assert_int_equal(u->plan.reason, BATCH_HOLD_FULL);
  struct agent_ctr *t = reg_kind(&adm, "t", "kube-system", "service", false, "seq-write", 20);
  assert_int_equal(t->kind, AGENT_KIND_SERVICE);
  assert_string_equal(t->decl.declared_kind, "service");
  assert_false(t->decl.kind_untrusted || t->decl.kind_ignored);
  assert_int_equal(agent_adm_admit(&adm, t, 0, 0, 20), 0);
  run_until(&adm, 20);
  assert_int_equal(t->state, AGENT_RUNNING);
  assert_int_equal(t->plan.reason, BATCH_ADMIT_SERVICE);
  assert_int_equal(u->state, AGENT_PENDING);
  /* a second registration (hook, then shim) says it again: still a job */
  reg_kind(&adm, "u", "team-a", "service", false, "seq-write", 30);
  assert_int_equal(u->kind, AGENT_KIND_JOB);
  /* untrusted "job" is what it would be anyway: taken, nothing ignored */
  struct agent_ctr *j = reg_kind(&adm, "j", "team-a", "job", false, NULL, 40);
  assert_int_equal(j->kind, AGENT_KIND_JOB);
  assert_false(j->decl.kind_ignored);
  assert_true(j->decl.kind_untrusted);
  agent_ctr_free_all(&adm);
}

/* io.iobatch.kind=sandbox from an untrusted namespace: a job, planned and
 * held; the CRI's sandbox (source RUNTIME) from the same namespace is a
 * sandbox, admitted at once; trusted, the annotation stands too. */
static void test_trust_kind_sandbox(void **state) {
  (void)state;
  struct agent_adm adm;
  setup_full(&adm);
  struct agent_ctr *u = reg_kind(&adm, "u", "team-a", "sandbox", false, "seq-write", 10);
  assert_int_equal(u->kind, AGENT_KIND_JOB);
  assert_true(u->decl.kind_ignored);
  assert_int_equal(agent_adm_admit(&adm, u, 0, 0, 10), 0);
  run_until(&adm, 10);
  assert_int_equal(u->state, AGENT_PENDING);
  assert_int_equal(u->plan.reason, BATCH_HOLD_FULL);
  struct agent_ctr *r = reg_kind(&adm, "pause", "team-a", "sandbox", true, NULL, 20);
  assert_int_equal(r->kind, AGENT_KIND_SANDBOX);
  assert_string_equal(r->decl.declared_kind, "");
  assert_false(r->decl.kind_untrusted || r->decl.kind_ignored);
  assert_int_equal(agent_adm_admit(&adm, r, 0, 0, 20), 1);
  assert_int_equal(r->state, AGENT_RUNNING);
  struct agent_ctr *t = reg_kind(&adm, "t", "kube-system", "sandbox", false, NULL, 30);
  assert_int_equal(t->kind, AGENT_KIND_SANDBOX);
  assert_int_equal(agent_adm_admit(&adm, t, 0, 0, 30), 1);
  /* the kind follows the tenant once the names are known: a registration
   * without the pod's namespace (an Admit's) first, then the hook's */
  struct agent_ctr *late = reg_kind(&adm, "late", NULL, "service", false, NULL, 40);
  assert_int_equal(late->kind, AGENT_KIND_JOB);
  reg_kind(&adm, "late", "kube-system", "service", false, NULL, 50);
  assert_int_equal(late->kind, AGENT_KIND_SERVICE);
  assert_false(late->decl.kind_ignored);
  agent_ctr_free_all(&adm);
}

/* Without trust_declared (no ops->trusts, the built-in "all") every kind
 * stands: an older agent's behaviour, and an older client's kind (no
 * kind_source: an annotation) as before. */
static void test_trust_kind_all(void **state) {
  (void)state;
  struct agent_adm adm;
  setup_adm(&adm, BATCH_POLICY_PREDICTIVE, 0);
  struct agent_ctr *s = reg_kind(&adm, "s", "team-a", "service", false, NULL, 0);
  assert_int_equal(s->kind, AGENT_KIND_SERVICE);
  assert_false(s->decl.kind_ignored);
  struct agent_ctr *b = reg_kind(&adm, "b", "team-a", "sandbox", false, NULL, 0);
  assert_int_equal(b->kind, AGENT_KIND_SANDBOX);
  agent_ctr_free_all(&adm);
}

/* An ignored service kind is a job in every respect, and like any job it
 * becomes open-ended in the forecast once it has run far past its learned
 * bytes: measured, not declared. */
static void test_trust_kind_open_ended(void **state) {
  (void)state;
  struct agent_adm adm;
  setup_trust(&adm);
  struct agent_ctr *c = reg_kind(&adm, "u", "team-a", "service", false, "seq-write", 0);
  assert_int_equal(agent_adm_admit(&adm, c, 0, 0, 0), 0);
  run_until(&adm, 0);
  assert_int_equal(c->state, AGENT_RUNNING);
  c->profile.solo_s = 10;
  c->profile.solo_bps = 100e6;
  c->sample.bytes_run = 250e6;
  struct batch_job j;
  agent_adm_job(&adm, c, 5000, &j);
  assert_false(j.service);
  c->sample.bytes_run = 3.5e9; /* past open_ended_factor (3) x 1 GB */
  agent_adm_job(&adm, c, 40000, &j);
  assert_true(j.service);
  assert_int_equal(c->kind, AGENT_KIND_JOB);
  agent_ctr_free_all(&adm);
}

/* On the wire, through the agent's own Register, Admit and Status steps
 * (agent/serve/requests.c) on a headless daemon with trust_declared =
 * kube-system: kind_source absent (a client older than the field) or
 * unknown counts as io.iobatch.kind; only RUNTIME is taken from anybody. */
static Iobatch__Agent__V1__RegisterRequest *wire_register(const char *id, const char *kind,
                                                          int source) {
  Iobatch__Agent__V1__RegisterRequest m = IOBATCH__AGENT__V1__REGISTER_REQUEST__INIT;
  m.id = (char *)id;
  m.namespace_ = (char *)"k8s.io";
  m.pod_namespace = (char *)"team-a";
  m.declared_class = (char *)"seq-write";
  m.source = (char *)"shim";
  m.kind = (char *)kind;
  m.kind_source = (Iobatch__Agent__V1__KindSource)source;
  uint8_t buf[512];
  size_t n = protobuf_c_message_get_packed_size(&m.base);
  assert_true(n <= sizeof(buf));
  protobuf_c_message_pack(&m.base, buf);
  Iobatch__Agent__V1__RegisterRequest *r =
      iobatch__agent__v1__register_request__unpack(NULL, n, buf);
  assert_non_null(r);
  return r;
}

static void test_trust_kind_wire(void **state) {
  (void)state;
  char dir[] = "/tmp/adm-kind.XXXXXX";
  assert_non_null(mkdtemp(dir));
  struct agent_config cfg;
  agent_config_default(&cfg);
  cfg.state_dir = dir;
  cfg.trust_declared = (char *)",kube-system,";
  struct agent_daemon d;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_daemon_init_headless(&d, &cfg, &err), 0);
  static const struct {
    const char *id, *kind;
    int source;
    enum agent_kind want;
  } cases[] = {
      {"old", "service", IOBATCH__AGENT__V1__KIND_SOURCE__KIND_SOURCE_UNSPECIFIED, AGENT_KIND_JOB},
      {"ann", "service", IOBATCH__AGENT__V1__KIND_SOURCE__KIND_SOURCE_ANNOTATION, AGENT_KIND_JOB},
      {"odd", "sandbox", 99, AGENT_KIND_JOB},
      {"cri", "sandbox", IOBATCH__AGENT__V1__KIND_SOURCE__KIND_SOURCE_RUNTIME, AGENT_KIND_SANDBOX},
      /* the runtime never says service: read as the annotation it is */
      {"rts", "service", IOBATCH__AGENT__V1__KIND_SOURCE__KIND_SOURCE_RUNTIME, AGENT_KIND_JOB},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    Iobatch__Agent__V1__RegisterRequest *r =
        wire_register(cases[i].id, cases[i].kind, cases[i].source);
    Iobatch__Agent__V1__RegisterResponse resp;
    if (agent_api_register(&d.api, r, 1000, &resp, &err) < 0)
      fail_msg("register %s: %s", cases[i].id, err->msg);
    iobatch__agent__v1__register_request__free_unpacked(r, NULL);
    struct agent_ctr *c = agent_ctr_find(&d.adm, "k8s.io", cases[i].id);
    assert_non_null(c);
    if (c->kind != cases[i].want)
      fail_msg("'%s': kind %s, expected %s", cases[i].id, agent_kind_name(c->kind),
               agent_kind_name(cases[i].want));
    assert_int_equal(c->serve.kind_logged, cases[i].want == AGENT_KIND_JOB);
  }
  /* the Admit of an old shim says it again: still a job, and pending */
  Iobatch__Agent__V1__AdmitRequest a = IOBATCH__AGENT__V1__ADMIT_REQUEST__INIT;
  a.id = (char *)"old";
  a.namespace_ = (char *)"k8s.io";
  a.kind = (char *)"service";
  struct agent_ctr *c = NULL;
  assert_int_equal(agent_api_admit(&d.api, &a, 1100, 0, &c, &err), 0);
  assert_int_equal(c->kind, AGENT_KIND_JOB);
  assert_int_equal(c->state, AGENT_PENDING);
  /* an Admit with the CRI's sandbox is a sandbox: admitted at once */
  a.id = (char *)"cri";
  a.kind = (char *)"sandbox";
  a.kind_source = IOBATCH__AGENT__V1__KIND_SOURCE__KIND_SOURCE_RUNTIME;
  assert_int_equal(agent_api_admit(&d.api, &a, 1200, 0, &c, &err), 1);
  /* Status: the declaration, not trusted, beside the kind it has */
  Iobatch__Agent__V1__StatusResponse st;
  assert_int_equal(agent_api_status(&d.api, NULL, 1300, &st, &err), 0);
  int seen = 0;
  for (size_t i = 0; i < st.n_containers; i++) {
    const Iobatch__Agent__V1__ContainerStatus *s = st.containers[i];
    if (strcmp(s->id, "ann") == 0) {
      seen++;
      assert_string_equal(s->kind, "job");
      assert_string_equal(s->declared_kind, "service");
      assert_false(s->declared_kind_trusted);
    } else if (strcmp(s->id, "cri") == 0) {
      seen++;
      assert_string_equal(s->kind, "sandbox");
      assert_string_equal(s->declared_kind, "");
    }
  }
  assert_int_equal(seen, 2);
  agent_api_status_release(&st);
  agent_daemon_release(&d);
  assert_int_equal(rmdir(dir), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_paper_hold_until_exit),
      cmocka_unit_test(test_deadline_forces),
      cmocka_unit_test(test_caller_deadline_caps_hold),
      cmocka_unit_test(test_cancel_pending),
      cmocka_unit_test(test_no_conflict_admitted_at_once),
      cmocka_unit_test(test_idle_first_arrival),
      cmocka_unit_test(test_window_only_with_company),
      cmocka_unit_test(test_window_after_admission),
      cmocka_unit_test(test_settle),
      cmocka_unit_test(test_register_rules),
      cmocka_unit_test(test_capacity_fifo),
      cmocka_unit_test(test_sandbox_service_probe),
      cmocka_unit_test(test_progress),
      cmocka_unit_test(test_start_path_measured),
      cmocka_unit_test(test_trust_namespace),
      cmocka_unit_test(test_trust_idle_hint_reclassified),
      cmocka_unit_test(test_trust_hint_confirmed),
      cmocka_unit_test(test_trust_rand_hint_weight),
      cmocka_unit_test(test_trust_latency),
      cmocka_unit_test(test_trust_plan_class),
      cmocka_unit_test(test_trust_profile_class),
      cmocka_unit_test(test_trust_table),
      cmocka_unit_test(test_trust_max_hold),
      cmocka_unit_test(test_trust_kind_service),
      cmocka_unit_test(test_trust_kind_sandbox),
      cmocka_unit_test(test_trust_kind_all),
      cmocka_unit_test(test_trust_kind_open_ended),
      cmocka_unit_test(test_trust_kind_wire),
      cmocka_unit_test(test_trust_hook_weight),
      cmocka_unit_test(test_measure_alone),
      cmocka_unit_test(test_measure_wait_bound),
      cmocka_unit_test(test_measure_first_arrival_gathers),
      cmocka_unit_test(test_measure_needs_harm),
  };
  return cmocka_run_group_tests_name("agent_admission", tests, NULL, NULL);
}
