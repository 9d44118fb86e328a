// SPDX-License-Identifier: Apache-2.0
/* The exposition: iobatchd's counters and gauges in the Prometheus text
 * format (agent/metrics.h); agent/metrics_server.c serves it. */
#include "agent/metrics.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/admission.h"
#include "common/version.h"
#include "common/xalloc.h"

static const char *const reason_names[AGENT_REASON_N] = {
    [AGENT_REASON_NOTHING_RUNNING] = "nothing_running",
    [AGENT_REASON_NO_CONFLICT] = "no_conflict",
    [AGENT_REASON_PAYS] = "pays",
    [AGENT_REASON_PLAN] = "plan",
    [AGENT_REASON_FORCED_DEADLINE] = "forced_deadline",
    [AGENT_REASON_ALREADY_RUNNING] = "already_running",
    [AGENT_REASON_PROBE] = "probe",
    [AGENT_REASON_SERVICE] = "service",
    [AGENT_REASON_NO_ESTIMATE] = "no_estimate",
    [AGENT_REASON_WAIT_BOUND] = "wait_bound",
    [AGENT_REASON_CROWD] = "crowd",
    [AGENT_REASON_SANDBOX] = "sandbox",
};

static const char *const weight_names[AGENT_WEIGHT_N] = {
    [AGENT_WEIGHT_WRITTEN] = "written",
    [AGENT_WEIGHT_NOT_ENFORCED] = "not_enforced",
    [AGENT_WEIGHT_ERROR] = "error",
};

static const uint64_t wait_le_ms[AGENT_METRICS_WAIT_BUCKETS] = {10,    100,   500,   1000,  5000,
                                                                10000, 30000, 60000, 300000};
static const char *const wait_le[AGENT_METRICS_WAIT_BUCKETS] = {"0.01", "0.1", "0.5", "1",  "5",
                                                                "10",   "30",  "60",  "300"};

static const uint64_t plan_le_us[AGENT_METRICS_PLAN_BUCKETS] = {
    100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000};
static const char *const plan_le[AGENT_METRICS_PLAN_BUCKETS] = {
    "0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01",
    "0.025",  "0.05",    "0.1",    "0.25",  "0.5",    "1"};

uint64_t agent_metrics_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void agent_metrics_planned(struct agent_metrics *m, uint64_t ns) {
  size_t i = 0;
  while (i < AGENT_METRICS_PLAN_BUCKETS && ns > plan_le_us[i] * 1000)
    i++;
  if (i < AGENT_METRICS_PLAN_BUCKETS)
    m->plan_bucket[i]++;
  m->plan_count++;
  m->plan_sum_ns += ns;
}

void agent_metrics_view_count(struct agent_metrics_view *v, const struct agent_ctr *list,
                              uint64_t now_ms) {
  v->list = list;
  for (const struct agent_ctr *c = list; c; c = c->next) {
    unsigned cls = (unsigned)c->cls < BATCH_NCLASS ? (unsigned)c->cls : BATCH_UNKNOWN;
    if (c->state == AGENT_PENDING) {
      v->pending[cls]++;
      uint64_t waited = now_ms > c->arrival_ms ? now_ms - c->arrival_ms : 0;
      if (waited > v->pending_oldest_ms)
        v->pending_oldest_ms = waited;
    } else if (c->state == AGENT_RUNNING) {
      v->running[cls]++;
    }
  }
}

static enum agent_metrics_reason reason_of(const struct agent_ctr *c) {
  if (c->forced || c->reason == BATCH_ADMIT_DEADLINE)
    return AGENT_REASON_FORCED_DEADLINE;
  if (c->kind == AGENT_KIND_SANDBOX)
    return AGENT_REASON_SANDBOX;
  switch (c->reason) {
  case BATCH_ADMIT_IDLE:
    return AGENT_REASON_NOTHING_RUNNING;
  case BATCH_ADMIT_FREE:
    return AGENT_REASON_NO_CONFLICT;
  case BATCH_ADMIT_PAYS:
    return AGENT_REASON_PAYS;
  case BATCH_ADMIT_PLAN:
    return AGENT_REASON_PLAN;
  case BATCH_ADMIT_PROBE:
    return AGENT_REASON_PROBE;
  case BATCH_ADMIT_SERVICE:
    return AGENT_REASON_SERVICE;
  case BATCH_ADMIT_NOEST:
    return AGENT_REASON_NO_ESTIMATE;
  case BATCH_ADMIT_WAITED:
    return AGENT_REASON_WAIT_BOUND;
  case BATCH_ADMIT_CROWD:
    return AGENT_REASON_CROWD;
  default: /* -1 or BATCH_RUNNING: registered as running */
    return AGENT_REASON_ALREADY_RUNNING;
  }
}

