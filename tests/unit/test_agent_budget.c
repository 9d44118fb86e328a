// SPDX-License-Identifier: Apache-2.0
/* The batch's budget per container (agent/protect/budget.c) against recorded
 * windows: what sharing the disk costs is not protection's, what a cap,
 * a freeze or a protection hold adds is, and every batch job ends free of
 * protection at its bound, however long the service it yields to runs.
 * The windows are what protection's window step sees (agent/protect/protection.c): the
 * sampler's rates, then agent_protection_budget_window, then the controller
 * (agent/protect/protect.c), then the caps and the freezer, simulated here as
 * caps.c and freeze.c decide them (no cgroup is written). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "agent/plan/admission.h"
#include "agent/protect/budget.h"
#include "agent/store/profiles.h"
#include "agent/protect/protection.h"
#include "common/cleanup.h"

#define MiB (1024.0 * 1024)
#define WINDOW_MS 1000

static const struct agent_adm_ops ops = {0};

/* Protection (agent/protect/protection.h) on the test's admission state: the
 * plan asks it, the windows below drive it. */
static struct agent_protection prot;

static void adm_setup(struct agent_adm *adm) {
  struct batch_config cfg;
  batch_config_default(&cfg);
  agent_adm_init(adm, &cfg, 0, 24 * 3600 * 1000, &ops, NULL);
  agent_protection_init(&prot, adm, NULL, NULL, NULL, NULL, NULL);
  adm->protection = &prot;
}

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
  for (int guard = 0; guard < 100000; guard++) {
    uint64_t w = agent_adm_next_wake(adm);
    if (w > until)
      return;
    if (agent_adm_tick(adm, w, &err) < 0)
      fail_msg("tick: %s", err->msg);
  }
  fail_msg("tick loop does not settle");
}

/* A running job C, admitted at NOW, that did I/O at RATE in the window
 * ending at NOW under the cap it has (caps.bps). */
static void sample(struct agent_ctr *c, double rate) {
  c->sample.write_bps = rate;
  c->sample.read_bps = 0;
  c->sample.io_now = rate > 0;
  c->sample.first_io = c->sample.first_io || rate > 0;
}

/* A job slowed by sharing the disk alone spends nothing: a 10 s job
 * (100 MiB/s alone) runs at 40 MiB/s beside a service for 60 windows,
 * uncapped or under a cap it never reaches: its turnaround passes 1.5 x
 * its time alone, and protection has added nothing to it. */
static void test_sharing_spends_nothing(void **state) {
  (void)state;
  struct agent_adm adm;
  adm_setup(&adm);
  struct agent_ctr *db = reg(&adm, "db", "latency", 0);
  struct agent_ctr *w = reg(&adm, "w", "seq-write", 0);
  w->profile.solo_s = 10;
  w->profile.solo_bps = 100 * MiB;
  agent_adm_admit(&adm, db, 0, 0, 0);
  agent_adm_admit(&adm, w, 0, 0, 0);
  run_until(&adm, 0);
  assert_int_equal(w->state, AGENT_RUNNING);
  uint64_t now = 0;
  for (int i = 0; i < 60; i++) {
    now += WINDOW_MS;
    /* the second half under a cap of 64 MiB/s it never reaches */
    w->caps.bps = i < 30 ? 0 : 64 * MiB;
    sample(w, 40 * MiB);
    w->sample.solo_equiv_s += 0.4; /* as the sampler counts its progress */
    agent_protection_budget_window(&prot, now, WINDOW_MS / 1000.0);
    assert_false(agent_ctr_over_budget(&prot, w, now));
  }
  assert_true(agent_budget_debt(w, now) == 0);
  assert_true(agent_budget_bound(&prot.ctl.cfg, w) == 5);
  assert_int_equal(w->budget.source, AGENT_BUDGET_PROFILE);
  assert_true(agent_ctr_protect_limited(&prot, w, now));
  agent_ctr_free_all(&adm);
}

/* A capped job spends only what the cap added: a 20 s job got 80 MiB/s
 * beside the service, then a cap of 20 MiB/s holds it there: each window
 * costs it 3/4 of a window (1 - 19.5 / 80), so its 10 s bound is reached
 * in the 14th capped window. */
