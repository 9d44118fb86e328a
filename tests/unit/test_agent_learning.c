// SPDX-License-Identifier: Apache-2.0
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/plan/learning.h"
#include "agent/store/profiles.h"
#include "common/cleanup.h"

/* An empty profile store in a new directory DIR. */
static void new_profiles(struct agent_profiles *profiles, char *dir) {
  cleanup_error struct iob_error *err = NULL;
  assert_non_null(mkdtemp(dir));
  assert_int_equal(agent_profiles_init(profiles, dir, &err), 0);
}

/* A job that ran beside others all along but its last window: one full
 * window alone is its solo rate, and its solo time is its bytes at that
 * rate.  A fresh node starts a mix all at once, and the last job's tail
 * is the only solo rate it measures; on an HDD that tail was under two
 * windows. */
static void test_one_window_alone_teaches_solo_rate(void **state) {
  (void)state;
  char dir[] = "/tmp/agentlearn.XXXXXX";
  struct agent_profiles profiles;
  new_profiles(&profiles, dir);
  struct agent_learn l;
  agent_learn_init(&l, &profiles, NULL, NULL);
  struct agent_ctr c = {.id = "r", .ns = "default", .workload_key = "seq-read-job",
                        .state = AGENT_RUNNING, .kind = AGENT_KIND_JOB,
                        .class_source = AGENT_CLASS_DECLARED, .cls = BATCH_SEQ_READ};
  c.confidence = 1;
  c.plan.admitted_ms = 1000;
  c.sample.shared = true;
  c.sample.alone_s = 1.0;
  c.sample.alone_bytes = 150e6;
  c.sample.bytes_run = 450e6;
  c.sample.solo_equiv_s = 70; /* guessed from the default matrix */
  c.sample.equiv_guessed = true;
  agent_learn_run_ended(&l, &c, 81000);
  const struct agent_profile *p = agent_profiles_get(&profiles, "default", "seq-read-job");
  assert_non_null(p);
  assert_true(p->solo_bps == 150e6);
  assert_true(p->solo_s == 3.0);
  agent_profiles_release(&profiles);
  (void)rmdir(dir);
}

/* A run that ended alone teaches its rate to the containers of its
 * workload still waiting to start: they are planned (and not measured
 * alone again) with it. */
static void test_run_teaches_those_waiting(void **state) {
  (void)state;
  char dir[] = "/tmp/agentlearn.XXXXXX";
  struct agent_profiles profiles;
  new_profiles(&profiles, dir);
  cleanup_error struct iob_error *err = NULL;
  struct batch_config cfg;
  batch_config_default(&cfg);
  struct agent_adm adm;
  agent_adm_init(&adm, &cfg, 100, 60000, NULL, NULL);
  struct agent_learn l;
  agent_learn_init(&l, &profiles, NULL, &adm);
  struct agent_ctr *w[3];
  const char *key[] = {"seq-write-job", "seq-write-job", "other-job"};
  for (int i = 0; i < 3; i++) {
    char id[16];
    snprintf(id, sizeof(id), "w%d", i);
    struct agent_ctr_info in = {.id = id, .ns = "default", .workload_key = key[i],
                                .source = "shim"};
    assert_int_equal(agent_adm_register(&adm, &in, 1000, &w[i], &err), 0);
  }
  w[0]->state = AGENT_RUNNING;
  w[0]->plan.admitted_ms = 1000;
  w[0]->sample.bytes_run = 300e6;
  agent_adm_detach(&adm, w[0], 4000);
  agent_learn_run_ended(&l, w[0], 4000);
  assert_true(w[1]->profile.solo_s == 3.0);
  assert_true(w[1]->profile.solo_bps == 100e6);
  assert_true(w[2]->profile.solo_bps == 0);
  agent_ctr_free(w[0]);
  agent_ctr_free_all(&adm);
  agent_profiles_release(&profiles);
  (void)rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_one_window_alone_teaches_solo_rate),
      cmocka_unit_test(test_run_teaches_those_waiting),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
