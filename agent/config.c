// SPDX-License-Identifier: Apache-2.0
#include "agent/config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/protect/ioprio.h"

#include "agent/sample/lathist.h"
#include "agent/store/profiles.h"
#include "agent/protect/protect.h"
#include "batcher/batcher.h"
#include "common/cleanup.h"
#include "common/conf.h"
#include "common/file.h"
#include "common/log.h"
#include "common/xalloc.h"

void agent_config_default(struct agent_config *cfg) {
  memset(cfg, 0, sizeof(*cfg));
  cfg->sample_period_ms = 1000;
  /* Long enough to gather the containers of one `kubectl apply` or one
   * compose file, short against the cost of a wrong admission. */
  cfg->batch_window_ms = 200;
  cfg->max_hold_ms = 5 * 60 * 1000;
  cfg->policy = -1;
  cfg->alpha = -1;
  cfg->fairness = -1;
  cfg->sampler = AGENT_SAMPLER_AUTO;
  cfg->protect_share = 0.85;
  cfg->protect_signal = AGENT_PROTECT_SIGNAL_AUTO;
  struct agent_protect_cfg pc;
  agent_protect_cfg_default(&pc);
  cfg->protect_scope = pc.scope;
  cfg->protect_cap_start = (uint64_t)pc.cap_start_bps;
  cfg->protect_cap_floor = (uint64_t)pc.cap_floor_bps;
  cfg->protect_raise = pc.raise;
  cfg->protect_cut = pc.cut;
  cfg->protect_hold_at_floor = pc.hold_at_floor;
  cfg->protect_gap_ms = UINT64_MAX;
  cfg->protect_cpu = true;
  cfg->protect_evidence = true;
  cfg->protect_ioprio = AGENT_IOPRIO_IDLE;
  cfg->protect_freeze = AGENT_FREEZE_AUTO;
  cfg->protect_freeze_after = pc.freeze_after;
  cfg->profiles_per_namespace = AGENT_PROFILES_PER_NS_DEFAULT;
  cfg->protect_batch_budget = pc.batch_budget;
  cfg->protect_unknown_delay_ms = (uint64_t)(pc.unknown_delay_s * 1000);
  cfg->cri_poll_ms = 10000;
  cfg->cri_timeout_ms = 2000;
}

const char *agent_config_sampler_pref_name(int pref) {
  switch (pref) {
  case AGENT_SAMPLER_AUTO:
    return "auto";
  case AGENT_SAMPLER_IOSTAT:
    return "io.stat";
  case AGENT_SAMPLER_PROCFS:
    return "procfs";
  case AGENT_SAMPLER_BPF:
    return "bpf";
  }
  return "invalid";
}

/* Every string of struct agent_config, listed once: agent_config_copy
 * duplicates them and agent_config_release frees them. */
static char **str_field(struct agent_config *cfg, size_t i) {
  char **const f[] = {&cfg->socket_path,    &cfg->state_dir,     &cfg->matrix_file,
                      &cfg->cgroup_root,    &cfg->detector_file, &cfg->metrics,
                      &cfg->trust_declared, &cfg->kubepods_root, &cfg->cri_endpoint};
  return i < sizeof(f) / sizeof(f[0]) ? f[i] : NULL;
}

void agent_config_release(struct agent_config *cfg) {
  char **f;
  for (size_t i = 0; (f = str_field(cfg, i)) != NULL; i++) {
    free(*f);
    *f = NULL;
  }
  free(cfg->pod_rules.v);
  cfg->pod_rules.v = NULL;
  cfg->pod_rules.n = 0;
}

void agent_config_copy(struct agent_config *dst, const struct agent_config *src) {
  *dst = *src;
  char **f;
  for (size_t i = 0; (f = str_field(dst, i)) != NULL; i++)
    *f = *f ? xstrdup(*f) : NULL;
  dst->pod_rules.v = NULL;
  if (src->pod_rules.n) {
    dst->pod_rules.v = xmalloc(src->pod_rules.n * sizeof(src->pod_rules.v[0]));
    memcpy(dst->pod_rules.v, src->pod_rules.v, src->pod_rules.n * sizeof(src->pod_rules.v[0]));
  }
}

static bool str_differs(const char *a, const char *b) {
  return (a == NULL) != (b == NULL) || (a && strcmp(a, b) != 0);
}

