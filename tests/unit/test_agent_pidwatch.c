// SPDX-License-Identifier: Apache-2.0
/* agent/serve/pidwatch.c on a real loop with real children: a watched pid that
 * exits ends its container through ops->ended, once; a container a shim
 * registered ends only after the shim's grace; forgetting (before the
 * exit, or during the grace) ends nothing; headless, pid 0, a pid already
 * watched and a pid that does not exist watch nothing. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/serve/pidwatch.h"
#include "common/loop.h"

struct rig {
  struct iob_loop *loop;
  struct agent_pidwatch pw;
  struct agent_ctr *ended[4];
  int n_ended;
};

static void on_ended(void *user, struct agent_ctr *c) {
  struct rig *g = user;
  assert_true(g->n_ended < 4);
  g->ended[g->n_ended++] = c;
  agent_pidwatch_forget(&g->pw, c); /* as the owner must */
}

static const struct agent_pidwatch_ops ops = {.ended = on_ended};

static int setup(void **state) {
  struct rig *g = calloc(1, sizeof(*g));
  if (g == NULL || iob_loop_new(&g->loop, NULL) < 0)
    return -1;
  agent_pidwatch_init(&g->pw, g->loop, &ops, g);
  *state = g;
  return 0;
}

static int teardown(void **state) {
  struct rig *g = *state;
  iob_loop_free(g->loop);
  free(g);
  return 0;
}

/* A child that lives until *release is closed (write end kept by us). */
static pid_t child(int *release) {
  int p[2];
  assert_int_equal(pipe(p), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    char b;
    close(p[1]);
    while (read(p[0], &b, 1) < 0 && errno == EINTR)
      ;
    _exit(0);
  }
  close(p[0]);
  *release = p[1];
  return pid;
}

static void reap(pid_t pid) {
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
}

/* Run the loop until N containers ended or MS passed. */
static void run_for(struct rig *g, int n, int ms) {
  uint64_t end = iob_now_ms() + (uint64_t)ms;
  while (g->n_ended < n && iob_now_ms() < end)
    assert_true(iob_loop_run_once(g->loop, 50, NULL) >= 0);
}

static void test_exit_ends_once(void **state) {
  struct rig *g = *state;
  int rel;
  pid_t pid = child(&rel);
  struct agent_ctr c = {.id = (char *)"a", .pid = (uint32_t)pid, .source = (char *)"hook"};
  agent_pidwatch_add(&g->pw, &c);
  assert_non_null(c.pid_watch);
  void *w = c.pid_watch;
  agent_pidwatch_add(&g->pw, &c); /* watched already: the same watch */
  assert_ptr_equal(c.pid_watch, w);
  run_for(g, 1, 200);
  assert_int_equal(g->n_ended, 0); /* alive: nothing */
  close(rel);
  run_for(g, 1, 5000);
  assert_int_equal(g->n_ended, 1);
  assert_ptr_equal(g->ended[0], &c);
  assert_null(c.pid_watch);
  /* a zombie not reaped yet and a reaped one alike: not again */
  reap(pid);
  run_for(g, 2, 200);
  assert_int_equal(g->n_ended, 1);
  assert_false(g->pw.unsupported);
}

/* No source (an Admit without Register) is not a shim: ended at once. */
static void test_no_source_is_not_a_shim(void **state) {
  struct rig *g = *state;
  int rel;
  pid_t pid = child(&rel);
  struct agent_ctr c = {.id = (char *)"n", .pid = (uint32_t)pid};
  agent_pidwatch_add(&g->pw, &c);
  assert_non_null(c.pid_watch);
  close(rel);
  uint64_t t0 = iob_now_ms();
  run_for(g, 1, 4000);
  assert_int_equal(g->n_ended, 1);
  assert_true(iob_now_ms() - t0 < 4000);
  reap(pid);
}

/* A shim's container: the pid's end starts the grace (5 s); the shim's
 * own report would end it sooner, so nothing before; then ended. */