static void test_cap_spends_what_it_adds(void **state) {
  (void)state;
  struct agent_adm adm;
  adm_setup(&adm);
  struct agent_ctr *w = reg(&adm, "w", "seq-write", 0);
  w->profile.solo_s = 20;
  w->profile.solo_bps = 200 * MiB;
  agent_adm_admit(&adm, w, 0, 0, 0);
  run_until(&adm, 0);
  uint64_t now = 0;
  for (int i = 0; i < 5; i++) { /* sharing, uncapped: the reference */
    now += WINDOW_MS;
    sample(w, 80 * MiB);
    agent_protection_budget_window(&prot, now, WINDOW_MS / 1000.0);
  }
  assert_true(agent_budget_debt(w, now) == 0);
  w->caps.bps = 20 * MiB;
  for (int i = 1; i <= 13; i++) {
    now += WINDOW_MS;
    sample(w, 19.5 * MiB); /* at the cap (io.max lets a little less through) */
    agent_protection_budget_window(&prot, now, WINDOW_MS / 1000.0);
    assert_false(agent_ctr_over_budget(&prot, w, now));
  }
  double debt = agent_budget_debt(w, now);
  assert_true(fabs(debt - 13 * (1 - 19.5 / 80)) < 1e-6);
  /* a window the cap does not bind (a pause in its I/O) adds nothing */
  now += WINDOW_MS;
  sample(w, 2 * MiB);
  agent_protection_budget_window(&prot, now, WINDOW_MS / 1000.0);
  assert_true(agent_budget_debt(w, now) == debt);
  now += WINDOW_MS;
  sample(w, 19.5 * MiB);
  agent_protection_budget_window(&prot, now, WINDOW_MS / 1000.0);
  assert_true(agent_ctr_over_budget(&prot, w, now));
  assert_false(agent_ctr_protect_limited(&prot, w, now));
  assert_true(w->budget.spent);
  /* a longer runtime learned since does not put it back under protection */
  w->profile.solo_s = 200;
  agent_protection_budget_window(&prot, now + WINDOW_MS, WINDOW_MS / 1000.0);
  assert_true(agent_ctr_over_budget(&prot, w, now + WINDOW_MS));
  agent_ctr_free_all(&adm);
}

/* A cap is priced against what the job could have had: beside a service
 * doing 100 MiB/s it got 80 MiB/s uncapped (the disk's peak, 180 MiB/s),
 * so a cap holding it at 19.5 MiB/s costs 1 - 19.5 / 80 of each window.
 * Once the service is idle the disk does 19.5 MiB/s of the 180 it showed:
 * the cap now costs 1 - 19.5 / 180, not the stale 1 - 19.5 / 80. */
static void test_cap_priced_against_spare_disk(void **state) {
  (void)state;
  struct agent_adm adm;
  adm_setup(&adm);
  struct agent_ctr *db = reg(&adm, "db", "latency", 0);
  struct agent_ctr *w = reg(&adm, "w", "seq-write", 0);
  w->profile.solo_s = 100;
  agent_adm_admit(&adm, db, 0, 0, 0);
  agent_adm_admit(&adm, w, 0, 0, 0);
  run_until(&adm, 0);
  uint64_t now = 0;
  for (int i = 0; i < 5; i++) {
    now += WINDOW_MS;
    sample(db, 100 * MiB);
    sample(w, 80 * MiB);
    agent_protection_budget_window(&prot, now, WINDOW_MS / 1000.0);
  }
  w->caps.bps = 20 * MiB;
  now += WINDOW_MS;
  sample(w, 19.5 * MiB);
  agent_protection_budget_window(&prot, now, WINDOW_MS / 1000.0);
  double beside = agent_budget_debt(w, now);
  assert_true(fabs(beside - (1 - 19.5 / 80)) < 1e-3);
  now += WINDOW_MS;
  sample(db, 0);
  sample(w, 19.5 * MiB);
  agent_protection_budget_window(&prot, now, WINDOW_MS / 1000.0);
  double peak = 180 * MiB * exp2(-7 / PROTECT_PEAK_HALF_LIFE_S);
  assert_true(fabs(agent_budget_debt(w, now) - beside - (1 - 19.5 * MiB / peak)) < 1e-3);
  agent_ctr_free_all(&adm);
}

