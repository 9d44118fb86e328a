// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/config.h"
#include "agent/sample/lathist.h"
#include "agent/store/profiles.h"
#include "agent/protect/protect.h"
#include "batcher/batcher.h"
#include "common/cleanup.h"

static void parse_ok(struct agent_config *c, const char *text) {
  cleanup_error struct iob_error *err = NULL;
  int r = agent_config_parse(c, "t.conf", text, strlen(text), &err);
  if (r < 0)
    fail_msg("unexpected error: %s", err->msg);
}

static void parse_err(const char *text, const char *want) {
  struct agent_config c;
  agent_config_default(&c);
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_config_parse(&c, "t.conf", text, strlen(text), &err), -1);
  assert_non_null(err);
  if (strcmp(err->msg, want) != 0)
    fail_msg("got '%s', want '%s'", err->msg, want);
  assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
  /* untouched on error */
  assert_null(c.socket_path);
  assert_int_equal(c.sample_period_ms, 1000);
  assert_int_equal(c.sampler, AGENT_SAMPLER_AUTO);
  agent_config_release(&c);
}

static void test_defaults(void **state) {
  (void)state;
  struct agent_config c;
  agent_config_default(&c);
  assert_null(c.socket_path);
  assert_int_equal(c.sample_period_ms, 1000);
  assert_int_equal(c.batch_window_ms, 200);
  assert_int_equal(c.max_hold_ms, 300000);
  assert_int_equal(c.policy, -1);
  assert_true(c.alpha < 0);
  assert_int_equal(c.sampler, AGENT_SAMPLER_AUTO);
  parse_ok(&c, "");
  parse_ok(&c, "\n# only a comment\n   \n");
  assert_int_equal(c.sample_period_ms, 1000);
  agent_config_release(&c);
}

static void test_full(void **state) {
  (void)state;
  struct agent_config c;
  agent_config_default(&c);
  parse_ok(&c, "# iobatchd\n"
               "socket = /tmp/x.sock\n"
               "state_dir=/var/tmp/st   # trailing comment\n"
               "\tsample_period = 500ms\r\n"
               "batch_window = 0\n"
               "max_concurrency = 3\n"
               "max_hold = 2m\n"
               "policy = paper\n"
               "alpha = 0.25\n"
               "fairness = 3.5\n"
               "matrix = /etc/iobatch/matrix.conf\n"
               "cgroup_root = /sys/fs/cgroup/unified\n"
               "detector = /etc/iobatch/wcd.conf\n"
               "sampler = io.stat\n"
               "debug = yes");
  assert_string_equal(c.socket_path, "/tmp/x.sock");
  assert_string_equal(c.state_dir, "/var/tmp/st");
  assert_int_equal(c.sample_period_ms, 500);
  assert_int_equal(c.batch_window_ms, 0);
  assert_int_equal(c.max_concurrency, 3);
  assert_int_equal(c.max_hold_ms, 120000);
  assert_int_equal(c.profiles_per_namespace, AGENT_PROFILES_PER_NS_DEFAULT);
  parse_ok(&c, "profiles_per_namespace = 64\n");
  assert_int_equal(c.profiles_per_namespace, 64);
  assert_int_equal(c.policy, BATCH_POLICY_PAPER);
  assert_true(c.alpha == 0.25);
  assert_true(c.fairness == 3.5);
  assert_string_equal(c.matrix_file, "/etc/iobatch/matrix.conf");
  assert_string_equal(c.cgroup_root, "/sys/fs/cgroup/unified");
  assert_string_equal(c.detector_file, "/etc/iobatch/wcd.conf");
  assert_true(c.debug);
  assert_int_equal(c.sampler, AGENT_SAMPLER_IOSTAT);
  assert_string_equal(agent_config_sampler_pref_name(c.sampler), "io.stat");
  /* a second file over the first replaces only what it names */
  parse_ok(&c, "policy = predictive\nsocket = /run/y.sock\n");
  assert_int_equal(c.sampler, AGENT_SAMPLER_IOSTAT);
  parse_ok(&c, "sampler = procfs\n");
  assert_int_equal(c.sampler, AGENT_SAMPLER_PROCFS);
  parse_ok(&c, "sampler = auto\n");
  assert_int_equal(c.sampler, AGENT_SAMPLER_AUTO);
  assert_string_equal(agent_config_sampler_pref_name(99), "invalid");
  /* latency_source (agent/sample/lathist.h): auto by default */
  assert_int_equal(c.latency_source, AGENT_LATHIST_AUTO);
  parse_ok(&c, "latency_source = pressure\n");
  assert_int_equal(c.latency_source, AGENT_LATHIST_PRESSURE);
  parse_ok(&c, "latency_source = bpf\n");
  assert_int_equal(c.latency_source, AGENT_LATHIST_BPF);
  parse_ok(&c, "latency_source = off\n");
  assert_int_equal(c.latency_source, AGENT_LATHIST_OFF);
  assert_int_equal(c.policy, BATCH_POLICY_PREDICTIVE);
  assert_string_equal(c.socket_path, "/run/y.sock");
  assert_string_equal(c.state_dir, "/var/tmp/st");
  agent_config_release(&c);
}