static void test_shim_grace(void **state) {
  struct rig *g = *state;
  int rel;
  pid_t pid = child(&rel);
  struct agent_ctr c = {.id = (char *)"s", .pid = (uint32_t)pid, .source = (char *)"shim"};
  agent_pidwatch_add(&g->pw, &c);
  assert_non_null(c.pid_watch);
  uint64_t t0 = iob_now_ms();
  close(rel);
  reap(pid);
  run_for(g, 1, 1000);
  assert_int_equal(g->n_ended, 0);
  assert_non_null(c.pid_watch);
  run_for(g, 1, 8000);
  assert_int_equal(g->n_ended, 1);
  assert_ptr_equal(g->ended[0], &c);
  assert_true(iob_now_ms() - t0 >= 5000);
  assert_null(c.pid_watch);
}

/* Forgotten during the grace (the shim reported the exit): the timer is
 * cancelled, nothing ends it. */
static void test_forget_during_grace(void **state) {
  struct rig *g = *state;
  int rel;
  pid_t pid = child(&rel);
  struct agent_ctr c = {.id = (char *)"s", .pid = (uint32_t)pid, .source = (char *)"shim"};
  agent_pidwatch_add(&g->pw, &c);
  close(rel);
  reap(pid);
  run_for(g, 1, 300); /* the pidfd fires: the grace starts */
  agent_pidwatch_forget(&g->pw, &c);
  assert_null(c.pid_watch);
  agent_pidwatch_forget(&g->pw, &c); /* twice: nothing */
  run_for(g, 1, 300);
  assert_int_equal(g->n_ended, 0);
}

/* Forgotten before its pid exits: the exit ends nothing. */
static void test_forget_before_exit(void **state) {
  struct rig *g = *state;
  int rel;
  pid_t pid = child(&rel);
  struct agent_ctr c = {.id = (char *)"f", .pid = (uint32_t)pid, .source = (char *)"hook"};
  agent_pidwatch_add(&g->pw, &c);
  assert_non_null(c.pid_watch);
  agent_pidwatch_forget(&g->pw, &c);
  assert_null(c.pid_watch);
  close(rel);
  reap(pid);
  run_for(g, 1, 300);
  assert_int_equal(g->n_ended, 0);
}

/* Nothing to watch: pid 0, a pid that no longer exists (ESRCH: the
 * sampler decides, and pidfd stays supported), a headless watcher. */
static void test_nothing_watched(void **state) {
  struct rig *g = *state;
  struct agent_ctr zero = {.id = (char *)"z", .pid = 0};
  agent_pidwatch_add(&g->pw, &zero);
  assert_null(zero.pid_watch);

  int rel;
  pid_t pid = child(&rel);
  close(rel);
  reap(pid); /* gone: its pid is free (and not reused this soon) */
  struct agent_ctr gone = {.id = (char *)"g", .pid = (uint32_t)pid};
  agent_pidwatch_add(&g->pw, &gone);
  assert_null(gone.pid_watch);
  assert_false(g->pw.unsupported);

  struct agent_pidwatch headless;
  agent_pidwatch_init(&headless, NULL, &ops, g);
  struct agent_ctr me = {.id = (char *)"m", .pid = (uint32_t)getpid()};
  agent_pidwatch_add(&headless, &me);
  assert_null(me.pid_watch);
  agent_pidwatch_forget(&headless, &me);

  /* once pidfd_open was refused, nothing is tried again */
  g->pw.unsupported = true;
  agent_pidwatch_add(&g->pw, &me);
  assert_null(me.pid_watch);
  run_for(g, 1, 100);
  assert_int_equal(g->n_ended, 0);
}

int main(void) {
  signal(SIGPIPE, SIG_IGN);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_exit_ends_once, setup, teardown),
      cmocka_unit_test_setup_teardown(test_no_source_is_not_a_shim, setup, teardown),
      cmocka_unit_test_setup_teardown(test_shim_grace, setup, teardown),
      cmocka_unit_test_setup_teardown(test_forget_during_grace, setup, teardown),
      cmocka_unit_test_setup_teardown(test_forget_before_exit, setup, teardown),
      cmocka_unit_test_setup_teardown(test_nothing_watched, setup, teardown),
  };
  return cmocka_run_group_tests_name("agent_pidwatch", tests, NULL, NULL);
}
