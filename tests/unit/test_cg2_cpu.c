// SPDX-License-Identifier: Apache-2.0
/* cgroupv2/cpu.c: which file holds a container's CPU weight (v2 cpu.weight,
 * else v1 cpu.shares, never a root), the strict parse of its value, and a
 * write read back, on scratch copies of the fixture trees. */
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
#include "cgroupv2/cpu.h"
#include "common/cleanup.h"

/* A scratch copy of fixture tree NAME. */
static char *scratch_copy(const char *name) {
  char *dir = strdup("/tmp/cg2cpu.XXXXXX");
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
  uint64_t v = 0;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(cg2_cpu_parse(CG2_CPU_V1_SHARES, "f", "1024\n", 5, &v, &err), 0);
  assert_int_equal(v, 1024);
  assert_int_equal(cg2_cpu_parse(CG2_CPU_V2_WEIGHT, "f", "100", 3, &v, &err), 0);
  assert_int_equal(v, 100);
  assert_int_equal(cg2_cpu_parse(CG2_CPU_V2_WEIGHT, "f", "1\n", 2, &v, &err), 0);
  assert_int_equal(v, 1);
  const struct {
    enum cg2_cpu_mech mech;
    const char *text;
  } bad[] = {
      {CG2_CPU_V1_SHARES, ""},          {CG2_CPU_V1_SHARES, "\n"},
      {CG2_CPU_V1_SHARES, "1"},         /* below cpu.shares' least, 2 */
      {CG2_CPU_V1_SHARES, "262145"},    {CG2_CPU_V2_WEIGHT, "0"},
      {CG2_CPU_V2_WEIGHT, "10001"},     {CG2_CPU_V2_WEIGHT, "-5"},
      {CG2_CPU_V2_WEIGHT, "100 200"},   {CG2_CPU_V2_WEIGHT, "1e3"},
      {CG2_CPU_V2_WEIGHT, "max"},       {CG2_CPU_V2_WEIGHT, "100\n\n"},
      {CG2_CPU_V2_WEIGHT, " 100"},      {CG2_CPU_V2_WEIGHT, "99999999999999999999999"},
      {CG2_CPU_V2_WEIGHT, "default 100"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    cleanup_error struct iob_error *e = NULL;
    assert_int_equal(
        cg2_cpu_parse(bad[i].mech, "cpu.x", bad[i].text, strlen(bad[i].text), &v, &e), -1);
    assert_non_null(strstr(e->msg, "'cpu.x'"));
  }
  cleanup_error struct iob_error *e = NULL;
  assert_int_equal(cg2_cpu_parse(CG2_CPU_V2_WEIGHT, "cpu.x", "10\0" "0", 4, &v, &e), -1);
}

static void test_resolve_hybrid_v1_shares(void **state) {
  (void)state;
  cleanup_free char *root = scratch_copy("hybrid");
  put_text(root, "/sys/fs/cgroup/cpu/ctr1/cpu.shares", "1024\n");
  struct cg2_cpu_target t;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(cg2_cpu_target_resolve(root, 4242, &t, &err), 0);
  assert_int_equal(t.mech, CG2_CPU_V1_SHARES);
  assert_string_equal(t.file + strlen(root), "/sys/fs/cgroup/cpu/ctr1/cpu.shares");
  assert_int_equal(cg2_cpu_min(&t), 2);
  uint64_t v = 0;
  assert_int_equal(cg2_cpu_get(&t, &v, &err), 0);
  assert_int_equal(v, 1024);
  /* (a regular file is not truncated as cgroupfs is: same length) */
  assert_int_equal(cg2_cpu_set(&t, 2048, &err), 0);
  assert_int_equal(cg2_cpu_get(&t, &v, &err), 0);
  assert_int_equal(v, 2048);
  cg2_cpu_target_release(&t);
  /* a malformed value is an error naming the file */
  put_text(root, "/sys/fs/cgroup/cpu/ctr1/cpu.shares", "lots\n");
  assert_int_equal(cg2_cpu_target_resolve(root, 4242, &t, &err), 0);
  assert_int_equal(cg2_cpu_get(&t, &v, &err), -1);
  assert_non_null(strstr(err->msg, "cpu.shares"));
  cg2_cpu_target_release(&t);
  rm_tree(root);
}

static void test_resolve_v2_weight_and_none(void **state) {
  (void)state;
  cleanup_free char *root = scratch_copy("v2");
  /* the v2 fixture's pid 777: find its cgroup */
  char p[1024];
  snprintf(p, sizeof(p), "%s/proc/777/cgroup", root);
  FILE *f = fopen(p, "r");
  assert_non_null(f);
  char line[512] = "";
  assert_non_null(fgets(line, sizeof(line), f));
  fclose(f);
  assert_int_equal(strncmp(line, "0::", 3), 0);
  line[strcspn(line, "\n")] = '\0';
  struct cg2_cpu_target t;
  cleanup_error struct iob_error *err = NULL;
  /* no cpu.weight in the container's cgroup: nothing to write, no error */
  assert_int_equal(cg2_cpu_target_resolve(root, 777, &t, &err), 0);
  assert_int_equal(t.mech, CG2_CPU_NONE);
  assert_null(t.file);
  snprintf(p, sizeof(p), "/sys/fs/cgroup%s/cpu.weight", line + 3);
  put_text(root, p, "100\n");
  assert_int_equal(cg2_cpu_target_resolve(root, 777, &t, &err), 0);
  assert_int_equal(t.mech, CG2_CPU_V2_WEIGHT);
  assert_int_equal(cg2_cpu_min(&t), 1);
  assert_string_equal(cg2_cpu_mech_name(t.mech), "cpu.weight");
  cg2_cpu_target_release(&t);
  rm_tree(root);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse),
      cmocka_unit_test(test_resolve_hybrid_v1_shares),
      cmocka_unit_test(test_resolve_v2_weight_and_none),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