static void keep_str(char **next, const char *running) {
  free(*next);
  *next = running ? xstrdup(running) : NULL;
}

void agent_config_keep_restart_only(struct agent_config *next, const struct agent_config *run) {
  if (next->socket_path && strcmp(next->socket_path, run->socket_path) != 0)
    iob_warn("reload: a new socket path takes a restart; still on '%s'", run->socket_path);
  if (next->state_dir && strcmp(next->state_dir, run->state_dir) != 0)
    iob_warn("reload: a new state_dir takes a restart; still on '%s'", run->state_dir);
  if (next->kubepods_off != run->kubepods_off ||
      str_differs(next->kubepods_root, run->kubepods_root))
    iob_warn("reload: kubepods and kubepods_root take a restart");
  if (next->sampler != run->sampler || next->latency_source != run->latency_source ||
      str_differs(next->cgroup_root, run->cgroup_root))
    iob_warn("reload: sampler, latency_source and cgroup_root take a restart");
  keep_str(&next->socket_path, run->socket_path);
  keep_str(&next->state_dir, run->state_dir);
  keep_str(&next->kubepods_root, run->kubepods_root);
  keep_str(&next->cgroup_root, run->cgroup_root);
  next->kubepods_off = run->kubepods_off;
  next->sampler = run->sampler;
  next->latency_source = run->latency_source;
}

int agent_config_parse_duration(const char *s, uint64_t *ms) {
  char *end = NULL;
  if (*s < '0' || *s > '9')
    return -1;
  errno = 0;
  double v = strtod(s, &end);
  if (errno != 0 || end == s || !isfinite(v) || v < 0)
    return -1;
  double mul;
  if (*end == '\0' || strcmp(end, "ms") == 0)
    mul = 1;
  else if (strcmp(end, "s") == 0)
    mul = 1000;
  else if (strcmp(end, "m") == 0)
    mul = 60 * 1000;
  else if (strcmp(end, "h") == 0)
    mul = 3600 * 1000;
  else
    return -1;
  v *= mul;
  /* A day is far beyond any sensible hold or period; larger values are typos. */
  if (v > 24.0 * 3600 * 1000)
    return -1;
  *ms = (uint64_t)llround(v);
  return 0;
}

static int parse_uint(const char *s, unsigned long max, unsigned *out) {
  char *end = NULL;
  if (*s < '0' || *s > '9')
    return -1;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (errno != 0 || *end != '\0' || v > max)
    return -1;
  *out = (unsigned)v;
  return 0;
}

static int parse_double(const char *s, double lo, double hi, double *out) {
  char *end = NULL;
  errno = 0;
  double v = strtod(s, &end);
  if (errno != 0 || end == s || *end != '\0' || !isfinite(v) || v < lo || v > hi)
    return -1;
  *out = v;
  return 0;
}

static int parse_bool(const char *s, bool *out) {
  if (strcmp(s, "true") == 0 || strcmp(s, "yes") == 0 || strcmp(s, "1") == 0 ||
      strcmp(s, "on") == 0)
    *out = true;
  else if (strcmp(s, "false") == 0 || strcmp(s, "no") == 0 || strcmp(s, "0") == 0 ||
           strcmp(s, "off") == 0)
    *out = false;
  else
    return -1;
  return 0;
}

/* Paths must be absolute: the daemon's cwd is not something to depend on. */
static int parse_path(const char *s, char **out) {
  if (s[0] != '/' || strlen(s) >= 4096)
    return -1;
  free(*out);
  *out = xstrdup(s);
  return 0;
}

static int conf_path(const struct iob_conf_key *k, const char *v, void *field, void *ctx) {
  (void)k;
  (void)ctx;
  return parse_path(v, field);
}

static int conf_socket(const struct iob_conf_key *k, const char *v, void *field, void *ctx) {
  /* sun_path holds 108 bytes including the NUL. */
  if (strlen(v) >= 108)
    return -1;
  return conf_path(k, v, field, ctx);
}

static int conf_duration(const struct iob_conf_key *k, const char *v, void *field, void *ctx) {
  (void)ctx;
  uint64_t ms;
  if (agent_config_parse_duration(v, &ms) < 0 || (double)ms < k->lo || (double)ms > k->hi)
    return -1;
  memcpy(field, &ms, sizeof(ms));
  return 0;
}

