// SPDX-License-Identifier: Apache-2.0
/* agent/protect/freeze.c on a scratch tree (cg2_fixture.h's put_text: /proc and a
 * cgroup2 mount under a root, as test_agent_caps.c builds them), through
 * a headless daemon: two running batch writers, pids 30 and 31 in /k/a and
 * /k/b, and the lever letting one of them do I/O (io_limit 1):
 *  - one of the two is frozen: its cgroup.freeze holds "1";
 *  - the target is the cgroup at registration: pids reused by processes
 *    of another cgroup afterwards freeze nothing there;
 *  - a cgroup removed and made again at the same path (a new container
 *    with the same id) is another inode: never frozen. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/daemon.h"
#include "agent/protect/freeze.h"
#include "agent/serve/requests.h"
#include "common/cleanup.h"
#include "common/file.h"
#include "iobatch/agent.pb-c.h"
#include "cg2_fixture.h"

struct env {
  char root[32];  /* the fake host */
  char state[32]; /* the agent's state directory */
  struct agent_daemon d;
};

static void rm_tree(const char *dir) {
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

/* ROOT/sys/fs/cgroup/k/NAME/cgroup.freeze, "" when unreadable. */
static char *freeze_file(const struct env *e, const char *name) {
  char path[256];
  snprintf(path, sizeof(path), "%s/sys/fs/cgroup/k/%s/cgroup.freeze", e->root, name);
  char *buf = NULL;
  size_t len = 0;
  struct iob_error *err = NULL;
  if (iob_read_file(path, 64, &buf, &len, &err) < 0) {
    iob_error_release(&err);
    return strdup("");
  }
  return buf;
}

static void cgroup(const struct env *e, const char *name) {
  char rel[128];
  snprintf(rel, sizeof(rel), "/sys/fs/cgroup/k/%s/cgroup.freeze", name);
  put_text(e->root, rel, "0\n");
}

/* pid PID is in cgroup /k/NAME. */
static void in_cgroup(const struct env *e, int pid, const char *name) {
  char rel[64], text[64];
  snprintf(rel, sizeof(rel), "/proc/%d/cgroup", pid);
  snprintf(text, sizeof(text), "0::/k/%s\n", name);
  put_text(e->root, rel, text);
}

static void start(struct env *e) {
  snprintf(e->root, sizeof(e->root), "/tmp/iob-frz.XXXXXX");
  snprintf(e->state, sizeof(e->state), "/tmp/iob-frzst.XXXXXX");
  assert_non_null(mkdtemp(e->root));
  assert_non_null(mkdtemp(e->state));
  put_text(e->root, "/proc/self/mountinfo",
           "27 1 254:0 / / rw - ext4 /dev/vda rw\n"
           "30 27 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
  put_text(e->root, "/sys/fs/cgroup/cgroup.controllers", "cpu io memory pids\n");
  cgroup(e, "a");
  cgroup(e, "b");
  cgroup(e, "other");
  in_cgroup(e, 30, "a");
  in_cgroup(e, 31, "b");
  struct agent_config cfg;
  agent_config_default(&cfg);
  cfg.state_dir = e->state;
  /* the lever alone: no batch budget (its jobs' runtimes are unknown) */
  cfg.protect_batch_budget = 0;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_daemon_init_headless(&e->d, &cfg, &err), 0);
  assert_int_equal(agent_restore_init(&e->d.restore, e->state, NULL, &err), 0);
  e->d.protect.freezer.root = e->root;
}

static struct agent_ctr *writer(struct env *e, const char *id, uint32_t pid) {
  cleanup_error struct iob_error *err = NULL;
  Iobatch__Agent__V1__RegisterRequest r = IOBATCH__AGENT__V1__REGISTER_REQUEST__INIT;
  r.id = (char *)id;
  r.namespace_ = (char *)"default";
  r.source = (char *)"shim";
  r.declared_class = (char *)"seq-write";
  r.pid = pid;
  r.running = true;
  Iobatch__Agent__V1__RegisterResponse resp;
  if (agent_api_register(&e->d.api, &r, 1000, &resp, &err) < 0)
    fail_msg("register: %s", err->msg);
  struct agent_ctr *c = agent_ctr_find(&e->d.adm, "default", id);
  assert_non_null(c);
  assert_int_equal(c->state, AGENT_RUNNING);
  c->sample.first_io = true;
  return c;
}

/* The lever on, one batch container doing I/O at a time. */
static void lever(struct env *e) {
  e->d.protect.ctl.active = true;
  e->d.protect.ctl.io_limit = 1;
  agent_protection_freeze(&e->d.protect, 2000);
}

static void stop(struct env *e) {
  agent_daemon_release(&e->d);
  rm_tree(e->root);
  rm_tree(e->state);
}

static int frozen_files(const struct env *e, const char *name) {
  cleanup_free char *v = freeze_file(e, name);
  return strcmp(v, "1") == 0 || strcmp(v, "1\n") == 0;
}

static void test_freezes_one(void **state) {
  (void)state;
  struct env e;
  start(&e);
  struct agent_ctr *a = writer(&e, "a", 30), *b = writer(&e, "b", 31);
  lever(&e);
  assert_int_equal(a->freeze.frozen + b->freeze.frozen, 1);
  assert_int_equal(frozen_files(&e, "a") + frozen_files(&e, "b"), 1);
  stop(&e);
}

static void test_pid_reused(void **state) {
  (void)state;
  struct env e;
  start(&e);
  struct agent_ctr *a = writer(&e, "a", 30), *b = writer(&e, "b", 31);
  /* both pids now name processes of another cgroup */
  in_cgroup(&e, 30, "other");
  in_cgroup(&e, 31, "other");
  lever(&e);
  assert_false(frozen_files(&e, "other"));
  assert_int_equal(a->freeze.frozen + b->freeze.frozen, 1);
  assert_int_equal(frozen_files(&e, "a") + frozen_files(&e, "b"), 1);
  stop(&e);
}

static void test_cgroup_recreated(void **state) {
  (void)state;
  struct env e;
  start(&e);
  struct agent_ctr *a = writer(&e, "a", 30), *b = writer(&e, "b", 31);
  /* each cgroup removed and made again at its path: another inode (made
   * before the old one goes, so that the inode cannot be handed back) */
  char cmd[256];
  snprintf(cmd, sizeof(cmd),
           "cd '%s/sys/fs/cgroup/k' && for c in a b; do mkdir n$c && echo 0 >n$c/cgroup.freeze "
           "&& rm -r $c && mv n$c $c; done",
           e.root);
  assert_int_equal(system(cmd), 0);
  lever(&e);
  assert_false(a->freeze.frozen);
  assert_false(b->freeze.frozen);
  assert_false(frozen_files(&e, "a"));
  assert_false(frozen_files(&e, "b"));
  /* the one the lever picked is never tried again */
  assert_int_equal(a->freeze.done + b->freeze.done, 1);
  stop(&e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_freezes_one),
      cmocka_unit_test(test_pid_reused),
      cmocka_unit_test(test_cgroup_recreated),
  };
  return cmocka_run_group_tests_name("agent_freeze", tests, NULL, NULL);
}
