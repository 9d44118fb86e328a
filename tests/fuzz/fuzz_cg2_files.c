// SPDX-License-Identifier: Apache-2.0
/* libFuzzer: the cgroup and procfs files read outside io.stat/io.pressure:
 * /proc/self/mountinfo (cgroup2 and v1 mounts), /proc/PID/cgroup (v2 and
 * v1 lines), cgroup.procs, /proc/PID/io, io.weight and io.bfq.weight, the
 * strict number parser and cpu.weight / cpu.shares values, a block queue's
 * scheduler file and io.cost.qos.  The first byte picks the parser; the rest
 * is the file.  File readers go through a private temporary tree (ROOT). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cgroupv2/cg2.h"
#include "cgroupv2/cpu.h"
#include "cgroupv2/procio.h"
#include "cgroupv2/weight.h"
#include "common/cleanup.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  uint8_t which = data[0] % 10;
  const char *text = (const char *)data + 1;
  size_t len = size - 1;
  cleanup_error struct iob_error *err = NULL;
  const char *root = fuzz_tree();
  switch (which) {
  case 0: { /* cgroup2 mount */
    fuzz_tree_write("/proc/self/mountinfo", data + 1, len);
    struct cg2_mount m;
    if (cg2_mount_find(root, &m, &err) == 0)
      cg2_mount_release(&m);
    break;
  }
  case 1: { /* v1 hierarchy of a controller */
    fuzz_tree_write("/proc/self/mountinfo", data + 1, len);
    char *out = NULL;
    if (cg2_v1_mount_find(root, "blkio", &out, &err) == 0)
      free(out);
    break;
  }
  case 2: { /* the "0::" line */
    fuzz_tree_write("/proc/42/cgroup", data + 1, len);
    char *out = NULL;
    if (cg2_pid_cgroup(root, 42, &out, &err) == 0)
      free(out);
    break;
  }
  case 3: { /* the v1 line of a controller */
    fuzz_tree_write("/proc/42/cgroup", data + 1, len);
    char *out = NULL;
    if (cg2_pid_cgroup_v1(root, 42, "name=systemd", &out, &err) == 0)
      free(out);
    break;
  }
  case 4: {
    fuzz_tree_write("/cg/cgroup.procs", data + 1, len);
    char cgdir[4200];
    snprintf(cgdir, sizeof(cgdir), "%s/cg", root);
    pid_t *pids = NULL;
    size_t n = 0;
    if (cg2_procs_read(cgdir, &pids, &n, &err) == 0)
      free(pids);
    break;
  }
  case 5: {
    struct cg2_procio io;
    cg2_procio_parse(text, len, &io, &err);
    break;
  }
  case 6: {
    struct cg2_weight w;
    enum cg2_weight_kind kind = len > 0 && (text[0] & 1) ? CG2_BFQ_WEIGHT : CG2_IO_WEIGHT;
    if (cg2_weight_parse(kind, text, len, &w, &err) == 0) {
      cg2_weight_for(&w, 8, 0);
      cg2_weight_release(&w);
    }
    break;
  }
  case 7: {
    uint64_t v;
    cg2_parse_u64(text, len, &v);
    /* and a cpu.weight / cpu.shares value */
    cleanup_error struct iob_error *e1 = NULL, *e2 = NULL;
    cg2_cpu_parse(CG2_CPU_V2_WEIGHT, "cpu.weight", text, len, &v, &e1);
    cg2_cpu_parse(CG2_CPU_V1_SHARES, "cpu.shares", text, len, &v, &e2);
    break;
  }
  case 8: { /* /sys/block/DEV/queue/scheduler, read NUL-terminated */
    cleanup_free char *s = malloc(len + 1);
    if (s == NULL)
      abort();
    memcpy(s, text, len);
    s[len] = '\0';
    char name[32];
    if (cg2_scheduler_active(s, name, sizeof(name)) == 0 && strlen(name) >= sizeof(name))
      __builtin_trap();
    break;
  }
  case 9:
    cg2_iocost_enabled(text, len, 8, 0);
    break;
  }
  return 0;
}