static void test_durations(void **state) {
  (void)state;
  uint64_t ms;
  assert_int_equal(agent_config_parse_duration("1500", &ms), 0);
  assert_int_equal(ms, 1500);
  assert_int_equal(agent_config_parse_duration("1.5s", &ms), 0);
  assert_int_equal(ms, 1500);
  assert_int_equal(agent_config_parse_duration("5m", &ms), 0);
  assert_int_equal(ms, 300000);
  assert_int_equal(agent_config_parse_duration("2h", &ms), 0);
  assert_int_equal(ms, 7200000);
  assert_int_equal(agent_config_parse_duration("-1s", &ms), -1);
  assert_int_equal(agent_config_parse_duration("1x", &ms), -1);
  assert_int_equal(agent_config_parse_duration("s", &ms), -1);
  assert_int_equal(agent_config_parse_duration("", &ms), -1);
  assert_int_equal(agent_config_parse_duration("nan", &ms), -1);
  assert_int_equal(agent_config_parse_duration("inf", &ms), -1);
  assert_int_equal(agent_config_parse_duration("25h", &ms), -1);
  assert_int_equal(agent_config_parse_duration("1e300", &ms), -1);
}

static void test_malformed(void **state) {
  (void)state;
  parse_err("foo = 1\n", "'t.conf' line 1: unknown key 'foo'");
  parse_err("\n\nsocket /x\n", "'t.conf' line 3: expected 'key = value', got 'socket /x'");
  parse_err("latency_source = ebpf", "'t.conf' line 1: invalid value 'ebpf' for "
                                     "'latency_source': expected 'auto', 'bpf', 'pressure' or "
                                     "'off'");
  parse_err("policy = fifo", "'t.conf' line 1: invalid value 'fifo' for 'policy': expected "
                             "'predictive' or 'paper'");
  parse_err("socket = relative.sock",
            "'t.conf' line 1: invalid value 'relative.sock' for 'socket': expected an "
            "absolute path");
  parse_err("alpha = 1.5", "'t.conf' line 1: invalid value '1.5' for 'alpha': expected a "
                           "number from 0 to 1");
  parse_err("alpha = nan", "'t.conf' line 1: invalid value 'nan' for 'alpha': expected a "
                           "number from 0 to 1");
  parse_err("profiles_per_namespace = 0", "'t.conf' line 1: invalid value '0' for "
                                          "'profiles_per_namespace': expected an integer from 1 "
                                          "to 4096");
  parse_err("profiles_per_namespace = 4097", "'t.conf' line 1: invalid value '4097' for "
                                             "'profiles_per_namespace': expected an integer from "
                                             "1 to 4096");
  parse_err("max_concurrency = 0", "'t.conf' line 1: invalid value '0' for 'max_concurrency': "
                                   "expected an integer from 1 to 1024");
  parse_err("max_concurrency = 4x", "'t.conf' line 1: invalid value '4x' for "
                                    "'max_concurrency': expected an integer from 1 to 1024");
  parse_err("sample_period = 1ms", "'t.conf' line 1: invalid value '1ms' for 'sample_period': "
                                   "expected a duration from 10ms to 1h (e.g. 500ms, 2s)");
  parse_err("debug = maybe",
            "'t.conf' line 1: invalid value 'maybe' for 'debug': expected true or false");
  parse_err("sampler = iostat", "'t.conf' line 1: invalid value 'iostat' for 'sampler': "
                                "expected 'auto', 'io.stat', 'procfs' or 'bpf'");
  parse_err("sampler = IO.STAT", "'t.conf' line 1: invalid value 'IO.STAT' for 'sampler': "
                                 "expected 'auto', 'io.stat', 'procfs' or 'bpf'");
  parse_err("debug = yes\nsampler = io.stat procfs",
            "'t.conf' line 2: invalid value 'io.stat procfs' for 'sampler': "
            "expected 'auto', 'io.stat', 'procfs' or 'bpf'");
  parse_err("sampler =", "'t.conf' line 1: 'sampler' has no value");
  parse_err("sampler = auto\nsampler = procfs", "'t.conf' line 2: key 'sampler' given twice");
  parse_err("policy =", "'t.conf' line 1: 'policy' has no value");
  parse_err("policy = paper\npolicy = paper", "'t.conf' line 2: key 'policy' given twice");
  parse_err("= 3", "'t.conf' line 1: unknown key ''");
  parse_err("state_dir = /ok\nsocket = /tmp/"
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
            "'t.conf' line 2: invalid value '/tmp/"
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' for 'socket': "
            "expected an absolute path");
}

