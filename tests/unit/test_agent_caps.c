// SPDX-License-Identifier: Apache-2.0
/* agent/protect/caps.c on a scratch tree (cg2_fixture.h's put_text: /proc and the
 * cgroup mounts under a root, as test_cg2_blkio.c builds them), through a
 * headless daemon (no loop, no socket) so that what status says is read
 * back as a client would see it:
 *  - a container whose cgroup has io.max is capped at the protection
 *    level, the file says so and status shows the cap;
 *  - a container on a host with neither io.max nor blkio.throttle records
 *    no cap, and status shows none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/protect/caps.h"
#include "agent/daemon.h"
#include "agent/serve/requests.h"
#include "common/cleanup.h"
#include "common/file.h"
#include "iobatch/agent.pb-c.h"
#include "cg2_fixture.h"

#define LEVEL (50.0 * 1024 * 1024)

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

static char *get(const char *root, const char *rel) {
  char path[512];
  snprintf(path, sizeof(path), "%s%s", root, rel);
  char *buf = NULL;
  size_t len = 0;
  struct iob_error *err = NULL;
  if (iob_read_file(path, 65536, &buf, &len, &err) < 0) {
    iob_error_release(&err);
    return NULL;
  }
  return buf;
}

/* The host: a cgroup2 mount whose controllers are CONTROLLERS, no v1
 * blkio hierarchy; pid 30 in /k/ctr, on a disk 254:0 it has written to. */
static void host(struct env *e, const char *controllers) {
  put_text(e->root, "/proc/self/mountinfo",
           "27 1 254:0 / / rw - ext4 /dev/vda rw\n"
           "30 27 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
  put_text(e->root, "/sys/fs/cgroup/cgroup.controllers", controllers);
  put_text(e->root, "/sys/fs/cgroup/k/ctr/io.stat",
           "254:0 rbytes=0 wbytes=4096 rios=0 wios=1 dbytes=0 dios=0\n");
  put_text(e->root, "/sys/dev/block/254:0/dev", "254:0\n");
  put_text(e->root, "/proc/30/cgroup", "0::/k/ctr\n");
  put_text(e->root, "/proc/30/mountinfo", "1 0 0:99 / / rw - tmpfs tmpfs rw\n");
}

static void start(struct env *e) {
  snprintf(e->root, sizeof(e->root), "/tmp/iob-caps.XXXXXX");
  snprintf(e->state, sizeof(e->state), "/tmp/iob-capst.XXXXXX");
  assert_non_null(mkdtemp(e->root));
  assert_non_null(mkdtemp(e->state));
  struct agent_config cfg;
  agent_config_default(&cfg);
  cfg.state_dir = e->state;
  /* the lever alone: no batch budget (its jobs' runtimes are unknown) */
  cfg.protect_batch_budget = 0;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_daemon_init_headless(&e->d, &cfg, &err), 0);
  assert_int_equal(agent_restore_init(&e->d.restore, e->state, NULL, &err), 0);
  e->d.protect.caps.root = e->root;
}

/* A running batch writer registered with pid 30, and the protection
 * level at LEVEL: the caps as the daemon's protection step applies them. */
static struct agent_ctr *capped_writer(struct env *e) {
  cleanup_error struct iob_error *err = NULL;
  Iobatch__Agent__V1__RegisterRequest r = IOBATCH__AGENT__V1__REGISTER_REQUEST__INIT;
  r.id = (char *)"w";
  r.namespace_ = (char *)"default";
  r.source = (char *)"shim";
  r.declared_class = (char *)"seq-write";
  r.pid = 30;
  r.running = true;
  Iobatch__Agent__V1__RegisterResponse resp;
  if (agent_api_register(&e->d.api, &r, 1000, &resp, &err) < 0)
    fail_msg("register: %s", err->msg);
  struct agent_ctr *c = agent_ctr_find(&e->d.adm, "default", "w");
  assert_non_null(c);
  assert_int_equal(c->state, AGENT_RUNNING);
  e->d.protect.ctl.active = true;
  e->d.protect.ctl.level_bps = LEVEL;
  agent_protection_caps(&e->d.protect, iob_now_ms());
  return c;
}

/* What status says of the one container's cap. */
static uint64_t status_cap(struct env *e) {
  cleanup_error struct iob_error *err = NULL;
  Iobatch__Agent__V1__StatusResponse r;
  assert_int_equal(agent_api_status(&e->d.api, NULL, 2000, &r, &err), 0);
  assert_int_equal(r.n_containers, 1);
  uint64_t cap = r.containers[0]->cap_bps;
  agent_api_status_release(&r);
  return cap;
}

static void stop(struct env *e) {
  agent_daemon_release(&e->d);
  rm_tree(e->root);
  rm_tree(e->state);
}

static void test_iomax_capped(void **state) {
  (void)state;
  struct env e;
  start(&e);
  host(&e, "cpu io memory pids\n");
  put_text(e.root, "/sys/fs/cgroup/k/ctr/io.max", "");
  struct agent_ctr *c = capped_writer(&e);
  assert_true(c->caps.bps == LEVEL);
  assert_int_equal(status_cap(&e), (uint64_t)LEVEL);
  cleanup_free char *w = get(e.root, "/sys/fs/cgroup/k/ctr/io.max");
  assert_non_null(w);
  assert_non_null(strstr(w, "254:0 rbps=52428800 wbps=52428800"));
  stop(&e);
}

/* Neither io.max (no io controller on the cgroup2 mount) nor v1
 * blkio.throttle: nothing is written, so nothing is recorded or shown. */
static void test_no_mechanism_no_cap(void **state) {
  (void)state;
  struct env e;
  start(&e);
  host(&e, "cpu memory pids\n");
  struct agent_ctr *c = capped_writer(&e);
  assert_true(c->caps.bps == 0);
  assert_int_equal(status_cap(&e), 0);
  cleanup_free char *w = get(e.root, "/sys/fs/cgroup/k/ctr/io.max");
  assert_null(w);
  /* Applied again (every sampling window): still none. */
  agent_protection_caps(&e.d.protect, iob_now_ms());
  assert_true(c->caps.bps == 0);
  stop(&e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_iomax_capped),
      cmocka_unit_test(test_no_mechanism_no_cap),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