/* A job with no profile and no typical runtime of its class may lose to
 * protection (budget - 1) x the time it ran free, up to
 * protect_unknown_delay in all: not held before it starts (it has run
 * free for no time), capped with no reference rate only until its whole
 * windows under the cap reach half its free time, then free until it has
 * earned more; past 60 s of debt, free for good.  With a class typical
 * runtime (the median of its namespace's profiles of that class) it gets
 * (budget - 1) x that. */
static void test_unknown_job_bounded(void **state) {
  (void)state;
  struct agent_adm adm;
  adm_setup(&adm);
  prot.ctl.cfg.hold_at_floor = false;
  struct agent_ctr *db = reg(&adm, "db", "latency", 0);
  agent_adm_admit(&adm, db, 0, 0, 0);
  run_until(&adm, 0);
  struct agent_protect_obs o = {.id = "db", .share = -1, .stall = -1, .lat = 20, .lat_target = 5};
  prot.ctl.batch_io = true;
  agent_protect_update(&prot.ctl, &o, 1);
  assert_true(prot.ctl.short_);
  struct agent_ctr *u = reg(&adm, "u", "seq-write", 1000);
  agent_adm_admit(&adm, u, 0, 0, 1000);
  run_until(&adm, 1000);
  assert_int_equal(u->state, AGENT_RUNNING);
  assert_true(agent_budget_debt(u, 1000) == 0);
  assert_int_equal(u->budget.source, AGENT_BUDGET_UNKNOWN);
  assert_true(agent_ctr_over_budget(&prot, u, 1000));
  assert_false(u->budget.spent);
  /* status: at a bound of 0 that grows as it runs free, not spent */
  struct agent_protection_debt view;
  agent_protection_debt(&prot, u, 1000, &view);
  assert_true(view.batch && view.bound_s == 0 && !view.spent);
  /* not capped, held or frozen, but the free lever (I/O priority) acts */
  assert_false(agent_ctr_protect_limited(&prot, u, 1000));
  assert_true(agent_ctr_ioprio_candidate(&prot, u, 1000));

  /* 20 windows free, then capped with no reference to measure the cap
   * against (whole windows count): over after 10, at half of 20 s */
  struct agent_ctr *v = reg(&adm, "v", "seq-write", 1000);
  agent_adm_admit(&adm, v, 0, 0, 1000);
  prot.ctl.short_ = false;
  run_until(&adm, 1000);
  assert_int_equal(v->state, AGENT_RUNNING);
  uint64_t now = 1000;
  for (int i = 1; i <= 20; i++) {
    now += WINDOW_MS;
    agent_protection_budget_window(&prot, now, WINDOW_MS / 1000.0);
  }
  assert_true(fabs(v->budget.free_s - 20) < 1e-9);
  assert_true(agent_budget_bound(&prot.ctl.cfg, v) == 10);
  v->budget.ref_bps = 0;
  v->caps.bps = 16 * MiB;
  for (int i = 1; i <= 10; i++) {
    assert_false(agent_ctr_over_budget(&prot, v, now));
    now += WINDOW_MS;
    sample(v, 16 * MiB);
    agent_protection_budget_window(&prot, now, WINDOW_MS / 1000.0);
  }
  assert_true(agent_ctr_over_budget(&prot, v, now));
  assert_false(v->budget.spent);
  /* free again, it earns protection back: 2 s free, 1 s more */
  v->caps.bps = 0;
  for (int i = 1; i <= 2; i++) {
    now += WINDOW_MS;
    sample(v, 40 * MiB);
    agent_protection_budget_window(&prot, now, WINDOW_MS / 1000.0);
  }
  assert_false(agent_ctr_over_budget(&prot, v, now));
  /* ... and 60 s of debt at most, whatever it ran free: then for good */
  v->budget.free_s = 1000;
  v->budget.capped_s = 59;
  v->caps.bps = 16 * MiB;
  v->budget.ref_bps = 0;
  prot.peak_bps = 0; /* nothing to price the cap against: the whole window */
  assert_false(agent_ctr_over_budget(&prot, v, now));
  now += WINDOW_MS;
  sample(v, 16 * MiB);
  agent_protection_budget_window(&prot, now, WINDOW_MS / 1000.0);
  assert_true(agent_ctr_over_budget(&prot, v, now));
  assert_true(v->budget.spent);
  agent_protection_debt(&prot, v, now, &view);
  assert_true(view.spent);
  assert_false(agent_ctr_ioprio_candidate(&prot, v, now)); /* free of every lever */

  /* its class's typical runtime in its namespace: the median of 10, 30
   * and 50 s; another namespace's profiles do not count */
  struct agent_profiles prof;
  memset(&prof, 0, sizeof(prof));
  cleanup_error struct iob_error *err = NULL;
  const double runs[] = {10, 30, 50};
  char key[16];
  for (int i = 0; i < 3; i++) {
    snprintf(key, sizeof(key), "k%d", i);
    struct agent_profile_update up = {.cls = "seq-write", .confidence = 1, .solo_s = runs[i]};
    assert_int_equal(agent_profiles_learn(&prof, "default", key, &up, &err), 0);
  }
  struct agent_profile_update other = {.cls = "seq-write", .confidence = 1, .solo_s = 1000};
  assert_int_equal(agent_profiles_learn(&prof, "tenant-b", "k9", &other, &err), 0);
  prot.profiles = &prof;
  struct agent_ctr *t = reg(&adm, "t", "seq-write", now);
  agent_protection_budget_window(&prot, now, WINDOW_MS / 1000.0);
  assert_int_equal(t->budget.source, AGENT_BUDGET_CLASS);
  assert_true(agent_budget_bound(&prot.ctl.cfg, t) == 15);
  /* a profile learned since moves it */
  struct agent_profile_update more = {.cls = "seq-write", .confidence = 1, .solo_s = 70};
  assert_int_equal(agent_profiles_learn(&prof, "default", "k3", &more, &err), 0);
  agent_protection_budget_window(&prot, now, WINDOW_MS / 1000.0);
  assert_true(agent_budget_bound(&prot.ctl.cfg, t) == 20); /* median 40 */
  prot.profiles = NULL;
  agent_profiles_release(&prof);
  agent_ctr_free_all(&adm);
}