/* trust_declared: all (the default), none, or a list of namespaces,
 * matched whole (not as prefixes or parts). */
static void test_trust(void **state) {
  (void)state;
  struct agent_config c;
  agent_config_default(&c);
  assert_true(agent_config_trusts(&c, "team-a"));
  assert_true(agent_config_trusts(&c, ""));
  parse_ok(&c, "trust_declared = none\n");
  assert_false(agent_config_trusts(&c, "kube-system"));
  assert_false(agent_config_trusts(&c, ""));
  agent_config_release(&c);
  agent_config_default(&c);
  parse_ok(&c, "trust_declared = kube-system, batch.team_1\n");
  assert_true(agent_config_trusts(&c, "kube-system"));
  assert_true(agent_config_trusts(&c, "batch.team_1"));
  assert_false(agent_config_trusts(&c, "kube"));
  assert_false(agent_config_trusts(&c, "system"));
  assert_false(agent_config_trusts(&c, "kube-system,batch.team_1"));
  assert_false(agent_config_trusts(&c, "team-a"));
  assert_false(agent_config_trusts(&c, ""));
  assert_false(agent_config_trusts(&c, NULL));
  agent_config_release(&c);
  agent_config_default(&c);
  parse_ok(&c, "trust_declared = all\n");
  assert_true(agent_config_trusts(&c, "anything"));
  assert_null(agent_config_trust_notice(&c)); /* said: no warning */
  agent_config_release(&c);
  /* absent (an older conffile kept by an upgrade): all, and a warning at
   * start that names the key and the shipped value */
  agent_config_default(&c);
  assert_non_null(agent_config_trust_notice(&c));
  parse_ok(&c, "socket = /run/x.sock\n");
  assert_true(agent_config_trusts(&c, "team-a"));
  const char *notice = agent_config_trust_notice(&c);
  assert_non_null(notice);
  assert_non_null(strstr(notice, "trust_declared is not set"));
  assert_non_null(strstr(notice, "trust_declared = kube-system"));
  parse_ok(&c, "trust_declared = none\n");
  assert_null(agent_config_trust_notice(&c));
  agent_config_release(&c);
  const char *want = "expected 'all', 'none' or a comma-separated list of namespaces";
  const char *bad[] = {"kube system", ",", "a,,b", "a,", "all,x", "x,none", "x/y", "a;b"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    char text[128], msg[256];
    snprintf(text, sizeof(text), "trust_declared = %s", bad[i]);
    snprintf(msg, sizeof(msg), "'t.conf' line 1: invalid value '%s' for 'trust_declared': %s",
             bad[i], want);
    parse_err(text, msg);
  }
}

/* kubepods, kubepods_root and pod_rule: pod_rule repeats, in
 * order; a malformed one says why; a second file's rules replace. */