static int conf_uint(const struct iob_conf_key *k, const char *v, void *field, void *ctx) {
  (void)ctx;
  unsigned u;
  if (parse_uint(v, (unsigned long)k->hi, &u) < 0 || (double)u < k->lo)
    return -1;
  memcpy(field, &u, sizeof(u));
  return 0;
}

static int conf_double(const struct iob_conf_key *k, const char *v, void *field, void *ctx) {
  (void)ctx;
  return parse_double(v, k->lo, k->hi, field);
}

static int conf_bool(const struct iob_conf_key *k, const char *v, void *field, void *ctx) {
  (void)k;
  (void)ctx;
  return parse_bool(v, field);
}

/* One of two words: the first sets false (0), the second true (1). */
static int pick(const char *v, const char *no, const char *yes, int *out) {
  if (strcmp(v, no) == 0)
    *out = 0;
  else if (strcmp(v, yes) == 0)
    *out = 1;
  else
    return -1;
  return 0;
}

static int conf_policy(const struct iob_conf_key *k, const char *v, void *field, void *ctx) {
  (void)k;
  (void)ctx;
  int policy = batch_policy_from_name(v);
  if (policy < 0)
    return -1;
  *(int *)field = policy;
  return 0;
}

static int conf_protect(const struct iob_conf_key *k, const char *v, void *field, void *ctx) {
  (void)k;
  (void)ctx;
  int yes;
  if (pick(v, "declared", "detected", &yes) < 0)
    return -1;
  *(bool *)field = yes;
  return 0;
}

static int conf_freeze(const struct iob_conf_key *k, const char *v, void *field, void *ctx) {
  (void)k;
  (void)ctx;
  bool b;
  if (strcmp(v, "auto") == 0)
    *(int *)field = AGENT_FREEZE_AUTO;
  else if (parse_bool(v, &b) == 0)
    *(int *)field = b;
  else
    return -1;
  return 0;
}

static int conf_ioprio(const struct iob_conf_key *k, const char *v, void *field, void *ctx) {
  (void)k;
  (void)ctx;
  static const char *const names[] = {
      [AGENT_IOPRIO_OFF] = "off", [AGENT_IOPRIO_IDLE] = "idle", [AGENT_IOPRIO_BE7] = "be7"};
  for (int i = 0; i < (int)IOB_ARRAY_SIZE(names); i++)
    if (strcmp(v, names[i]) == 0) {
      *(int *)field = i;
      return 0;
    }
  return -1;
}

static int conf_protect_objective(const struct iob_conf_key *k, const char *v, void *field,
                                  void *ctx) {
  (void)k;
  (void)ctx;
  for (int p = AGENT_PROTECT_OBJECTIVE_AUTO; p <= AGENT_PROTECT_OBJECTIVE_OFF; p++)
    if (strcmp(v, agent_protect_objective_name(p)) == 0) {
      *(int *)field = p;
      return 0;
    }
  return -1;
}

static int conf_protect_signal(const struct iob_conf_key *k, const char *v, void *field,
                               void *ctx) {
  (void)k;
  (void)ctx;
  for (int p = AGENT_PROTECT_SIGNAL_AUTO; p <= AGENT_PROTECT_SIGNAL_PRESSURE; p++)
    if (strcmp(v, agent_protect_signal_name(p)) == 0) {
      *(int *)field = p;
      return 0;
    }
  return -1;
}

static int conf_protect_scope(const struct iob_conf_key *k, const char *v, void *field, void *ctx) {
  (void)k;
  (void)ctx;
  for (int p = AGENT_PROTECT_WRITERS; p <= AGENT_PROTECT_ALL; p++)
    if (strcmp(v, agent_protect_scope_name(p)) == 0) {
      *(int *)field = p;
      return 0;
    }
  return -1;
}

static int conf_protect_hold(const struct iob_conf_key *k, const char *v, void *field, void *ctx) {
  (void)k;
  (void)ctx;
  int yes;
  if (pick(v, "short", "floor", &yes) < 0)
    return -1;
  *(bool *)field = yes;
  return 0;
}

