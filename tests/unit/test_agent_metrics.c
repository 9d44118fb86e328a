// SPDX-License-Identifier: Apache-2.0
/* The metrics endpoint: exposition text for a known state, the HTTP
 * request-head parser on good and malformed input, the address rules. */
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/plan/admission.h"
#include "agent/protect/budget.h"
#include "agent/sample/headroom.h"
#include "agent/protect/protection.h"
#include "agent/sample/sampler.h"
#include "agent/serve/metrics.h"
#include "agent/serve/metrics_server.h"
#include "cgroupv2/iostat.h"
#include "common/cleanup.h"
#include "common/version.h"
#include "tests/fuzz/expo_check.h"

static const char golden[] =
    "# HELP iobatch_containers Containers known to the agent by state and class.\n"
    "# TYPE iobatch_containers gauge\n"
    "iobatch_containers{state=\"pending\",class=\"seq-read\"} 0\n"
    "iobatch_containers{state=\"pending\",class=\"rand-read\"} 0\n"
    "iobatch_containers{state=\"pending\",class=\"seq-write\"} 2\n"
    "iobatch_containers{state=\"pending\",class=\"rand-write\"} 0\n"
    "iobatch_containers{state=\"pending\",class=\"mixed\"} 0\n"
    "iobatch_containers{state=\"pending\",class=\"idle\"} 0\n"
    "iobatch_containers{state=\"pending\",class=\"unknown\"} 0\n"
    "iobatch_containers{state=\"running\",class=\"seq-read\"} 1\n"
    "iobatch_containers{state=\"running\",class=\"rand-read\"} 0\n"
    "iobatch_containers{state=\"running\",class=\"seq-write\"} 0\n"
    "iobatch_containers{state=\"running\",class=\"rand-write\"} 0\n"
    "iobatch_containers{state=\"running\",class=\"mixed\"} 0\n"
    "iobatch_containers{state=\"running\",class=\"idle\"} 0\n"
    "iobatch_containers{state=\"running\",class=\"unknown\"} 3\n"
    "# HELP iobatch_admissions_total Containers admitted, by reason.\n"
    "# TYPE iobatch_admissions_total counter\n"
    "iobatch_admissions_total{reason=\"nothing_running\"} 1\n"
    "iobatch_admissions_total{reason=\"no_conflict\"} 0\n"
    "iobatch_admissions_total{reason=\"pays\"} 0\n"
    "iobatch_admissions_total{reason=\"plan\"} 0\n"
    "iobatch_admissions_total{reason=\"forced_deadline\"} 1\n"
    "iobatch_admissions_total{reason=\"already_running\"} 1\n"
    "iobatch_admissions_total{reason=\"probe\"} 0\n"
    "iobatch_admissions_total{reason=\"service\"} 0\n"
    "iobatch_admissions_total{reason=\"no_estimate\"} 0\n"
    "iobatch_admissions_total{reason=\"wait_bound\"} 0\n"
    "iobatch_admissions_total{reason=\"crowd\"} 0\n"
    "iobatch_admissions_total{reason=\"sandbox\"} 0\n"
    "# HELP iobatch_cancellations_total Cancel calls for a known container.\n"
    "# TYPE iobatch_cancellations_total counter\n"
    "iobatch_cancellations_total 4\n"
    "# HELP iobatch_registrations_total Containers that became known.\n"
    "# TYPE iobatch_registrations_total counter\n"
    "iobatch_registrations_total 9\n"
    "# HELP iobatch_refused_total Register and Admit calls refused: their containers started "
    "without the agent.\n"
    "# TYPE iobatch_refused_total counter\n"
    "iobatch_refused_total{call=\"register\"} 2\n"
    "iobatch_refused_total{call=\"admit\"} 0\n"
    "# HELP iobatch_wait_seconds Time pending before admission.\n"
    "# TYPE iobatch_wait_seconds histogram\n"
    "iobatch_wait_seconds_bucket{le=\"0.01\"} 1\n"
    "iobatch_wait_seconds_bucket{le=\"0.1\"} 1\n"
    "iobatch_wait_seconds_bucket{le=\"0.5\"} 1\n"
    "iobatch_wait_seconds_bucket{le=\"1\"} 1\n"
    "iobatch_wait_seconds_bucket{le=\"5\"} 1\n"
    "iobatch_wait_seconds_bucket{le=\"10\"} 1\n"
    "iobatch_wait_seconds_bucket{le=\"30\"} 1\n"
    "iobatch_wait_seconds_bucket{le=\"60\"} 1\n"
    "iobatch_wait_seconds_bucket{le=\"300\"} 2\n"
    "iobatch_wait_seconds_bucket{le=\"+Inf\"} 2\n"
    "iobatch_wait_seconds_sum 300.010\n"
    "iobatch_wait_seconds_count 2\n"
    "# HELP iobatch_pending_oldest_seconds How long the oldest pending container has waited (0: "
    "none pending).\n"
    "# TYPE iobatch_pending_oldest_seconds gauge\n"
    "iobatch_pending_oldest_seconds 61.234\n"
    "# HELP iobatch_plan_duration_seconds Time each batcher run took.\n"
    "# TYPE iobatch_plan_duration_seconds histogram\n"
    "iobatch_plan_duration_seconds_bucket{le=\"0.0001\"} 1\n"
    "iobatch_plan_duration_seconds_bucket{le=\"0.00025\"} 1\n"
    "iobatch_plan_duration_seconds_bucket{le=\"0.0005\"} 1\n"
    "iobatch_plan_duration_seconds_bucket{le=\"0.001\"} 2\n"
    "iobatch_plan_duration_seconds_bucket{le=\"0.0025\"} 2\n"
    "iobatch_plan_duration_seconds_bucket{le=\"0.005\"} 2\n"
    "iobatch_plan_duration_seconds_bucket{le=\"0.01\"} 2\n"
    "iobatch_plan_duration_seconds_bucket{le=\"0.025\"} 2\n"
    "iobatch_plan_duration_seconds_bucket{le=\"0.05\"} 2\n"
    "iobatch_plan_duration_seconds_bucket{le=\"0.1\"} 2\n"
    "iobatch_plan_duration_seconds_bucket{le=\"0.25\"} 2\n"
    "iobatch_plan_duration_seconds_bucket{le=\"0.5\"} 2\n"
    "iobatch_plan_duration_seconds_bucket{le=\"1\"} 2\n"
    "iobatch_plan_duration_seconds_bucket{le=\"+Inf\"} 3\n"
    "iobatch_plan_duration_seconds_sum 2.000800000\n"
    "iobatch_plan_duration_seconds_count 3\n"
    "# HELP iobatch_weight_writes_total Weights to write for running containers, by what "
    "happened.\n"
    "# TYPE iobatch_weight_writes_total counter\n"
    "iobatch_weight_writes_total{result=\"written\"} 0\n"
    "iobatch_weight_writes_total{result=\"not_enforced\"} 5\n"
    "iobatch_weight_writes_total{result=\"error\"} 0\n"
    "# HELP iobatch_agent_windows_total Sampling windows, by work: idle (nothing registered or "
    "found, nothing done) or full.\n"
    "# TYPE iobatch_agent_windows_total counter\n"
    "iobatch_agent_windows_total{work=\"idle\"} 7\n"
    "iobatch_agent_windows_total{work=\"full\"} 2\n"
    "# HELP iobatch_sampler_passes_total Passes of the sampler over the containers.\n"
    "# TYPE iobatch_sampler_passes_total counter\n"
    "iobatch_sampler_passes_total 2\n"
    "# HELP iobatch_sampler_samples_total Containers sampled: each a read of its cgroup's "
    "counters (or of the BPF map).\n"
    "# TYPE iobatch_sampler_samples_total counter\n"
    "iobatch_sampler_samples_total 5\n"
    "# HELP iobatch_sampler_pressure_reads_total io.pressure files read beside the samples (of "
    "containers whose stall is used).\n"
    "# TYPE iobatch_sampler_pressure_reads_total counter\n"
    "iobatch_sampler_pressure_reads_total 3\n"
    "# HELP iobatch_info The agent's policy, matrix source and sampler.\n"
    "# TYPE iobatch_info gauge\n"
    "iobatch_info{policy=\"predictive\",matrix=\"/etc/a\\\"b\\\\c\\nd\",sampler=\"procfs\"} 1\n"
    "# HELP iobatch_build_info 1; the version and git revision of iobatchd.\n"
    "# TYPE iobatch_build_info gauge\n"
    "iobatch_build_info{version=\"%s\",revision=\"%s\"} 1\n";

