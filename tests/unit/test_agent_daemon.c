// SPDX-License-Identifier: Apache-2.0
/* agent/daemon.c's configuration: one apply_config() for start and for
 * SIGHUP's reload (agent_daemon_reload).  A daemon started with the
 * defaults and reloaded with a file must give every part what a daemon
 * started from that file gives it; what takes a restart stays; a broken
 * file changes nothing.  Headless daemons (no loop, socket or cgroup). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/config.h"
#include "agent/daemon.h"
#include "common/cleanup.h"

/* Everything below differs from the defaults. */
static const char CONF[] = "sample_period = 700ms\n"
                           "batch_window = 450ms\n"
                           "max_hold = 42s\n"
                           "max_concurrency = 3\n"
                           "policy = paper\n"
                           "alpha = 0.25\n"
                           "fairness = 2.5\n"
                           "protect = detected\n"
                           "protect_share = 0.6\n"
                           "protect_cap_start = 20M\n"
                           "protect_cap_floor = 2M\n"
                           "protect_raise = 1.5\n"
                           "protect_cut = 0.4\n"
                           "protect_batch_budget = 4\n"
                           "protect_unknown_delay = 90s\n"
                           "protect_gap = 3s\n"
                           "protect_cpu = false\n"
                           "protect_freeze = true\n"
                           "protect_freeze_after = 7\n"
                           "trust_declared = kube-system\n"
                           "profiles_per_namespace = 7\n"
                           "cri_endpoint = off\n"
                           "pod_rule = db: namespace=db -> class=latency\n";

struct env {
  char dir[32];
  char conf[64];
};