static void test_kubepods_keys(void **state) {
  (void)state;
  struct agent_config c;
  agent_config_default(&c);
  assert_false(c.kubepods_off); /* auto: on when the tree exists */
  assert_null(c.kubepods_root);
  assert_int_equal(c.pod_rules.n, 0);
  parse_ok(&c, "kubepods = off\nkubepods_root = /k8s\n"
               "pod_rule = db: namespace=db label:tier=db -> class=latency latency-target=5ms\n"
               "pod_rule = be: qos=besteffort -> class=seq-write\n");
  assert_true(c.kubepods_off);
  assert_string_equal(c.kubepods_root, "/k8s");
  assert_int_equal(c.pod_rules.n, 2);
  assert_string_equal(c.pod_rules.v[0].name, "db");
  assert_int_equal(c.pod_rules.v[0].lat_target_us, 5000);
  assert_string_equal(c.pod_rules.v[1].name, "be");
  parse_ok(&c, "kubepods = auto\npod_rule = all: -> kind=job\n");
  assert_false(c.kubepods_off);
  assert_int_equal(c.pod_rules.n, 1);
  assert_string_equal(c.pod_rules.v[0].name, "all");
  parse_ok(&c, "debug = true\n"); /* no pod_rule line: the rules stay */
  assert_int_equal(c.pod_rules.n, 1);
  agent_config_release(&c);
  parse_err("kubepods = on", "'t.conf' line 1: invalid value 'on' for 'kubepods': expected "
                             "'auto' or 'off'");
  parse_err("kubepods = off\nkubepods = off", "'t.conf' line 2: key 'kubepods' given twice");
  parse_err("kubepods_root = k8s", "'t.conf' line 1: invalid value 'k8s' for 'kubepods_root': "
                                   "expected an absolute path");
  parse_err("pod_rule = db namespace=db", "'t.conf' line 1: invalid pod_rule 'db namespace=db': "
                                          "expected 'NAME: SELECTORS -> EFFECTS'");
  parse_err("pod_rule = a: -> kind=job\npod_rule = a: qos=burstable -> kind=service",
            "'t.conf' line 2: invalid pod_rule 'a: qos=burstable -> kind=service': a rule named "
            "'a' is given already");
  parse_err("pod_rule =", "'t.conf' line 1: 'pod_rule' has no value");
  char text[AGENT_CONFIG_MAX_BYTES], *p = text;
  for (int i = 0; i <= AGENT_POD_RULES_MAX; i++)
    p += sprintf(p, "pod_rule = r%d: -> kind=job\n", i);
  char want[128];
  snprintf(want, sizeof(want),
           "'t.conf' line %d: invalid pod_rule 'r%d: -> kind=job': more than %d rules",
           AGENT_POD_RULES_MAX + 1, AGENT_POD_RULES_MAX, AGENT_POD_RULES_MAX);
  parse_err(text, want);
}

/* protect_freeze: auto (the default: on under cgroup v2's freezer only),
 * true or false; anything else is refused, naming the choices. */
static void test_protect_freeze(void **state) {
  (void)state;
  struct agent_config c;
  agent_config_default(&c);
  assert_int_equal(c.protect_freeze, AGENT_FREEZE_AUTO);
  parse_ok(&c, "protect_freeze = true\n");
  assert_int_equal(c.protect_freeze, 1);
  parse_ok(&c, "protect_freeze = false\n");
  assert_int_equal(c.protect_freeze, 0);
  parse_ok(&c, "protect_freeze = auto\n");
  assert_int_equal(c.protect_freeze, AGENT_FREEZE_AUTO);
  agent_config_release(&c);
  parse_err(
      "protect_freeze = v2",
      "'t.conf' line 1: invalid value 'v2' for 'protect_freeze': expected auto, true or false");
}

/* cri_endpoint: auto (the default, NULL), off (""), or unix:///PATH kept
 * as PATH; cri_poll and cri_timeout are bounded durations. */
static void test_cri(void **state) {
  (void)state;
  struct agent_config c;
  agent_config_default(&c);
  assert_null(c.cri_endpoint);
  assert_int_equal(c.cri_poll_ms, 10000);
  assert_int_equal(c.cri_timeout_ms, 2000);
  parse_ok(&c, "cri_endpoint = off\ncri_poll = 3s\ncri_timeout = 250ms\n");
  assert_string_equal(c.cri_endpoint, "");
  assert_int_equal(c.cri_poll_ms, 3000);
  assert_int_equal(c.cri_timeout_ms, 250);
  agent_config_release(&c);
  agent_config_default(&c);
  parse_ok(&c, "cri_endpoint = unix:///run/k3s/containerd/containerd.sock\n");
  assert_string_equal(c.cri_endpoint, "/run/k3s/containerd/containerd.sock");
  agent_config_release(&c);
  agent_config_default(&c);
  parse_ok(&c, "cri_endpoint = auto\n");
  assert_null(c.cri_endpoint);
  agent_config_release(&c);
  const char *want = "expected 'auto', 'off' or unix:///PATH (at most 107 bytes)";
  char longp[200] = "unix:///";
  memset(longp + 8, 'a', 120);
  const char *bad[] = {"unix://run/x.sock", "/run/x.sock", "tcp://127.0.0.1:1",
                       "unix://",           "Auto",        longp};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    char text[256], msg[512];
    snprintf(text, sizeof(text), "cri_endpoint = %s", bad[i]);
    snprintf(msg, sizeof(msg), "'t.conf' line 1: invalid value '%s' for 'cri_endpoint': %s", bad[i],
             want);
    parse_err(text, msg);
  }
  parse_err("cri_poll = 100ms", "'t.conf' line 1: invalid value '100ms' for 'cri_poll': expected a "
                                "duration from 500ms to 1h (e.g. 10s)");
  parse_err("cri_timeout = 0", "'t.conf' line 1: invalid value '0' for 'cri_timeout': expected a "
                               "duration from 10ms to 1m (e.g. 2s)");
  parse_err("cri_endpoint = off\ncri_endpoint = auto",
            "'t.conf' line 2: key 'cri_endpoint' given twice");
}

