// SPDX-License-Identifier: Apache-2.0
/* agent/protect/ioprio.c through the protection part of a headless daemon, on a
 * scratch tree (cg2_fixture.h's put_text: /proc, a cgroup2 mount and
 * /sys/dev/block under a root) whose batch writer 'a' (pid 30, /k/a) lists
 * real threads of this test in its cgroup.threads, so that the classes set
 * and put back are the kernel's:
 *  - while protection limits, each listed thread gets the idle class, and
 *    a thread listed later gets it at the next window, one no longer
 *    listed is no longer counted; when protection ends each has its old
 *    class back;
 *  - a thread with a class of its own is left alone;
 *  - protect_ioprio changed while held: the new class, the old one back;
 *  - with the disk's scheduler `none` nothing is set, and the view says
 *    why;
 *  - protect_ioprio = off sets nothing;
 *  - with io.prio.class in the cgroup, that file is written instead (no
 *    thread touched) and put back;
 *  - the journal a killed agent leaves puts every class back at the next
 *    start. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/daemon.h"
#include "agent/protect/ioprio.h"
#include "agent/serve/requests.h"
#include "agent/store/restore.h"
#include "common/cleanup.h"
#include "common/file.h"
#include "common/ioprio.h"
#include "iobatch/agent.pb-c.h"
#include "cg2_fixture.h"

struct env {
  char root[32];  /* the fake host */
  char state[32]; /* the agent's state directory */
  struct agent_daemon d;
  struct agent_ctr *a;
};

/* Threads that wait until told to end: their tids are real. */
struct worker {
  pthread_t th;
  int tid;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool ready, end;
};

static void *work(void *arg) {
  struct worker *w = arg;
  pthread_mutex_lock(&w->mu);
  w->tid = (int)syscall(SYS_gettid);
  w->ready = true;
  pthread_cond_broadcast(&w->cv);
  while (!w->end)
    pthread_cond_wait(&w->cv, &w->mu);
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

/* Never reused within the run: a test that fails leaves its threads
 * waiting on their worker, which must not be another test's. */
static struct worker pool[32];
static size_t pooled;

static struct worker *slots(size_t n) {
  if (pooled + n > IOB_ARRAY_SIZE(pool))
    abort();
  pooled += n;
  return &pool[pooled - n];
}

static void worker_start(struct worker *w) {
  memset(w, 0, sizeof(*w));
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->cv, NULL);
  assert_int_equal(pthread_create(&w->th, NULL, work, w), 0);
  pthread_mutex_lock(&w->mu);
  while (!w->ready)
    pthread_cond_wait(&w->cv, &w->mu);
  pthread_mutex_unlock(&w->mu);
}

static void worker_stop(struct worker *w) {
  pthread_mutex_lock(&w->mu);
  w->end = true;
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->th, NULL);
}

static int prio(int tid) {
  int v = -1;
  struct iob_error *err = NULL;
  if (iob_ioprio_get(tid, &v, &err) < 0)
    fail_msg("%s", err->msg);
  return v;
}

