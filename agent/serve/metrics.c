// SPDX-License-Identifier: Apache-2.0
/* The exposition: iobatchd's counters and gauges in the Prometheus text
 * format (agent/serve/metrics.h); agent/serve/metrics_server.c serves it. */
#include "agent/serve/metrics.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/plan/admission.h"
#include "agent/sample/headroom.h"
#include "agent/protect/protection.h"
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
  v->now_ms = now_ms;
  for (const struct agent_ctr *c = list; c; c = c->next) {
    unsigned cls = (unsigned)c->cls < BATCH_NCLASS ? (unsigned)c->cls : BATCH_UNKNOWN;
    if (c->state == AGENT_PENDING) {
      v->pending[cls]++;
      uint64_t waited = now_ms > c->plan.arrival_ms ? now_ms - c->plan.arrival_ms : 0;
      if (waited > v->pending_oldest_ms)
        v->pending_oldest_ms = waited;
    } else if (c->state == AGENT_RUNNING) {
      v->running[cls]++;
    }
  }
}

static enum agent_metrics_reason reason_of(const struct agent_ctr *c) {
  if (c->plan.forced || c->plan.reason == BATCH_ADMIT_DEADLINE)
    return AGENT_REASON_FORCED_DEADLINE;
  if (c->kind == AGENT_KIND_SANDBOX)
    return AGENT_REASON_SANDBOX;
  switch (c->plan.reason) {
  case BATCH_ADMIT_IDLE:
    return AGENT_REASON_NOTHING_RUNNING;
  case BATCH_ADMIT_FREE:
    return AGENT_REASON_NO_CONFLICT;
  case BATCH_ADMIT_PAYS:
    return AGENT_REASON_PAYS;
  case BATCH_ADMIT_PLAN:
    return AGENT_REASON_PLAN;
  case BATCH_ADMIT_PROBE:
  case BATCH_ADMIT_MEASURE: /* a probe too: admitted to be measured */
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

/* The length of the valid UTF-8 sequence at P (no overlong forms, no
 * surrogates, nothing past U+10FFFF), 0 when P does not start one. */
static size_t utf8_seq(const unsigned char *p) {
  unsigned c = p[0];
  size_t n = c < 0x80                 ? 0
             : c >= 0xc2 && c <= 0xdf ? 1
             : c >= 0xe0 && c <= 0xef ? 2
             : c >= 0xf0 && c <= 0xf4 ? 3
                                      : 9;
  if (n == 9)
    return 0;
  unsigned cp = n == 0 ? c : c & (0x3fu >> n);
  for (size_t i = 1; i <= n; i++) {
    if ((p[i] & 0xc0) != 0x80) /* the NUL that ends the string too */
      return 0;
    cp = cp << 6 | (p[i] & 0x3fu);
  }
  if ((n == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
      (n == 3 && (cp < 0x10000 || cp > 0x10ffff)))
    return 0;
  return n + 1;
}

void agent_metrics_put_label(FILE *f, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  while (p && *p) {
    size_t n = utf8_seq(p);
    if (n == 0) {
      fputs("\xef\xbf\xbd", f); /* U+FFFD REPLACEMENT CHARACTER */
      p++;
    } else if (*p == '\\') {
      fputs("\\\\", f);
      p++;
    } else if (*p == '"') {
      fputs("\\\"", f);
      p++;
    } else if (*p == '\n') {
      fputs("\\n", f);
      p++;
    } else {
      fwrite(p, 1, n, f);
      p += n;
    }
  }
}

static void header(FILE *f, const char *name, const char *type, const char *help) {
  fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The labels that name container c in every per-container series:
 * Kubernetes' names ("" when not known), its id and the
 * runtime's namespace (containerd's), which keep series of containers
 * without pod names apart. */
static void ctr_name_labels(FILE *f, const struct agent_ctr *c) {
  fputs("{namespace=\"", f);
  agent_metrics_put_label(f, c->kube.pod_namespace);
  fputs("\",pod=\"", f);
  agent_metrics_put_label(f, c->kube.pod_name);
  fputs("\",container=\"", f);
  agent_metrics_put_label(f, c->kube.container_name);
  fputs("\",id=\"", f);
  agent_metrics_put_label(f, c->id);
  fputs("\",runtime_namespace=\"", f);
  agent_metrics_put_label(f, c->ns);
  fputc('"', f);
}

/* NAME{names of c,MORE} (MORE: "" or ",k=\"v\"..."), no value */
static void ctr_series(FILE *f, const char *name, const struct agent_ctr *c, const char *more) {
  fputs(name, f);
  ctr_name_labels(f, c);
  fprintf(f, "%s}", more);
}

/* A count of requests or bytes as the text format writes it. */
static void put_u64(FILE *f, uint64_t n) {
  fprintf(f, " %llu\n", (unsigned long long)n);
}

/* Whole microseconds as seconds, exactly (no float rounding in le). */
static void put_us_as_s(FILE *f, uint64_t us) {
  fprintf(f, "%llu.%06llu", (unsigned long long)(us / 1000000), (unsigned long long)(us % 1000000));
}

/* One container's latency histogram: cumulative _bucket lines, +Inf
 * equal to _count, as the text format wants them. */
static void ctr_latency_hist(FILE *f, const struct agent_ctr *c, bool approx) {
  const struct agent_lathist_hist *h = &c->lat.hist;
  const char *lab = approx ? ",approx=\"true\"" : ",approx=\"false\"";
  uint64_t cum = 0;
  for (unsigned i = 0; i <= AGENT_LATHIST_HIST_BUCKETS; i++) {
    cum += h->bucket[i];
    fputs("iobatch_container_io_latency_seconds_bucket", f);
    ctr_name_labels(f, c);
    fprintf(f, "%s,le=\"", lab);
    if (i < AGENT_LATHIST_HIST_BUCKETS)
      put_us_as_s(f, agent_lathist_hist_le_us(i));
    else
      fputs("+Inf", f);
    fputs("\"}", f);
    put_u64(f, i < AGENT_LATHIST_HIST_BUCKETS ? cum : h->count);
  }
  ctr_series(f, "iobatch_container_io_latency_seconds_sum", c, lab);
  fprintf(f, " %.6f\n", h->sum_us / 1e6);
  ctr_series(f, "iobatch_container_io_latency_seconds_count", c, lab);
  put_u64(f, h->count);
}

/* Each container's block I/O latency since it was registered, as a
 * histogram: unlike quantiles of one window, its buckets add up across
 * containers and nodes and rate() gives any window's distribution. */
static void render_latency(FILE *f, const struct agent_metrics_view *v) {
  header(f, "iobatch_latency_source_info", "gauge",
         "Where per-container block I/O latency comes from: bpf (the block layer), pressure "
         "(io.pressure, approximate) or off.");
  fputs("iobatch_latency_source_info{source=\"", f);
  agent_metrics_put_label(f, v->latency_source);
  fputs("\"} 1\n", f);
  bool on = strcmp(v->latency_source, "off") != 0;
  bool approx = strcmp(v->latency_source, "pressure") == 0;
  header(f, "iobatch_container_io_latency_seconds", "histogram",
         "Block I/O latency of a container's requests since it was registered; _count is its "
         "requests. approx=\"true\": each sample window's io.pressure stall time per request, "
         "not a per-request time. With bpf, _sum adds each request's bucket midpoint.");
  for (const struct agent_ctr *c = v->list; on && c; c = c->next)
    ctr_latency_hist(f, c, approx);
}

/* Per-container series: what the container is and how long it was held
 * (then its I/O, latency and protection below).  Only what is known is
 * shown: a cap where one is in force, a latency target where one is. */
static void render_ctr_state(FILE *f, const struct agent_metrics_view *v) {
  header(f, "iobatch_container_info", "gauge",
         "1 for each container the agent knows; its state, kind, class and QoS class as labels.");
  for (const struct agent_ctr *c = v->list; c; c = c->next) {
    unsigned cls = (unsigned)c->cls < BATCH_NCLASS ? (unsigned)c->cls : BATCH_UNKNOWN;
    fputs("iobatch_container_info", f);
    ctr_name_labels(f, c);
    fprintf(f, ",state=\"%s\",kind=\"%s\",class=\"%s\",class_source=\"%s\",qos=\"",
            agent_state_name(c->state), agent_kind_name(c->kind),
            batch_class_name((enum batch_class)cls), agent_class_source_name(c->class_source));
    agent_metrics_put_label(f, c->kube.qos);
    fputs("\"} 1\n", f);
  }
  header(f, "iobatch_container_held_seconds", "gauge",
         "How long a container was held before it started (pending: so far).");
  for (const struct agent_ctr *c = v->list; c; c = c->next) {
    uint64_t end = c->state == AGENT_PENDING ? v->now_ms : c->plan.admitted_ms;
    if (c->state == AGENT_CREATED || c->plan.arrival_ms == 0)
      continue;
    uint64_t held = end > c->plan.arrival_ms ? end - c->plan.arrival_ms : 0;
    ctr_series(f, "iobatch_container_held_seconds", c, "");
    fprintf(f, " %llu.%03llu\n", (unsigned long long)(held / 1000),
            (unsigned long long)(held % 1000));
  }
}

/* Counters since the container was registered (agent_sampler_io_total_add):
 * rate() of them is its throughput over any window a query picks; and
 * the cap on it now. */
static void render_ctr_io(FILE *f, const struct agent_metrics_view *v) {
  header(f, "iobatch_container_io_bytes_total", "counter",
         "Bytes a container read or wrote (op) since it was registered, as the sampler counts "
         "them.");
  for (const struct agent_ctr *c = v->list; c; c = c->next) {
    ctr_series(f, "iobatch_container_io_bytes_total", c, ",op=\"read\"");
    put_u64(f, c->sample.io_total.rbytes);
    ctr_series(f, "iobatch_container_io_bytes_total", c, ",op=\"write\"");
    put_u64(f, c->sample.io_total.wbytes);
  }
  header(f, "iobatch_container_io_operations_total", "counter",
         "Read or write operations (op) a container completed since it was registered, as the "
         "sampler counts them.");
  for (const struct agent_ctr *c = v->list; c; c = c->next) {
    ctr_series(f, "iobatch_container_io_operations_total", c, ",op=\"read\"");
    put_u64(f, c->sample.io_total.rios);
    ctr_series(f, "iobatch_container_io_operations_total", c, ",op=\"write\"");
    put_u64(f, c->sample.io_total.wios);
  }
  header(f, "iobatch_container_io_cap_bytes_per_second", "gauge",
         "A limit, not a measured rate: the bytes/s cap protection wrote for a batch container "
         "(io.max or blkio.throttle); only containers capped now.");
  for (const struct agent_ctr *c = v->list; c; c = c->next)
    if (c->caps.bps > 0) {
      ctr_series(f, "iobatch_container_io_cap_bytes_per_second", c, "");
      fprintf(f, " %.0f\n", c->caps.bps);
    }
}

static void render_ctr_protection(FILE *f, const struct agent_metrics_view *v) {
  header(f, "iobatch_container_protected", "gauge",
         "1 when batch containers yield to this one (latency-sensitive), else 0.");
  for (const struct agent_ctr *c = v->list; c; c = c->next) {
    ctr_series(f, "iobatch_container_protected", c, "");
    fprintf(f, " %d\n", c->plan.protect ? 1 : 0);
  }
  header(f, "iobatch_container_io_latency_target_seconds", "gauge",
         "A protected container's p99 block I/O latency objective in force, declared or "
         "learned (source).");
  for (const struct agent_ctr *c = v->list; c; c = c->next)
    if (c->plan.protect && c->lat.target > 0 && !c->lat.approx) {
      fputs("iobatch_container_io_latency_target_seconds", f);
      ctr_name_labels(f, c);
      fprintf(f, ",source=\"%s\"} %.6f\n", agent_lat_target_source_name(c->lat.target_source),
              c->lat.target / 1e6);
    }
  header(f, "iobatch_container_io_stall_target_ratio", "gauge",
         "A protected container's objective where latency is approximate: the share of time "
         "its tasks may stall on I/O (io.pressure some).");
  for (const struct agent_ctr *c = v->list; c; c = c->next)
    if (c->plan.protect && c->lat.target > 0 && c->lat.approx) {
      fputs("iobatch_container_io_stall_target_ratio", f);
      ctr_name_labels(f, c);
      fprintf(f, ",source=\"%s\"} %.6f\n", agent_lat_target_source_name(c->lat.target_source),
              c->lat.target);
    }
  header(f, "iobatch_container_io_stall_ratio", "gauge",
         "A ratio (0 to 1): the share of the last sample window in which some of a container's "
         "tasks stalled on I/O (io.pressure some), where latency is approximate.");
  for (const struct agent_ctr *c = v->list; c; c = c->next)
    if (c->lat.valid && c->lat.approx && c->lat.stall >= 0) {
      ctr_series(f, "iobatch_container_io_stall_ratio", c, "");
      fprintf(f, " %.6f\n", c->lat.stall);
    }
}

/* Each batch job's protection debt and bound (agent/protect/protect.h, the
 * batch's budget): what protection added to its run so far and what it may
 * add in all; a job without a bound (protect_batch_budget = 0) has no
 * budget series. */
static void render_ctr_budget(FILE *f, const struct agent_metrics_view *v) {
  header(f, "iobatch_container_protection_debt_seconds", "gauge",
         "Seconds protection added to a batch job's run: held by protection, frozen, and lost "
         "under a cap that bound it.");
  struct agent_protection_debt b;
  for (const struct agent_ctr *c = v->list; c; c = c->next)
    if (agent_ctr_is_batch(c) && c->state != AGENT_CREATED) {
      agent_protection_debt(v->prot, c, v->now_ms, &b);
      ctr_series(f, "iobatch_container_protection_debt_seconds", c, "");
      fprintf(f, " %.3f\n", b.debt_s);
    }
  header(f, "iobatch_container_protection_budget_seconds", "gauge",
         "Seconds protection may add to a batch job's run before it runs free (source: where its "
         "expected runtime came from: profile, class or unknown).");
  for (const struct agent_ctr *c = v->list; c; c = c->next) {
    agent_protection_debt(v->prot, c, v->now_ms, &b);
    if (!b.batch || c->state == AGENT_CREATED || isinf(b.bound_s))
      continue;
    fputs("iobatch_container_protection_budget_seconds", f);
    ctr_name_labels(f, c);
    fprintf(f, ",source=\"%s\"} %.3f\n", b.source, b.bound_s);
  }
}

/* The node's counters: every container's windows since the agent
 * started, those of containers gone too. */
static void render_node_io(FILE *f, const struct agent_io_total *t) {
  header(f, "iobatch_node_io_bytes_total", "counter",
         "Bytes the containers on this node read or wrote (op) since the agent started, as the "
         "sampler counts them.");
  fputs("iobatch_node_io_bytes_total{op=\"read\"}", f);
  put_u64(f, t->rbytes);
  fputs("iobatch_node_io_bytes_total{op=\"write\"}", f);
  put_u64(f, t->wbytes);
  header(f, "iobatch_node_io_operations_total", "counter",
         "Read or write operations (op) the containers on this node completed since the agent "
         "started, as the sampler counts them.");
  fputs("iobatch_node_io_operations_total{op=\"read\"}", f);
  put_u64(f, t->rios);
  fputs("iobatch_node_io_operations_total{op=\"write\"}", f);
  put_u64(f, t->wios);
}

/* The protection controller and the node's I/O headroom. */
static void render_node(FILE *f, const struct agent_metrics_view *v) {
  if (v->prot) {
    struct agent_protection_view pv;
    agent_protection_view(v->prot, &pv);
    header(f, "iobatch_protection_cap_bytes_per_second", "gauge",
           "A limit, not a measured rate: the bytes/s cap protection puts on each batch "
           "container now (0: none).");
    fprintf(f, "iobatch_protection_cap_bytes_per_second %.0f\n", pv.level_bps);
    header(f, "iobatch_io_pressure", "gauge",
           "1 while protected containers miss their objective (iobatchctl check io-pressure), "
           "else 0.");
    fprintf(f, "iobatch_io_pressure %d\n", pv.pressure ? 1 : 0);
    header(f, "iobatch_protection_levers_released", "gauge",
           "1 while every protection lever is released (reason: probe, to measure the protected "
           "containers without them; let_go, they did not lower their misses per byte of batch "
           "I/O), else 0.");
    bool released = pv.released > 0, probe = released && strcmp(pv.released_why, "probe") == 0;
    fprintf(f, "iobatch_protection_levers_released{reason=\"probe\"} %d\n", probe ? 1 : 0);
    fprintf(f, "iobatch_protection_levers_released{reason=\"let_go\"} %d\n",
            released && !probe ? 1 : 0);
  }
  const struct agent_headroom *h = v->headroom;
  if (h == NULL)
    return;
  header(f, "iobatch_node_io_capacity_bytes_per_second", "gauge",
         "An estimate, not the present rate: the disk's capacity by class, the most bytes/s seen "
         "while only that class did I/O, decayed (docs/DESIGN.md); classes never measured are "
         "absent.");
  for (int k = 0; k < BATCH_NCLASS; k++)
    if (h->cap_bps[k] > 0)
      fprintf(f, "iobatch_node_io_capacity_bytes_per_second{class=\"%s\"} %.0f\n",
              batch_class_name((enum batch_class)k), h->cap_bps[k]);
  header(f, "iobatch_node_io_headroom_ratio", "gauge",
         "A ratio (0 to 1): the share of the disk's measured capacity left unused in the last "
         "sample window; "
         "NaN when unknown (iobatch_node_io_headroom_unknown says why).");
  if (h->reason == AGENT_HEADROOM_KNOWN)
    fprintf(f, "iobatch_node_io_headroom_ratio %.4f\n", h->ratio);
  else
    fputs("iobatch_node_io_headroom_ratio NaN\n", f);
  header(f, "iobatch_node_io_headroom_unknown", "gauge",
         "1 while the headroom is unknown, with the reason: no_window, no_capacity or "
         "unmeasured_class.");
  if (h->reason != AGENT_HEADROOM_KNOWN)
    fprintf(f, "iobatch_node_io_headroom_unknown{reason=\"%s\"} 1\n",
            agent_headroom_reason_name(h->reason));
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
  header(f, "iobatch_agent_windows_total", "counter",
         "Sampling windows, by work: idle (nothing registered or found, nothing done) or full.");
  fprintf(f, "iobatch_agent_windows_total{work=\"idle\"} %llu\n",
          (unsigned long long)m->windows_idle);
  fprintf(f, "iobatch_agent_windows_total{work=\"full\"} %llu\n",
          (unsigned long long)m->windows_full);
  header(f, "iobatch_sampler_passes_total", "counter",
         "Passes of the sampler over the containers.");
  fprintf(f, "iobatch_sampler_passes_total %llu\n", (unsigned long long)v->sampler_passes);
  header(f, "iobatch_sampler_samples_total", "counter",
         "Containers sampled: each a read of its cgroup's counters (or of the BPF map).");
  fprintf(f, "iobatch_sampler_samples_total %llu\n", (unsigned long long)v->sampler_samples);
  header(f, "iobatch_sampler_pressure_reads_total", "counter",
         "io.pressure files read beside the samples (of containers whose stall is used).");
  fprintf(f, "iobatch_sampler_pressure_reads_total %llu\n",
          (unsigned long long)v->sampler_pressure_reads);
  header(f, "iobatch_info", "gauge", "The agent's policy, matrix source and sampler.");
  fputs("iobatch_info{policy=\"", f);
  agent_metrics_put_label(f, v->policy);
  fputs("\",matrix=\"", f);
  agent_metrics_put_label(f, v->matrix);
  fputs("\",sampler=\"", f);
  agent_metrics_put_label(f, v->sampler);
  fputs("\"} 1\n", f);
  header(f, "iobatch_build_info", "gauge", "1; the version and git revision of iobatchd.");
  fputs("iobatch_build_info{version=\"", f);
  agent_metrics_put_label(f, iob_version);
  fputs("\",revision=\"", f);
  agent_metrics_put_label(f, iob_git_rev);
  fputs("\"} 1\n", f);
  if (v->fd_limit) {
    header(f, "iobatch_agent_open_fds", "gauge", "File descriptors the agent has open.");
    fprintf(f, "iobatch_agent_open_fds %llu\n", (unsigned long long)v->open_fds);
    header(f, "iobatch_agent_max_fds", "gauge",
           "The agent's soft limit on open file descriptors (RLIMIT_NOFILE).");
    fprintf(f, "iobatch_agent_max_fds %llu\n", (unsigned long long)v->fd_limit);
  }
  if (v->latency_source)
    render_latency(f, v);
  render_ctr_state(f, v);
  render_ctr_io(f, v);
  render_ctr_protection(f, v);
  if (v->prot)
    render_ctr_budget(f, v);
  if (v->node_io)
    render_node_io(f, v->node_io);
  render_node(f, v);
  if (ferror(f) || fclose(f) != 0)
    iob_oom();
  *out = buf;
  *len = n;
  return 0;
}
