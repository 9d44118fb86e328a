// SPDX-License-Identifier: Apache-2.0
#include "wcd/wcd.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/xalloc.h"

static uint64_t delta_or_restart(uint64_t prev, uint64_t cur) {
  return cur >= prev ? cur - prev : cur;
}

static void window_metrics(const struct cg2_sample *s, size_t n, struct wcd_metrics *m) {
  struct cg2_io_counters tot = {0};
  uint64_t rchar = 0, wchar = 0;
  memset(m, 0, sizeof(*m));
  m->stall_some = -1;
  /* Sum consecutive deltas rather than last - first, so a restart in the
   * middle (procfs: a process exited) loses only its own interval. */
  for (size_t i = 1; i < n; i++) {
    struct cg2_io_counters d;
    m->resets += cg2_counters_delta(&s[i - 1].io, &s[i].io, &d);
    tot.rbytes += d.rbytes;
    tot.wbytes += d.wbytes;
    tot.rios += d.rios;
    tot.wios += d.wios;
    rchar += delta_or_restart(s[i - 1].rchar, s[i].rchar);
    wchar += delta_or_restart(s[i - 1].wchar, s[i].wchar);
  }
  m->rsize_known = m->wsize_known = 1;
  /* procfs: rios/wios are read/write syscalls.  If the block layer saw
   * clearly more bytes than those syscalls moved, the I/O went another way
   * (io_submit, io_uring, mmap faults) and bytes/syscalls is no request
   * size: calibration saw a 4 KiB libaio random reader come out as 5 MiB
   * "requests". */
  if (s[0].source == CG2_SOURCE_PROCIO) {
    m->rsize_known = tot.rbytes <= 2 * rchar + 65536;
    m->wsize_known = tot.wbytes <= 2 * wchar + 65536;
  }
  m->seconds = (double)(s[n - 1].t_ns - s[0].t_ns) / 1e9;
  double rb = (double)tot.rbytes, wb = (double)tot.wbytes;
  m->read_share = rb + wb > 0 ? rb / (rb + wb) : 0;
  m->rbps = rb / m->seconds;
  m->wbps = wb / m->seconds;
  m->riops = (double)tot.rios / m->seconds;
  m->wiops = (double)tot.wios / m->seconds;
  m->ravg = tot.rios ? rb / (double)tot.rios : 0;
  m->wavg = tot.wios ? wb / (double)tot.wios : 0;
  if (s[0].source == CG2_SOURCE_PROCIO) {
    m->rsys = tot.rios ? (double)rchar / (double)tot.rios : 0;
    m->wsys = tot.wios ? (double)wchar / (double)tot.wios : 0;
  }
  if (s[0].has_pressure && s[n - 1].has_pressure &&
      s[n - 1].pressure.some.total >= s[0].pressure.some.total)
    m->stall_some = (double)(s[n - 1].pressure.some.total - s[0].pressure.some.total) /
                    (m->seconds * 1e6) * 100.0;
}

/* Random vs sequential from the average request size.  Between the two
 * thresholds the decision goes to the nearer one on a log scale, with a
 * confidence that falls to 0.5 at the geometric midpoint. */
static int is_sequential(const struct wcd_config *cfg, double avg, double *conf) {
  if (avg <= (double)cfg->rand_max_bytes) {
    *conf = 1.0;
    return 0;
  }
  if (avg >= (double)cfg->seq_min_bytes) {
    *conf = 1.0;
    return 1;
  }
  double x = (log(avg) - log((double)cfg->rand_max_bytes)) /
             (log((double)cfg->seq_min_bytes) - log((double)cfg->rand_max_bytes));
  *conf = 0.5 + fabs(x - 0.5);
  return x >= 0.5;
}

/* procfs: how many times what the syscalls moved the block bytes may be
 * and still be theirs.  A buffered write is counted in write_bytes when it
 * dirties a page cache folio, for the whole folio: with large folios (ext4
 * since Linux 6.16) 8 KiB written into a cached file counted 64 KiB, and
 * PostgreSQL's 8 KiB writes about 80 KiB (CALIBRATION.md, trap 9).  Async
 * I/O, whose bytes come with no syscalls at all (trap 2), is hundreds of
 * times beyond this. */
#define WCD_FOLIO_SLACK 16.0

/* Is one direction's request small, for the latency test?  Block bytes per
 * request where the count is of requests; with procfs, the syscalls' own
 * size, when the block bytes can be theirs. */
static bool lat_small(const struct wcd_config *cfg, bool procfs, double iops, double avg, int known,
                      double sys) {
  if (iops == 0)
    return true;
  if (!procfs)
    return known && avg <= (double)cfg->lat_max_req;
  return sys > 0 && sys <= (double)cfg->lat_max_req && avg <= WCD_FOLIO_SLACK * sys;
}