/* One step of the daemon's sample (agent/daemon.c): the budget, then the
 * controller on DB's window, then caps and freezes as caps.c and freeze.c
 * decide them.  Each batch job would run at 60 MiB/s uncapped. */
static void step(struct agent_adm *adm, uint64_t now, struct agent_protect_obs *db) {
  for (struct agent_ctr *c = adm->list; c; c = c->next)
    if (c->state == AGENT_RUNNING && !c->plan.protect) {
      double r = c->freeze.frozen ? 0 : 60 * MiB;
      sample(c, c->caps.bps > 0 && c->caps.bps < r ? c->caps.bps : r);
    }
  agent_protection_budget_window(&prot, now, WINDOW_MS / 1000.0);
  struct agent_protect *p = &prot.ctl;
  unsigned n = 0;
  for (struct agent_ctr *c = adm->list; c; c = c->next)
    n += agent_ctr_freeze_candidate(&prot, c, now);
  p->batch_n = n;
  p->batch_bps = 60 * MiB;
  p->batch_io = true; /* the jobs write at every window they are not frozen */
  agent_protect_update(p, db, 1);
  /* caps.c */
  for (struct agent_ctr *c = adm->list; c; c = c->next) {
    bool capped = c->state == AGENT_RUNNING && agent_ctr_protect_limited(&prot, c, now);
    c->caps.bps = capped && p->level_bps > 0 ? p->level_bps : 0;
  }
  /* freeze.c */
  struct agent_freeze_cand cand[8];
  struct agent_ctr *who[8];
  size_t k = 0;
  for (struct agent_ctr *c = adm->list; c; c = c->next) {
    if (k < 8 && agent_ctr_freeze_candidate(&prot, c, now)) {
      who[k] = c;
      cand[k++] = (struct agent_freeze_cand){.id = c->id,
                                             .since_ms = c->plan.admitted_ms,
                                             .frozen = c->freeze.frozen,
                                             .windows = c->freeze.windows};
    } else if (c->freeze.frozen) {
      c->freeze.frozen = false;
      c->freeze.done = true;
      c->freeze.frozen_ms += now - c->freeze.since_ms;
    }
  }
  agent_protect_freeze_pick(cand, k, p->active ? p->io_limit : 0);
  for (size_t i = 0; i < k; i++) {
    struct agent_ctr *c = who[i];
    c->freeze.windows = cand[i].windows;
    if (cand[i].frozen && !c->freeze.frozen) {
      c->freeze.frozen = true;
      c->freeze.since_ms = now;
      c->freeze.freezes++;
    } else if (!cand[i].frozen && c->freeze.frozen) {
      c->freeze.frozen = false;
      c->freeze.frozen_ms += now - c->freeze.since_ms;
      c->freeze.since_ms = 0;
    }
  }
  run_until(adm, now);
}

