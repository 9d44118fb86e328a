// SPDX-License-Identifier: Apache-2.0
/* cgroup2 mount discovery (pure and hybrid), pid -> cgroup, cgroup.procs, the
 * procfs fallback sampler. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cg2_fixture.h"
#include "cgroupv2/cg2.h"
#include "cgroupv2/procio.h"
#include "cgroupv2/sample.h"
#include "common/cleanup.h"

/* A scratch root with one file: ROOT/REL = TEXT. */
static char *scratch_root(const char *rel, const char *text) {
  char *dir = strdup("/tmp/cg2p.XXXXXX");
  assert_non_null(mkdtemp(dir));
  char path[512];
  snprintf(path, sizeof(path), "%s%s", dir, rel);
  for (char *p = path + strlen(dir) + 1; (p = strchr(p, '/')) != NULL; p++) {
    *p = '\0';
    mkdir(path, 0700);
    *p = '/';
  }
  write_text(path, text);
  return dir;
}

static void rm_tree(const char *dir) {
  char cmd[600];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

static void test_mount_pure_v2(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  cleanup_free char *root = fx("v2");
  struct cg2_mount m;
  assert_int_equal(cg2_mount_find(root, &m, &err), 0);
  assert_string_equal(m.path, "/sys/fs/cgroup");
  assert_false(m.hybrid);
  assert_true(m.has_io);
  assert_true(m.has_memory); /* writeback charged to the writer's cgroup */
  cg2_mount_release(&m);
}

static void test_mount_hybrid(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  cleanup_free char *root = fx("hybrid");
  struct cg2_mount m;
  assert_int_equal(cg2_mount_find(root, &m, &err), 0);
  assert_string_equal(m.path, "/sys/fs/cgroup/unified");
  assert_true(m.hybrid);
  assert_false(m.has_io); /* only hugetlb in cgroup.controllers */
  assert_false(m.has_memory);
  cg2_mount_release(&m);
  cleanup_free char *v1 = NULL;
  assert_int_equal(cg2_v1_mount_find(root, "pids", &v1, &err), 0);
  assert_string_equal(v1, "/sys/fs/cgroup/pids");
  free(v1);
  assert_int_equal(cg2_v1_mount_find(root, "name=systemd", &v1, &err), 0);
  assert_string_equal(v1, "/sys/fs/cgroup/systemd");
  free(v1);
  v1 = NULL;
  assert_int_equal(cg2_v1_mount_find(root, "io", &v1, &err), -1);
  assert_int_equal(err->code, IOB_CODE_NOT_FOUND);
}

static void test_mount_odd(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct cg2_mount m;
  /* escaped space in the mount point; truncated and garbage lines skipped */
  char *root =
      scratch_root("/proc/self/mountinfo", "1 2 3\ngarbage\n\n"
                                           "26 25 0:23 / /my\\040cg rw - cgroup2 cgroup2 rw\n"
                                           "27 25 0:24 / /x rw - cgroup2\n");
  assert_int_equal(cg2_mount_find(root, &m, &err), 0);
  assert_string_equal(m.path, "/my cg");
  assert_false(m.has_io); /* no cgroup.controllers under the scratch root */
  cg2_mount_release(&m);
  rm_tree(root);
  free(root);
  root = scratch_root("/proc/self/mountinfo", "");
  assert_int_equal(cg2_mount_find(root, &m, &err), -1);
  assert_non_null(strstr(err->msg, "no cgroup2 mount"));
  rm_tree(root);
  free(root);
  assert_int_equal(cg2_mount_find("/nonexistent", &m, &err), -1);
  assert_int_equal(err->errno_, ENOENT);
}

static void test_pid_cgroup(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  cleanup_free char *v2 = fx("v2");
  cleanup_free char *hy = fx("hybrid");
  char *cg = NULL;
  assert_int_equal(cg2_pid_cgroup(v2, 777, &cg, &err), 0);
  assert_string_equal(cg, "/kubepods.slice/pod1/ctr");
  free(cg);
  assert_int_equal(cg2_pid_cgroup(hy, 4242, &cg, &err), 0);
  assert_string_equal(cg, "/ctr1");
  free(cg);
  assert_int_equal(cg2_pid_cgroup_v1(hy, 4242, "pids", &cg, &err), 0);
  assert_string_equal(cg, "/ctr1");
  free(cg);
  assert_int_equal(cg2_pid_cgroup_v1(hy, 4242, "name=systemd", &cg, &err), 0);
  free(cg);
  assert_int_equal(cg2_pid_cgroup(v2, 0, &cg, &err), -1);
  assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
  assert_int_equal(cg2_pid_cgroup(v2, 12345, &cg, &err), -1);
  assert_int_equal(err->errno_, ENOENT);
  static const char *const bad[] = {
      "0::../../etc\n", "0::/a/../../b\n", "0::/..\n", "garbage\n", "", "1:cpu:/x\n",
  };
  for (size_t i = 0; i < IOB_ARRAY_SIZE(bad); i++) {
    char *root = scratch_root("/proc/5/cgroup", bad[i]);
    cg = NULL;
    if (cg2_pid_cgroup(root, 5, &cg, &err) != -1)
      fail_msg("accepted /proc/PID/cgroup #%zu '%s' -> '%s'", i, bad[i], cg);
    rm_tree(root);
    free(root);
  }
  /* ".." inside a name is fine */
  char *root = scratch_root("/proc/5/cgroup", "0::/a..b/c..\n");
  assert_int_equal(cg2_pid_cgroup(root, 5, &cg, &err), 0);
  assert_string_equal(cg, "/a..b/c..");
  free(cg);
  rm_tree(root);
  free(root);
}

static void test_procs(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  cleanup_free char *dir = fx("hybrid/sys/fs/cgroup/pids/ctr1");
  cleanup_free pid_t *pids = NULL;
  size_t n = 0;
  assert_int_equal(cg2_procs_read(dir, &pids, &n, &err), 0);
  assert_int_equal(n, 3);
  assert_int_equal(pids[0], 4242);
  assert_int_equal(pids[2], 999999);
  static const char *const bad[] = {"1\nx\n", "-1\n", "0\n", "99999999999\n", "1 2\n"};
  for (size_t i = 0; i < IOB_ARRAY_SIZE(bad); i++) {
    char *root = scratch_root("/cgroup.procs", bad[i]);
    cleanup_free pid_t *p = NULL;
    if (cg2_procs_read(root, &p, &n, &err) != -1)
      fail_msg("accepted cgroup.procs #%zu", i);
    assert_non_null(strstr(err->msg, "invalid pid"));
    rm_tree(root);
    free(root);
  }
  /* empty cgroup */
  char *root = scratch_root("/cgroup.procs", "");
  free(pids);
  pids = NULL;
  assert_int_equal(cg2_procs_read(root, &pids, &n, &err), 0);
  assert_int_equal(n, 0);
  rm_tree(root);
  free(root);
}

static void test_read_file_bound(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  char *root = scratch_root("/f", "0123456789");
  char path[256];
  snprintf(path, sizeof(path), "%s/f", root);
  cleanup_free char *buf = NULL;
  size_t len;
  assert_int_equal(cg2_read_file(path, 10, &buf, &len, &err), 0);
  assert_int_equal(len, 10);
  assert_int_equal(cg2_read_file(path, 9, &buf, &len, &err), -1);
  assert_int_equal(err->errno_, EFBIG);
  rm_tree(root);
  free(root);
}

static void test_fallback_sampler(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  cleanup_free char *root = fx("hybrid");
  cleanup_free char *dir = fx("hybrid/sys/fs/cgroup/pids/ctr1");
  struct cg2_procio p;
  size_t n = 0, gone = 0;
  /* 4242 and 4243 exist in the fixture; 999999 "exited" */
  assert_int_equal(cg2_procio_sample(root, dir, &p, &n, &gone, &err), 0);
  assert_int_equal(n, 2);
  assert_int_equal(gone, 1);
  assert_int_equal(p.read_bytes, 4096 + 8192);
  assert_int_equal(p.write_bytes, 2 * 1048576);
  assert_int_equal(p.syscw, 22);
  struct cg2_sample s;
  assert_int_equal(cg2_sample_take(root, dir, CG2_SOURCE_PROCIO, &s, &err), 0);
  assert_int_equal(s.io.wios, 22);
  assert_int_equal(s.npids, 2);
  assert_false(s.has_pressure); /* v1 directory */
  assert_string_equal(cg2_source_name(s.source), "procfs");
  cleanup_free char *v2dir = fx("v2/sys/fs/cgroup/kubepods.slice/pod1/ctr");
  assert_int_equal(cg2_sample_take(NULL, v2dir, CG2_SOURCE_IOSTAT, &s, &err), 0);
  assert_int_equal(s.io.wios, 1256);
  assert_true(s.has_pressure);
  assert_true(s.t_ns > 0);
}

static void test_live_self(void **state) {
  (void)state;
  /* the real host: this process's own cgroup and /proc/self/io */
  cleanup_error struct iob_error *err = NULL;
  struct cg2_mount m;
  assert_int_equal(cg2_mount_find(NULL, &m, &err), 0);
  cleanup_free char *cg = NULL;
  assert_int_equal(cg2_pid_cgroup(NULL, getpid(), &cg, &err), 0);
  assert_true(cg[0] == '/');
  struct cg2_procio p;
  assert_int_equal(cg2_procio_read_pid(NULL, getpid(), &p, &err), 0);
  assert_true(p.rchar > 0);
  cg2_mount_release(&m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_mount_pure_v2),
      cmocka_unit_test(test_mount_hybrid),
      cmocka_unit_test(test_mount_odd),
      cmocka_unit_test(test_pid_cgroup),
      cmocka_unit_test(test_procs),
      cmocka_unit_test(test_read_file_bound),
      cmocka_unit_test(test_fallback_sampler),
      cmocka_unit_test(test_live_self),
  };
  return cmocka_run_group_tests_name("cg2_paths", tests, NULL, NULL);
}
