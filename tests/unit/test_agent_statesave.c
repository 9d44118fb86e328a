// SPDX-License-Identifier: Apache-2.0
/* The state writer (agent/store/statesave.c): what is handed over is written
 * whole by its thread, the newest text of a path wins, release waits for
 * everything handed over, and a write that fails is logged, not fatal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/store/statesave.h"
#include "common/cleanup.h"
#include "common/file.h"
#include "common/xalloc.h"

static char dir[64];

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof(dir), "/tmp/stsave.XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[96];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  return system(cmd);
}

static char *slurp(const char *path) {
  char *buf = NULL;
  cleanup_error struct iob_error *err = NULL;
  if (iob_read_file(path, 1 << 20, &buf, NULL, &err) < 0)
    fail_msg("%s", err->msg);
  return buf;
}

static void test_newest_wins_and_release_waits(void **state) {
  (void)state;
  struct agent_statesave s;
  agent_statesave_init(&s);
  cleanup_free char *a = xasprintf("%s/a.json", dir), *b = xasprintf("%s/b.json", dir);
  for (int i = 0; i < 100; i++) {
    char *t = xasprintf("{\"n\": %d}\n", i);
    agent_statesave_put(&s, a, "a", t, strlen(t));
  }
  char *t = xstrdup("b\n");
  agent_statesave_put(&s, b, "b", t, strlen(t));
  agent_statesave_release(&s);
  cleanup_free char *ga = slurp(a), *gb = slurp(b);
  assert_string_equal(ga, "{\"n\": 99}\n");
  assert_string_equal(gb, "b\n");
  cleanup_free char *tmp = xasprintf("%s.tmp", a);
  assert_int_equal(access(tmp, F_OK), -1);
}

static void test_failed_write_is_not_fatal(void **state) {
  (void)state;
  struct agent_statesave s;
  agent_statesave_init(&s);
  cleanup_free char *p = xasprintf("%s/missing/x.json", dir);
  char *t = xstrdup("x\n");
  agent_statesave_put(&s, p, "x", t, strlen(t));
  agent_statesave_release(&s);
  assert_int_equal(access(p, F_OK), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_newest_wins_and_release_waits),
      cmocka_unit_test(test_failed_write_is_not_fatal),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
