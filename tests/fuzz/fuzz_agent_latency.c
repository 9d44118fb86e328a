// SPDX-License-Identifier: Apache-2.0
/* libFuzzer: the latency window arithmetic (agent/sample/lathist.c) on what it is
 * given each sample.  First byte (mod 2):
 *   0  two histograms (the rest split in half, 8 bytes a bucket): the
 *      window must count what it says and keep p50 <= p99;
 *   1  two io.pressure texts separated by a NUL, through the real parser
 *      (cg2_pressure_parse) into the io.pressure approximation. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "agent/sample/lathist.h"
#include "cgroupv2/pressure.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void histograms(const uint8_t *d, size_t n) {
  uint64_t a[AGENT_LATHIST_BUCKETS] = {0}, b[AGENT_LATHIST_BUCKETS] = {0};
  size_t half = n / 2;
  memcpy(a, d, half < sizeof(a) ? half : sizeof(a));
  memcpy(b, d + half, n - half < sizeof(b) ? n - half : sizeof(b));
  /* keep the totals from wrapping: a window holds at most 2^48 requests */
  for (size_t i = 0; i < AGENT_LATHIST_BUCKETS; i++) {
    a[i] >>= 16;
    b[i] >>= 16;
  }
  struct agent_lathist_window w;
  agent_lathist_window(b, a, AGENT_LATHIST_BUCKETS, &w);
  if (w.count == 0 && (w.p50_us != 0 || w.p99_us != 0))
    __builtin_trap();
  if (w.p50_us > w.p99_us || w.p50_us < 0)
    __builtin_trap();
}

static void pressure(const uint8_t *d, size_t n) {
  const uint8_t *nul = memchr(d, 0, n);
  if (nul == NULL)
    return;
  struct cg2_pressure a, b;
  struct iob_error *err = NULL;
  if (cg2_pressure_parse((const char *)d, (size_t)(nul - d), &a, &err) < 0 ||
      cg2_pressure_parse((const char *)nul + 1, n - (size_t)(nul - d) - 1, &b, &err) < 0) {
    iob_error_release(&err);
    return;
  }
  struct agent_lathist_window w;
  double stall = -1;
  if (agent_lathist_pressure_window(a.some.total, b.some.total, a.full.total, 1000000000u, &w,
                                &stall) == 0 &&
      (stall < 0 || stall > 1 || w.p50_us != w.p99_us))
    __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  if (data[0] % 2 == 0)
    histograms(data + 1, size - 1);
  else
    pressure(data + 1, size - 1);
  return 0;
}
