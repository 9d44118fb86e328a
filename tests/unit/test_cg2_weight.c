// SPDX-License-Identifier: Apache-2.0
/* io.weight / io.bfq.weight parse, write, the systemd mapping, and the check
 * of whether a weight can take effect on a device. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cg2_fixture.h"
#include "cgroupv2/cg2.h"
#include "cgroupv2/weight.h"
#include "common/cleanup.h"

static void test_weight_read(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  cleanup_free char *dir = fx("v2/sys/fs/cgroup/kubepods.slice/pod1/ctr");
  struct cg2_weight w;
  assert_int_equal(cg2_weight_read(dir, CG2_IO_WEIGHT, &w, &err), 0);
  assert_int_equal(w.dflt, 100);
  assert_int_equal(w.n, 1);
  assert_int_equal(cg2_weight_for(&w, 254, 0), 500);
  assert_int_equal(cg2_weight_for(&w, 8, 0), 100);
  cg2_weight_release(&w);
  assert_int_equal(cg2_weight_read(dir, CG2_BFQ_WEIGHT, &w, &err), 0);
  assert_int_equal(cg2_weight_for(&w, 259, 0), 1000);
  cg2_weight_release(&w);
  /* BFQ before 5.4 printed only the number */
  assert_int_equal(cg2_weight_parse(CG2_BFQ_WEIGHT, "250\n", 4, &w, &err), 0);
  assert_int_equal(w.dflt, 250);
  cg2_weight_release(&w);
}

static void test_weight_malformed(void **state) {
  (void)state;
  static const struct {
    enum cg2_weight_kind kind;
    const char *text;
  } bad[] = {
      {CG2_IO_WEIGHT, ""},                /* no default */
      {CG2_IO_WEIGHT, "8:0 100\n"},       /* no default */
      {CG2_IO_WEIGHT, "default 0\n"},     /* below range */
      {CG2_IO_WEIGHT, "default 10001\n"}, /* above range */
      {CG2_BFQ_WEIGHT, "default 1001\n"}, /* above BFQ's range */
      {CG2_IO_WEIGHT, "default 100\n8:0 99999999999999999999999\n"},
      {CG2_IO_WEIGHT, "default 100\n8:0\n"}, /* truncated */
      {CG2_IO_WEIGHT, "default 100\n8:0 \n"},
      {CG2_IO_WEIGHT, "default 100\nsda 5\n"},
      {CG2_IO_WEIGHT, "default 100\n8:0 5\n8:0 6\n"},
      {CG2_IO_WEIGHT, "default 100\ndefault 200\n"},
      {CG2_IO_WEIGHT, "default -1\n"},
      {CG2_IO_WEIGHT, "defaul"},
      {CG2_IO_WEIGHT, "\x80\x81 \x82\n"},
  };
  for (size_t i = 0; i < IOB_ARRAY_SIZE(bad); i++) {
    cleanup_error struct iob_error *err = NULL;
    struct cg2_weight w = {0};
    if (cg2_weight_parse(bad[i].kind, bad[i].text, strlen(bad[i].text), &w, &err) != -1)
      fail_msg("accepted bad weight #%zu '%s'", i, bad[i].text);
    assert_non_null(strstr(err->msg, "weight"));
  }
}