static void setup_env(struct env *e, const char *text) {
  snprintf(e->dir, sizeof(e->dir), "/tmp/iob-reload.XXXXXX");
  assert_non_null(mkdtemp(e->dir));
  snprintf(e->conf, sizeof(e->conf), "%s/iobatchd.conf", e->dir);
  FILE *f = fopen(e->conf, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void teardown_env(struct env *e) {
  char cmd[96];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", e->dir);
  assert_int_equal(system(cmd), 0);
}

/* A headless daemon on E's state directory, from the defaults (FROM_FILE
 * false) or from E's file; its options name E's file for a reload. */
static void start(struct agent_daemon *d, struct env *e, bool from_file) {
  cleanup_error struct iob_error *err = NULL;
  struct agent_options o = {.config_path = e->conf, .state_dir = e->dir};
  struct agent_config cfg;
  agent_config_default(&cfg);
  if (from_file && agent_config_from_options(&cfg, &o, &err) < 0)
    fail_msg("config: %s", err->msg);
  if (!from_file)
    cfg.state_dir = strdup(e->dir);
  if (agent_daemon_init_headless(d, &cfg, &err) < 0)
    fail_msg("init: %s", err->msg);
  agent_config_release(&cfg);
  d->opts = o;
}

/* What each part was given of the configuration: the same in A and B. */
static void same_applied(const struct agent_daemon *a, const struct agent_daemon *b) {
  assert_int_equal(a->cfg.sample_period_ms, b->cfg.sample_period_ms);
  assert_int_equal(a->bcfg.policy, b->bcfg.policy);
  assert_int_equal(a->bcfg.max_batch, b->bcfg.max_batch);
  assert_int_equal(a->bcfg.cap_running, b->bcfg.cap_running);
  assert_true(a->bcfg.alpha == b->bcfg.alpha);
  assert_true(a->bcfg.fairness == b->bcfg.fairness);
  assert_string_equal(a->matrix_source, b->matrix_source);
  /* admission */
  assert_int_equal(a->adm.bcfg.policy, b->adm.bcfg.policy);
  assert_int_equal(a->adm.bcfg.max_batch, b->adm.bcfg.max_batch);
  assert_true(a->adm.bcfg.fairness == b->adm.bcfg.fairness);
  assert_int_equal(a->adm.batch_window_ms, b->adm.batch_window_ms);
  assert_int_equal(a->adm.default_hold_ms, b->adm.default_hold_ms);
  assert_int_equal(a->protect.gap_ms, b->protect.gap_ms);
  /* protection, caps, the sampler */
  const struct agent_protect_cfg *pa = &a->protect.ctl.cfg, *pb = &b->protect.ctl.cfg;
  assert_true(pa->min_share == pb->min_share);
  assert_true(pa->cap_start_bps == pb->cap_start_bps);
  assert_true(pa->cap_floor_bps == pb->cap_floor_bps);
  assert_true(pa->raise == pb->raise);
  assert_true(pa->cut == pb->cut);
  assert_true(pa->batch_budget == pb->batch_budget);
  assert_true(pa->unknown_delay_s == pb->unknown_delay_s && pa->unknown_delay_s == 90);
  assert_int_equal(pa->freeze, pb->freeze);
  assert_int_equal(pa->freeze_after, pb->freeze_after);
  assert_int_equal(a->protect.caps.cpu, b->protect.caps.cpu);
  assert_int_equal(a->sampler.protect_detected, b->sampler.protect_detected);
  /* declarations, profiles, pods */
  assert_string_equal(a->cfg.trust_declared, b->cfg.trust_declared);
  assert_true(agent_config_trusts(&a->cfg, "kube-system"));
  assert_false(agent_config_trusts(&a->cfg, "team-a"));
  assert_int_equal(a->profiles.per_ns_max, b->profiles.per_ns_max);
  assert_int_equal(a->cfg.pod_rules.n, b->cfg.pod_rules.n);
  assert_string_equal(a->cfg.pod_rules.v[0].name, b->cfg.pod_rules.v[0].name);
  assert_string_equal(a->podmeta.endpoint, b->podmeta.endpoint);
}

static void test_reload_as_start(void **state) {
  (void)state;
  struct env e;
  setup_env(&e, CONF);
  struct agent_daemon a, b;
  start(&a, &e, false);
  start(&b, &e, true);
  /* The defaults differ from the file: the comparison below means
   * something. */
  assert_int_not_equal(a.adm.batch_window_ms, b.adm.batch_window_ms);
  assert_int_not_equal(a.protect.caps.cpu, b.protect.caps.cpu);
  assert_int_not_equal(a.profiles.per_ns_max, b.profiles.per_ns_max);
  cleanup_error struct iob_error *err = NULL;
  if (agent_daemon_reload(&a, &err) < 0)
    fail_msg("reload: %s", err->msg);
  same_applied(&a, &b);
  assert_int_equal(a.adm.batch_window_ms, 450);
  assert_int_equal(a.adm.default_hold_ms, 42000);
  assert_int_equal(a.protect.gap_ms, 3000);
  assert_false(a.protect.caps.cpu);
  assert_int_equal(a.profiles.per_ns_max, 7);
  agent_daemon_release(&a);
  agent_daemon_release(&b);
  teardown_env(&e);
}

/* What takes a restart stays (with a warning), the rest of the file
 * applies; a broken file changes nothing. */
static void test_reload_refuses(void **state) {
  (void)state;
  struct env e;
  setup_env(&e, "socket = /run/elsewhere.sock\n"
                "sampler = procfs\n"
                "kubepods = off\n"
                "batch_window = 450ms\n");
  struct agent_daemon a;
  start(&a, &e, false);
  char *sock = strdup(a.cfg.socket_path);
  int sampler = a.cfg.sampler;
  bool kp_off = a.cfg.kubepods_off;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_daemon_reload(&a, &err), 0);
  assert_string_equal(a.cfg.socket_path, sock);
  assert_int_equal(a.cfg.sampler, sampler);
  assert_int_equal(a.cfg.kubepods_off, kp_off);
  assert_int_equal(a.adm.batch_window_ms, 450);
  FILE *f = fopen(e.conf, "w");
  assert_non_null(f);
  fputs("batch_window = 900ms\nno_such_key = 1\n", f);
  fclose(f);
  assert_int_equal(agent_daemon_reload(&a, &err), -1);
  assert_non_null(strstr(err->msg, "no_such_key"));
  assert_int_equal(a.adm.batch_window_ms, 450);
  assert_int_equal(a.cfg.batch_window_ms, 450);
  free(sock);
  agent_daemon_release(&a);
  teardown_env(&e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reload_as_start),
      cmocka_unit_test(test_reload_refuses),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
