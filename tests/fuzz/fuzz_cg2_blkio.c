// SPDX-License-Identifier: Apache-2.0
/* libFuzzer: the cgroup v1 blkio and throttle parsers.  The first byte
 * (modulo 4) picks: 0 blkio.throttle.io_service_bytes / io_serviced
 * (cg2_blkio_parse), 1 io.max (cg2_throttle_parse_iomax), 2 one
 * blkio.throttle.*_device file (cg2_throttle_parse_v1), 3 a container's
 * /proc/PID/mountinfo and the host's /proc/self/mountinfo as
 * cg2_throttle_target_resolve reads them for the disk under its root (and
 * its bundle's rootfs), through a private temporary tree; the rest is the
 * file's text. */
#include <stddef.h>
#include <stdint.h>

#include "cgroupv2/blkio.h"
#include "cgroupv2/throttle.h"
#include "tests/fuzz/fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  struct iob_error *err = NULL;
  const char *text = (const char *)data + 1;
  size_t len = size - 1;
  switch (data[0] % 4) {
  case 0: {
    struct cg2_blkio b;
    if (cg2_blkio_parse(text, len, &b, &err) == 0) {
      if (b.n > CG2_IOSTAT_MAX_DEVS)
        __builtin_trap();
      for (size_t i = 0; i + 1 < b.n; i++)
        for (size_t j = i + 1; j < b.n && j < i + 8; j++)
          if (b.dev[i].major == b.dev[j].major && b.dev[i].minor == b.dev[j].minor)
            __builtin_trap(); /* duplicates are refused */
      cg2_blkio_release(&b);
    }
    break;
  }
  case 1: {
    struct cg2_throttle_limits l;
    (void)cg2_throttle_parse_iomax(text, len, 8, 0, &l, &err);
    iob_error_release(&err);
    (void)cg2_throttle_parse_iomax(text, len, 254, 0, &l, &err);
    break;
  }
  case 3: {
    fuzz_tree_write("/proc/42/mountinfo", data + 1, len);
    fuzz_tree_write("/proc/self/mountinfo", data + 1, len);
    struct cg2_throttle_target t;
    if (cg2_throttle_target_resolve(fuzz_tree(), 42, "/bundle", &t, &err) == 0 &&
        t.ndev > CG2_THROTTLE_MAX_DEVS)
      __builtin_trap();
    cg2_throttle_target_release(&t);
    break;
  }
  default: {
    uint64_t v;
    (void)cg2_throttle_parse_v1(text, len, 8, 0, &v, &err);
    iob_error_release(&err);
    (void)cg2_throttle_parse_v1(text, len, 254, 0, &v, &err);
    break;
  }
  }
  iob_error_release(&err);
  return 0;
}