void wcd_classify(const struct wcd_config *cfg, const struct cg2_sample *s, size_t n,
                  struct wcd_result *out) {
  memset(out, 0, sizeof(*out));
  out->cls = BATCH_UNKNOWN;
  out->m.stall_some = -1;
  if (n < 2)
    return;
  for (size_t i = 1; i < n; i++)
    if (s[i].source != s[0].source || s[i].t_ns <= s[i - 1].t_ns)
      return; /* mixed sources or clocks out of order: nothing to trust */
  if ((s[n - 1].t_ns - s[0].t_ns) / 1000000 < cfg->min_window_ms)
    return;
  struct wcd_metrics *m = &out->m;
  window_metrics(s, n, m);
  double src = s[0].source == CG2_SOURCE_PROCIO ? cfg->fallback_factor : 1.0;
  double bps = m->rbps + m->wbps;
  /* A starved container moves few bytes but is not idle: PSI shows it
   * waiting. */
  if (bps < cfg->idle_bytes_per_s && (m->stall_some < 0 || m->stall_some < cfg->idle_max_stall)) {
    out->cls = BATCH_IDLE;
    out->confidence = src * (1.0 - 0.5 * bps / cfg->idle_bytes_per_s);
    return;
  }
  /* Small requests at a modest rate: a workload that waits on each one. */
  bool procfs = s[0].source == CG2_SOURCE_PROCIO;
  bool small = lat_small(cfg, procfs, m->riops, m->ravg, m->rsize_known, m->rsys) &&
               lat_small(cfg, procfs, m->wiops, m->wavg, m->wsize_known, m->wsys);
  out->latency = small && m->riops + m->wiops > 0 && m->riops + m->wiops <= cfg->lat_max_iops &&
                 bps <= cfg->lat_max_bps;
  double share = m->read_share, conf_dir, conf_size;
  if (share >= cfg->dir_share || share <= 1.0 - cfg->dir_share) {
    int reads = share >= cfg->dir_share;
    double strength = reads ? share : 1.0 - share;
    conf_dir = cfg->dir_share >= 1.0
                   ? 1.0
                   : 0.5 + 0.5 * (strength - cfg->dir_share) / (1.0 - cfg->dir_share);
    /* Bytes without requests: the procfs source with an async engine
     * (io_submit and io_uring do not count as syscr/syscw).  The size
     * signal is missing, and guessing would call everything random. */
    if ((reads ? m->riops : m->wiops) == 0 || !(reads ? m->rsize_known : m->wsize_known))
      return;
    int seq = is_sequential(cfg, reads ? m->ravg : m->wavg, &conf_size);
    out->cls = reads ? (seq ? BATCH_SEQ_READ : BATCH_RAND_READ)
                     : (seq ? BATCH_SEQ_WRITE : BATCH_RAND_WRITE);
  } else {
    out->cls = BATCH_MIXED;
    conf_dir = 1.0 - 0.5 * fabs(share - 0.5) / (cfg->dir_share - 0.5);
    conf_size = 1.0;
  }
  out->confidence = src * conf_dir * conf_size;
}

int wcd_resolve(const struct wcd_config *cfg, const char *declared, const struct cg2_sample *s,
                size_t n, struct wcd_result *out, struct iob_error **err) {
  enum batch_class c = BATCH_UNKNOWN;
  if (declared && (batch_class_parse(declared, &c) < 0 || c == BATCH_UNKNOWN))
    return iob_error_code(
        err, IOB_CODE_INVALID_ARGUMENT,
        "invalid annotation 'io.iobatch.class': '%.64s' (want seq-read, rand-read, "
        "seq-write, rand-write, mixed, idle or latency)",
        declared);
  wcd_classify(cfg, s, n, out);
  if (declared) {
    out->cls = c;
    out->confidence = 1.0;
    out->latency = c == BATCH_LATENCY;
  }
  return 0;
}

int wcd_workload_key(const char *workload, const char *image, const char *const *argv, size_t argc,
                     char **out, struct iob_error **err) {
  const char *pick = workload && *workload ? workload : image && *image ? image : NULL;
  if (pick) {
    size_t l = strnlen(pick, WCD_KEY_MAX + 1);
    if (l > WCD_KEY_MAX)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "workload key '%.32s...' longer than %d bytes", pick, WCD_KEY_MAX);
    *out = xstrdup(pick);
    return 0;
  }
  char buf[WCD_KEY_MAX + 1];
  size_t o = 0;
  for (size_t i = 0; argv && i < argc && argv[i]; i++) {
    size_t l = strlen(argv[i]);
    if (o && o < WCD_KEY_MAX)
      buf[o++] = ' ';
    /* A long command line is cut, not refused: the key only has to be
     * stable from one run of the same workload to the next.  It is cut
     * before a character, never inside one: the agent refuses a key that
     * is not UTF-8 (a protobuf string must be), and a refused Register
     * leaves the container unplanned.  config.json is JSON, so
     * its args are UTF-8: a continuation byte at the cut means the cut is
     * inside a character. */
    bool cut = l > WCD_KEY_MAX - o;
    if (cut) {
      l = WCD_KEY_MAX - o;
      while (l > 0 && ((unsigned char)argv[i][l] & 0xc0) == 0x80)
        l--;
    }
    memcpy(buf + o, argv[i], l);
    o += l;
    if (cut)
      break;
  }
  if (o == 0)
    return iob_error_code(err, IOB_CODE_NOT_FOUND, "no workload key: no annotation and no args");
  buf[o] = '\0';
  *out = xstrdup(buf);
  return 0;
}
