// SPDX-License-Identifier: Apache-2.0
/* iobatchd's metrics: the counters the daemon keeps, the gauges a scrape
 * takes, and their text in the Prometheus exposition format 0.0.4
 * ("text/plain; version=0.0.4"):
 * https://prometheus.io/docs/instrumenting/exposition_formats/
 * agent/serve/metrics_server.h serves it (config key `metrics`). */
#ifndef IOB_AGENT_METRICS_H
#define IOB_AGENT_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "batcher/batcher.h"
#include "common/error.h"

/* Why a container got admitted (label `reason`): the batcher's admit
 * reasons, "already_running" for one registered as running (an agent
 * restart) and "sandbox" for a pod sandbox (never held). */
enum agent_metrics_reason {
  AGENT_REASON_NOTHING_RUNNING = 0,
  AGENT_REASON_NO_CONFLICT,
  AGENT_REASON_PAYS,
  AGENT_REASON_PLAN,
  AGENT_REASON_FORCED_DEADLINE,
  AGENT_REASON_ALREADY_RUNNING,
  AGENT_REASON_PROBE,
  AGENT_REASON_SERVICE,
  AGENT_REASON_NO_ESTIMATE,
  AGENT_REASON_WAIT_BOUND,
  AGENT_REASON_CROWD,
  AGENT_REASON_SANDBOX,
  AGENT_REASON_N
};

enum agent_metrics_weight {
  AGENT_WEIGHT_WRITTEN = 0,
  AGENT_WEIGHT_NOT_ENFORCED,
  AGENT_WEIGHT_ERROR,
  AGENT_WEIGHT_N
};

#define AGENT_METRICS_WAIT_BUCKETS 9 /* 0.01 0.1 0.5 1 5 10 30 60 300 s, then +Inf */
/* 0.1 0.25 0.5 1 2.5 5 10 25 50 100 250 500 1000 ms, then +Inf: a plan
 * takes well under a millisecond for a few containers and a few hundred
 * for a thousand (README, Solver). */
#define AGENT_METRICS_PLAN_BUCKETS 13

/* Counters since the daemon started. */
struct agent_metrics {
  uint64_t admissions[AGENT_REASON_N];
  uint64_t cancellations, registrations;
  /* Register / Admit calls refused (invalid input: say, a workload key
   * that is not UTF-8): the shim or hook that sent them fails open and
   * starts the container unplanned.  Counted here, where the refusal is
   * seen; a caller that cannot reach the agent at all is not counted
   * (the shim's and hook's logs say so). */
  uint64_t refused_register, refused_admit;
  uint64_t wait_bucket[AGENT_METRICS_WAIT_BUCKETS]; /* per bucket, not cumulative */
  uint64_t wait_count, wait_sum_ms;
  uint64_t weight_writes[AGENT_WEIGHT_N];
  uint64_t plan_bucket[AGENT_METRICS_PLAN_BUCKETS]; /* per bucket, not cumulative */
  uint64_t plan_count, plan_sum_ns;
  /* Sampling windows: idle ones found no container registered or under
   * the kubelet's tree and did nothing else (no sampler pass, no plan). */
  uint64_t windows_idle, windows_full;
};

/* Count the admission of c (struct agent_ctr, agent/plan/admission.h: its
 * reason, whether it was forced at its deadline, its kind); waited_ms the
 * time it was pending, observed for every container that could have been
 * held (not one registered running, not a sandbox). */
struct agent_ctr;
struct agent_protection;
struct agent_headroom;
struct agent_io_total;
void agent_metrics_admitted(struct agent_metrics *m, const struct agent_ctr *c, uint64_t waited_ms);

/* A batcher run took ns nanoseconds (agent_metrics_now_ns before and after
 * agent_adm_tick when it planned). */
void agent_metrics_planned(struct agent_metrics *m, uint64_t ns);
uint64_t agent_metrics_now_ns(void); /* CLOCK_MONOTONIC */

/* What the gauges show, taken when a scrape comes. */
struct agent_metrics_view {
  uint64_t pending[BATCH_NCLASS], running[BATCH_NCLASS];
  uint64_t pending_oldest_ms; /* how long the oldest pending one has waited, 0: none */
  const char *policy, *matrix, *sampler;
  /* Per-container block I/O latency: where it comes from ("bpf",
   * "pressure", "off"; NULL: not rendered), and the containers whose
   * histograms (agent_ctr.lat.hist) are shown unless it is "off". */
  const char *latency_source;
  const struct agent_ctr *list;
  uint64_t now_ms; /* the scrape's time: how long pending containers have been held */
  /* Protection (agent/protect/protection.h: its view, each batch job's debt) and
   * the node's I/O headroom (agent/sample/headroom.h); NULL: not rendered. */
  const struct agent_protection *prot;
  const struct agent_headroom *headroom;
  /* The node's I/O counters (agent_sampler.node_io); NULL: not rendered. */
  const struct agent_io_total *node_io;
  /* The agent's open file descriptors and its soft RLIMIT_NOFILE
   * (agent/serve/fdlimit.h); fd_limit 0: not rendered. */
  uint64_t open_fds, fd_limit;
  /* The sampler's passes, the containers they sampled and the io.pressure
   * files read beside (agent_sampler round, samples, pressure_reads). */
  uint64_t sampler_passes, sampler_samples, sampler_pressure_reads;
};

/* Count the containers of the admission list into *v at now_ms (and
 * keep both for the per-container series). */
void agent_metrics_view_count(struct agent_metrics_view *v, const struct agent_ctr *list,
                              uint64_t now_ms);

/* A label value as the text format 0.0.4 wants it: backslash, double
 * quote and line feed escaped, and (label values must be UTF-8) every byte
 * that does not start a valid UTF-8 sequence written as U+FFFD: tenant
 * strings never break the format. */
void agent_metrics_put_label(FILE *f, const char *s);

/* The exposition text into a malloc'ed *out; returns 0 (out of memory
 * aborts, common/xalloc.h). */
int agent_metrics_render(const struct agent_metrics *m, const struct agent_metrics_view *v,
                         char **out, size_t *len, struct iob_error **err);

#endif