static int conf_sampler(const struct iob_conf_key *k, const char *v, void *field, void *ctx) {
  (void)k;
  (void)ctx;
  for (int p = AGENT_SAMPLER_AUTO; p <= AGENT_SAMPLER_BPF; p++)
    if (strcmp(v, agent_config_sampler_pref_name(p)) == 0) {
      *(int *)field = p;
      return 0;
    }
  return -1;
}

static int conf_latency_source(const struct iob_conf_key *k, const char *v, void *field,
                               void *ctx) {
  (void)k;
  (void)ctx;
  for (int p = AGENT_LATHIST_AUTO; p <= AGENT_LATHIST_OFF; p++)
    if (strcmp(v, agent_lathist_pref_name(p)) == 0) {
      *(int *)field = p;
      return 0;
    }
  return -1;
}

static int conf_metrics(const struct iob_conf_key *k, const char *v, void *field, void *ctx) {
  (void)k;
  (void)ctx;
  /* The form (loopback only) is checked by agent_metrics_server_addr_parse when
   * the daemon opens it; here only what no address can be. */
  if (strlen(v) > 200 || strpbrk(v, " \t") != NULL)
    return -1;
  char **dst = field;
  free(*dst);
  *dst = xstrdup(v);
  return 0;
}

/* A namespace name: what containerd allows (a-z, A-Z, 0-9, '.', '_',
 * '-'), which covers Kubernetes' DNS labels. */
static bool ns_name_ok(const char *s, size_t n) {
  if (n == 0 || n > 253)
    return false;
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
          (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '_' || s[i] == '-'))
      return false;
  return true;
}

/* "all" (NULL), "none" (""), or a comma list, kept as ",a,b,". */
static int conf_trust(const struct iob_conf_key *k, const char *v, void *field, void *ctx) {
  (void)k;
  struct agent_config *cfg = ctx;
  cfg->trust_declared_set = true;
  char **dst = field;
  char *out = NULL;
  if (strcmp(v, "all") == 0) {
    free(*dst);
    *dst = NULL;
    return 0;
  }
  if (strcmp(v, "none") == 0) {
    out = xstrdup("");
  } else {
    out = xmalloc(strlen(v) + 3);
    size_t o = 0;
    out[o++] = ',';
    for (const char *p = v;;) {
      while (*p == ' ' || *p == '\t')
        p++;
      size_t n = strcspn(p, ",");
      size_t t = n;
      while (t > 0 && (p[t - 1] == ' ' || p[t - 1] == '\t'))
        t--;
      if (!ns_name_ok(p, t) || (t == 3 && !strncmp(p, "all", 3)) ||
          (t == 4 && !strncmp(p, "none", 4))) {
        free(out);
        return -1;
      }
      memcpy(out + o, p, t);
      o += t;
      out[o++] = ',';
      if (p[n] == '\0')
        break;
      p += n + 1;
    }
    out[o] = '\0';
  }
  free(*dst);
  *dst = out;
  return 0;
}

/* "auto" (NULL), "off" (""), or unix:///PATH kept as PATH. */
static int conf_cri_endpoint(const struct iob_conf_key *k, const char *v, void *field, void *ctx) {
  (void)k;
  (void)ctx;
  char **dst = field;
  char *out;
  /* The path as cri_endpoint_path (cri/cri.h) takes it: absolute, and
   * short enough for sun_path. */
  if (strcmp(v, "auto") == 0)
    out = NULL;
  else if (strcmp(v, "off") == 0)
    out = xstrdup("");
  else if (strncmp(v, "unix:///", 8) == 0 && strlen(v + 7) < 108)
    out = xstrdup(v + 7);
  else
    return -1;
  free(*dst);
  *dst = out;
  return 0;
}

bool agent_config_trusts(const struct agent_config *cfg, const char *ns) {
  const char *list = cfg->trust_declared;
  if (list == NULL)
    return true;
  size_t n = ns ? strlen(ns) : 0;
  if (!ns_name_ok(ns, n)) /* "" and anything with a ',' in it too */
    return false;
  for (const char *p = strstr(list, ns); p; p = strstr(p + 1, ns))
    if (p > list && p[-1] == ',' && p[n] == ',')
      return true;
  return false;
}