static void test_render_golden(void **state) {
  (void)state;
  struct agent_metrics m = {0};
  struct agent_ctr idle = {.plan.reason = BATCH_ADMIT_IDLE};
  struct agent_ctr forced = {.plan.reason = BATCH_HOLD_MAKESPAN, .plan.forced = true};
  struct agent_ctr back = {.plan.reason = -1};
  agent_metrics_admitted(&m, &idle, 10);       /* le 0.01 (inclusive) */
  agent_metrics_admitted(&m, &forced, 300000); /* le 300 */
  agent_metrics_admitted(&m, &back, 0);        /* registered running */
  m.cancellations = 4;
  m.registrations = 9;
  m.refused_register = 2;
  m.weight_writes[AGENT_WEIGHT_NOT_ENFORCED] = 5;
  m.windows_idle = 7;
  m.windows_full = 2;
  agent_metrics_planned(&m, 100000);     /* 0.1 ms: le 0.0001 (inclusive) */
  agent_metrics_planned(&m, 700000);     /* le 0.001 */
  agent_metrics_planned(&m, 2000000000); /* 2 s: +Inf only */
  struct agent_metrics_view v = {
      .policy = "predictive", .matrix = "/etc/a\"b\\c\nd", .sampler = "procfs"};
  v.pending[BATCH_SEQ_WRITE] = 2;
  v.running[BATCH_SEQ_READ] = 1;
  v.running[BATCH_UNKNOWN] = 3;
  v.pending_oldest_ms = 61234;
  v.sampler_passes = 2;
  v.sampler_samples = 5;
  v.sampler_pressure_reads = 3;
  cleanup_free char *want = NULL;
  /* The build's own version and revision (common/version.h). */
  assert_true(asprintf(&want, golden, iob_version, iob_git_rev) > 0);
  cleanup_free char *out = NULL;
  size_t len = 0;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_metrics_render(&m, &v, &out, &len, &err), 0);
  assert_int_equal(len, strlen(out));
  /* Then the per-container families, which without containers have
   * their HELP and TYPE lines only. */
  assert_true(len > strlen(want));
  assert_memory_equal(out, want, strlen(want));
  for (const char *l = out + strlen(want); *l; l = strchr(l, '\n') + 1)
    assert_true(strncmp(l, "# HELP iobatch_container_", 24) == 0 ||
                strncmp(l, "# TYPE iobatch_container_", 24) == 0);
  assert_true(expo_check(out, len) > 0);
}

/* render V into a malloc'ed string (and check it reads as the format) */
static char *render(const struct agent_metrics_view *v) {
  struct agent_metrics m = {0};
  char *out = NULL;
  size_t len = 0;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_metrics_render(&m, v, &out, &len, &err), 0);
  long n = expo_check(out, len);
  if (n < 0)
    fprintf(stderr, "bad exposition line %ld:\n%s", -1 - n, out);
  assert_true(n > 0);
  return out;
}

static void has(const char *out, const char *line) {
  if (strstr(out, line) == NULL)
    fail_msg("missing: %s\nin:\n%s", line, out);
}

/* Per-container latency: a histogram for every container once the
 * latency source is on, whether or not it completed requests yet; its
 * buckets are cumulative, end with +Inf equal to _count, and their le are
 * the exact bounds 2^5 .. 2^24 us. */
static void test_render_latency(void **state) {
  (void)state;
  struct agent_metrics m = {0};
  struct agent_ctr db = {.ns = "k8s.io", .id = "d\"b"};
  /* 3 requests in 40-47 us (le 0.000064), 1 in 112-127 us (le 0.000128),
   * 2 beyond the last bound (+Inf only) */
  uint64_t bins[AGENT_LATHIST_BUCKETS] = {0};
  bins[agent_lathist_bucket(40)] = 3;
  bins[agent_lathist_bucket(120)] = 1;
  bins[AGENT_LATHIST_BUCKETS - 1] = 2;
  agent_lathist_hist_add_window(&db.lat.hist, bins, NULL, AGENT_LATHIST_BUCKETS);
  struct agent_ctr fresh = {.ns = "default", .id = "new", .next = &db}; /* no request yet */
  struct agent_metrics_view v = {.policy = "predictive", .matrix = "defaults", .sampler = "x"};
  agent_metrics_view_count(&v, &fresh, 0);
  v.latency_source = "bpf";
  cleanup_free char *out = NULL;
  size_t len = 0;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_metrics_render(&m, &v, &out, &len, &err), 0);
  static const char *const le[] = {
      "0.000032", "0.000064", "0.000128", "0.000256", "0.000512", "0.001024",  "0.002048",
      "0.004096", "0.008192", "0.016384", "0.032768", "0.065536", "0.131072",  "0.262144",
      "0.524288", "1.048576", "2.097152", "4.194304", "8.388608", "16.777216", "+Inf"};
  static const unsigned long long cum[] = {0, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4,
                                           4, 4, 4, 4, 4, 4, 4, 4, 4, 6};
  const char *l = "{namespace=\"\",pod=\"\",container=\"\",id=\"d\\\"b\",runtime_namespace="
                  "\"k8s.io\",approx=\"false\"";
  cleanup_free char *want = NULL;
  char *w = NULL;
  size_t wn = 0;
  FILE *f = open_memstream(&w, &wn);
  fputs("# HELP iobatch_container_io_latency_seconds Block I/O latency of a container's "
        "requests since it was registered; _count is its requests. approx=\"true\": each sample "
        "window's io.pressure stall time per request, not a per-request time. With bpf, _sum "
        "adds each request's bucket midpoint.\n"
        "# TYPE iobatch_container_io_latency_seconds histogram\n",
        f);
  for (size_t i = 0; i < sizeof(le) / sizeof(le[0]); i++)
    fprintf(f,
            "iobatch_container_io_latency_seconds_bucket{namespace=\"\",pod=\"\",container=\"\","
            "id=\"new\",runtime_namespace=\"default\",approx=\"false\",le=\"%s\"} 0\n",
            le[i]);
  fputs("iobatch_container_io_latency_seconds_sum{namespace=\"\",pod=\"\",container=\"\",id="
        "\"new\",runtime_namespace=\"default\",approx=\"false\"} 0.000000\n"
        "iobatch_container_io_latency_seconds_count{namespace=\"\",pod=\"\",container=\"\",id="
        "\"new\",runtime_namespace=\"default\",approx=\"false\"} 0\n",
        f);
  for (size_t i = 0; i < sizeof(le) / sizeof(le[0]); i++)
    fprintf(f, "iobatch_container_io_latency_seconds_bucket%s,le=\"%s\"} %llu\n", l, le[i], cum[i]);
  /* midpoints: 3 x 44 + 1 x 120 us, and the open bin's lower bound twice */
  double sum_us = 3 * 44.0 + 120 + 2.0 * (double)agent_lathist_lower(AGENT_LATHIST_BUCKETS - 1);
  fprintf(f, "iobatch_container_io_latency_seconds_sum%s} %.6f\n", l, sum_us / 1e6);
  fprintf(f, "iobatch_container_io_latency_seconds_count%s} 6\n", l);
  fputs("# HELP iobatch_container_info ", f);
  fclose(f);
  want = w;
  const char *at = strstr(out, "# HELP iobatch_container_io_latency_seconds ");
  assert_non_null(at);
  if (strncmp(at, want, strlen(want)) != 0)
    fail_msg("want:\n%s\ngot:\n%.*s", want, (int)strlen(want), at);
  has(out, "iobatch_latency_source_info{source=\"bpf\"} 1\n");
  assert_true(expo_check(out, len) > 0);
  free(out);
  out = NULL;
  /* off: the family is announced, no container has a histogram */
  v.latency_source = "off";
  assert_int_equal(agent_metrics_render(&m, &v, &out, &len, &err), 0);
  assert_null(strstr(out, "iobatch_container_io_latency_seconds_bucket"));
  free(out);
  out = NULL;
  /* pressure: approx="true" on every series */
  v.latency_source = "pressure";
  assert_int_equal(agent_metrics_render(&m, &v, &out, &len, &err), 0);
  has(out, "iobatch_container_io_latency_seconds_count{namespace=\"\",pod=\"\",container=\"\","
           "id=\"new\",runtime_namespace=\"default\",approx=\"true\"} 0\n");
  assert_null(strstr(out, "approx=\"false\""));
}