static void test_limits(void **state) {
  (void)state;
  struct agent_config c;
  agent_config_default(&c);
  cleanup_error struct iob_error *err = NULL;
  char nul[] = "debug = true\0\n";
  assert_int_equal(agent_config_parse(&c, "t.conf", nul, sizeof(nul) - 1, &err), -1);
  assert_string_equal(err->msg, "'t.conf' contains a NUL byte");
  cleanup_free char *long_line = malloc(AGENT_CONFIG_MAX_LINE + 10);
  memset(long_line, '#', AGENT_CONFIG_MAX_LINE + 9);
  long_line[AGENT_CONFIG_MAX_LINE + 9] = '\0';
  assert_int_equal(agent_config_parse(&c, "t.conf", long_line, strlen(long_line), &err), -1);
  assert_string_equal(err->msg, "'t.conf' line 1: line too long (1033 bytes, at most 1024)");
  assert_int_equal(agent_config_parse(&c, "t.conf", long_line, AGENT_CONFIG_MAX_BYTES + 1, &err),
                   -1);
  assert_string_equal(err->msg, "'t.conf' is too large: 65537 bytes, at most 65536");
  agent_config_release(&c);
}

static void test_load(void **state) {
  (void)state;
  char dir[] = "/tmp/agentcfg.XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[256];
  snprintf(path, sizeof(path), "%s/iobatchd.conf", dir);
  struct agent_config c;
  agent_config_default(&c);
  cleanup_error struct iob_error *err = NULL;
  /* missing file: fine unless it must exist */
  assert_int_equal(agent_config_load(&c, path, false, &err), 0);
  assert_int_equal(agent_config_load(&c, path, true, &err), -1);
  assert_int_equal(err->code, IOB_CODE_NOT_FOUND);
  assert_non_null(strstr(err->msg, "cannot open '"));
  FILE *f = fopen(path, "w");
  fputs("batch_window = 1s\nbogus\n", f);
  fclose(f);
  assert_int_equal(agent_config_load(&c, path, true, &err), -1);
  char want[512];
  snprintf(want, sizeof(want), "'%s' line 2: expected 'key = value', got 'bogus'", path);
  assert_string_equal(err->msg, want);
  assert_int_equal(c.batch_window_ms, 200);
  f = fopen(path, "w");
  fputs("batch_window = 1s\n", f);
  fclose(f);
  assert_int_equal(agent_config_load(&c, path, true, &err), 0);
  assert_int_equal(c.batch_window_ms, 1000);
  assert_int_equal(agent_config_load(&c, dir, true, &err), -1);
  assert_non_null(strstr(err->msg, "is not a regular file"));
  unlink(path);
  rmdir(dir);
  agent_config_release(&c);
}