static void test_weight_write(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  char dir[] = "/tmp/cg2w.XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[128];
  snprintf(path, sizeof(path), "%s/io.weight", dir);
  write_text(path, "");
  assert_int_equal(cg2_weight_write_default(dir, CG2_IO_WEIGHT, 250, &err), 0);
  cleanup_free char *got = NULL;
  assert_int_equal(cg2_read_file(path, 64, &got, NULL, &err), 0);
  assert_string_equal(got, "default 250");
  write_text(path, "");
  assert_int_equal(cg2_weight_write_dev(dir, CG2_IO_WEIGHT, 8, 16, 40, &err), 0);
  free(got);
  assert_int_equal(cg2_read_file(path, 64, &got, NULL, &err), 0);
  assert_string_equal(got, "8:16 40");
  write_text(path, "");
  assert_int_equal(cg2_weight_write_dev(dir, CG2_IO_WEIGHT, 8, 16, 0, &err), 0);
  free(got);
  assert_int_equal(cg2_read_file(path, 64, &got, NULL, &err), 0);
  assert_string_equal(got, "8:16 default");
  /* out of range: refused before touching the file */
  assert_int_equal(cg2_weight_write_default(dir, CG2_BFQ_WEIGHT, 5000, &err), -1);
  assert_non_null(strstr(err->msg, "out of range 1..1000"));
  /* the writer never creates a missing file, and says which path failed */
  assert_int_equal(cg2_weight_write_default(dir, CG2_BFQ_WEIGHT, 500, &err), -1);
  assert_int_equal(err->errno_, ENOENT);
  char want[256];
  snprintf(want, sizeof(want),
           "cannot open '%s/io.bfq.weight' for writing: No such file or directory", dir);
  assert_string_equal(err->msg, want);
  /* a kernel refusal (here: a directory) carries its errno */
  snprintf(path, sizeof(path), "%s/io.bfq.weight", dir);
  assert_int_equal(mkdir(path, 0700), 0);
  assert_int_equal(cg2_weight_write_default(dir, CG2_BFQ_WEIGHT, 500, &err), -1);
  assert_int_equal(err->errno_, EISDIR);
  rmdir(path);
  snprintf(path, sizeof(path), "%s/io.weight", dir);
  unlink(path);
  rmdir(dir);
}

static void test_weight_mapping(void **state) {
  (void)state;
  /* systemd's BFQ_WEIGHT(): identity up to the default, then /11 */
  assert_int_equal(cg2_weight_io_to_bfq(1), 1);
  assert_int_equal(cg2_weight_io_to_bfq(50), 50);
  assert_int_equal(cg2_weight_io_to_bfq(100), 100);
  assert_int_equal(cg2_weight_io_to_bfq(1100), 190);
  assert_int_equal(cg2_weight_io_to_bfq(10000), 1000);
  assert_int_equal(cg2_weight_io_to_bfq(0), 1);        /* clamped */
  assert_int_equal(cg2_weight_io_to_bfq(20000), 1000); /* clamped */
  assert_int_equal(cg2_weight_bfq_to_io(1000), 10000);
  assert_int_equal(cg2_weight_bfq_to_io(190), 1090);
  /* round trip through the coarser BFQ scale stays monotonic and close */
  unsigned prev = 0;
  for (unsigned w = 1; w <= 10000; w++) {
    unsigned b = cg2_weight_io_to_bfq(w);
    assert_true(b >= prev);
    prev = b;
    unsigned back = cg2_weight_bfq_to_io(b);
    assert_true(back <= w && w - back < 11);
  }
}

