// SPDX-License-Identifier: Apache-2.0
/* Keeping the daemon's resident set small.  Most of a C shim's RSS is not
 * its own memory but pages of libc and of its own text that the kernel
 * mapped in bulk (fault-around maps up to 64 KiB around every page fault)
 * while `start`, runc calls and JSON parsing ran.  Once a burst of work is
 * over, the executable mappings are dropped from the page tables: the pages
 * stay in the page cache, and the few the idle loop needs come back on the
 * next fault.  Only read-only file mappings without a single private page
 * are touched (text, rodata, symbol tables): nothing can be lost, whereas
 * writable and RELRO mappings hold private data. */
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/cleanup.h"
#include "shim/trim.h"

#define TRIM_DELAY_MS 1000

static struct iob_timer *pending;

#define MAX_RANGES 64

/* madvise without going through libc: after libc's text is dropped, every
 * libc function called would fault its 64 KiB neighbourhood back in. */
static void zap(unsigned long start, unsigned long len) {
#if defined(__x86_64__)
  long ret;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "0"(28L /* SYS_madvise */), "D"(start), "S"(len), "d"((long)MADV_DONTNEED)
                   : "rcx", "r11", "memory");
  (void)ret;
#else
  madvise((void *)start, len, MADV_DONTNEED);
#endif
}

/* The read-only file mappings without private (relocated, COW) pages:
 * text, rodata, symbol tables.  Their pages are the page cache's. */
static size_t clean_ranges(unsigned long ranges[][2], size_t max) {
  cleanup_file FILE *f = fopen("/proc/self/smaps", "re");
  char line[512];
  unsigned long start = 0, end = 0;
  bool cand = false;
  size_t n = 0;
  while (f && n < max && fgets(line, sizeof(line), f)) {
    unsigned long s, e;
    char perms[8];
    int path = 0;
    if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %n", &s, &e, perms, &path) >= 3 && path > 0) {
      start = s;
      end = e;
      cand = line[path] == '/' && (!strcmp(perms, "r-xp") || !strcmp(perms, "r--p"));
      continue;
    }
    unsigned long anon;
    if (cand && sscanf(line, "Anonymous: %lu kB", &anon) == 1) {
      if (anon == 0) {
        ranges[n][0] = start;
        ranges[n][1] = end - start;
        n++;
      }
      cand = false;
    }
  }
  return n;
}

void shim_trim_now(void) {
  unsigned long ranges[MAX_RANGES][2];
  malloc_trim(0);
  size_t n = clean_ranges(ranges, MAX_RANGES);
  for (size_t i = 0; i < n; i++)
    zap(ranges[i][0], ranges[i][1]);
}

static void on_timer(struct iob_loop *loop, void *data) {
  (void)loop;
  (void)data;
  pending = NULL;
  shim_trim_now();
}

/* IOBATCH_SHIM_NO_TRIM=1 in the shim's environment (containerd's) turns
 * trimming off, so that bench/shim-cost.sh can measure what it buys. */
static bool trim_disabled(void) {
  static int off = -1;
  if (off < 0) {
    const char *v = getenv("IOBATCH_SHIM_NO_TRIM");
    off = v != NULL && *v != '\0' && strcmp(v, "0") != 0;
  }
  return off;
}

void shim_trim_later(struct iob_loop *loop) {
  if (trim_disabled())
    return;
  if (pending)
    iob_timer_cancel(loop, pending);
  pending = iob_loop_timer(loop, TRIM_DELAY_MS, on_timer, NULL);
}
