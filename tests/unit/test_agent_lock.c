// SPDX-License-Identifier: Apache-2.0
/* The state directory's lock (agent/store/lock.c): the first taker writes its
 * pid, a second one (another open file description, as another agent
 * would have) is refused with that pid named; the lock goes with the
 * descriptor; a lock file whose content is no pid still refuses, without
 * a made-up pid. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/store/lock.h"
#include "common/cleanup.h"

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void test_lock(void **state) {
  (void)state;
  char dir[] = "/tmp/iob-lock.XXXXXX";
  assert_non_null(mkdtemp(dir));
  char sub[64], path[96];
  snprintf(sub, sizeof(sub), "%s/state", dir); /* created by the lock */
  snprintf(path, sizeof(path), "%s/%s", sub, AGENT_LOCK_FILE);
  int fd = -1;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_lock_state_dir(sub, &fd, &err), 0);
  assert_true(fd >= 0);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  long pid = 0;
  assert_int_equal(fscanf(f, "%ld", &pid), 1);
  fclose(f);
  assert_int_equal(pid, (long)getpid());

  int fd2 = -1;
  assert_int_equal(agent_lock_state_dir(sub, &fd2, &err), -1);
  assert_int_equal(fd2, -1);
  char want[64];
  snprintf(want, sizeof(want), "another iobatchd (pid %ld) holds", (long)getpid());
  assert_non_null(strstr(err->msg, want));
  assert_non_null(strstr(err->msg, sub));
  iob_error_release(&err);

  /* malformed contents: refused all the same, no pid named */
  static const char *bad[] = {"", "x\n", "-3\n", "12abc", "99999999999999999999999\n"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    put(path, bad[i]);
    assert_int_equal(agent_lock_state_dir(sub, &fd2, &err), -1);
    assert_non_null(strstr(err->msg, "another iobatchd holds"));
    assert_null(strstr(err->msg, "(pid"));
    iob_error_release(&err);
  }

  /* the lock goes with the descriptor */
  close(fd);
  assert_int_equal(agent_lock_state_dir(sub, &fd2, &err), 0);
  close(fd2);
  /* a symbolic link is not followed */
  unlink(path);
  assert_int_equal(symlink("/tmp/iob-lock-elsewhere", path), 0);
  assert_int_equal(agent_lock_state_dir(sub, &fd2, &err), -1);
  assert_int_equal(err->errno_, ELOOP);
  unlink(path);
  rmdir(sub);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lock),
  };
  return cmocka_run_group_tests_name("agent_lock", tests, NULL, NULL);
}