/* Per-pod series: Kubernetes' names as labels beside the id and the
 * runtime's namespace; I/O counters, held time, cap, protection. */
static void test_render_pod_series(void **state) {
  (void)state;
  struct agent_ctr db = {.ns = "k8s.io",
                         .id = "c1",
                         .kube.pod_namespace = "db",
                         .kube.pod_name = "pg-0",
                         .kube.container_name = "postgres",
                         .kube.qos = "guaranteed",
                         .state = AGENT_RUNNING,
                         .kind = AGENT_KIND_SERVICE,
                         .cls = BATCH_RAND_READ,
                         .class_source = AGENT_CLASS_DETECTED,
                         .plan.arrival_ms = 1000,
                         .plan.admitted_ms = 1000,
                         .sample.read_bps = 4096000,
                         .sample.read_iops = 1000,
                         .sample.io_total = {.rbytes = 40960000, .rios = 10000},
                         .plan.protect = true,
                         .lat.target = 5000,
                         .lat.target_source = AGENT_LAT_TARGET_DECLARED,
                         .lat.valid = true,
                         .lat.count = 10,
                         .lat.p50_us = 800,
                         .lat.p99_us = 7500,
                         .lat.hist = {.bucket = {[8] = 10}, .count = 10, .sum_us = 9000}};
  struct agent_ctr etl = {.ns = "k8s.io",
                          .id = "c2",
                          .kube.pod_namespace = "batch",
                          .kube.pod_name = "etl-7",
                          .kube.container_name = "load",
                          .state = AGENT_RUNNING,
                          .cls = BATCH_SEQ_WRITE,
                          .class_source = AGENT_CLASS_DECLARED,
                          .plan.arrival_ms = 2000,
                          .plan.admitted_ms = 4500,
                          .sample.write_bps = 50e6,
                          .sample.write_iops = 50,
                          .sample.io_total = {.wbytes = 5000000000ull, .wios = 5000},
                          .caps.bps = 20e6,
                          .profile.solo_s = 20,
                          .budget.capped_s = 2.5,
                          .budget.source = AGENT_BUDGET_PROFILE,
                          .next = &db};
  struct agent_ctr held = {.ns = "default",
                           .id = "h",
                           .kube.pod_namespace = "",
                           .kube.pod_name = "",
                           .kube.container_name = "",
                           .state = AGENT_PENDING,
                           .cls = BATCH_RAND_WRITE,
                           .plan.arrival_ms = 9000,
                           .next = &etl};
  struct agent_ctr approx = {.ns = "k8s.io",
                             .id = "c3",
                             .kube.pod_namespace = "web",
                             .kube.pod_name = "w",
                             .kube.container_name = "nginx",
                             .state = AGENT_RUNNING,
                             .plan.protect = true,
                             .lat.approx = true,
                             .lat.valid = true,
                             .lat.stall = 0.25,
                             .lat.target = 0.1,
                             .lat.target_source = AGENT_LAT_TARGET_LEARNED,
                             .next = &held};
  struct agent_metrics_view v = {.policy = "p", .matrix = "m", .sampler = "s"};
  agent_metrics_view_count(&v, &approx, 12345);
  v.latency_source = "bpf";
  struct agent_protection prot; /* the defaults: no cap, no pressure */
  agent_protection_init(&prot, NULL, NULL, NULL, NULL, NULL, NULL);
  v.prot = &prot;
  cleanup_free char *out = render(&v);
  const char *pg = "{namespace=\"db\",pod=\"pg-0\",container=\"postgres\",id=\"c1\","
                   "runtime_namespace=\"k8s.io\"";
  const char *etl_l = "{namespace=\"batch\",pod=\"etl-7\",container=\"load\",id=\"c2\","
                      "runtime_namespace=\"k8s.io\"";
  char line[512];
  snprintf(line, sizeof(line),
           "iobatch_container_info%s,state=\"running\",kind=\"service\",class=\"rand-read\","
           "class_source=\"detected\",qos=\"guaranteed\"} 1\n",
           pg);
  has(out, line);
  snprintf(line, sizeof(line), "iobatch_container_io_bytes_total%s,op=\"read\"} 40960000\n", pg);
  has(out, line);
  snprintf(line, sizeof(line), "iobatch_container_io_bytes_total%s,op=\"write\"} 0\n", pg);
  has(out, line);
  snprintf(line, sizeof(line), "iobatch_container_io_bytes_total%s,op=\"write\"} 5000000000\n",
           etl_l);
  has(out, line);
  snprintf(line, sizeof(line), "iobatch_container_io_operations_total%s,op=\"read\"} 10000\n", pg);
  has(out, line);
  snprintf(line, sizeof(line), "iobatch_container_io_operations_total%s,op=\"write\"} 5000\n",
           etl_l);
  has(out, line);
  /* 10 requests in 4.096-8.192 ms: below le 0.004096 none, 10 from 0.008192 */
  snprintf(line, sizeof(line),
           "iobatch_container_io_latency_seconds_bucket%s,approx=\"false\",le=\"0.004096\"} 0\n",
           pg);
  has(out, line);
  snprintf(line, sizeof(line),
           "iobatch_container_io_latency_seconds_bucket%s,approx=\"false\",le=\"0.008192\"} 10\n",
           pg);
  has(out, line);
  snprintf(line, sizeof(line),
           "iobatch_container_io_latency_seconds_sum%s,approx=\"false\"} 0.009000\n", pg);
  has(out, line);
  /* held 2.5 s before it started; the pending one 3.345 s so far */
  snprintf(line, sizeof(line), "iobatch_container_held_seconds%s} 2.500\n", etl_l);
  has(out, line);
  has(out, "iobatch_container_held_seconds{namespace=\"\",pod=\"\",container=\"\",id=\"h\","
           "runtime_namespace=\"default\"} 3.345\n");
  snprintf(line, sizeof(line), "iobatch_container_io_cap_bytes_per_second%s} 20000000\n", etl_l);
  has(out, line);
  assert_int_equal(strstr(out, "iobatch_container_io_cap_bytes_per_second{namespace=\"db\"") ==
                       NULL,
                   true); /* no cap on it: no series */
  /* the batch job's protection debt and its bound (0.5 x its 20 s); the
   * protected one and the service have none */
  snprintf(line, sizeof(line), "iobatch_container_protection_debt_seconds%s} 2.500\n", etl_l);
  has(out, line);
  snprintf(line, sizeof(line),
           "iobatch_container_protection_budget_seconds%s,source=\"profile\"} 10.000\n", etl_l);
  has(out, line);
  assert_null(strstr(out, "iobatch_container_protection_debt_seconds{namespace=\"db\""));
  assert_null(strstr(out, "iobatch_container_protection_budget_seconds{namespace=\"web\""));
  snprintf(line, sizeof(line), "iobatch_container_protected%s} 1\n", pg);
  has(out, line);
  snprintf(line, sizeof(line), "iobatch_container_protected%s} 0\n", etl_l);
  has(out, line);
  snprintf(line, sizeof(line),
           "iobatch_container_io_latency_target_seconds%s,source=\"declared\"} 0.005000\n", pg);
  has(out, line);
  has(out, "iobatch_container_io_stall_target_ratio{namespace=\"web\",pod=\"w\",container="
           "\"nginx\",id=\"c3\",runtime_namespace=\"k8s.io\",source=\"learned\"} 0.100000\n");
  has(out, "iobatch_container_io_stall_ratio{namespace=\"web\",pod=\"w\",container=\"nginx\","
           "id=\"c3\",runtime_namespace=\"k8s.io\"} 0.250000\n");
  assert_null(strstr(out, "iobatch_container_io_latency_target_seconds{namespace=\"web\""));
}