const char *agent_config_trust_notice(const struct agent_config *cfg) {
  if (cfg->trust_declared_set)
    return NULL;
  return "trust_declared is not set: the io.iobatch.class, .kind and .max-hold-ms of every "
         "namespace are taken as said (the built-in default, all); where tenants start pods, "
         "set trust_declared = kube-system (what the package and the DaemonSet ship), or all "
         "to keep this and say so";
}

static int conf_kubepods(const struct iob_conf_key *k, const char *v, void *field, void *ctx) {
  (void)k;
  (void)ctx;
  int off;
  if (pick(v, "auto", "off", &off) < 0)
    return -1;
  *(bool *)field = off;
  return 0;
}

/* One more rule, after the ones before it (order decides). */
static int add_pod_rule(struct agent_config *c, const char *v, char *why, size_t why_len) {
  struct agent_pod_rules *rs = &c->pod_rules;
  struct agent_pod_rule r;
  if (rs->n == AGENT_POD_RULES_MAX)
    return snprintf(why, why_len, "more than %d rules", AGENT_POD_RULES_MAX), -1;
  if (agent_pod_rule_parse(v, &r, why, why_len) < 0)
    return -1;
  for (size_t i = 0; i < rs->n; i++)
    if (strcmp(rs->v[i].name, r.name) == 0)
      return snprintf(why, why_len, "a rule named '%s' is given already", r.name), -1;
  rs->v = xrealloc(rs->v, (rs->n + 1) * sizeof(rs->v[0]));
  rs->v[rs->n++] = r;
  return 0;
}