static void test_protect_keys(void **state) {
  (void)state;
  struct agent_config c;
  agent_config_default(&c);
  assert_int_equal(c.protect_signal, AGENT_PROTECT_SIGNAL_AUTO);
  assert_int_equal(c.protect_scope, AGENT_PROTECT_WRITERS);
  assert_true(c.protect_gap_ms == UINT64_MAX); /* two sample periods */
  assert_true(c.protect_cpu);
  assert_true(c.protect_batch_budget == 1.5);
  assert_true(c.protect_unknown_delay_ms == 60000);
  parse_ok(&c, "protect_signal = pressure\nprotect_scope = all\nprotect_cap_start = 100M\n"
               "protect_cap_floor = 512K\nprotect_raise = 1.5\nprotect_cut = 0.8\n"
               "protect_gap = 0\nprotect_cpu = false\nprotect_batch_budget = 0\n"
               "protect_objective = declared\nprotect_unknown_delay = 5m\n");
  assert_int_equal(c.protect_objective, AGENT_PROTECT_OBJECTIVE_DECLARED);
  assert_true(c.protect_unknown_delay_ms == 300000);
  assert_true(c.protect_batch_budget == 0);
  assert_false(c.protect_cpu);
  assert_int_equal(c.protect_signal, AGENT_PROTECT_SIGNAL_PRESSURE);
  assert_int_equal(c.protect_scope, AGENT_PROTECT_ALL);
  assert_true(c.protect_cap_start == 100u * 1024 * 1024);
  assert_true(c.protect_cap_floor == 512u * 1024);
  assert_true(c.protect_raise == 1.5 && c.protect_cut == 0.8);
  assert_true(c.protect_gap_ms == 0);
  agent_config_release(&c);
  parse_err("protect_signal = psi", "'t.conf' line 1: invalid value 'psi' for 'protect_signal': "
                                    "expected 'auto', 'rate' or 'pressure'");
  parse_err("protect_scope = readers", "'t.conf' line 1: invalid value 'readers' for "
                                       "'protect_scope': expected 'writers' or 'all'");
  parse_err("protect_cpu = sometimes", "'t.conf' line 1: invalid value 'sometimes' for "
                                       "'protect_cpu': expected true or false");
  parse_err("protect_objective = learned",
            "'t.conf' line 1: invalid value 'learned' for 'protect_objective': expected 'auto', "
            "'declared' or 'off'");
  parse_err("protect_batch_budget = -1",
            "'t.conf' line 1: invalid value '-1' for 'protect_batch_budget': expected a number "
            "from 0 (no budget) to 100");
  parse_err("protect_unknown_delay = 2d",
            "'t.conf' line 1: invalid value '2d' for 'protect_unknown_delay': expected a duration "
            "up to 24h (e.g. 60s, 5m)");
  parse_err("protect_cut = 2", "'t.conf' line 1: invalid value '2' for 'protect_cut': expected "
                               "a number from 0.05 to 1");
  parse_err("protect_cap_floor = 1K",
            "'t.conf' line 1: invalid value '1K' for 'protect_cap_floor': expected bytes per "
            "second from 64K to 1e12, K/M/G suffixes (e.g. 16M)");
}

/* metrics_group: a numeric gid, 1 to 4294967294; absent: 0 (root only). */
static void test_metrics_group(void **state) {
  (void)state;
  struct agent_config c;
  agent_config_default(&c);
  assert_int_equal(c.metrics_group, 0);
  parse_ok(&c, "metrics = unix:/run/iobatch/metrics/metrics.sock\nmetrics_group = 9464\n");
  assert_int_equal(c.metrics_group, 9464);
  parse_ok(&c, "metrics_group = 4294967294");
  assert_int_equal(c.metrics_group, 4294967294u);
  agent_config_release(&c);
  const char *bad[] = {"0",     "-1", "4294967295", "99999999999999999999", "iobatch-metrics",
                       "9464x", " "};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    char text[96], want[256];
    snprintf(text, sizeof(text), "metrics_group = %s", bad[i]);
    if (strcmp(bad[i], " ") == 0) {
      parse_err(text, "'t.conf' line 1: 'metrics_group' has no value");
      continue;
    }
    snprintf(want, sizeof(want),
             "'t.conf' line 1: invalid value '%s' for 'metrics_group': expected a numeric "
             "group id from 1 to 4294967294",
             bad[i]);
    parse_err(text, want);
  }
  parse_err("metrics_group = 1\nmetrics_group = 2",
            "'t.conf' line 2: key 'metrics_group' given twice");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_defaults),       cmocka_unit_test(test_full),
      cmocka_unit_test(test_durations),      cmocka_unit_test(test_malformed),
      cmocka_unit_test(test_limits),         cmocka_unit_test(test_load),
      cmocka_unit_test(test_protect_keys),   cmocka_unit_test(test_trust),
      cmocka_unit_test(test_metrics_group),  cmocka_unit_test(test_cri),
      cmocka_unit_test(test_protect_freeze), cmocka_unit_test(test_kubepods_keys),
  };
  return cmocka_run_group_tests_name("agent_config", tests, NULL, NULL);
}