/* The samples of a scrape: each line's series (name and labels) and
 * value, comments left out. */
struct samples {
  size_t n;
  struct {
    char series[320];
    double v;
  } s[256];
};

static void parse_samples(const char *out, struct samples *ss) {
  ss->n = 0;
  for (const char *l = out; *l; l = strchr(l, '\n') + 1) {
    const char *nl = strchr(l, '\n'), *sp = nl;
    assert_non_null(nl);
    if (*l == '#')
      continue;
    while (sp > l && sp[-1] != ' ')
      sp--;
    assert_true(sp > l && ss->n < sizeof(ss->s) / sizeof(ss->s[0]));
    assert_true((size_t)(sp - 1 - l) < sizeof(ss->s[0].series));
    snprintf(ss->s[ss->n].series, sizeof(ss->s[0].series), "%.*s", (int)(sp - 1 - l), l);
    ss->s[ss->n].v = strtod(sp, NULL);
    ss->n++;
  }
}

static bool is_counter_like(const char *series) {
  return strstr(series, "_total{") || strstr(series, "_bucket{") || strstr(series, "_sum{") ||
         strstr(series, "_count{");
}

/* Within one scrape: each histogram's buckets rise with le, and its +Inf
 * bucket is its _count. */
static void check_histograms(const struct samples *ss) {
  double last = 0;
  for (size_t i = 0; i < ss->n; i++) {
    const char *b = strstr(ss->s[i].series, "_bucket{");
    if (b == NULL)
      continue;
    bool first = strstr(ss->s[i].series, ",le=\"0.000032\"}") != NULL;
    if (!first && ss->s[i].v < last)
      fail_msg("bucket below the one before it: %s", ss->s[i].series);
    last = ss->s[i].v;
    if (strstr(ss->s[i].series, ",le=\"+Inf\"}") == NULL)
      continue;
    /* name_count{same labels but le} */
    char want[320];
    const char *le = strstr(ss->s[i].series, ",le=");
    snprintf(want, sizeof(want), "%.*s_count%.*s}", (int)(b - ss->s[i].series), ss->s[i].series,
             (int)(le - b - 7), b + 7);
    bool found = false;
    for (size_t j = 0; j < ss->n; j++)
      if (strcmp(ss->s[j].series, want) == 0) {
        found = true;
        assert_true(ss->s[j].v == ss->s[i].v);
      }
    if (!found)
      fail_msg("no %s", want);
  }
}

/* Counters never go down from one scrape to the next, whatever the
 * sampler's counters do: a window whose io.stat went down (the cgroup
 * made anew) adds nothing, nor does a BPF histogram entry made anew take
 * anything away; the node's counters keep what a container did after it
 * is gone.  Checked on the text served, window after window. */
static void test_counters_monotonic(void **state) {
  (void)state;
  /* what the cgroup's io.stat shows at each sample: up, down (made anew),
   * up again */
  static const struct cg2_io_counters reads[] = {
      {0, 0, 0, 0, 0, 0},
      {1 << 20, 4096, 256, 1, 0, 0},
      {3 << 20, 8192, 768, 2, 0, 0},
      {4096, 0, 1, 0, 0, 0},
      {1 << 20, 4096, 256, 1, 0, 0},
      {1 << 20, 4096, 256, 1, 0, 0},
      {5 << 20, 1 << 20, 1280, 256, 0, 0},
  };
  size_t nw = sizeof(reads) / sizeof(reads[0]);
  struct agent_ctr gone = {.ns = "k8s.io", .id = "gone"};
  struct agent_ctr c = {.ns = "k8s.io", .id = "c", .next = &gone};
  struct agent_io_total node = {0};
  uint64_t bins[2][AGENT_LATHIST_BUCKETS] = {{0}};
  struct samples before, now;
  before.n = 0;
  for (size_t w = 1; w < nw; w++) {
    struct cg2_io_counters d;
    int reset = cg2_counters_delta(&reads[w - 1], &reads[w], &d);
    agent_sampler_io_total_add(&c.sample.io_total, &d, reset > 0);
    agent_sampler_io_total_add(&node, &d, reset > 0);
    /* "gone" does the same for two windows, then leaves */
    c.next = w < 3 ? &gone : NULL;
    if (w < 3) {
      agent_sampler_io_total_add(&gone.sample.io_total, &d, reset > 0);
      agent_sampler_io_total_add(&node, &d, reset > 0);
    }
    /* the latency map: requests each window, its entry made anew at 4 */
    memcpy(bins[0], bins[1], sizeof(bins[0]));
    if (w == 4)
      memset(bins[1], 0, sizeof(bins[1]));
    bins[1][agent_lathist_bucket(100 * w)] += w;
    bins[1][agent_lathist_bucket(20000 * w)] += 1;
    agent_lathist_hist_add_window(&c.lat.hist, bins[1], bins[0], AGENT_LATHIST_BUCKETS);
    struct agent_metrics_view v = {.policy = "p", .matrix = "m", .sampler = "s"};
    v.latency_source = "bpf";
    v.node_io = &node;
    agent_metrics_view_count(&v, &c, 0);
    cleanup_free char *out = render(&v);
    parse_samples(out, &now);
    check_histograms(&now);
    for (size_t i = 0; i < now.n; i++)
      for (size_t j = 0; j < before.n; j++)
        if (strcmp(now.s[i].series, before.s[j].series) == 0 && is_counter_like(now.s[i].series) &&
            now.s[i].v < before.s[j].v)
          fail_msg("window %zu: %s went down from %g to %g", w, now.s[i].series, before.s[j].v,
                   now.s[i].v);
    before = now;
  }
  /* what was counted: every window but the one that went down */
  assert_int_equal(c.sample.io_total.rbytes, (3u << 20) + (1u << 20) - 4096 + (4u << 20));
  assert_int_equal(c.sample.io_total.wios, 2 + 1 + 255);
  assert_int_equal(node.rbytes, c.sample.io_total.rbytes + (3u << 20));
  assert_true(before.n > 40); /* the last scrape had them all */
}

/* Tenant strings never break the format: quotes, backslashes and
 * newlines escaped; bytes that are not UTF-8 (a stray continuation byte,
 * a cut sequence, an overlong '/', a surrogate, a lead byte past
 * U+10FFFF) become U+FFFD; valid multi-byte characters pass. */