#define F(f) offsetof(struct agent_config, f)
#define PATH "an absolute path"
static const struct iob_conf_key keys[] = {
    {"socket", conf_socket, F(socket_path), 0, 0, PATH},
    {"state_dir", conf_path, F(state_dir), 0, 0, PATH},
    {"sample_period", conf_duration, F(sample_period_ms), 10, 3600 * 1000,
     "a duration from 10ms to 1h (e.g. 500ms, 2s)"},
    {"batch_window", conf_duration, F(batch_window_ms), 0, 60 * 1000,
     "a duration up to 1m (e.g. 200ms)"},
    {"max_concurrency", conf_uint, F(max_concurrency), 1, 1024, "an integer from 1 to 1024"},
    {"max_hold", conf_duration, F(max_hold_ms), 0, 24.0 * 3600 * 1000,
     "a duration up to 24h (e.g. 30s, 5m)"},
    {"policy", conf_policy, F(policy), 0, 0, "'predictive' or 'paper'"},
    {"alpha", conf_double, F(alpha), 0, 1, "a number from 0 to 1"},
    {"fairness", conf_double, F(fairness), 1, 1000, "a number from 1 to 1000"},
    {"matrix", conf_path, F(matrix_file), 0, 0, PATH},
    {"cgroup_root", conf_path, F(cgroup_root), 0, 0, PATH},
    {"detector", conf_path, F(detector_file), 0, 0, PATH},
    {"sampler", conf_sampler, F(sampler), 0, 0, "'auto', 'io.stat', 'procfs' or 'bpf'"},
    {"latency_source", conf_latency_source, F(latency_source), 0, 0,
     "'auto', 'bpf', 'pressure' or 'off'"},
    {"debug", conf_bool, F(debug), 0, 0, "true or false"},
    {"metrics", conf_metrics, F(metrics), 0, 0,
     "unix:/PATH, 127.0.0.1:PORT, [::1]:PORT or localhost:PORT"},
    {"metrics_group", conf_uint, F(metrics_group), 1, 4294967294.0,
     "a numeric group id from 1 to 4294967294"},
    {"protect", conf_protect, F(protect_detected), 0, 0, "'declared' or 'detected'"},
    {"protect_share", conf_double, F(protect_share), 0.05, 1, "a number from 0.05 to 1"},
    {"protect_signal", conf_protect_signal, F(protect_signal), 0, 0,
     "'auto', 'rate' or 'pressure'"},
    {"protect_objective", conf_protect_objective, F(protect_objective), 0, 0,
     "'auto', 'declared' or 'off'"},
    {"protect_scope", conf_protect_scope, F(protect_scope), 0, 0, "'writers' or 'all'"},
    {"protect_cap_start", iob_conf_bytes, F(protect_cap_start), 64 * 1024, 1e12,
     "bytes per second from 64K to 1e12, K/M/G suffixes (e.g. 64M)"},
    {"protect_cap_floor", iob_conf_bytes, F(protect_cap_floor), 64 * 1024, 1e12,
     "bytes per second from 64K to 1e12, K/M/G suffixes (e.g. 16M)"},
    {"protect_raise", conf_double, F(protect_raise), 1, 10, "a number from 1 to 10"},
    {"protect_cut", conf_double, F(protect_cut), 0.05, 1, "a number from 0.05 to 1"},
    {"protect_batch_budget", conf_double, F(protect_batch_budget), 0, 100,
     "a number from 0 (no budget) to 100"},
    {"protect_unknown_delay", conf_duration, F(protect_unknown_delay_ms), 0, 24.0 * 3600 * 1000,
     "a duration up to 24h (e.g. 60s, 5m)"},
    {"protect_cpu", conf_bool, F(protect_cpu), 0, 0, "true or false"},
    {"protect_evidence", conf_bool, F(protect_evidence), 0, 0, "true or false"},
    {"protect_ioprio", conf_ioprio, F(protect_ioprio), 0, 0, "idle, be7 or off"},
    {"protect_freeze", conf_freeze, F(protect_freeze), 0, 0, "auto, true or false"},
    {"protect_freeze_after", conf_uint, F(protect_freeze_after), 1, 100, "1 to 100 windows"},
    {"protect_hold", conf_protect_hold, F(protect_hold_at_floor), 0, 0, "'short' or 'floor'"},
    {"protect_gap", conf_duration, F(protect_gap_ms), 0, 60 * 1000,
     "a duration up to 1m (e.g. 2s, 0)"},
    {"trust_declared", conf_trust, F(trust_declared), 0, 0,
     "'all', 'none' or a comma-separated list of namespaces"},
    {"cri_endpoint", conf_cri_endpoint, F(cri_endpoint), 0, 0,
     "'auto', 'off' or unix:///PATH (at most 107 bytes)"},
    {"cri_poll", conf_duration, F(cri_poll_ms), 500, 3600 * 1000,
     "a duration from 500ms to 1h (e.g. 10s)"},
    {"cri_timeout", conf_duration, F(cri_timeout_ms), 10, 60 * 1000,
     "a duration from 10ms to 1m (e.g. 2s)"},
    {"profiles_per_namespace", conf_uint, F(profiles_per_namespace), 1, AGENT_PROFILES_MAX,
     "an integer from 1 to 4096"},
    {"kubepods", conf_kubepods, F(kubepods_off), 0, 0, "'auto' or 'off'"},
    {"kubepods_root", conf_path, F(kubepods_root), 0, 0, PATH},
    /* repeatable: parse_line adds each (add_pod_rule) */
    {"pod_rule", NULL, F(pod_rules), 0, 0, "NAME: SELECTORS -> EFFECTS"},
};
#undef PATH
#undef F
#define NKEYS IOB_ARRAY_SIZE(keys)

static int parse_line(struct agent_config *c, bool seen[NKEYS], const char *name, unsigned lineno,
                      char *line, struct iob_error **err) {
  char *key = NULL, *val = NULL;
  int r = iob_conf_split(line, IOB_CONF_TRIM_CR, &key, &val);
  if (r == 0)
    return 0;
  if (r < 0)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "'%s' line %u: expected 'key = value', got '%s'", name, lineno, key);
  int k = iob_conf_find(keys, NKEYS, key);
  if (k < 0)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "'%s' line %u: unknown key '%s'", name,
                          lineno, key);
  if (seen[k] && keys[k].parse != NULL)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "'%s' line %u: key '%s' given twice",
                          name, lineno, key);
  /* A file's pod_rule lines replace those parsed before it, as one value. */
  if (keys[k].parse == NULL && !seen[k])
    c->pod_rules.n = 0;
  seen[k] = true;
  if (*val == '\0')
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "'%s' line %u: '%s' has no value", name,
                          lineno, key);
  if (keys[k].parse == NULL) {
    char why[256];
    if (add_pod_rule(c, val, why, sizeof(why)) < 0)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "'%s' line %u: invalid %s '%s': %s",
                            name, lineno, key, val, why);
    return 0;
  }
  if (iob_conf_set(&keys[k], val, c, c) < 0)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "'%s' line %u: invalid value '%s' for '%s': expected %s", name, lineno,
                          val, key, keys[k].expect);
  return 0;
}

