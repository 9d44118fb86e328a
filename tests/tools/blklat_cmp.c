// SPDX-License-Identifier: Apache-2.0
/* Bytes and requests per cgroup from io.stat and from the agent's BPF
 * program (agent/sample/bpf/blklat.bpf.c, loaded through agent/sample/latency.h as the
 * agent loads it), read together once per window, for
 * bench/sampler-v2.sh: does the BPF map count what io.stat does?
 *
 *   blklat-cmp PERIOD_MS WINDOWS DIR...
 *
 * Makes each cgroup DIR's entry in the program's map (counting starts
 * then), and every PERIOD_MS, WINDOWS times (0: until SIGTERM or SIGINT),
 * prints one JSON line per DIR that still exists:
 *   {"w":N,"dir":"DIR","iostat":[rbytes,wbytes,rios,wios],"bpf":[...]}
 * io.stat's counters since the cgroup was made (summed over devices), the
 * map's since its entry was: run it on fresh cgroups, before their I/O.
 * Exits 1 when the program does not load (needs root and kernel BTF). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "agent/sample/latency.h"
#include "cgroupv2/sample.h"
#include "common/cleanup.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig) {
  (void)sig;
  stop = 1;
}

static void add_ns(struct timespec *t, long ns) {
  t->tv_nsec += ns % 1000000000L;
  t->tv_sec += ns / 1000000000L + t->tv_nsec / 1000000000L;
  t->tv_nsec %= 1000000000L;
}

/* One DIR's line of window w; false when it is gone. */
static bool report(struct agent_latency *l, unsigned w, const char *dir, uint64_t cgid) {
  cleanup_error struct iob_error *err = NULL;
  struct cg2_sample smp;
  if (cg2_sample_take(NULL, dir, CG2_SOURCE_IOSTAT, &smp, &err) < 0) {
    if (err->errno_ != ENOENT)
      fprintf(stderr, "blklat-cmp: %s\n", err->msg);
    return false;
  }
  struct blklat_val v;
  if (agent_latency_read(l, cgid, &v, &err) < 0) {
    fprintf(stderr, "blklat-cmp: %s\n", err->msg);
    return false;
  }
  printf("{\"w\":%u,\"dir\":\"%s\",\"iostat\":[%llu,%llu,%llu,%llu],"
         "\"bpf\":[%llu,%llu,%llu,%llu]}\n",
         w, dir, (unsigned long long)smp.io.rbytes, (unsigned long long)smp.io.wbytes,
         (unsigned long long)smp.io.rios, (unsigned long long)smp.io.wios,
         (unsigned long long)v.rbytes, (unsigned long long)v.wbytes, (unsigned long long)v.rios,
         (unsigned long long)v.wios);
  return true;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: blklat-cmp PERIOD_MS WINDOWS DIR...\n");
    return 2;
  }
  long period_ms = strtol(argv[1], NULL, 10);
  long windows = strtol(argv[2], NULL, 10);
  if (period_ms <= 0 || windows < 0) {
    fprintf(stderr, "blklat-cmp: bad PERIOD_MS or WINDOWS\n");
    return 2;
  }
  int n = argc - 3;
  char **dirs = argv + 3;
  cleanup_free uint64_t *ids = calloc((size_t)n, sizeof(*ids));
  if (ids == NULL)
    return 1;
  struct agent_latency l;
  cleanup_error struct iob_error *err = NULL;
  if (agent_latency_open(&l, AGENT_LATHIST_BPF, false, &err) < 0) {
    fprintf(stderr, "blklat-cmp: %s\n", err->msg);
    return 1;
  }
  struct blklat_val v;
  for (int i = 0; i < n; i++) {
    struct stat sb;
    if (stat(dirs[i], &sb) < 0 || agent_latency_read(&l, (uint64_t)sb.st_ino, &v, &err) < 0) {
      fprintf(stderr, "blklat-cmp: '%s': %s\n", dirs[i], err ? err->msg : strerror(errno));
      agent_latency_close(&l);
      return 1;
    }
    ids[i] = (uint64_t)sb.st_ino;
  }
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);
  setvbuf(stdout, NULL, _IOLBF, 0);
  struct timespec next;
  clock_gettime(CLOCK_MONOTONIC, &next);
  for (unsigned w = 0; !stop && (windows == 0 || w <= (unsigned long)windows); w++) {
    int alive = 0;
    for (int i = 0; i < n; i++)
      alive += report(&l, w, dirs[i], ids[i]);
    if (alive == 0)
      break;
    add_ns(&next, period_ms * 1000000L);
    while (!stop && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
      ;
  }
  agent_latency_close(&l);
  return 0;
}