static void test_mechanism(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  cleanup_free char *root = fx("v2");
  unsigned mech = 99, dmaj = 0, dmin = 0;
  /* nvme0n1: iocost enable=1 in io.cost.qos, scheduler none */
  assert_int_equal(cg2_weight_mechanism(root, "/sys/fs/cgroup", 259, 0, &mech, &dmaj, &dmin, &err),
                   0);
  assert_int_equal(mech, CG2_MECH_IOCOST);
  /* its partition maps to the disk */
  assert_int_equal(cg2_weight_mechanism(root, "/sys/fs/cgroup", 259, 1, &mech, &dmaj, &dmin, &err),
                   0);
  assert_int_equal(mech, CG2_MECH_IOCOST);
  assert_int_equal(dmaj, 259);
  assert_int_equal(dmin, 0);
  /* vda: iocost line with enable=0, mq-deadline: nothing enforces weights */
  assert_int_equal(cg2_weight_mechanism(root, "/sys/fs/cgroup", 254, 1, &mech, &dmaj, &dmin, &err),
                   0);
  assert_int_equal(mech, 0);
  assert_int_equal(dmin, 0);
  /* sdb1 -> sdb: bfq active */
  assert_int_equal(cg2_weight_mechanism(root, "/sys/fs/cgroup", 8, 17, &mech, &dmaj, &dmin, &err),
                   0);
  assert_int_equal(mech, CG2_MECH_BFQ);
  assert_int_equal(dmin, 16);
  /* a device without a queue directory */
  assert_int_equal(cg2_weight_mechanism(root, "/sys/fs/cgroup", 1, 0, &mech, NULL, NULL, &err), 0);
  assert_int_equal(mech, 0);
  /* a host without io.cost.qos (hybrid fixture has no v2 io) and no device */
  cleanup_free char *hroot = fx("hybrid");
  assert_int_equal(
      cg2_weight_mechanism(hroot, "/sys/fs/cgroup/unified", 8, 0, &mech, NULL, NULL, &err), -1);
  assert_int_equal(err->errno_, ENOENT);
  assert_non_null(strstr(err->msg, "no block device 8:0"));
}

static void test_disks(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  cleanup_free char *root = fx("v2");
  cleanup_free struct cg2_disk *d = NULL;
  size_t n = 0;
  assert_int_equal(cg2_weight_disks(root, "/sys/fs/cgroup", &d, &n, &err), 0);
  /* ram0 (1:0), sdb (8:16), vda (254:0), nvme0n1 (259:0); no partitions */
  assert_int_equal(n, 4);
  assert_int_equal(d[0].major, 1);
  assert_int_equal(d[0].mech, 0);
  assert_int_equal(d[1].minor, 16);
  assert_int_equal(d[1].mech, CG2_MECH_BFQ);
  assert_int_equal(d[2].mech, 0);
  assert_int_equal(d[3].major, 259);
  assert_int_equal(d[3].mech, CG2_MECH_IOCOST);
  free(d);
  d = NULL;
  assert_int_equal(cg2_weight_disks("/nonexistent", "/sys/fs/cgroup", &d, &n, &err), -1);
  assert_non_null(strstr(err->msg, "cannot open '/nonexistent/sys/dev/block'"));
}

static void test_scheduler_and_qos_text(void **state) {
  (void)state;
  char name[16];
  assert_int_equal(cg2_scheduler_active("mq-deadline kyber [bfq] none\n", name, sizeof(name)), 0);
  assert_string_equal(name, "bfq");
  assert_int_equal(cg2_scheduler_active("none\n", name, sizeof(name)), -1);
  assert_int_equal(cg2_scheduler_active("[]", name, sizeof(name)), -1);
  assert_int_equal(cg2_scheduler_active("[averyveryverylongschedulername]", name, sizeof(name)),
                   -1);
  const char *q = "8:0 enable=0 ctrl=auto\n8:16 ctrl=user enable=1 rpct=95.00\n8:32 ctrl=auto\n";
  assert_int_equal(cg2_iocost_enabled(q, strlen(q), 8, 0), 0);
  assert_int_equal(cg2_iocost_enabled(q, strlen(q), 8, 16), 1);
  assert_int_equal(cg2_iocost_enabled(q, strlen(q), 8, 32), -1); /* no enable key */
  assert_int_equal(cg2_iocost_enabled(q, strlen(q), 9, 0), 0);   /* no line */
  assert_int_equal(cg2_iocost_enabled("", 0, 8, 0), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_weight_read),
      cmocka_unit_test(test_weight_malformed),
      cmocka_unit_test(test_weight_write),
      cmocka_unit_test(test_weight_mapping),
      cmocka_unit_test(test_mechanism),
      cmocka_unit_test(test_disks),
      cmocka_unit_test(test_scheduler_and_qos_text),
  };
  return cmocka_run_group_tests_name("cg2_weight", tests, NULL, NULL);
}