int agent_config_parse(struct agent_config *cfg, const char *name, const char *buf, size_t len,
                       struct iob_error **err) {
  if (len > AGENT_CONFIG_MAX_BYTES)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "'%s' is too large: %zu bytes, at most %d", name, len,
                          AGENT_CONFIG_MAX_BYTES);
  if (memchr(buf, '\0', len) != NULL)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "'%s' contains a NUL byte", name);
  struct agent_config tmp;
  agent_config_copy(&tmp, cfg);
  bool seen[NKEYS] = {false};
  char line[AGENT_CONFIG_MAX_LINE + 1];
  unsigned lineno = 0;
  size_t off = 0;
  while (off < len) {
    const char *nl = memchr(buf + off, '\n', len - off);
    size_t n = nl ? (size_t)(nl - (buf + off)) : len - off;
    lineno++;
    if (n > AGENT_CONFIG_MAX_LINE) {
      agent_config_release(&tmp);
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "'%s' line %u: line too long (%zu bytes, at most %d)", name, lineno, n,
                            AGENT_CONFIG_MAX_LINE);
    }
    memcpy(line, buf + off, n);
    line[n] = '\0';
    off += n + (nl ? 1 : 0);
    if (parse_line(&tmp, seen, name, lineno, line, err) < 0) {
      agent_config_release(&tmp);
      return -1;
    }
  }
  agent_config_release(cfg);
  *cfg = tmp;
  return 0;
}

int agent_config_load(struct agent_config *cfg, const char *path, bool must_exist,
                      struct iob_error **err) {
  cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT && !must_exist)
      return 0;
    return iob_error(err, errno, "cannot open '%s'", path);
  }
  struct stat st;
  if (fstat(fd, &st) < 0)
    return iob_error(err, errno, "cannot stat '%s'", path);
  if (!S_ISREG(st.st_mode))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "'%s' is not a regular file", path);
  if (st.st_size > AGENT_CONFIG_MAX_BYTES)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "'%s' is too large: %lld bytes, at most %d", path, (long long)st.st_size,
                          AGENT_CONFIG_MAX_BYTES);
  /* The file can still grow after fstat: the read is bounded too. */
  cleanup_free char *buf = NULL;
  size_t len = 0;
  if (iob_read_fd(fd, path, AGENT_CONFIG_MAX_BYTES, &buf, &len, err) < 0)
    return -1;
  return agent_config_parse(cfg, path, buf, len, err);
}

static void override(char **dst, const char *src) {
  if (src == NULL)
    return;
  free(*dst);
  *dst = xstrdup(src);
}

int agent_config_from_options(struct agent_config *cfg, const struct agent_options *o,
                              struct iob_error **err) {
  agent_config_release(cfg);
  agent_config_default(cfg);
  const char *path = o->config_path ? o->config_path : AGENT_DEFAULT_CONFIG;
  if (agent_config_load(cfg, path, o->config_path != NULL, err) < 0)
    return -1;
  override(&cfg->socket_path, o->socket_path);
  override(&cfg->state_dir, o->state_dir);
  cfg->debug = cfg->debug || o->debug;
  return 0;
}

int agent_config_batch(const struct agent_config *cfg, struct batch_config *b, char *source,
                       size_t source_len, struct iob_error **err) {
  batch_config_default(b);
  snprintf(source, source_len, "defaults");
  if (cfg->matrix_file) {
    cleanup_free char *buf = NULL;
    size_t len = 0;
    if (iob_read_file(cfg->matrix_file, BATCH_CONFIG_MAX_BYTES, &buf, &len, err) < 0 ||
        batch_config_parse(b, cfg->matrix_file, buf, len, err) < 0)
      return -1;
    snprintf(source, source_len, "%s", cfg->matrix_file);
  }
  if (cfg->max_concurrency) {
    b->max_batch = cfg->max_concurrency;
    b->cap_running = true;
  }
  if (cfg->policy >= 0)
    b->policy = (enum batch_policy)cfg->policy;
  if (cfg->alpha >= 0)
    b->alpha = cfg->alpha;
  if (cfg->fairness >= 0)
    b->fairness = cfg->fairness;
  return 0;
}
