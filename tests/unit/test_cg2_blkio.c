// SPDX-License-Identifier: Apache-2.0
/* cgroup v1 blkio statistics (parser, reader, the BLKIO_V1 sample and its
 * write rule, activation), the source rule shared by the hook and the agent
 * (never a hierarchy root), and the throttle writers (io.max, v1
 * blkio.throttle.*) on scratch trees. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cmocka.h>

#include "cg2_fixture.h"
#include "cgroupv2/blkio.h"
#include "cgroupv2/cg2.h"
#include "cgroupv2/sample.h"
#include "cgroupv2/throttle.h"
#include "common/cleanup.h"

/* Text from this project's hybrid host (kernel 6.18) after 20 MiB of
 * direct writes over a discard-mounted ext4. */
static const char REAL[] = "254:0 Read 2469888\n"
                           "254:0 Write 35590144\n"
                           "254:0 Sync 14716928\n"
                           "254:0 Async 35463168\n"
                           "254:0 Discard 12120064\n"
                           "254:0 Total 50180096\n"
                           "Total 50180096\n";

static char *scratch(void) {
  char *dir = strdup("/tmp/cg2b.XXXXXX");
  assert_non_null(mkdtemp(dir));
  return dir;
}


static char *get(const char *root, const char *rel) {
  char path[1024];
  snprintf(path, sizeof(path), "%s%s", root, rel);
  char *buf = NULL;
  size_t len = 0;
  struct iob_error *err = NULL;
  if (cg2_read_file(path, 65536, &buf, &len, &err) < 0) {
    iob_error_release(&err);
    return NULL;
  }
  return buf;
}

/* Written files are regular files here, not cgroup files: a shorter write
 * leaves the tail of a longer one (no O_TRUNC, as cgroup files want). */
#define assert_written(got, want)                                                                  \
  do {                                                                                             \
    assert_non_null(got);                                                                          \
    if (strncmp((got), (want), strlen(want)) != 0)                                                 \
      fail_msg("wrote '%s', expected '%s'", (got), (want));                                        \
  } while (0)