static void rm_tree(const char *dir) {
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

static void put(const struct env *e, const char *rel, const char *text) {
  put_text(e->root, rel, text);
}

static char *get(const struct env *e, const char *rel) {
  char path[256];
  snprintf(path, sizeof(path), "%s%s", e->root, rel);
  char *buf = NULL;
  size_t len = 0;
  struct iob_error *err = NULL;
  if (iob_read_file(path, 4096, &buf, &len, &err) < 0) {
    iob_error_release(&err);
    return strdup("");
  }
  return buf;
}

/* The threads listed in /k/a's cgroup.threads. */
static void threads(const struct env *e, const struct worker *w, size_t n) {
  char text[256] = "";
  for (size_t i = 0; i < n; i++)
    snprintf(text + strlen(text), sizeof(text) - strlen(text), "%d\n", w[i].tid);
  put(e, "/sys/fs/cgroup/k/a/cgroup.threads", text);
}

static void start(struct env *e, const char *sched, int mode, bool prio_file) {
  snprintf(e->root, sizeof(e->root), "/tmp/iob-iop.XXXXXX");
  snprintf(e->state, sizeof(e->state), "/tmp/iob-iopst.XXXXXX");
  assert_non_null(mkdtemp(e->root));
  assert_non_null(mkdtemp(e->state));
  put(e, "/proc/self/mountinfo",
      "27 1 254:0 / / rw - ext4 /dev/vda rw\n"
      "30 27 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
  put(e, "/proc/30/cgroup", "0::/k/a\n");
  put(e, "/sys/fs/cgroup/cgroup.controllers", "cpu io memory pids\n");
  put(e, "/sys/fs/cgroup/k/a/io.max", "");
  put(e, "/sys/fs/cgroup/k/a/io.stat",
      "254:0 rbytes=0 wbytes=1048576 rios=0 wios=8 dbytes=0 dios=0\n");
  put(e, "/sys/fs/cgroup/k/a/cgroup.threads", "");
  if (prio_file)
    put(e, "/sys/fs/cgroup/k/a/io.prio.class", "no-change\n");
  put(e, "/sys/dev/block/254:0/dev", "254:0\n");
  put(e, "/sys/dev/block/254:0/queue/scheduler", sched);
  struct agent_config cfg;
  agent_config_default(&cfg);
  cfg.state_dir = e->state;
  cfg.protect_ioprio = mode;
  /* the lever alone: no batch budget (the jobs' runtimes are unknown) */
  cfg.protect_batch_budget = 0;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_daemon_init_headless(&e->d, &cfg, &err), 0);
  assert_int_equal(agent_restore_init(&e->d.restore, e->state, NULL, &err), 0);
  e->d.protect.ioprio.root = e->root;
  e->d.protect.ioprio.mode = mode;
  Iobatch__Agent__V1__RegisterRequest r = IOBATCH__AGENT__V1__REGISTER_REQUEST__INIT;
  r.id = (char *)"a";
  r.namespace_ = (char *)"default";
  r.source = (char *)"shim";
  r.declared_class = (char *)"seq-write";
  r.pid = 30;
  r.running = true;
  Iobatch__Agent__V1__RegisterResponse resp;
  if (agent_api_register(&e->d.api, &r, 1000, &resp, &err) < 0)
    fail_msg("register: %s", err->msg);
  e->a = agent_ctr_find(&e->d.adm, "default", "a");
  assert_non_null(e->a);
  e->a->sample.first_io = true;
}

/* A window with protection limiting (a victim short of its rate) or not. */
static void window(struct env *e, bool limiting) {
  e->d.protect.ctl.active = limiting;
  e->d.protect.ctl.objective = false;
  agent_protection_ioprio(&e->d.protect, 2000);
}

static void stop(struct env *e) {
  agent_daemon_release(&e->d);
  rm_tree(e->root);
  rm_tree(e->state);
}

static void test_threads_idle_and_back(void **state) {
  (void)state;
  struct worker *w = slots(3);
  worker_start(&w[0]);
  worker_start(&w[1]);
  int was = prio(w[0].tid);
  struct env e;
  start(&e, "none [mq-deadline] kyber\n", AGENT_IOPRIO_IDLE, false);
  threads(&e, w, 2);
  window(&e, true);
  assert_int_equal(prio(w[0].tid), IOB_IOPRIO_IDLE);
  assert_int_equal(prio(w[1].tid), IOB_IOPRIO_IDLE);
  struct agent_protection_view v;
  agent_protection_view(&e.d.protect, &v);
  assert_string_equal(v.ioprio, "on");
  assert_int_equal(v.ioprio_ctrs, 1);
  assert_int_equal(v.ioprio_tasks, 2);
  /* a thread started after the first window: held at the next one */
  worker_start(&w[2]);
  assert_int_equal(prio(w[2].tid), was);
  threads(&e, w, 3);
  window(&e, true);
  assert_int_equal(prio(w[2].tid), IOB_IOPRIO_IDLE);
  agent_protection_view(&e.d.protect, &v);
  assert_int_equal(v.ioprio_tasks, 3);
  /* one no longer listed (exited): no longer counted */
  struct worker listed[2] = {w[0], w[2]};
  threads(&e, listed, 2);
  window(&e, true);
  agent_protection_view(&e.d.protect, &v);
  assert_int_equal(v.ioprio_tasks, 2);
  threads(&e, w, 3);
  window(&e, true);
  /* protection ends: every one has its old class back */
  window(&e, false);
  for (int i = 0; i < 3; i++)
    assert_int_equal(prio(w[i].tid), was);
  agent_protection_view(&e.d.protect, &v);
  assert_string_equal(v.ioprio, "ready");
  stop(&e);
  for (int i = 0; i < 3; i++)
    worker_stop(&w[i]);
}

static void test_own_class_left_alone(void **state) {
  (void)state;
  struct worker *w = slots(2);
  worker_start(&w[0]);
  worker_start(&w[1]);
  int was = prio(w[0].tid);
  int own = IOB_IOPRIO_VALUE(IOB_IOPRIO_CLASS_BE, 3);
  struct iob_error *err = NULL;
  assert_int_equal(iob_ioprio_set(w[1].tid, own, &err), 0);
  struct env e;
  start(&e, "none [mq-deadline] kyber\n", AGENT_IOPRIO_BE7, false);
  threads(&e, w, 2);
  window(&e, true);
  assert_int_equal(prio(w[0].tid), IOB_IOPRIO_BE7);
  assert_int_equal(prio(w[1].tid), own);
  window(&e, false);
  assert_int_equal(prio(w[0].tid), was);
  assert_int_equal(prio(w[1].tid), own);
  stop(&e);
  worker_stop(&w[0]);
  worker_stop(&w[1]);
}

/* protect_ioprio changed on reload while held: the new class, and the
 * old one still put back at the end. */
static void test_reload(void **state) {
  (void)state;
  struct worker *w = slots(1);
  worker_start(w);
  int was = prio(w->tid);
  struct env e;
  start(&e, "none [mq-deadline] kyber\n", AGENT_IOPRIO_IDLE, false);
  threads(&e, w, 1);
  window(&e, true);
  assert_int_equal(prio(w->tid), IOB_IOPRIO_IDLE);
  e.d.protect.ioprio.mode = AGENT_IOPRIO_BE7;
  window(&e, true);
  assert_int_equal(prio(w->tid), IOB_IOPRIO_BE7);
  window(&e, false);
  assert_int_equal(prio(w->tid), was);
  stop(&e);
  worker_stop(w);
}

/* One held-looking window under SCHED and MODE leaves the thread's class
 * as it was; the view says STATE, and WHY when given. */
static void untouched(const char *sched, int mode, const char *state, const char *why) {
  struct worker *w = slots(1);
  worker_start(w);
  int was = prio(w->tid);
  struct env e;
  start(&e, sched, mode, false);
  threads(&e, w, 1);
  window(&e, true);
  assert_int_equal(prio(w->tid), was);
  struct agent_protection_view v;
  agent_protection_view(&e.d.protect, &v);
  assert_string_equal(v.ioprio, state);
  if (why)
    assert_non_null(strstr(v.ioprio_why, why));
  stop(&e);
  worker_stop(w);
}

static void test_scheduler_ignores(void **state) {
  (void)state;
  untouched("[none] mq-deadline kyber\n", AGENT_IOPRIO_IDLE, "ready", "scheduler 'none'");
}

static void test_off(void **state) {
  (void)state;
  untouched("none [mq-deadline] kyber\n", AGENT_IOPRIO_OFF, "off", NULL);
}

static void test_prio_file(void **state) {
  (void)state;
  struct worker *w = slots(1);
  worker_start(w);
  int was = prio(w->tid);
  struct env e;
  start(&e, "none mq-deadline [bfq]\n", AGENT_IOPRIO_IDLE, true);
  threads(&e, w, 1);
  window(&e, true);
  /* written in place, as into a cgroup file: a regular file keeps the
   * old text's tail, which the kernel would not print */
  cleanup_free char *on = get(&e, "/sys/fs/cgroup/k/a/io.prio.class");
  assert_memory_equal(on, "idle", 4);
  put(&e, "/sys/fs/cgroup/k/a/io.prio.class", "idle\n");
  assert_int_equal(prio(w->tid), was); /* the file covers every thread */
  char journal[64];
  snprintf(journal, sizeof(journal), "%s/restore.json", e.state);
  cleanup_free char *j = NULL;
  size_t len = 0;
  struct iob_error *err = NULL;
  assert_int_equal(iob_read_file(journal, 1 << 16, &j, &len, &err), 0);
  assert_non_null(strstr(j, "io.prio.class"));
  assert_non_null(strstr(j, "no-change"));
  window(&e, false);
  cleanup_free char *off = get(&e, "/sys/fs/cgroup/k/a/io.prio.class");
  assert_memory_equal(off, "no-change", 9);
  stop(&e);
  worker_stop(w);
}

static void test_crash_replay(void **state) {
  (void)state;
  struct worker *w = slots(2);
  worker_start(&w[0]);
  worker_start(&w[1]);
  int was = prio(w[0].tid);
  struct env e;
  start(&e, "none [mq-deadline] kyber\n", AGENT_IOPRIO_IDLE, false);
  threads(&e, w, 2);
  window(&e, true);
  assert_int_equal(prio(w[1].tid), IOB_IOPRIO_IDLE);
  /* The agent is killed here: the next one replays its journal. */
  struct agent_restore next;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_restore_init(&next, e.state, NULL, &err), 0);
  assert_true(agent_restore_replay(&next, &err) >= 1);
  assert_int_equal(prio(w[0].tid), was);
  assert_int_equal(prio(w[1].tid), was);
  agent_restore_release(&next);
  stop(&e);
  worker_stop(&w[0]);
  worker_stop(&w[1]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_threads_idle_and_back),
      cmocka_unit_test(test_own_class_left_alone),
      cmocka_unit_test(test_reload),
      cmocka_unit_test(test_scheduler_ignores),
      cmocka_unit_test(test_off),
      cmocka_unit_test(test_prio_file),
      cmocka_unit_test(test_crash_replay),
  };
  return cmocka_run_group_tests_name("agent_ioprio", tests, NULL, NULL);
}
