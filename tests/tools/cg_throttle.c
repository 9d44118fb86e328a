// SPDX-License-Identifier: Apache-2.0
/* cg-throttle: the cgroupv2/throttle.h API from the shell, for
 * tests/integration/agent/throttle.sh.
 *
 *   cg-throttle resolve PID [BUNDLE]           "MECH CGDIR MAJ:MIN..."
 *   cg-throttle set PID RBPS WBPS RIOPS WIOPS  caps (0: none) on every disk
 *   cg-throttle clear PID
 *   cg-throttle get PID MAJ:MIN                "RBPS WBPS RIOPS WIOPS"
 *   cg-throttle wbytes PID                     bytes written, from the
 *                                              mechanism's own statistics
 *   cg-throttle activate                       v1: make every disk count
 *                                              blkio statistics (blkio.h) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroupv2/blkio.h"
#include "cgroupv2/cg2.h"
#include "cgroupv2/iostat.h"
#include "cgroupv2/throttle.h"
#include "common/cleanup.h"

static int usage(void) {
  fprintf(stderr, "usage: cg-throttle resolve|set|clear|get|wbytes PID ...\n");
  return 2;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "activate") == 0) {
    cleanup_error struct iob_error *e = NULL;
    cleanup_free char *mnt = NULL;
    size_t n = 0;
    if (cg2_v1_mount_find(NULL, "blkio", &mnt, &e) < 0 ||
        cg2_blkio_activate_all(NULL, mnt, &n, NULL, &e) < 0) {
      iob_error_print("cg-throttle", &e);
      return 1;
    }
    printf("%zu\n", n);
    return 0;
  }
  if (argc < 3)
    return usage();
  const char *cmd = argv[1];
  pid_t pid = (pid_t)atoi(argv[2]);
  cleanup_error struct iob_error *err = NULL;
  struct cg2_throttle_target t;
  const char *bundle = strcmp(cmd, "resolve") == 0 && argc > 3 ? argv[3] : NULL;
  int rc = 0;
  if (cg2_throttle_target_resolve(NULL, pid, bundle, &t, &err) < 0) {
    iob_error_print("cg-throttle", &err);
    cg2_throttle_target_release(&t);
    return 1;
  }
  if (strcmp(cmd, "resolve") == 0) {
    printf("%s %s", cg2_throttle_mech_name(t.mech), t.cgdir ? t.cgdir : "-");
    for (size_t i = 0; i < t.ndev; i++)
      printf(" %u:%u", t.dev[i].major, t.dev[i].minor);
    printf("\n");
  } else if (strcmp(cmd, "set") == 0 && argc == 7) {
    rc = cg2_throttle_set(&t, strtoull(argv[3], NULL, 10), strtoull(argv[4], NULL, 10),
                         strtoull(argv[5], NULL, 10), strtoull(argv[6], NULL, 10), &err);
  } else if (strcmp(cmd, "clear") == 0) {
    rc = cg2_throttle_clear(&t, &err);
  } else if (strcmp(cmd, "get") == 0 && argc == 4) {
    unsigned maj, min;
    struct cg2_throttle_limits l;
    if (sscanf(argv[3], "%u:%u", &maj, &min) != 2) {
      cg2_throttle_target_release(&t);
      return usage();
    }
    rc = cg2_throttle_get(&t, maj, min, &l, &err);
    if (rc == 0)
      printf("%llu %llu %llu %llu\n", (unsigned long long)l.rbps, (unsigned long long)l.wbps,
             (unsigned long long)l.riops, (unsigned long long)l.wiops);
  } else if (strcmp(cmd, "wbytes") == 0 && t.mech != CG2_THROTTLE_NONE) {
    struct cg2_iostat s = {0};
    struct cg2_io_counters sum;
    rc = t.mech == CG2_THROTTLE_V2_IOMAX ? cg2_iostat_read(t.cgdir, &s, &err)
                                        : cg2_blkio_read(t.cgdir, &s, &err);
    if (rc == 0) {
      cg2_iostat_sum(&s, &sum);
      printf("%llu\n", (unsigned long long)sum.wbytes);
    }
    cg2_iostat_release(&s);
  } else {
    cg2_throttle_target_release(&t);
    return usage();
  }
  cg2_throttle_target_release(&t);
  if (rc < 0) {
    iob_error_print("cg-throttle", &err);
    return 1;
  }
  return 0;
}