static void rm_tree(const char *dir) {
  char cmd[600];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

static void test_parse_real(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct cg2_blkio b;
  assert_int_equal(cg2_blkio_parse(REAL, strlen(REAL), &b, &err), 0);
  assert_int_equal(b.n, 1);
  assert_int_equal(b.dev[0].major, 254);
  assert_int_equal(b.dev[0].minor, 0);
  assert_int_equal(b.dev[0].read, 2469888);
  assert_int_equal(b.dev[0].write, 35590144);
  assert_int_equal(b.dev[0].discard, 12120064);
  assert_int_equal(b.dev[0].total, 50180096);
  assert_int_equal(b.total, 50180096);
  cg2_blkio_release(&b);
  /* only the total line: nothing counted yet (or blk-throttle inactive) */
  assert_int_equal(cg2_blkio_parse("Total 0\n", 8, &b, &err), 0);
  assert_int_equal(b.n, 0);
  cg2_blkio_release(&b);
  /* empty, no trailing newline, pre-4.19 without Discard, unknown key */
  assert_int_equal(cg2_blkio_parse("", 0, &b, &err), 0);
  cg2_blkio_release(&b);
  const char *old = "8:0 Read 1\n8:0 Write 2\n8:0 Sync 3\n8:0 Async 0\n8:0 Total 3\n8:0 Future 9\n"
                    "8:16 Read 5\nTotal 8";
  assert_int_equal(cg2_blkio_parse(old, strlen(old), &b, &err), 0);
  assert_int_equal(b.n, 2);
  assert_int_equal(b.dev[0].discard, 0);
  assert_int_equal(b.dev[1].read, 5);
  assert_int_equal(b.total, 8);
  cg2_blkio_release(&b);
}

static void test_parse_malformed(void **state) {
  (void)state;
  static const char *const bad[] = {
      "254:0 Read\n",                          /* no value */
      "254:0 Read x\n",                        /* not a number */
      "254:0 Read -1\n",                       /* sign */
      "254:0 Read 18446744073709551616\n",     /* 2^64 */
      "254 Read 1\n",                          /* no minor */
      "254:0:1 Read 1\n",                      /* junk device */
      "a:0 Read 1\n",                          /* junk device */
      "254:0 Read 1\n254:0 Read 2\n",          /* key twice */
      "254:0 Read 1\n8:0 Read 1\n254:0 Write 1\n", /* device twice */
      "Total 1\n254:0 Read 1\n",               /* device after Total */
      "Total 1\nTotal 1\n",                    /* Total twice */
      "254:0 Read 1 2\n",                      /* extra token */
      "254:0  Read 1\n",                       /* empty token */
      "254:0\tRead 1\n",                       /* tab */
      "Total\n",                               /* Total without value */
      "254:0 Read 1\r\n",                      /* CR */
      "junk\n",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    struct iob_error *err = NULL;
    struct cg2_blkio b = {0};
    if (cg2_blkio_parse(bad[i], strlen(bad[i]), &b, &err) == 0)
      fail_msg("accepted malformed blkio text %zu: '%s'", i, bad[i]);
    assert_non_null(err);
    iob_error_release(&err);
  }
  /* a NUL inside a line */
  struct iob_error *err = NULL;
  struct cg2_blkio b;
  assert_int_equal(cg2_blkio_parse("254:0 Re\0d 1\n", 13, &b, &err), -1);
  iob_error_release(&err);
  /* too many devices */
  size_t cap = (CG2_IOSTAT_MAX_DEVS + 1) * 24;
  char *big = malloc(cap), *p = big;
  for (int i = 0; i <= CG2_IOSTAT_MAX_DEVS; i++)
    p += sprintf(p, "%d:%d Read 1\n", 8, i);
  assert_int_equal(cg2_blkio_parse(big, (size_t)(p - big), &b, &err), -1);
  assert_int_equal(err->code, IOB_CODE_RESOURCE_EXHAUSTED);
  iob_error_release(&err);
  free(big);
  /* an over-long line */
  char longl[CG2_IOSTAT_LINE_MAX + 32];
  memset(longl, '1', sizeof(longl));
  memcpy(longl, "8:0 Read ", 9);
  assert_int_equal(cg2_blkio_parse(longl, sizeof(longl), &b, &err), -1);
  iob_error_release(&err);
}

static void test_read_and_sample(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  cleanup_free char *root = scratch();
  const char *cg = "/sys/fs/cgroup/blkio/ctr";
  char rel[256];
  snprintf(rel, sizeof(rel), "%s/%s", cg, CG2_BLKIO_BYTES);
  /* 300 MB of direct writes in 311 requests, 1 MB read; two disks */
  put_text(root, rel,
      "8:0 Read 0\n8:0 Write 4096\n8:0 Sync 4096\n8:0 Async 0\n8:0 Discard 0\n8:0 Total 4096\n"
      "254:0 Read 1048576\n254:0 Write 314572800\n254:0 Sync 315621376\n254:0 Async 0\n"
      "254:0 Discard 65536\n254:0 Total 315686912\nTotal 315691008\n");
  snprintf(rel, sizeof(rel), "%s/%s", cg, CG2_BLKIO_IOS);
  put_text(root, rel,
      "254:0 Read 16\n254:0 Write 311\n254:0 Sync 327\n254:0 Async 0\n254:0 Discard 1\n"
      "254:0 Total 328\n8:0 Read 0\n8:0 Write 1\n8:0 Sync 1\n8:0 Async 0\n8:0 Discard 0\n"
      "8:0 Total 1\nTotal 329\n");
  snprintf(rel, sizeof(rel), "%s/cgroup.procs", cg);
  put_text(root, rel, "100\n");
  /* procfs: the same 300 MB direct (write_bytes counts direct writes too),
   * 300 write syscalls */
  put_text(root, "/proc/100/io",
      "rchar: 1048576\nwchar: 314572800\nsyscr: 16\nsyscw: 300\nread_bytes: 1048576\n"
      "write_bytes: 314572800\ncancelled_write_bytes: 0\n");
  char dir[512];
  snprintf(dir, sizeof(dir), "%s%s", root, cg);
  struct cg2_iostat st;
  assert_int_equal(cg2_blkio_read(dir, &st, &err), 0);
  assert_int_equal(st.n, 2);
  assert_int_equal(st.dev[0].major, 8); /* sorted */
  assert_int_equal(st.dev[1].c.wios, 311);
  assert_int_equal(st.dev[1].c.dbytes, 65536);
  assert_int_equal(st.dev[1].c.dios, 1);
  cg2_iostat_release(&st);

  struct cg2_sample s;
  assert_int_equal(cg2_sample_take(root, dir, CG2_SOURCE_BLKIO_V1, &s, &err), 0);
  assert_string_equal(cg2_source_name(s.source), "blkio-v1");
  assert_int_equal(s.io.rbytes, 1048576);
  assert_int_equal(s.io.rios, 16);
  /* direct writes counted once, not blkio + procfs */
  assert_int_equal(s.io.wbytes, 314572800 + 4096);
  assert_int_equal(s.io.wios, 312);
  assert_int_equal(s.npids, 1);
  /* PSI puts io.pressure in cgroup2 directories only: a v1 directory's is
   * not looked for, so even a file of that name there is not read */
  assert_int_equal(s.has_pressure, 0);
  snprintf(rel, sizeof(rel), "%s/io.pressure", cg);
  put_text(root, rel,
      "some avg10=0.00 avg60=0.00 avg300=0.00 total=5\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=3\n");
  assert_int_equal(cg2_sample_take(root, dir, CG2_SOURCE_BLKIO_V1, &s, &err), 0);
  assert_int_equal(s.has_pressure, 0);

  /* buffered writer: v1 charged the writeback to the root (Write 0), procfs
   * saw 100 MiB dirtied, 10 MiB of it truncated before writeback */
  snprintf(rel, sizeof(rel), "%s/%s", cg, CG2_BLKIO_BYTES);
  put_text(root, rel, "254:0 Read 0\n254:0 Write 0\n254:0 Total 0\nTotal 0\n");
  snprintf(rel, sizeof(rel), "%s/%s", cg, CG2_BLKIO_IOS);
  put_text(root, rel, "Total 0\n");
  put_text(root, "/proc/100/io",
      "rchar: 0\nwchar: 104857600\nsyscr: 0\nsyscw: 25600\nread_bytes: 0\n"
      "write_bytes: 104857600\ncancelled_write_bytes: 10485760\n");
  assert_int_equal(cg2_sample_take(root, dir, CG2_SOURCE_BLKIO_V1, &s, &err), 0);
  assert_int_equal(s.io.wbytes, 104857600 - 10485760);
  assert_int_equal(s.io.wios, 25600);
  /* more cancelled than written (truncating a file written by a process
   * that exited): no wrap-around */
  put_text(root, "/proc/100/io",
      "rchar: 0\nwchar: 0\nsyscr: 0\nsyscw: 0\nread_bytes: 0\n"
      "write_bytes: 4096\ncancelled_write_bytes: 8192\n");
  assert_int_equal(cg2_sample_take(root, dir, CG2_SOURCE_BLKIO_V1, &s, &err), 0);
  assert_int_equal(s.io.wbytes, 0);
  /* a malformed statistics file fails the sample */
  snprintf(rel, sizeof(rel), "%s/%s", cg, CG2_BLKIO_IOS);
  put_text(root, rel, "254:0 Write x\n");
  assert_int_equal(cg2_sample_take(root, dir, CG2_SOURCE_BLKIO_V1, &s, &err), -1);
  assert_non_null(strstr(err->msg, CG2_BLKIO_IOS));
  rm_tree(root);
}

static void test_activate(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  cleanup_free char *root = scratch();
  const char *mnt = "/sys/fs/cgroup/blkio";
  put_text(root, "/sys/fs/cgroup/blkio/blkio.throttle.io_service_bytes", "Total 0\n");
  put_text(root, "/sys/fs/cgroup/blkio/blkio.throttle.read_bps_device", "");
  int done = -1;
  assert_int_equal(cg2_blkio_activate(root, mnt, 254, 0, &done, &err), 0);
  assert_int_equal(done, 1);
  cleanup_free char *w = get(root, "/sys/fs/cgroup/blkio/blkio.throttle.read_bps_device");
  assert_string_equal(w, "254:0 0");
  /* already counting (a line for the disk): a rule set there is not touched */
  put_text(root, "/sys/fs/cgroup/blkio/blkio.throttle.io_service_bytes", REAL);
  put_text(root, "/sys/fs/cgroup/blkio/blkio.throttle.read_bps_device", "254:0 1000\n");
  assert_int_equal(cg2_blkio_activate(root, mnt, 254, 0, &done, &err), 0);
  assert_int_equal(done, 0);
  cleanup_free char *w2 = get(root, "/sys/fs/cgroup/blkio/blkio.throttle.read_bps_device");
  assert_string_equal(w2, "254:0 1000\n");
  /* every disk of non-zero size in /sys/block */
  put_text(root, "/sys/fs/cgroup/blkio/blkio.throttle.io_service_bytes", "Total 0\n");
  put_text(root, "/sys/block/vda/dev", "254:0\n");
  put_text(root, "/sys/block/vda/size", "536870912\n");
  put_text(root, "/sys/block/loop0/dev", "7:0\n");
  put_text(root, "/sys/block/loop0/size", "0\n");
  put_text(root, "/sys/block/junk/dev", "x\n");
  put_text(root, "/sys/block/junk/size", "1\n");
  size_t n = 9;
  cleanup_free char *added = NULL;
  assert_int_equal(cg2_blkio_activate_all(root, mnt, &n, &added, &err), 0);
  assert_int_equal(n, 1);
  assert_string_equal(added, "vda 254:0");
  /* a disk attached later (a loop device over an emulated disk) is the one
   * a later call adds; vda, which counts now, is left alone */
  put_text(root, "/sys/fs/cgroup/blkio/blkio.throttle.io_service_bytes",
           "254:0 Read 0\n254:0 Total 0\nTotal 0\n");
  put_text(root, "/sys/block/loop1/dev", "7:1\n");
  put_text(root, "/sys/block/loop1/size", "1048576\n");
  put_text(root, "/sys/fs/cgroup/blkio/blkio.throttle.read_bps_device", "");
  free(added);
  added = NULL;
  assert_int_equal(cg2_blkio_activate_all(root, mnt, &n, &added, &err), 0);
  assert_int_equal(n, 2);
  assert_string_equal(added, "loop1 7:1");
  cleanup_free char *w4 = get(root, "/sys/fs/cgroup/blkio/blkio.throttle.read_bps_device");
  assert_string_equal(w4, "7:1 0");
  /* a malformed root statistics file is an error, and nothing is written */
  put_text(root, "/sys/fs/cgroup/blkio/blkio.throttle.io_service_bytes", "garbage\n");
  put_text(root, "/sys/fs/cgroup/blkio/blkio.throttle.read_bps_device", "");
  assert_int_equal(cg2_blkio_activate(root, mnt, 254, 0, &done, &err), -1);
  cleanup_free char *w3 = get(root, "/sys/fs/cgroup/blkio/blkio.throttle.read_bps_device");
  assert_string_equal(w3, "");
  rm_tree(root);
}

static const char HYBRID_MOUNTINFO[] =
    "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "38 31 0:35 / /sys/fs/cgroup/blkio rw,relatime - cgroup cgroup rw,blkio\n"
    "39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

static int pick(const char *root, pid_t pid, const struct cg2_mount *m, enum cg2_source how,
                enum cg2_source *src, char **dir, struct iob_error **err) {
  struct cg2_pick p = {.root = root, .m = m, .source = how, .pid = pid};
  return cg2_source_pick(&p, src, dir, err);
}

/* The rule shared by the hook and the agent: never the root of a
 * hierarchy, the blkio cgroup when there is one. */
static void test_source_pick(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  cleanup_free char *root = scratch();
  put_text(root, "/proc/self/mountinfo", HYBRID_MOUNTINFO);
  put_text(root, "/sys/fs/cgroup/unified/cgroup.controllers", "hugetlb\n");
  put_text(root, "/sys/fs/cgroup/blkio/ctr/blkio.throttle.io_service_bytes", "Total 0\n");
  /* runc on a hybrid host: v2 root, own v1 cgroups */
  put_text(root, "/proc/10/cgroup", "8:pids:/ctr\n7:blkio:/ctr\n0::/\n");
  struct cg2_mount m;
  assert_int_equal(cg2_mount_find(root, &m, &err), 0);
  enum cg2_source src;
  char *dir = NULL;
  assert_int_equal(pick(root, 10, &m, CG2_SOURCE_NONE, &src, &dir, &err), 0);
  assert_int_equal(src, CG2_SOURCE_BLKIO_V1);
  char want[512];
  snprintf(want, sizeof(want), "%s/sys/fs/cgroup/blkio/ctr", root);
  assert_string_equal(dir, want);
  free(dir);
  /* blkio not allowed: procfs over its pids cgroup, not the v2 root */
  assert_int_equal(pick(root, 10, &m, CG2_SOURCE_PROCIO, &src, &dir, &err), 0);
  assert_int_equal(src, CG2_SOURCE_PROCIO);
  snprintf(want, sizeof(want), "%s/sys/fs/cgroup/pids/ctr", root);
  assert_string_equal(dir, want);
  free(dir);
  /* in the blkio root, own v2 cgroup: procfs over the v2 cgroup */
  put_text(root, "/proc/11/cgroup", "7:blkio:/\n0::/ctr2\n");
  assert_int_equal(pick(root, 11, &m, CG2_SOURCE_NONE, &src, &dir, &err), 0);
  assert_int_equal(src, CG2_SOURCE_PROCIO);
  snprintf(want, sizeof(want), "%s/sys/fs/cgroup/unified/ctr2", root);
  assert_string_equal(dir, want);
  free(dir);
  /* a blkio cgroup without the statistics files (no blk-throttle) */
  put_text(root, "/proc/12/cgroup", "8:pids:/p\n7:blkio:/nostats\n0::/\n");
  assert_int_equal(pick(root, 12, &m, CG2_SOURCE_NONE, &src, &dir, &err), 0);
  assert_int_equal(src, CG2_SOURCE_PROCIO);
  snprintf(want, sizeof(want), "%s/sys/fs/cgroup/pids/p", root);
  assert_string_equal(dir, want);
  free(dir);
  /* the root everywhere: refused, never sampled */
  put_text(root, "/proc/13/cgroup", "8:pids:/\n7:blkio:/\n0::/\n");
  dir = NULL;
  assert_int_equal(pick(root, 13, &m, CG2_SOURCE_NONE, &src, &dir, &err), -1);
  assert_int_equal(err->code, IOB_CODE_NOT_FOUND);
  assert_null(dir);
  iob_error_release(&err);
  /* the agent with a v1 blkio sampler but no pid yet: procfs over the v2
   * cgroup registered */
  struct cg2_pick p = {.root = root, .m = &m, .source = CG2_SOURCE_BLKIO_V1, .cgroup = "/reg"};
  assert_int_equal(cg2_source_pick(&p, &src, &dir, &err), 0);
  assert_int_equal(src, CG2_SOURCE_PROCIO);
  snprintf(want, sizeof(want), "%s/sys/fs/cgroup/unified/reg", root);
  assert_string_equal(dir, want);
  free(dir);
  /* ... and with one: the hook's rule */
  p.pid = 10;
  assert_int_equal(cg2_source_pick(&p, &src, &dir, &err), 0);
  assert_int_equal(src, CG2_SOURCE_BLKIO_V1);
  free(dir);
  /* the agent's procfs sampler: the registered cgroup, else the pid's own
   * v2 cgroup */
  p.source = CG2_SOURCE_PROCIO;
  assert_int_equal(cg2_source_pick(&p, &src, &dir, &err), 0);
  assert_int_equal(src, CG2_SOURCE_PROCIO);
  assert_string_equal(dir, want);
  free(dir);
  p.cgroup = "/";
  p.pid = 11;
  assert_int_equal(cg2_source_pick(&p, &src, &dir, &err), 0);
  assert_int_equal(src, CG2_SOURCE_PROCIO);
  snprintf(want, sizeof(want), "%s/sys/fs/cgroup/unified/ctr2", root);
  assert_string_equal(dir, want);
  free(dir);
  /* io.stat forced: never for a pid in the v2 root; nothing to go by */
  p.source = CG2_SOURCE_IOSTAT;
  p.pid = 10;
  dir = NULL;
  assert_int_equal(cg2_source_pick(&p, &src, &dir, &err), -1);
  assert_int_equal(err->code, IOB_CODE_NOT_FOUND);
  assert_null(dir);
  iob_error_release(&err);
  p.pid = 0;
  p.cgroup = NULL;
  assert_int_equal(cg2_source_pick(&p, &src, &dir, &err), -1);
  assert_int_equal(err->code, IOB_CODE_NOT_FOUND);
  iob_error_release(&err);
  /* a host with io in v2: io.stat in the v2 cgroup */
  m.has_io = 1;
  assert_int_equal(pick(root, 11, &m, CG2_SOURCE_NONE, &src, &dir, &err), 0);
  assert_int_equal(src, CG2_SOURCE_IOSTAT);
  free(dir);
  cg2_mount_release(&m);
  rm_tree(root);
}

static void test_throttle_parsers(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct cg2_throttle_limits l;
  const char *iomax = "8:0 rbps=1 wbps=2 riops=3 wiops=4\n"
                      "254:0 rbps=max wbps=52428800 riops=max wiops=max\n";
  assert_int_equal(cg2_throttle_parse_iomax(iomax, strlen(iomax), 254, 0, &l, &err), 0);
  assert_int_equal(l.rbps, 0);
  assert_int_equal(l.wbps, 52428800);
  assert_int_equal(cg2_throttle_parse_iomax(iomax, strlen(iomax), 8, 0, &l, &err), 0);
  assert_int_equal(l.wiops, 4);
  assert_int_equal(cg2_throttle_parse_iomax(iomax, strlen(iomax), 8, 16, &l, &err), 0);
  assert_int_equal(l.rbps + l.wbps + l.riops + l.wiops, 0); /* no line: no cap */
  assert_int_equal(cg2_throttle_parse_iomax("", 0, 8, 0, &l, &err), 0);
  static const char *const bad_iomax[] = {
      "8:0\n",      "8:0 rbps\n",           "8:0 rbps=\n",        "8:0 rbps=x\n",
      "8:0 =1\n",   "8:0 rbps=1 rbps=2\n",  "x:0 rbps=1\n",       "8:0 rbps=1  wbps=1\n",
      "8:0 wbps=1\n8:0 rbps=1\n", "8:0 rbps=18446744073709551616\n",
  };
  for (size_t i = 0; i < sizeof(bad_iomax) / sizeof(bad_iomax[0]); i++) {
    struct iob_error *e = NULL;
    if (cg2_throttle_parse_iomax(bad_iomax[i], strlen(bad_iomax[i]), 8, 0, &l, &e) == 0)
      fail_msg("accepted malformed io.max %zu: '%s'", i, bad_iomax[i]);
    iob_error_release(&e);
  }
  uint64_t v;
  assert_int_equal(cg2_throttle_parse_v1("254:0 52428800\n8:0 1\n", 21, 254, 0, &v, &err), 0);
  assert_int_equal(v, 52428800);
  assert_int_equal(cg2_throttle_parse_v1("", 0, 254, 0, &v, &err), 0);
  assert_int_equal(v, 0);
  static const char *const bad_v1[] = {"254:0\n", "254:0 x\n", "254 1\n", "254:0 1 2\n",
                                       "254:0 1\n254:0 2\n", "254:0 -1\n"};
  for (size_t i = 0; i < sizeof(bad_v1) / sizeof(bad_v1[0]); i++) {
    struct iob_error *e = NULL;
    if (cg2_throttle_parse_v1(bad_v1[i], strlen(bad_v1[i]), 254, 0, &v, &e) == 0)
      fail_msg("accepted malformed v1 throttle %zu: '%s'", i, bad_v1[i]);
    iob_error_release(&e);
  }
}

/* A scratch hybrid host where pid 20's root is an overlay whose upperdir
 * is a directory of the scratch tree: its st_dev is the real disk under
 * /tmp, which gets a /sys/dev/block entry (a whole disk). */
static void test_throttle_v1(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  cleanup_free char *root = scratch();
  put_text(root, "/proc/self/mountinfo", HYBRID_MOUNTINFO);
  put_text(root, "/sys/fs/cgroup/unified/cgroup.controllers", "hugetlb\n");
  put_text(root, "/proc/20/cgroup", "7:blkio:/ctr\n0::/\n");
  put_text(root, "/upper/x", "");
  char up[600];
  snprintf(up, sizeof(up), "%s/upper", root);
  struct stat st;
  assert_int_equal(stat(up, &st), 0);
  unsigned dmaj = major(st.st_dev), dmin = minor(st.st_dev);
  char mi[512], rel[128];
  snprintf(mi, sizeof(mi),
           "100 90 0:77 / / rw - overlay overlay rw,lowerdir=/l,upperdir=/upper,workdir=/w\n"
           "101 100 0:5 / /proc rw - proc proc rw\n");
  put_text(root, "/proc/20/mountinfo", mi);
  if (dmaj == 0) {
    /* /tmp on tmpfs: no disk to find; the io.stat route below still is */
    skip();
  }
  snprintf(rel, sizeof(rel), "/sys/dev/block/%u:%u/dev", dmaj, dmin);
  put_text(root, rel, "");
  /* the disk seen in the blkio lines: partition 8:17 of disk 8:16 */
  put_text(root, "/sys/devices/sdb/dev", "8:16\n");
  put_text(root, "/sys/devices/sdb/sdb1/partition", "1\n");
  char l1[600], l2[600];
  snprintf(l1, sizeof(l1), "%s/sys/devices/sdb/sdb1", root);
  snprintf(l2, sizeof(l2), "%s/sys/dev/block/8:17", root);
  assert_int_equal(symlink(l1, l2), 0);
  put_text(root, "/sys/fs/cgroup/blkio/ctr/blkio.throttle.io_service_bytes",
      "8:17 Read 0\n8:17 Write 4096\n8:17 Total 4096\n9:0 Read 0\n9:0 Write 0\nTotal 4096\n");
  put_text(root, "/sys/fs/cgroup/blkio/ctr/blkio.throttle.io_serviced", "Total 0\n");
  for (int k = 0; k < 4; k++) {
    static const char *const f[4] = {"read_bps", "write_bps", "read_iops", "write_iops"};
    snprintf(rel, sizeof(rel), "/sys/fs/cgroup/blkio/ctr/blkio.throttle.%s_device", f[k]);
    put_text(root, rel, "");
  }
  struct cg2_throttle_target t;
  assert_int_equal(cg2_throttle_target_resolve(root, 20, NULL, &t, &err), 0);
  assert_int_equal(t.mech, CG2_THROTTLE_V1_BLKIO);
  assert_string_equal(cg2_throttle_mech_name(t.mech), "blkio.throttle");
  assert_int_equal(t.ndev, 2);
  assert_int_equal(t.dev[0].major, dmaj);
  assert_int_equal(t.dev[0].minor, dmin);
  assert_int_equal(t.dev[1].major, 8); /* the partition's disk; 9:0 had no I/O */
  assert_int_equal(t.dev[1].minor, 16);
  assert_int_equal(cg2_throttle_set(&t, 0, 50u << 20, 0, 1000, &err), 0);
  cleanup_free char *w = get(root, "/sys/fs/cgroup/blkio/ctr/blkio.throttle.write_bps_device");
  assert_written(w, "8:16 52428800"); /* the last disk written */
  cleanup_free char *wi = get(root, "/sys/fs/cgroup/blkio/ctr/blkio.throttle.write_iops_device");
  assert_written(wi, "8:16 1000");
  /* what the kernel would show after those writes */
  put_text(root, "/sys/fs/cgroup/blkio/ctr/blkio.throttle.write_bps_device", "8:16 52428800\n");
  put_text(root, "/sys/fs/cgroup/blkio/ctr/blkio.throttle.write_iops_device", "8:16 1000\n");
  put_text(root, "/sys/fs/cgroup/blkio/ctr/blkio.throttle.read_bps_device", "");
  struct cg2_throttle_limits l;
  assert_int_equal(cg2_throttle_get(&t, 8, 16, &l, &err), 0);
  assert_int_equal(l.wbps, 50u << 20);
  assert_int_equal(l.wiops, 1000);
  assert_int_equal(l.rbps, 0);
  assert_int_equal(cg2_throttle_set(&t, 0, 0, 0, (uint64_t)UINT32_MAX + 1, &err), -1);
  iob_error_release(&err);
  assert_int_equal(cg2_throttle_clear(&t, &err), 0);
  cleanup_free char *w2 = get(root, "/sys/fs/cgroup/blkio/ctr/blkio.throttle.write_bps_device");
  assert_written(w2, "8:16 0");
  cg2_throttle_target_release(&t);
  /* the container in the blkio root: nothing may cap it */
  put_text(root, "/proc/21/cgroup", "7:blkio:/\n0::/\n");
  assert_int_equal(cg2_throttle_target_resolve(root, 21, NULL, &t, &err), 0);
  assert_int_equal(t.mech, CG2_THROTTLE_NONE);
  assert_int_equal(cg2_throttle_set(&t, 1, 1, 1, 1, &err), -1);
  assert_int_equal(err->code, IOB_CODE_FAILED_PRECONDITION);
  iob_error_release(&err);
  cg2_throttle_target_release(&t);
  rm_tree(root);
}

static void test_throttle_v2(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  cleanup_free char *root = scratch();
  put_text(root, "/proc/self/mountinfo",
      "27 1 254:0 / / rw - ext4 /dev/vda rw\n"
      "30 27 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
  put_text(root, "/sys/fs/cgroup/cgroup.controllers", "cpu io memory pids\n");
  put_text(root, "/sys/fs/cgroup/k/ctr/io.max", "");
  put_text(root, "/sys/fs/cgroup/k/ctr/io.stat",
      "254:0 rbytes=0 wbytes=4096 rios=0 wios=1 dbytes=0 dios=0\n");
  put_text(root, "/sys/dev/block/254:0/dev", "254:0\n");
  put_text(root, "/proc/30/cgroup", "0::/k/ctr\n");
  put_text(root, "/proc/30/mountinfo", "1 0 0:99 / / rw - tmpfs tmpfs rw\n");
  enum cg2_throttle_mech mech;
  char *dir = NULL;
  assert_int_equal(cg2_throttle_mechanism(root, 30, &mech, &dir, &err), 0);
  assert_int_equal(mech, CG2_THROTTLE_V2_IOMAX);
  free(dir);
  struct cg2_throttle_target t;
  assert_int_equal(cg2_throttle_target_resolve(root, 30, NULL, &t, &err), 0);
  assert_int_equal(t.mech, CG2_THROTTLE_V2_IOMAX);
  assert_int_equal(t.ndev, 1); /* from io.stat; the tmpfs root has no disk */
  assert_int_equal(cg2_throttle_set(&t, 0, 50u << 20, 0, 0, &err), 0);
  cleanup_free char *w = get(root, "/sys/fs/cgroup/k/ctr/io.max");
  assert_written(w, "254:0 rbps=max wbps=52428800 riops=max wiops=max");
  put_text(root, "/sys/fs/cgroup/k/ctr/io.max", "254:0 rbps=max wbps=52428800 riops=max wiops=max\n");
  struct cg2_throttle_limits l;
  assert_int_equal(cg2_throttle_get(&t, 254, 0, &l, &err), 0);
  assert_int_equal(l.wbps, 50u << 20);
  assert_int_equal(cg2_throttle_clear(&t, &err), 0);
  cleanup_free char *w2 = get(root, "/sys/fs/cgroup/k/ctr/io.max");
  assert_written(w2, "254:0 rbps=max wbps=max riops=max wiops=max");
  /* a device that is not there */
  assert_int_equal(cg2_throttle_target_add_dev(root, &t, 8, 0, &err), -1);
  iob_error_release(&err);
  assert_int_equal(cg2_throttle_target_add_dev(root, &t, 0, 5, &err), -1);
  iob_error_release(&err);
  cg2_throttle_target_release(&t);
  /* the v2 root: never */
  put_text(root, "/proc/31/cgroup", "0::/\n");
  assert_int_equal(cg2_throttle_mechanism(root, 31, &mech, &dir, &err), 0);
  assert_int_equal(mech, CG2_THROTTLE_NONE);
  assert_null(dir);
  rm_tree(root);
}

/* The disk under a container: malformed mountinfo lines are skipped (no
 * disk, no error); the bundle's rootfs mount on a block device is found. */
static void test_throttle_mountinfo(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  cleanup_free char *root = scratch();
  put_text(root, "/sys/dev/block/254:0/dev", "254:0\n");
  put_text(root, "/sys/dev/block/8:0/dev", "8:0\n");
  static const char *const junk[] = {
      "",
      "garbage\n",
      "1 2\n",
      "1 2 x:y / / rw - ext4 /dev/vda rw\n",
      "1 2 0:77 / / rw - overlay overlay rw,upperdir=/does/not/exist\n",
      "1 2 0:77 / / rw - overlay\n",
      "1 2 0:77 / / rw\n",
      "1 2 254 / / rw - ext4 /dev/vda rw\n",
      "1 2 99999999999:0 / / rw - ext4 /dev/vda rw\n",
  };
  for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
    put_text(root, "/proc/40/mountinfo", junk[i]);
    struct cg2_throttle_target t;
    assert_int_equal(cg2_throttle_target_resolve(root, 40, NULL, &t, &err), 0);
    if (t.ndev != 0)
      fail_msg("a disk from malformed mountinfo %zu: '%s'", i, junk[i]);
    assert_int_equal(t.mech, CG2_THROTTLE_NONE); /* no cgroup files in this tree */
    cg2_throttle_target_release(&t);
  }
  /* a bind-mounted rootfs on 254:0 (root of the container), and the
   * bundle's rootfs as the host sees it on 8:0 */
  put_text(root, "/proc/40/mountinfo", "5 1 254:0 /x / rw - ext4 /dev/vda rw\n");
  put_text(root, "/proc/self/mountinfo", "7 1 8:0 / /run/b/rootfs rw - ext4 /dev/sda rw\n");
  struct cg2_throttle_target t;
  assert_int_equal(cg2_throttle_target_resolve(root, 40, "/run/b", &t, &err), 0);
  assert_int_equal(t.ndev, 2);
  assert_int_equal(t.dev[0].major, 254);
  assert_int_equal(t.dev[1].major, 8);
  /* the same disk twice is one target */
  assert_int_equal(cg2_throttle_target_add_dev(root, &t, 8, 0, &err), 0);
  assert_int_equal(t.ndev, 2);
  cg2_throttle_target_release(&t);
  rm_tree(root);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_real),       cmocka_unit_test(test_parse_malformed),
      cmocka_unit_test(test_read_and_sample),  cmocka_unit_test(test_activate),
      cmocka_unit_test(test_source_pick),      cmocka_unit_test(test_throttle_parsers),
      cmocka_unit_test(test_throttle_v1),      cmocka_unit_test(test_throttle_v2),
      cmocka_unit_test(test_throttle_mountinfo),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
