// SPDX-License-Identifier: Apache-2.0
/* wcd-probe: sample one cgroup until it empties (or for a fixed time) and
 * print what the detector makes of it, as one JSON line.  Used by the
 * integration tests and the calibration script (bench/calibrate-wcd.sh);
 * not installed. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cgroupv2/cg2.h"
#include "cgroupv2/sample.h"
#include "common/cleanup.h"
#include "common/xalloc.h"
#include "wcd/wcd.h"

#define PROBE_MAX_SAMPLES 100000

struct probe_opts {
  const char *root, *cgdir, *config;
  enum cg2_source source;
  unsigned interval_ms, duration_ms, start_timeout_ms;
  int until_empty;
};

static void sleep_ms(unsigned ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
    ;
}

static int probe(const struct probe_opts *o, const struct wcd_config *cfg, struct iob_error **err) {
  cleanup_free struct cg2_sample *s = xcalloc(PROBE_MAX_SAMPLES, sizeof(*s));
  size_t n = 0;
  int seen_pids = 0;
  unsigned waited = 0;
  /* With --until-empty, wait for the workload to enter the cgroup first. */
  for (;;) {
    cleanup_error struct iob_error *serr = NULL;
    if (cg2_sample_take(o->root, o->cgdir, o->source, &s[n], &serr) < 0) {
      if (seen_pids && serr->errno_ == ENOENT)
        break; /* removed between two samples */
      if (err) {
        iob_error_release(err);
        *err = steal_ptr(&serr);
      }
      return -1;
    }
    cleanup_free pid_t *pids = NULL;
    size_t np = 0;
    cleanup_error struct iob_error *perr = NULL;
    /* A container's cgroup is removed by the runtime once it is empty. */
    if (cg2_procs_read(o->cgdir, &pids, &np, &perr) < 0 && !(seen_pids && perr->errno_ == ENOENT)) {
      if (err) {
        iob_error_release(err);
        *err = steal_ptr(&perr);
      }
      return -1;
    }
    int empty = np == 0;
    if (!empty)
      seen_pids = 1;
    if (o->until_empty && !seen_pids) {
      if (waited >= o->start_timeout_ms)
        return iob_error(err, ETIMEDOUT, "no process entered '%s'", o->cgdir);
      sleep_ms(o->interval_ms);
      waited += o->interval_ms;
      continue;
    }
    /* An empty cgroup's sample is all zeros under procfs: it would read as
     * a reset, so the run ends at the last sample that had pids. */
    if (o->until_empty && empty)
      break;
    n++;
    if (n == PROBE_MAX_SAMPLES)
      break;
    if (!o->until_empty && (s[n - 1].t_ns - s[0].t_ns) / 1000000 >= o->duration_ms)
      break;
    sleep_ms(o->interval_ms);
  }
  struct wcd_result r;
  wcd_classify(cfg, s, n, &r);
  struct cg2_io_counters tot = {0};
  for (size_t i = 1; i < n; i++) {
    struct cg2_io_counters d;
    cg2_counters_delta(&s[i - 1].io, &s[i].io, &d);
    tot.rbytes += d.rbytes;
    tot.wbytes += d.wbytes;
    tot.rios += d.rios;
    tot.wios += d.wios;
  }
  json_error_t jerr;
  json_t *j = json_pack_ex(
      &jerr, 0,
      "{s:s, s:b, s:I, s:f, s:I, s:I, s:I, s:I, s:i, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:b, s:b, "
      "s:b, s:f, s:f, s:f, s:f}",
      "source", cg2_source_name(o->source), "lower_fidelity", o->source == CG2_SOURCE_PROCIO,
      "samples", (json_int_t)n, "seconds", r.m.seconds, "rbytes", (json_int_t)tot.rbytes, "wbytes",
      (json_int_t)tot.wbytes, "rios", (json_int_t)tot.rios, "wios", (json_int_t)tot.wios, "resets",
      r.m.resets, "class", batch_class_name(r.cls), "confidence", r.confidence, "read_share",
      r.m.read_share, "ravg", r.m.ravg, "wavg", r.m.wavg, "stall_some", r.m.stall_some, "wbps",
      r.m.wbps, "rsize_known", r.m.rsize_known, "wsize_known", r.m.wsize_known, "latency",
      r.latency, "riops", r.m.riops, "wiops", r.m.wiops, "rsys", r.m.rsys, "wsys", r.m.wsys);
  /* json_real refuses NaN and infinities: not only out of memory. */
  if (j == NULL)
    return iob_error_code(err, IOB_CODE_INTERNAL, "cannot encode the result: %s", jerr.text);
  char *txt = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(6));
  json_decref(j);
  if (txt == NULL)
    iob_oom();
  printf("%s\n", txt);
  free(txt);
  return 0;
}

int main(int argc, char **argv) {
  static const struct option lo[] = {
      {"root", required_argument, NULL, 'R'},        {"cgdir", required_argument, NULL, 'c'},
      {"source", required_argument, NULL, 's'},      {"interval-ms", required_argument, NULL, 'i'},
      {"duration-ms", required_argument, NULL, 'd'}, {"until-empty", no_argument, NULL, 'u'},
      {"config", required_argument, NULL, 'C'},      {NULL, 0, NULL, 0},
  };
  struct probe_opts o = {.interval_ms = 100,
                         .duration_ms = 2000,
                         .start_timeout_ms = 10000,
                         .source = CG2_SOURCE_PROCIO};
  int c;
  while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
    switch (c) {
    case 'R':
      o.root = optarg;
      break;
    case 'c':
      o.cgdir = optarg;
      break;
    case 's':
      if (strcmp(optarg, "procfs") == 0)
        o.source = CG2_SOURCE_PROCIO;
      else if (strcmp(optarg, "io.stat") == 0)
        o.source = CG2_SOURCE_IOSTAT;
      else if (strcmp(optarg, "blkio-v1") == 0)
        o.source = CG2_SOURCE_BLKIO_V1;
      else {
        fprintf(stderr, "wcd-probe: invalid source '%s' (procfs, io.stat or blkio-v1)\n", optarg);
        return 2;
      }
      break;
    case 'i':
      o.interval_ms = (unsigned)strtoul(optarg, NULL, 10);
      break;
    case 'd':
      o.duration_ms = (unsigned)strtoul(optarg, NULL, 10);
      break;
    case 'u':
      o.until_empty = 1;
      break;
    case 'C':
      o.config = optarg;
      break;
    default:
      fprintf(stderr,
              "usage: wcd-probe --cgdir DIR [--source procfs|io.stat|blkio-v1] [--interval-ms N] "
              "[--duration-ms N | --until-empty] [--config FILE] [--root DIR]\n");
      return 2;
    }
  }
  if (o.cgdir == NULL || o.interval_ms == 0) {
    fprintf(stderr, "wcd-probe: --cgdir and a non-zero --interval-ms are required\n");
    return 2;
  }
  struct wcd_config cfg;
  wcd_config_default(&cfg);
  cleanup_error struct iob_error *err = NULL;
  if ((o.config && wcd_config_load(o.config, &cfg, &err) < 0) || probe(&o, &cfg, &err) < 0) {
    iob_error_print("wcd-probe", &err);
    return 1;
  }
  return 0;
}