void agent_metrics_admitted(struct agent_metrics *m, const struct agent_ctr *c,
                            uint64_t waited_ms) {
  enum agent_metrics_reason how = reason_of(c);
  m->admissions[how]++;
  if (how == AGENT_REASON_ALREADY_RUNNING || how == AGENT_REASON_SANDBOX)
    return; /* it never waited here */
  size_t i = 0;
  while (i < AGENT_METRICS_WAIT_BUCKETS && waited_ms > wait_le_ms[i])
    i++;
  if (i < AGENT_METRICS_WAIT_BUCKETS)
    m->wait_bucket[i]++;
  m->wait_count++;
  m->wait_sum_ms += waited_ms;
}

/* Label values escape backslash, double quote and newline (format 0.0.4). */
static void put_label(FILE *f, const char *s) {
  for (; s && *s; s++) {
    if (*s == '\\')
      fputs("\\\\", f);
    else if (*s == '"')
      fputs("\\\"", f);
    else if (*s == '\n')
      fputs("\\n", f);
    else
      fputc(*s, f);
  }
}

static void header(FILE *f, const char *name, const char *type, const char *help) {
  fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* {namespace="..",id="..",LABELS} of container c */
static void ctr_labels(FILE *f, const struct agent_ctr *c, const char *more) {
  fputs("{namespace=\"", f);
  put_label(f, c->ns);
  fputs("\",id=\"", f);
  put_label(f, c->id);
  fprintf(f, "\",approx=\"%s\"%s}", c->lat_approx ? "true" : "false", more);
}

/* Each container's block I/O latency in its last sample window. */
static void render_latency(FILE *f, const struct agent_metrics_view *v) {
  header(f, "iobatch_latency_source_info", "gauge",
         "Where per-container block I/O latency comes from: bpf (the block layer), pressure "
         "(io.pressure, approximate) or off.");
  fputs("iobatch_latency_source_info{source=\"", f);
  put_label(f, v->latency_source);
  fputs("\"} 1\n", f);
  header(f, "iobatch_container_io_latency_seconds", "gauge",
         "Block I/O latency of a container's requests in the last sample window, by quantile "
         "(approx=\"true\": stall time per request from io.pressure).");
  for (const struct agent_ctr *c = v->list; c; c = c->next)
    if (c->lat_valid) {
      fputs("iobatch_container_io_latency_seconds", f);
      ctr_labels(f, c, ",quantile=\"0.5\"");
      fprintf(f, " %.6f\n", c->lat_p50_us / 1e6);
      fputs("iobatch_container_io_latency_seconds", f);
      ctr_labels(f, c, ",quantile=\"0.99\"");
      fprintf(f, " %.6f\n", c->lat_p99_us / 1e6);
    }
  header(f, "iobatch_container_io_requests", "gauge",
         "Block I/O requests a container completed in the last sample window.");
  for (const struct agent_ctr *c = v->list; c; c = c->next)
    if (c->lat_valid) {
      fputs("iobatch_container_io_requests", f);
      ctr_labels(f, c, "");
      fprintf(f, " %llu\n", (unsigned long long)c->lat_count);
    }
}

int agent_metrics_render(const struct agent_metrics *m, const struct agent_metrics_view *v,
                         char **out, size_t *len, struct iob_error **err) {
  char *buf = NULL;
  size_t n = 0;
  (void)err; /* cannot fail (out of memory aborts); kept for its callers */
  FILE *f = open_memstream(&buf, &n);
  if (f == NULL)
    iob_oom();
  header(f, "iobatch_containers", "gauge", "Containers known to the agent by state and class.");
  for (int s = 0; s < 2; s++)
    for (int c = 0; c < BATCH_NCLASS; c++)
      fprintf(f, "iobatch_containers{state=\"%s\",class=\"%s\"} %llu\n", s ? "running" : "pending",
              batch_class_name((enum batch_class)c),
              (unsigned long long)(s ? v->running[c] : v->pending[c]));
  header(f, "iobatch_admissions_total", "counter", "Containers admitted, by reason.");
  for (int h = 0; h < AGENT_REASON_N; h++)
    fprintf(f, "iobatch_admissions_total{reason=\"%s\"} %llu\n", reason_names[h],
            (unsigned long long)m->admissions[h]);
  header(f, "iobatch_cancellations_total", "counter", "Cancel calls for a known container.");
  fprintf(f, "iobatch_cancellations_total %llu\n", (unsigned long long)m->cancellations);
  header(f, "iobatch_registrations_total", "counter", "Containers that became known.");
  fprintf(f, "iobatch_registrations_total %llu\n", (unsigned long long)m->registrations);
  header(f, "iobatch_refused_total", "counter",
         "Register and Admit calls refused: their containers started without the agent.");
  fprintf(f, "iobatch_refused_total{call=\"register\"} %llu\n",
          (unsigned long long)m->refused_register);
  fprintf(f, "iobatch_refused_total{call=\"admit\"} %llu\n", (unsigned long long)m->refused_admit);
  header(f, "iobatch_wait_seconds", "histogram", "Time pending before admission.");
  uint64_t cum = 0;
  for (int i = 0; i < AGENT_METRICS_WAIT_BUCKETS; i++) {
    cum += m->wait_bucket[i];
    fprintf(f, "iobatch_wait_seconds_bucket{le=\"%s\"} %llu\n", wait_le[i],
            (unsigned long long)cum);
  }
  fprintf(f, "iobatch_wait_seconds_bucket{le=\"+Inf\"} %llu\n", (unsigned long long)m->wait_count);
  fprintf(f, "iobatch_wait_seconds_sum %llu.%03llu\n", (unsigned long long)(m->wait_sum_ms / 1000),
          (unsigned long long)(m->wait_sum_ms % 1000));
  fprintf(f, "iobatch_wait_seconds_count %llu\n", (unsigned long long)m->wait_count);
  header(f, "iobatch_pending_oldest_seconds", "gauge",
         "How long the oldest pending container has waited (0: none pending).");
  fprintf(f, "iobatch_pending_oldest_seconds %llu.%03llu\n",
          (unsigned long long)(v->pending_oldest_ms / 1000),
          (unsigned long long)(v->pending_oldest_ms % 1000));
  header(f, "iobatch_plan_duration_seconds", "histogram", "Time each batcher run took.");
  cum = 0;
  for (int i = 0; i < AGENT_METRICS_PLAN_BUCKETS; i++) {
    cum += m->plan_bucket[i];
    fprintf(f, "iobatch_plan_duration_seconds_bucket{le=\"%s\"} %llu\n", plan_le[i],
            (unsigned long long)cum);
  }
  fprintf(f, "iobatch_plan_duration_seconds_bucket{le=\"+Inf\"} %llu\n",
          (unsigned long long)m->plan_count);
  fprintf(f, "iobatch_plan_duration_seconds_sum %llu.%09llu\n",
          (unsigned long long)(m->plan_sum_ns / 1000000000u),
          (unsigned long long)(m->plan_sum_ns % 1000000000u));
  fprintf(f, "iobatch_plan_duration_seconds_count %llu\n", (unsigned long long)m->plan_count);
  header(f, "iobatch_weight_writes_total", "counter",
         "Weights to write for running containers, by what happened.");
  for (int w = 0; w < AGENT_WEIGHT_N; w++)
    fprintf(f, "iobatch_weight_writes_total{result=\"%s\"} %llu\n", weight_names[w],
            (unsigned long long)m->weight_writes[w]);
  header(f, "iobatch_info", "gauge", "The agent's policy, matrix source and sampler.");
  fputs("iobatch_info{policy=\"", f);
  put_label(f, v->policy);
  fputs("\",matrix=\"", f);
  put_label(f, v->matrix);
  fputs("\",sampler=\"", f);
  put_label(f, v->sampler);
  fputs("\"} 1\n", f);
  header(f, "iobatch_build_info", "gauge", "1; the version and git revision of iobatchd.");
  fputs("iobatch_build_info{version=\"", f);
  put_label(f, iob_version);
  fputs("\",revision=\"", f);
  put_label(f, iob_git_rev);
  fputs("\"} 1\n", f);
  if (v->latency_source)
    render_latency(f, v);
  if (ferror(f) || fclose(f) != 0)
    iob_oom();
  *out = buf;
  *len = n;
  return 0;
}