static void test_label_escaping(void **state) {
  (void)state;
  struct agent_ctr c = {.ns = "n\\s",
                        .id = "i\"d",
                        .kube.pod_namespace = "a\nb",
                        .kube.pod_name = "\xff"
                                    "x\xc3",
                        .kube.container_name = "\xc0\xaf\xed\xa0\x80\xf5\x80\x80\x80"
                                          "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
                        .kube.qos = "",
                        .state = AGENT_RUNNING};
  struct agent_metrics_view v = {.policy = "p", .matrix = "m", .sampler = "s"};
  agent_metrics_view_count(&v, &c, 0);
  cleanup_free char *out = render(&v);
  const char *r = "\xef\xbf\xbd";
  char want[512];
  snprintf(
      want, sizeof(want),
      "iobatch_container_protected{namespace=\"a\\nb\",pod=\"%sx%s\",container=\"%s%s%s%s%s%s"
      "%s%s%s\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\",id=\"i\\\"d\",runtime_namespace=\"n\\\\s\"}"
      " 0\n",
      r, r, r, r, r, r, r, r, r, r, r);
  has(out, want);
  /* and directly, byte for byte */
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  agent_metrics_put_label(f, "q\"b\\n\nt\tr\r\xe2\x82");
  agent_metrics_put_label(f, NULL);
  fclose(f);
  assert_string_equal(buf, "q\\\"b\\\\n\\nt\tr\r\xef\xbf\xbd\xef\xbf\xbd");
  free(buf);
}

/* Broken exposition text is caught by the reader the tests use (so that
 * its "ok" above means something). */
static void test_expo_check_rejects(void **state) {
  (void)state;
  static const char *const bad[] = {
      "# TYPE a gauge\na{x=\"1\n",         /* unterminated value */
      "# TYPE a gauge\na{x=\"\\q\"} 1\n",  /* unknown escape */
      "# TYPE a gauge\na{x=\"\xff\"} 1\n", /* not UTF-8 */
      "# TYPE a gauge\nb 1\n",             /* not the TYPE'd family */
      "# TYPE a gauge\na 1 2 x\n",         /* junk value */
      "# TYPE a gauge\na{x=\"1\",} 1",     /* no final newline */
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    assert_true(expo_check(bad[i], strlen(bad[i])) < 0);
  const char *good = "# HELP a x\n# TYPE a gauge\na{x=\"\\\"\\\\\\n\"} NaN\na 1.5\n";
  assert_int_equal(expo_check(good, strlen(good)), 2);
}

static struct agent_ctr io_ctr(const char *id, enum batch_class cls, double bps,
                               struct agent_ctr *next) {
  struct agent_ctr c = {.id = (char *)id, .cls = cls, .sample.io_now = bps > 0, .next = next};
  c.sample.write_bps = bps;
  return c;
}

/* The node's headroom: capacity per class from windows in which only that
 * class did I/O, use as the sum of rate / capacity, unknown until then. */
static void test_headroom(void **state) {
  (void)state;
  struct agent_headroom h;
  agent_headroom_init(&h);
  assert_int_equal(h.reason, AGENT_HEADROOM_NO_WINDOW);
  agent_headroom_window(&h, NULL, 1);
  assert_int_equal(h.reason, AGENT_HEADROOM_NO_CAPACITY);
  /* one class: it teaches seq-write's capacity, and is all of it */
  struct agent_ctr a = io_ctr("a", BATCH_SEQ_WRITE, 60e6, NULL);
  struct agent_ctr b = io_ctr("b", BATCH_SEQ_WRITE, 40e6, &a);
  agent_headroom_window(&h, &b, 1);
  assert_int_equal(h.reason, AGENT_HEADROOM_KNOWN);
  assert_true(h.cap_bps[BATCH_SEQ_WRITE] > 99.99e6);
  assert_true(h.ratio < 1e-6);
  /* half of it */
  b = io_ctr("b", BATCH_SEQ_WRITE, 0, &a);
  a.sample.write_bps = 50e6;
  agent_headroom_window(&h, &b, 1);
  assert_true(h.ratio > 0.499 && h.ratio < 0.501);
  assert_true(h.bps > 49.9e6 && h.bps < 50.1e6);
  /* an unmeasured class beside it: unknown */
  struct agent_ctr r = io_ctr("r", BATCH_RAND_WRITE, 1e6, &a);
  agent_headroom_window(&h, &r, 1);
  assert_int_equal(h.reason, AGENT_HEADROOM_UNMEASURED);
  struct agent_ctr u = io_ctr("u", BATCH_UNKNOWN, 1e6, NULL);
  agent_headroom_window(&h, &u, 1);
  assert_int_equal(h.reason, AGENT_HEADROOM_UNMEASURED);
  assert_true(h.cap_bps[BATCH_UNKNOWN] == 0);
  /* rand-write measured alone (10 MB/s); then 25 MB/s of seq-write and
   * 2.5 MB/s of rand-write use a quarter each */
  r = io_ctr("r", BATCH_RAND_WRITE, 10e6, NULL);
  agent_headroom_window(&h, &r, 1);
  assert_true(h.cap_bps[BATCH_RAND_WRITE] > 9.99e6);
  r = io_ctr("r", BATCH_RAND_WRITE, 2.5e6, &a);
  a.sample.write_bps = 25e6;
  agent_headroom_window(&h, &r, 1);
  assert_int_equal(h.reason, AGENT_HEADROOM_KNOWN);
  assert_true(h.ratio > 0.499 && h.ratio < 0.501);
  /* a mixed window never raises a capacity, and use is capped at 1 */
  r.sample.write_bps = 30e6;
  agent_headroom_window(&h, &r, 1);
  assert_true(h.cap_bps[BATCH_RAND_WRITE] < 10.01e6);
  assert_true(h.ratio == 0);
  /* an idle-class trickle counts at the largest capacity */
  struct agent_ctr i = io_ctr("i", BATCH_IDLE, 1e6, NULL);
  agent_headroom_window(&h, &i, 1);
  assert_int_equal(h.reason, AGENT_HEADROOM_KNOWN);
  assert_true(h.ratio > 0.98 && h.ratio < 0.995);
  /* nothing doing I/O: all of it; capacities decay by their half-life */
  double before = h.cap_bps[BATCH_SEQ_WRITE];
  agent_headroom_window(&h, NULL, AGENT_HEADROOM_HALF_LIFE_S);
  assert_true(h.ratio == 1);
  assert_true(h.cap_bps[BATCH_SEQ_WRITE] > before * 0.4999 &&
              h.cap_bps[BATCH_SEQ_WRITE] < before * 0.5001);
}

/* ... and as served: NaN and a reason while unknown, a number in [0, 1]
 * and the capacities once known; the protection controller's state. */
static void test_render_headroom(void **state) {
  (void)state;
  struct agent_headroom h;
  agent_headroom_init(&h);
  struct agent_protection p = {.ctl = {.level_bps = 12e6, .pressure = true, .ev = {.release = 5}}};
  struct agent_metrics_view v = {.policy = "p", .matrix = "m", .sampler = "s", .prot = &p};
  v.headroom = &h;
  char *out = render(&v);
  has(out, "\niobatch_node_io_headroom_ratio NaN\n");
  has(out, "\niobatch_node_io_headroom_unknown{reason=\"no_window\"} 1\n");
  has(out, "\niobatch_protection_cap_bytes_per_second 12000000\n");
  has(out, "\niobatch_io_pressure 1\n");
  has(out, "\niobatch_protection_levers_released{reason=\"probe\"} 0\n");
  has(out, "\niobatch_protection_levers_released{reason=\"let_go\"} 1\n");
  assert_null(strstr(out, "iobatch_node_io_capacity_bytes_per_second{"));
  free(out);
  struct agent_ctr a = io_ctr("a", BATCH_SEQ_READ, 80e6, NULL);
  agent_headroom_window(&h, &a, 0); /* 0 s: no decay, round numbers */
  a.sample.write_bps = 20e6;
  agent_headroom_window(&h, &a, 0);
  out = render(&v);
  has(out, "\niobatch_node_io_headroom_ratio 0.7500\n");
  has(out, "\niobatch_node_io_capacity_bytes_per_second{class=\"seq-read\"} 80000000\n");
  assert_null(strstr(out, "iobatch_node_io_bytes_total")); /* no node_io in the view */
  assert_null(strstr(out, "iobatch_node_io_headroom_unknown{"));
  free(out);
}

/* Every admit reason of the batcher has its own label value (a reason
 * added to the batcher and not here would be counted as already_running,
 * which this catches); only a plan's admissions are observed as waits. */
static void test_admission_reasons(void **state) {
  (void)state;
  static const struct {
    int reason;
    bool forced;
    int kind;
    enum agent_metrics_reason want;
    bool waited;
  } cases[] = {
      {BATCH_ADMIT_IDLE, false, AGENT_KIND_JOB, AGENT_REASON_NOTHING_RUNNING, true},
      {BATCH_ADMIT_FREE, false, AGENT_KIND_JOB, AGENT_REASON_NO_CONFLICT, true},
      {BATCH_ADMIT_PAYS, false, AGENT_KIND_JOB, AGENT_REASON_PAYS, true},
      {BATCH_ADMIT_PLAN, false, AGENT_KIND_JOB, AGENT_REASON_PLAN, true},
      {BATCH_ADMIT_DEADLINE, false, AGENT_KIND_JOB, AGENT_REASON_FORCED_DEADLINE, true},
      {BATCH_HOLD_FAIRNESS, true, AGENT_KIND_JOB, AGENT_REASON_FORCED_DEADLINE, true},
      {BATCH_ADMIT_PROBE, false, AGENT_KIND_JOB, AGENT_REASON_PROBE, true},
      {BATCH_ADMIT_MEASURE, false, AGENT_KIND_JOB, AGENT_REASON_PROBE, true},
      {BATCH_ADMIT_SERVICE, false, AGENT_KIND_SERVICE, AGENT_REASON_SERVICE, true},
      {BATCH_ADMIT_NOEST, false, AGENT_KIND_JOB, AGENT_REASON_NO_ESTIMATE, true},
      {BATCH_ADMIT_WAITED, false, AGENT_KIND_JOB, AGENT_REASON_WAIT_BOUND, true},
      {BATCH_ADMIT_CROWD, false, AGENT_KIND_JOB, AGENT_REASON_CROWD, true},
      {-1, false, AGENT_KIND_SANDBOX, AGENT_REASON_SANDBOX, false},
      {-1, false, AGENT_KIND_JOB, AGENT_REASON_ALREADY_RUNNING, false},
      {BATCH_RUNNING, false, AGENT_KIND_JOB, AGENT_REASON_ALREADY_RUNNING, false},
  };
  bool seen[AGENT_REASON_N] = {false};
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    struct agent_metrics m = {0};
    struct agent_ctr c = {.plan.reason = cases[i].reason,
                          .plan.forced = cases[i].forced,
                          .kind = (enum agent_kind)cases[i].kind};
    agent_metrics_admitted(&m, &c, 1500);
    for (int r = 0; r < AGENT_REASON_N; r++)
      if (m.admissions[r] != (r == (int)cases[i].want))
        fail_msg("case %zu: reason %d counted as %d", i, cases[i].reason, r);
    assert_int_equal(m.wait_count, cases[i].waited);
    seen[cases[i].want] = true;
  }
  for (int r = 0; r < AGENT_REASON_N; r++)
    assert_true(seen[r]);
  /* Every admit reason the batcher has is one of the cases above. */
  for (int r = 0; r < BATCH_NREASON; r++) {
    const char *name = batch_reason_name((enum batch_reason)r);
    if (strncmp(name, "admitted:", 9) != 0)
      continue;
    bool found = false;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
      found |= cases[i].reason == r && !cases[i].forced && cases[i].kind != AGENT_KIND_SANDBOX;
    if (!found)
      fail_msg("batch reason %d ('%s') has no metrics case", r, name);
  }
}

