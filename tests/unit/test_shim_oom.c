// SPDX-License-Identifier: Apache-2.0
/* shim/oom.c on a cgroup v1 memory hierarchy (the hybrid hosts' layout):
 * a real OOM kill is reported, and the removal of the cgroup, which the
 * kernel signals on the same eventfd, is not.  Needs root and a v1 memory
 * hierarchy; skipped otherwise (a pure cgroup v2 host counts oom_kill in
 * memory.events instead). */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/loop.h"
#include "shim/oom.h"

#define V1_MEMORY "/sys/fs/cgroup/memory"
#define MAX_FD 1024

static char cg[256];

static int write_file(const char *dir, const char *name, const char *value) {
  char path[512];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n = write(fd, value, strlen(value));
  close(fd);
  return n == (ssize_t)strlen(value) ? 0 : -1;
}

static bool is_eventfd(int fd) {
  char path[64], link[64];
  snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
  ssize_t n = readlink(path, link, sizeof(link) - 1);
  if (n < 0)
    return false;
  link[n] = '\0';
  return strcmp(link, "anon_inode:[eventfd]") == 0;
}

/* The eventfd shim_oom_watch opened: the one that is not in BEFORE. */
static int new_eventfd(const bool *before) {
  for (int fd = 0; fd < MAX_FD; fd++)
    if (!before[fd] && is_eventfd(fd))
      return fd;
  return -1;
}

/* Wait until FD's counter is non-zero (it was signalled), without reading
 * it: /proc/self/fdinfo/FD says "eventfd-count: N" in hex.  The kernel
 * signals a memory cgroup's events from a worker, after rmdir returned. */
static void wait_signalled(int fd) {
  char path[64], line[128];
  snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
  for (;;) {
    FILE *f = fopen(path, "re");
    assert_non_null(f);
    unsigned long long count = 0;
    while (fgets(line, sizeof(line), f))
      if (sscanf(line, "eventfd-count: %llx", &count) == 1)
        break;
    fclose(f);
    if (count > 0)
      return;
    usleep(10000);
  }
}

static void on_oom(void *data) { (*(int *)data)++; }

/* A child in a new v1 memory cgroup that waits for a byte on FD, then
 * either exits (0) or allocates until the cgroup's limit kills it. */
static pid_t child_in_cgroup(int rfd, bool hog) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    char c;
    if (read(rfd, &c, 1) != 1)
      _exit(1);
    if (!hog)
      _exit(0);
    for (;;) {
      char *p = malloc(1 << 20);
      if (p == NULL)
        _exit(2);
      memset(p, 1, 1 << 20);
    }
  }
  char pid_s[32];
  snprintf(pid_s, sizeof(pid_s), "%d", (int)pid);
  assert_int_equal(write_file(cg, "cgroup.procs", pid_s), 0);
  return pid;
}

static int setup(void **state) {
  (void)state;
  snprintf(cg, sizeof(cg), V1_MEMORY "/iobtest-oom-%d", (int)getpid());
  return 0;
}

static int teardown(void **state) {
  (void)state;
  rmdir(cg);
  return 0;
}

static bool can_run(void) {
  return geteuid() == 0 && access(V1_MEMORY "/cgroup.procs", F_OK) == 0;
}

/* Start watching a child in a fresh cgroup; returns the child, fills the
 * pipe's write end and the watcher's eventfd. */
static pid_t watched_child(struct iob_loop *loop, bool hog, int *count, struct shim_oom **o,
                           int *wfd, int *efd) {
  assert_int_equal(mkdir(cg, 0755), 0);
  if (hog) {
    /* Swap would only slow the child down: limit memory+swap too. */
    assert_int_equal(write_file(cg, "memory.limit_in_bytes", "16777216"), 0);
    write_file(cg, "memory.memsw.limit_in_bytes", "16777216");
  }
  int p[2];
  assert_int_equal(pipe2(p, O_CLOEXEC), 0);
  pid_t pid = child_in_cgroup(p[0], hog);
  close(p[0]);
  static bool before[MAX_FD];
  for (int fd = 0; fd < MAX_FD; fd++)
    before[fd] = is_eventfd(fd);
  struct iob_error *err = NULL;
  assert_int_equal(shim_oom_watch(loop, pid, on_oom, count, o, &err), 0);
  *efd = new_eventfd(before);
  assert_true(*efd >= 0);
  *wfd = p[1];
  return pid;
}

/* A watched child (OOM: one that exceeds its memory limit) let go and
 * reaped; its wait status in *STATUS. */
static void run_child(struct iob_loop *loop, bool oom, int *count, struct shim_oom **o, int *efd,
                      int *status) {
  int wfd;
  pid_t pid = watched_child(loop, oom, count, o, &wfd, efd);
  assert_int_equal(write(wfd, "x", 1), 1);
  close(wfd);
  assert_int_equal(waitpid(pid, status, 0), pid);
}

static void test_removal_is_no_oom(void **state) {
  (void)state;
  if (!can_run()) {
    skip();
    return;
  }
  struct iob_loop *loop = NULL;
  struct iob_error *err = NULL;
  assert_int_equal(iob_loop_new(&loop, &err), 0);
  int count = 0, efd, status;
  struct shim_oom *o = NULL;
  run_child(loop, false, &count, &o, &efd, &status);
  assert_true(WIFEXITED(status));
  assert_int_equal(rmdir(cg), 0);
  wait_signalled(efd);
  assert_int_equal(iob_loop_run_once(loop, 0, &err), 0);
  assert_int_equal(count, 0);
  shim_oom_free(o);
  iob_loop_free(loop);
}

static void test_oom_kill_is_reported(void **state) {
  (void)state;
  if (!can_run()) {
    skip();
    return;
  }
  struct iob_loop *loop = NULL;
  struct iob_error *err = NULL;
  assert_int_equal(iob_loop_new(&loop, &err), 0);
  int count = 0, efd, status;
  struct shim_oom *o = NULL;
  run_child(loop, true, &count, &o, &efd, &status);
  assert_true(WIFSIGNALED(status));
  assert_int_equal(WTERMSIG(status), SIGKILL);
  wait_signalled(efd);
  assert_int_equal(iob_loop_run_once(loop, 0, &err), 0);
  assert_int_equal(count, 1);
  shim_oom_free(o);
  iob_loop_free(loop);
  assert_int_equal(rmdir(cg), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_removal_is_no_oom, setup, teardown),
      cmocka_unit_test_setup_teardown(test_oom_kill_is_reported, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
