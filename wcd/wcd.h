// SPDX-License-Identifier: Apache-2.0
/* Workload character detector: turns a window of I/O samples of one cgroup
 * into a character bin (the "WCD" of Bhimani et al.) with a confidence.
 *
 * The signals are what counters can give (docs/reference/cgroup-v2-io.md §2):
 * the read/write share of bytes, and per direction the average request size
 * (bytes / ios) as the sequential/random signal.  Large requests are
 * sequential streams (or merged ones); small ones are random.  Sequential
 * 4 KiB O_DIRECT therefore looks random: counters cannot tell them apart. */
#ifndef IOB_WCD_H
#define IOB_WCD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "batcher/class.h"
#include "cgroupv2/sample.h"
#include "common/error.h"

struct wcd_config {
  double idle_bytes_per_s; /* below this (both directions) and ... */
  double idle_max_stall;   /* ... a PSI "some" stall share below this %, idle */
  double dir_share;        /* share of bytes one direction needs (0.5, 1] */
  uint64_t rand_max_bytes; /* avg request <= this: random */
  uint64_t seq_min_bytes;  /* avg request >= this: sequential */
  uint64_t min_window_ms;  /* shorter windows classify as unknown */
  double fallback_factor;  /* confidence multiplier for the procfs source */
  /* Latency-sensitive: small requests (average <= lat_max_req both ways)
   * at a modest rate (<= lat_max_iops requests/s and <= lat_max_bps):
   * a workload that waits on each request (synchronous, queue depth
   * near 1) rather than streaming.  With the procfs source the size is
   * the syscalls' (rsys/wsys), provided the block bytes are within
   * WCD_FOLIO_SLACK times what the syscalls moved (wcd.c). */
  uint64_t lat_max_req;
  double lat_max_iops;
  double lat_max_bps;
};

void wcd_config_default(struct wcd_config *cfg);
/* "key = value" lines, '#' comments.  Keys are the field names above; byte
 * sizes accept k/m/g (KiB/MiB/GiB) suffixes.  Errors name NAME and the line. */
int wcd_config_parse(const char *text, size_t len, const char *name, struct wcd_config *cfg,
                     struct iob_error **err);
int wcd_config_load(const char *path, struct wcd_config *cfg, struct iob_error **err);

struct wcd_metrics {
  double seconds;
  double read_share;            /* rbytes / (rbytes + wbytes), 0 when no bytes */
  double rbps, wbps;            /* bytes per second */
  double riops, wiops;          /* requests (or syscalls, procfs) per second */
  double ravg, wavg;            /* average request size, bytes; 0 when no requests */
  double stall_some;            /* % of the window with some task stalled on I/O, -1 unknown */
  int resets;                   /* counter restarts seen inside the window */
  int rsize_known, wsize_known; /* 0: the request count cannot be trusted */
  double rsys, wsys;            /* procfs: bytes per read/write syscall (rchar/syscr,
                                   wchar/syscw), what the application asked for; 0 otherwise */
};

struct wcd_result {
  enum batch_class cls; /* never BATCH_LATENCY but when declared (wcd_resolve) */
  double confidence;    /* 0..1 */
  bool latency;         /* looks latency-sensitive (see wcd_config) */
  struct wcd_metrics m;
};

/* Classify samples S[0..N) (oldest first, same cgroup, same source). */
void wcd_classify(const struct wcd_config *cfg, const struct cg2_sample *s, size_t n,
                  struct wcd_result *out);

/* A declared class (annotation io.iobatch.class, NULL when absent) wins over
 * detection: OUT gets it with confidence 1 and the window's metrics.  An
 * unknown name, or "unknown", is an EINVAL error naming the annotation. */
int wcd_resolve(const struct wcd_config *cfg, const char *declared, const struct cg2_sample *s,
                size_t n, struct wcd_result *out, struct iob_error **err);

/* The profile key of a workload: annotation io.iobatch.workload, else the CRI
 * image name (io.kubernetes.cri.image-name), else the command line ARGV
 * joined by spaces (at most WCD_KEY_MAX bytes).  Any argument may be NULL;
 * ENOENT-coded error when none gives a key. */
#define WCD_KEY_MAX 1024
int wcd_workload_key(const char *workload, const char *image, const char *const *argv, size_t argc,
                     char **out, struct iob_error **err);

#endif