/* The gauges from an admission list: pending and running per class, the
 * oldest pending one's wait; created ones are in neither. */
static void test_view_count(void **state) {
  (void)state;
  struct agent_ctr c[5];
  memset(c, 0, sizeof(c));
  c[0] = (struct agent_ctr){.state = AGENT_PENDING, .cls = BATCH_SEQ_WRITE, .plan.arrival_ms = 1000};
  c[1] = (struct agent_ctr){.state = AGENT_PENDING, .cls = BATCH_UNKNOWN, .plan.arrival_ms = 5000};
  c[2] = (struct agent_ctr){.state = AGENT_RUNNING, .cls = BATCH_SEQ_WRITE, .plan.arrival_ms = 0};
  c[3] = (struct agent_ctr){.state = AGENT_CREATED, .cls = BATCH_RAND_READ, .plan.arrival_ms = 0};
  c[4] =
      (struct agent_ctr){.state = AGENT_PENDING, .cls = (enum batch_class)99, .plan.arrival_ms = 20000};
  for (int i = 0; i < 4; i++)
    c[i].next = &c[i + 1];
  struct agent_metrics_view v = {0};
  agent_metrics_view_count(&v, c, 10000);
  assert_int_equal(v.pending[BATCH_SEQ_WRITE], 1);
  assert_int_equal(v.pending[BATCH_UNKNOWN], 2); /* an out-of-range class counts as unknown */
  assert_int_equal(v.running[BATCH_SEQ_WRITE], 1);
  assert_int_equal(v.pending[BATCH_RAND_READ] + v.running[BATCH_RAND_READ], 0);
  assert_int_equal(v.pending_oldest_ms, 9000); /* an arrival after now counts as 0 */
  struct agent_metrics_view none = {0};
  agent_metrics_view_count(&none, &c[2], 10000);
  assert_int_equal(none.pending_oldest_ms, 0);
}

static int parse(const char *s, struct agent_metrics_server_request *r, int *status) {
  return agent_metrics_server_parse_request(s, strlen(s), r, status);
}

static void test_parse_good(void **state) {
  (void)state;
  struct agent_metrics_server_request r;
  int st;
  assert_int_equal(parse("GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n", &r, &st), 1);
  assert_int_equal(r.method, AGENT_METRICS_SERVER_GET);
  assert_string_equal(r.path, "/metrics");
  assert_int_equal(parse("HEAD /metrics HTTP/1.0\r\n\r\n", &r, &st), 1);
  assert_int_equal(r.method, AGENT_METRICS_SERVER_HEAD);
  assert_int_equal(parse("POST /x HTTP/1.1\r\n\r\n", &r, &st), 1);
  assert_int_equal(r.method, AGENT_METRICS_SERVER_OTHER);
  assert_string_equal(r.path, "/x");
  /* Incomplete: wait for more. */
  assert_int_equal(parse("GET /metrics HTTP/1.1\r\nHost: x\r\n", &r, &st), 0);
  assert_int_equal(parse("GET /met", &r, &st), 0);
  assert_int_equal(parse("", &r, &st), 0);
}

static void expect_bad(const char *s, size_t len, int status) {
  struct agent_metrics_server_request r;
  int st = 0;
  assert_int_equal(agent_metrics_server_parse_request(s, len, &r, &st), -1);
  assert_int_equal(st, status);
}

