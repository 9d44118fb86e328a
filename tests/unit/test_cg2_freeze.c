// SPDX-License-Identifier: Apache-2.0
/* cgroupv2/freeze.c: which file freezes a container's cgroup (v1
 * freezer.state on a hybrid host, else v2 cgroup.freeze, never a root), the
 * strict parse of its state, and a write read back, on scratch copies of
 * the fixture trees. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "cg2_fixture.h"
#include "cgroupv2/freeze.h"
#include "common/cleanup.h"

static char *scratch_copy(const char *name) {
  char *dir = strdup("/tmp/cg2freeze.XXXXXX");
  assert_non_null(mkdtemp(dir));
  cleanup_free char *src = fx(name);
  char cmd[1024];
  snprintf(cmd, sizeof(cmd), "cp -a '%s'/. '%s'/", src, dir);
  assert_int_equal(system(cmd), 0);
  return dir;
}

static void rm_tree(const char *dir) {
  char cmd[600];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

static void test_parse(void **state) {
  (void)state;
  bool f = false;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(cg_freeze_parse(CG_FREEZE_V1_STATE, "s", "FROZEN\n", 7, &f, &err), 0);
  assert_true(f);
  assert_int_equal(cg_freeze_parse(CG_FREEZE_V1_STATE, "s", "FREEZING\n", 9, &f, &err), 0);
  assert_true(f);
  assert_int_equal(cg_freeze_parse(CG_FREEZE_V1_STATE, "s", "THAWED", 6, &f, &err), 0);
  assert_false(f);
  assert_int_equal(cg_freeze_parse(CG_FREEZE_V2_FREEZE, "s", "1\n", 2, &f, &err), 0);
  assert_true(f);
  assert_int_equal(cg_freeze_parse(CG_FREEZE_V2_FREEZE, "s", "0", 1, &f, &err), 0);
  assert_false(f);
  const struct {
    enum cg_freeze_mech mech;
    const char *text;
  } bad[] = {
      {CG_FREEZE_V1_STATE, ""},
      {CG_FREEZE_V1_STATE, "\n"},
      {CG_FREEZE_V1_STATE, "frozen"},
      {CG_FREEZE_V1_STATE, "1"},
      {CG_FREEZE_V1_STATE, "THAWED\n\n"},
      {CG_FREEZE_V1_STATE, " THAWED"},
      {CG_FREEZE_V2_FREEZE, "THAWED"},
      {CG_FREEZE_V2_FREEZE, "2"},
      {CG_FREEZE_V2_FREEZE, "01"},
      {CG_FREEZE_V2_FREEZE, "-1"},
      {CG_FREEZE_NONE, "0"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    cleanup_error struct iob_error *e = NULL;
    assert_int_equal(cg_freeze_parse(bad[i].mech, "fr.x", bad[i].text, strlen(bad[i].text), &f, &e),
                     -1);
    assert_non_null(strstr(e->msg, "fr.x"));
  }
  cleanup_error struct iob_error *e = NULL;
  assert_int_equal(cg_freeze_parse(CG_FREEZE_V2_FREEZE, "fr.x", "1\0", 2, &f, &e), -1);
  assert_string_equal(cg_freeze_word(CG_FREEZE_V1_STATE, true), "FROZEN");
  assert_string_equal(cg_freeze_word(CG_FREEZE_V2_FREEZE, false), "0");
}

static void test_resolve_hybrid_v1(void **state) {
  (void)state;
  cleanup_free char *root = scratch_copy("hybrid");
  struct cg_freeze_target t;
  cleanup_error struct iob_error *err = NULL;
  /* no freezer.state, no cgroup.freeze: nothing, no error */
  assert_int_equal(cg_freeze_target_resolve(root, 4242, &t, &err), 0);
  assert_int_equal(t.mech, CG_FREEZE_NONE);
  /* cgroup.freeze in the unified tree alone: v2 */
  put_text(root, "/sys/fs/cgroup/unified/ctr1/cgroup.freeze", "0\n");
  assert_int_equal(cg_freeze_target_resolve(root, 4242, &t, &err), 0);
  assert_int_equal(t.mech, CG_FREEZE_V2_FREEZE);
  cg_freeze_target_release(&t);
  /* the v1 freezer is preferred where the container has its cgroup */
  put_text(root, "/sys/fs/cgroup/freezer/ctr1/freezer.state", "THAWED\n");
  assert_int_equal(cg_freeze_target_resolve(root, 4242, &t, &err), 0);
  assert_int_equal(t.mech, CG_FREEZE_V1_STATE);
  assert_string_equal(t.file + strlen(root), "/sys/fs/cgroup/freezer/ctr1/freezer.state");
  assert_string_equal(cg_freeze_mech_name(t.mech), "freezer.state");
  bool f = true;
  assert_int_equal(cg_freeze_get(&t, &f, &err), 0);
  assert_false(f);
  assert_int_equal(cg_freeze_set(&t, true, &err), 0);
  assert_int_equal(cg_freeze_get(&t, &f, &err), 0);
  assert_true(f);
  cg_freeze_target_release(&t);
  /* a malformed state is an error naming the file */
  put_text(root, "/sys/fs/cgroup/freezer/ctr1/freezer.state", "SLUSHY\n");
  assert_int_equal(cg_freeze_target_resolve(root, 4242, &t, &err), 0);
  assert_int_equal(cg_freeze_get(&t, &f, &err), -1);
  assert_non_null(strstr(err->msg, "freezer.state"));
  cg_freeze_target_release(&t);
  rm_tree(root);
}

static void test_resolve_v2_and_root(void **state) {
  (void)state;
  cleanup_free char *root = scratch_copy("v2");
  char p[1024];
  snprintf(p, sizeof(p), "%s/proc/777/cgroup", root);
  FILE *f = fopen(p, "r");
  assert_non_null(f);
  char line[512] = "";
  assert_non_null(fgets(line, sizeof(line), f));
  fclose(f);
  line[strcspn(line, "\n")] = '\0';
  snprintf(p, sizeof(p), "/sys/fs/cgroup%s/cgroup.freeze", line + 3);
  put_text(root, p, "0\n");
  struct cg_freeze_target t;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(cg_freeze_target_resolve(root, 777, &t, &err), 0);
  assert_int_equal(t.mech, CG_FREEZE_V2_FREEZE);
  assert_int_equal(cg_freeze_set(&t, true, &err), 0);
  bool fr = false;
  assert_int_equal(cg_freeze_get(&t, &fr, &err), 0);
  assert_true(fr);
  cg_freeze_target_release(&t);
  /* a process in the root cgroup is never frozen through it */
  put_text(root, "/proc/778/cgroup", "0::/\n");
  put_text(root, "/sys/fs/cgroup/cgroup.freeze", "0\n");
  assert_int_equal(cg_freeze_target_resolve(root, 778, &t, &err), 0);
  assert_int_equal(t.mech, CG_FREEZE_NONE);
  assert_null(t.file);
  rm_tree(root);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse),
      cmocka_unit_test(test_resolve_hybrid_v1),
      cmocka_unit_test(test_resolve_v2_and_root),
  };
  return cmocka_run_group_tests_name("cg2_freeze", tests, NULL, NULL);
}