/* A service that never ends and misses its objective in every window
 * (the cap at its floor, jobs frozen, new ones held): every batch job ends
 * free for good at its bound, whatever it knows of the job: a learned one
 * (20 s alone: 10 s), one that arrives while the service misses and is
 * held (10 s alone: 5 s), and one of unknown runtime, which protection
 * may cost at most half the time it ran free, and 60 s in all. */
static void test_endless_service_releases_all(void **state) {
  (void)state;
  struct agent_adm adm;
  adm_setup(&adm);
  prot.ctl.cfg.hold_at_floor = false;
  struct agent_ctr *db = reg(&adm, "db", "latency", 0);
  struct agent_ctr *a = reg(&adm, "a", "seq-write", 0);
  struct agent_ctr *b = reg(&adm, "b", "seq-write", 0);
  a->profile.solo_s = 20;
  a->profile.solo_bps = 60 * MiB;
  agent_adm_admit(&adm, db, 0, 0, 0);
  agent_adm_admit(&adm, a, 0, 0, 0);
  agent_adm_admit(&adm, b, 0, 0, 0);
  run_until(&adm, 0);
  assert_int_equal(a->state, AGENT_RUNNING);
  assert_int_equal(b->state, AGENT_RUNNING);
  struct agent_protect_obs o = {
      .id = "db", .share = -1, .stall = -1, .lat = 9000, .lat_target = 2000};
  struct agent_ctr *h = NULL;
  bool frozen_seen = false, held_seen = false;
  uint64_t free_at[3] = {0, 0, 0};
  uint64_t now = 0;
  for (int i = 1; i <= 400; i++) {
    now = (uint64_t)i * WINDOW_MS;
    if (i == 5) {
      h = reg(&adm, "h", "seq-write", now);
      h->profile.solo_s = 10;
      h->profile.solo_bps = 60 * MiB;
      agent_adm_admit(&adm, h, 0, 0, now);
    }
    step(&adm, now, &o);
    struct agent_ctr *jobs[3] = {a, b, h};
    for (int j = 0; j < 3; j++) {
      struct agent_ctr *c = jobs[j];
      if (c == NULL)
        continue;
      frozen_seen = frozen_seen || c->freeze.frozen;
      held_seen = held_seen || c->plan.reason == BATCH_HOLD_PROTECT;
      /* never past its bound by more than a window's worth */
      double debt = agent_budget_debt(c, now), bound = agent_budget_bound(&prot.ctl.cfg, c);
      assert_true(debt <= bound + 1.001);
      if (free_at[j] == 0 && c->budget.spent) {
        free_at[j] = now;
        assert_true(debt >= bound);
      }
      if (free_at[j]) { /* free from then on */
        assert_false(agent_ctr_protect_limited(&prot, c, now));
        assert_true(c->caps.bps == 0 || now == free_at[j]);
        assert_false(c->freeze.frozen && now > free_at[j]);
        assert_false(agent_ctr_freeze_candidate(&prot, c, now));
      }
    }
  }
  assert_true(prot.ctl.level_bps > 0 && prot.ctl.missed); /* it never stopped missing */
  assert_true(frozen_seen && held_seen);
  for (int j = 0; j < 3; j++)
    assert_true(free_at[j] > 0);
  /* the unknown one: 60 s of debt, after at least 120 s free */
  assert_true(agent_budget_debt(b, now) >= 60 && b->budget.free_s >= 120);
  assert_int_equal(h->state, AGENT_RUNNING);
  assert_true(a->caps.bps == 0 && b->caps.bps == 0 && h->caps.bps == 0);
  assert_false(a->freeze.frozen || b->freeze.frozen || h->freeze.frozen);
  agent_ctr_free_all(&adm);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sharing_spends_nothing),
      cmocka_unit_test(test_cap_spends_what_it_adds),
      cmocka_unit_test(test_cap_priced_against_spare_disk),
      cmocka_unit_test(test_unknown_job_bounded),
      cmocka_unit_test(test_endless_service_releases_all),
  };
  return cmocka_run_group_tests_name("agent_budget", tests, NULL, NULL);
}