static void test_parse_malformed(void **state) {
  (void)state;
  /* No CRLF: bare LF line endings. */
  expect_bad("GET /metrics HTTP/1.1\n\n", 23, 400);
  expect_bad("GET /metrics HTTP/1.1\r\nHost: x\n\r\n", 32, 400);
  expect_bad("GET /metrics HTTP/1.1\rX", 23, 400);
  /* HTTP/0.9: no version. */
  expect_bad("GET /metrics\r\n\r\n", 16, 400);
  /* Missing method, empty first line. */
  expect_bad(" /metrics HTTP/1.1\r\n\r\n", 22, 400);
  expect_bad("\r\n\r\n", 4, 400);
  /* Unsupported or broken versions. */
  expect_bad("GET /metrics HTTP/2.0\r\n\r\n", 25, 505);
  expect_bad("GET /metrics HTTP/1.10\r\n\r\n", 26, 400);
  expect_bad("GET /metrics FTP/1.1\r\n\r\n", 24, 400);
  expect_bad("GET  /metrics HTTP/1.1\r\n\r\n", 26, 400);
  /* A header line without a name or colon. */
  expect_bad("GET /metrics HTTP/1.1\r\nnocolon\r\n\r\n", 34, 400);
  expect_bad("GET /metrics HTTP/1.1\r\n: v\r\n\r\n", 30, 400);
  /* Binary junk, NUL bytes, non-ASCII. */
  expect_bad("\x16\x03\x01\x02\x00\x01\x00", 7, 400);
  expect_bad("GET /m\0x HTTP/1.1\r\n\r\n", 21, 400);
  expect_bad("GET /m\xc3\xa9 HTTP/1.1\r\n\r\n", 22, 400);
  /* Path too long: complete line, and a line still coming. */
  size_t n = AGENT_METRICS_PATH_MAX + 64;
  cleanup_free char *big = malloc(n + 32);
  memcpy(big, "GET /", 5);
  memset(big + 5, 'a', n);
  memcpy(big + 5 + n, " HTTP/1.1\r\n\r\n", 13);
  expect_bad(big, 5 + n + 13, 414);
  expect_bad(big, 5 + n, 414);
  /* A huge header line, and a head that never ends. */
  cleanup_free char *huge = malloc(AGENT_METRICS_HEAD_MAX + 64);
  memcpy(huge, "GET /metrics HTTP/1.1\r\nX-A: ", 28);
  memset(huge + 28, 'b', AGENT_METRICS_HEAD_MAX + 64 - 28);
  expect_bad(huge, AGENT_METRICS_HEAD_MAX + 64, 431);
  expect_bad(huge, AGENT_METRICS_HEAD_MAX, 431);
  struct agent_metrics_server_request r;
  int st;
  assert_int_equal(agent_metrics_server_parse_request(huge, AGENT_METRICS_HEAD_MAX - 1, &r, &st), 0);
}

static void test_addr(void **state) {
  (void)state;
  struct agent_metrics_addr a;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_metrics_server_addr_parse("unix:/run/iobatch/metrics.sock", &a, &err), 0);
  assert_string_equal(a.path, "/run/iobatch/metrics.sock");
  assert_int_equal(agent_metrics_server_addr_parse("127.0.0.1:9100", &a, &err), 0);
  assert_int_equal(agent_metrics_server_addr_parse("127.1.2.3:1", &a, &err), 0);
  assert_int_equal(agent_metrics_server_addr_parse("[::1]:9100", &a, &err), 0);
  assert_int_equal(agent_metrics_server_addr_parse("localhost:65535", &a, &err), 0);
  assert_string_equal(a.path, "");
  const char *bad[] = {
      "0.0.0.0:9100",  "10.0.0.1:9100", "[::]:9100",       "[2001:db8::1]:80", "example.com:80",
      "127.0.0.1",     "127.0.0.1:0",   "127.0.0.1:65536", "127.0.0.1:-1",     "127.0.0.1:9x",
      "unix:relative", "unix:",         ":9100",           "[::1:9100",        "localhost:"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    assert_int_equal(agent_metrics_server_addr_parse(bad[i], &a, &err), -1);
    assert_non_null(strstr(err->msg, "'metrics'"));
    iob_error_release(&err);
  }
  assert_int_equal(agent_metrics_server_addr_parse("0.0.0.0:9100", &a, &err), -1);
  assert_non_null(strstr(err->msg, "not a loopback address"));
}

/* The per-peer key: the uid on a unix socket, the address on TCP. */
static void test_peer_key(void **state) {
  (void)state;
  int sp[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
  char key[AGENT_METRICS_PEER_MAX], want[64];
  assert_int_equal(agent_metrics_server_peer_key(sp[0], key, sizeof(key)), 0);
  snprintf(want, sizeof(want), "uid %u", (unsigned)geteuid());
  assert_string_equal(key, want);
  close(sp[0]);
  close(sp[1]);
  int l = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof(sa);
  assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
  assert_int_equal(getsockname(l, (struct sockaddr *)&sa, &len), 0);
  assert_int_equal(listen(l, 1), 0);
  int c = socket(AF_INET, SOCK_STREAM, 0);
  assert_int_equal(connect(c, (struct sockaddr *)&sa, sizeof(sa)), 0);
  int a = accept(l, NULL, NULL);
  assert_int_equal(agent_metrics_server_peer_key(a, key, sizeof(key)), 0);
  assert_string_equal(key, "address 127.0.0.1");
  close(a);
  close(c);
  close(l);
}

static int render_x(void *user, char **out, size_t *len, struct iob_error **err) {
  (void)user;
  (void)err;
  *out = strdup("x 1\n");
  *len = 4;
  return 0;
}

static int connect_to(const char *path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
  if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* Closed by the server: EOF (or a reset) waiting to be read. */
static bool closed_by_server(int fd) {
  char b;
  ssize_t r = recv(fd, &b, 1, MSG_DONTWAIT | MSG_PEEK);
  return r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

static void pump(struct iob_loop *loop, int times) {
  for (int i = 0; i < times; i++)
    iob_loop_run_once(loop, 10, NULL);
}

/* One local user cannot take every slot: past AGENT_METRICS_MAX_PER_PEER
 * its new connections close its oldest ones that still wait for a request,
 * a scraper among them gets its answer, and another uid still gets in. */
static void test_per_peer_limit(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  char dir[] = "/tmp/metpeer.XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[96], spec[128];
  snprintf(path, sizeof(path), "%s/m.sock", dir);
  snprintf(spec, sizeof(spec), "unix:%s", path);
  struct iob_loop *loop = NULL;
  assert_int_equal(iob_loop_new(&loop, &err), 0);
  struct agent_metrics_server *srv = NULL;
  assert_int_equal(agent_metrics_server_open(loop, spec, 0, render_x, NULL, &srv, &err), 0);
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);
  int fds[AGENT_METRICS_MAX_PER_PEER + 2];
  for (size_t i = 0; i < IOB_ARRAY_SIZE(fds); i++) {
    fds[i] = connect_to(path);
    assert_true(fds[i] >= 0);
    pump(loop, 3);
  }
  pump(loop, 5);
  /* the two oldest made room for the two newest */
  for (size_t i = 0; i < IOB_ARRAY_SIZE(fds); i++)
    if (closed_by_server(fds[i]) != (i < 2))
      fail_msg("connection %zu of one uid: %s", i,
               closed_by_server(fds[i]) ? "closed" : "kept open");
  /* the scraper, the same uid as the four held connections: answered */
  int sc = connect_to(path);
  assert_true(sc >= 0);
  const char get[] = "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n";
  assert_int_equal(send(sc, get, sizeof(get) - 1, MSG_NOSIGNAL), (ssize_t)(sizeof(get) - 1));
  char reply[512];
  size_t got = 0;
  for (int i = 0; i < 100 && got < sizeof(reply) - 1; i++) {
    pump(loop, 1);
    ssize_t r = recv(sc, reply + got, sizeof(reply) - 1 - got, MSG_DONTWAIT);
    if (r == 0)
      break;
    if (r > 0)
      got += (size_t)r;
  }
  reply[got] = '\0';
  assert_non_null(strstr(reply, "HTTP/1.1 200 OK"));
  assert_non_null(strstr(reply, "\r\n\r\nx 1\n"));
  close(sc);
  /* held without a request past AGENT_METRICS_HEAD_MS: closed (the loop
   * runs until they are, at most ten times that) */
  bool all_closed = false;
  for (int i = 0; i < AGENT_METRICS_HEAD_MS && !all_closed; i++) {
    pump(loop, 1);
    all_closed = true;
    for (size_t k = 0; k < IOB_ARRAY_SIZE(fds); k++)
      all_closed = all_closed && closed_by_server(fds[k]);
  }
  assert_true(all_closed);
  if (geteuid() == 0) {
    /* Another uid (the socket opened up for the test) has its own share. */
    assert_int_equal(chmod(dir, 0711), 0);
    assert_int_equal(chmod(path, 0666), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      if (setgid(65534) < 0 || setuid(65534) < 0)
        _exit(2);
      int fd = connect_to(path);
      if (fd < 0)
        _exit(3);
      struct pollfd p = {.fd = fd, .events = POLLIN};
      _exit(poll(&p, 1, 500) == 0 ? 0 : 1); /* 1: closed at once */
    }
    int wst = 0;
    while (waitpid(pid, &wst, WNOHANG) == 0)
      pump(loop, 1);
    assert_true(WIFEXITED(wst));
    assert_int_equal(WEXITSTATUS(wst), 0);
  }
  for (size_t i = 0; i < IOB_ARRAY_SIZE(fds); i++)
    close(fds[i]);
  agent_metrics_server_free(srv);
  iob_loop_free(loop);
  rmdir(dir);
}

/* connect(2) to PATH as uid 65534 with primary group GID and no others:
 * 0 when it connects, else the errno. */
static int connect_as(const char *path, gid_t gid) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    if (setgroups(0, NULL) < 0 || setgid(gid) < 0 || setuid(65534) < 0)
      _exit(200);
    int fd = connect_to(path);
    _exit(fd >= 0 ? 0 : errno & 0x7f);
  }
  int wst = 0;
  assert_int_equal(waitpid(pid, &wst, 0), pid);
  assert_true(WIFEXITED(wst));
  return WEXITSTATUS(wst);
}

/* metrics_group: the socket 0660 and its own directory 0750, both of the
 * group (made so from the kubelet's 0755 root:root); a member connects,
 * another non-root uid does not; a directory others can write, a TCP
 * endpoint, are refused. */
static void test_group_socket(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  gid_t group = geteuid() == 0 ? 4242 : getegid();
  char dir[] = "/tmp/metgroup.XXXXXX";
  assert_non_null(mkdtemp(dir));
  char sub[96], path[128], spec[160];
  snprintf(sub, sizeof(sub), "%s/metrics", dir);
  snprintf(path, sizeof(path), "%s/m.sock", sub);
  snprintf(spec, sizeof(spec), "unix:%s", path);
  assert_int_equal(chmod(dir, 0755), 0);
  assert_int_equal(mkdir(sub, 0755), 0);
  assert_int_equal(chmod(sub, 0755), 0); /* what a kubelet's DirectoryOrCreate makes */
  struct iob_loop *loop = NULL;
  assert_int_equal(iob_loop_new(&loop, &err), 0);
  struct agent_metrics_server *srv = NULL;
  if (agent_metrics_server_open(loop, spec, (unsigned)group, render_x, NULL, &srv, &err) < 0)
    fail_msg("%s", err->msg);
  assert_int_equal(agent_metrics_server_group(srv), group);
  struct stat st;
  assert_int_equal(lstat(path, &st), 0);
  assert_true(S_ISSOCK(st.st_mode));
  assert_int_equal(st.st_mode & 07777, 0660);
  assert_int_equal(st.st_gid, group);
  assert_int_equal(st.st_uid, geteuid());
  assert_int_equal(stat(sub, &st), 0);
  assert_int_equal(st.st_mode & 07777, 0750);
  assert_int_equal(st.st_gid, group);
  if (geteuid() == 0) {
    assert_int_equal(connect_as(path, group), 0);
    assert_int_equal(connect_as(path, 4243), EACCES);
    pump(loop, 3);
  }
  agent_metrics_server_free(srv);
  srv = NULL;
  assert_int_equal(lstat(path, &st), -1);
  /* group-writable: someone else may have put a socket there */
  assert_int_equal(chmod(sub, 0770), 0);
  assert_int_equal(
      agent_metrics_server_open(loop, spec, (unsigned)group, render_x, NULL, &srv, &err), -1);
  assert_non_null(strstr(err->msg, "writable by nobody else"));
  iob_error_release(&err);
  assert_int_equal(
      agent_metrics_server_open(loop, "127.0.0.1:9", (unsigned)group, render_x, NULL, &srv, &err),
      -1);
  assert_non_null(strstr(err->msg, "needs metrics = unix:PATH"));
  iob_loop_free(loop);
  rmdir(sub);
  rmdir(dir);
}

/* Root without CAP_CHOWN and outside the group cannot give the socket's
 * directory to it: the agent does not start, and says what it needs (the
 * DaemonSet puts it in the group with supplementalGroups). */
static void test_group_without_chown(void **state) {
  (void)state;
  if (geteuid() != 0)
    fail_msg("needs root: it drops CAP_CHOWN in a child");
  char dir[] = "/tmp/metchown.XXXXXX";
  assert_non_null(mkdtemp(dir));
  char spec[96];
  snprintf(spec, sizeof(spec), "unix:%s/metrics/m.sock", dir);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
    struct __user_cap_data_struct d[2];
    if (setgroups(0, NULL) < 0 || syscall(SYS_capget, &h, d) < 0)
      _exit(2);
    d[0].effective &= ~(1u << CAP_CHOWN);
    if (syscall(SYS_capset, &h, d) < 0)
      _exit(3);
    struct iob_loop *loop = NULL;
    struct iob_error *err = NULL;
    struct agent_metrics_server *srv = NULL;
    if (iob_loop_new(&loop, &err) < 0)
      _exit(4);
    if (agent_metrics_server_open(loop, spec, 4244, render_x, NULL, &srv, &err) == 0)
      _exit(5);
    _exit(strstr(err->msg, "must be in the group, or have CAP_CHOWN") ? 0 : 6);
  }
  int wst = 0;
  assert_int_equal(waitpid(pid, &wst, 0), pid);
  assert_true(WIFEXITED(wst));
  assert_int_equal(WEXITSTATUS(wst), 0);
  char sub[96];
  snprintf(sub, sizeof(sub), "%s/metrics", dir);
  rmdir(sub);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_render_golden),
      cmocka_unit_test(test_render_latency),
      cmocka_unit_test(test_counters_monotonic),
      cmocka_unit_test(test_view_count),
      cmocka_unit_test(test_parse_good),
      cmocka_unit_test(test_parse_malformed),
      cmocka_unit_test(test_addr),
      cmocka_unit_test(test_admission_reasons),
      cmocka_unit_test(test_peer_key),
      cmocka_unit_test(test_per_peer_limit),
      cmocka_unit_test(test_group_socket),
      cmocka_unit_test(test_group_without_chown),
      cmocka_unit_test(test_render_pod_series),
      cmocka_unit_test(test_label_escaping),
      cmocka_unit_test(test_expo_check_rejects),
      cmocka_unit_test(test_headroom),
      cmocka_unit_test(test_render_headroom),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
