#include "agent/config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/file.h"

void agent_config_default(struct agent_config *cfg) {
  memset(cfg, 0, sizeof(*cfg));
  cfg->sample_period_ms = 1000;
  /* Long enough to gather the containers of one `kubectl apply` or one
   * compose file, short against the cost of a wrong admission. */
  cfg->batch_window_ms = 200;
  cfg->max_hold_ms = 5 * 60 * 1000;
  cfg->policy = AGENT_POLICY_DEFAULT;
  cfg->alpha = -1;
  cfg->fairness = -1;
  cfg->sampler = AGENT_SAMPLER_AUTO;
  cfg->protect_share = 0.85;
}

const char *agent_sampler_pref_name(int pref) {
  switch (pref) {
  case AGENT_SAMPLER_AUTO:
    return "auto";
  case AGENT_SAMPLER_IOSTAT:
    return "io.stat";
  case AGENT_SAMPLER_PROCFS:
    return "procfs";
  }
  return "invalid";
}

void agent_config_release(struct agent_config *cfg) {
  free(cfg->socket_path);
  free(cfg->state_dir);
  free(cfg->matrix_file);
  free(cfg->cgroup_root);
  free(cfg->detector_file);
  free(cfg->metrics);
  cfg->metrics = NULL;
  cfg->socket_path = cfg->state_dir = cfg->matrix_file = cfg->cgroup_root = NULL;
  cfg->detector_file = NULL;
}

int agent_parse_duration(const char *s, uint64_t *ms) {
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
  char *p = strdup(s);
  if (p == NULL)
    return -1;
  free(*out);
  *out = p;
  return 0;
}

static char *trim(char *s) {
  while (*s == ' ' || *s == '\t' || *s == '\r')
    s++;
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
    s[--n] = '\0';
  return s;
}

enum key_id {
  K_SOCKET,
  K_STATE_DIR,
  K_SAMPLE_PERIOD,
  K_BATCH_WINDOW,
  K_MAX_CONCURRENCY,
  K_MAX_HOLD,
  K_POLICY,
  K_ALPHA,
  K_FAIRNESS,
  K_MATRIX,
  K_CGROUP_ROOT,
  K_DETECTOR,
  K_SAMPLER,
  K_DEBUG,
  K_METRICS,
  K_PROTECT,
  K_PROTECT_SHARE,
  K_COUNT
};

static const char *const key_names[K_COUNT] = {
    [K_SOCKET] = "socket",
    [K_STATE_DIR] = "state_dir",
    [K_SAMPLE_PERIOD] = "sample_period",
    [K_BATCH_WINDOW] = "batch_window",
    [K_MAX_CONCURRENCY] = "max_concurrency",
    [K_MAX_HOLD] = "max_hold",
    [K_POLICY] = "policy",
    [K_ALPHA] = "alpha",
    [K_FAIRNESS] = "fairness",
    [K_MATRIX] = "matrix",
    [K_CGROUP_ROOT] = "cgroup_root",
    [K_DETECTOR] = "detector",
    [K_SAMPLER] = "sampler",
    [K_DEBUG] = "debug",
    [K_METRICS] = "metrics",
    [K_PROTECT] = "protect",
    [K_PROTECT_SHARE] = "protect_share",
};

static const char *const key_expect[K_COUNT] = {
    [K_SOCKET] = "an absolute path",
    [K_STATE_DIR] = "an absolute path",
    [K_SAMPLE_PERIOD] = "a duration from 10ms to 1h (e.g. 500ms, 2s)",
    [K_BATCH_WINDOW] = "a duration up to 1m (e.g. 200ms)",
    [K_MAX_CONCURRENCY] = "an integer from 1 to 1024",
    [K_MAX_HOLD] = "a duration up to 24h (e.g. 30s, 5m)",
    [K_POLICY] = "'predictive' or 'paper'",
    [K_ALPHA] = "a number from 0 to 1",
    [K_FAIRNESS] = "a number from 1 to 1000",
    [K_MATRIX] = "an absolute path",
    [K_CGROUP_ROOT] = "an absolute path",
    [K_DETECTOR] = "an absolute path",
    [K_SAMPLER] = "'auto', 'io.stat' or 'procfs'",
    [K_DEBUG] = "true or false",
    [K_METRICS] = "unix:/PATH, 127.0.0.1:PORT, [::1]:PORT or localhost:PORT",
    [K_PROTECT] = "'declared' or 'detected'",
    [K_PROTECT_SHARE] = "a number from 0.05 to 1",
};

static int set_value(struct agent_config *c, enum key_id k, const char *v) {
  uint64_t ms;
  char *dup;
  switch (k) {
  case K_SOCKET:
    /* sun_path holds 108 bytes including the NUL. */
    if (strlen(v) >= 108)
      return -1;
    return parse_path(v, &c->socket_path);
  case K_STATE_DIR:
    return parse_path(v, &c->state_dir);
  case K_MATRIX:
    return parse_path(v, &c->matrix_file);
  case K_CGROUP_ROOT:
    return parse_path(v, &c->cgroup_root);
  case K_DETECTOR:
    return parse_path(v, &c->detector_file);
  case K_SAMPLE_PERIOD:
    if (agent_parse_duration(v, &ms) < 0 || ms < 10 || ms > 3600 * 1000)
      return -1;
    c->sample_period_ms = ms;
    return 0;
  case K_BATCH_WINDOW:
    if (agent_parse_duration(v, &ms) < 0 || ms > 60 * 1000)
      return -1;
    c->batch_window_ms = ms;
    return 0;
  case K_MAX_HOLD:
    if (agent_parse_duration(v, &ms) < 0)
      return -1;
    c->max_hold_ms = ms;
    return 0;
  case K_MAX_CONCURRENCY:
    if (parse_uint(v, 1024, &c->max_concurrency) < 0 || c->max_concurrency == 0)
      return -1;
    return 0;
  case K_POLICY:
    if (strcmp(v, "predictive") == 0)
      c->policy = AGENT_POLICY_PREDICTIVE;
    else if (strcmp(v, "paper") == 0)
      c->policy = AGENT_POLICY_PAPER;
    else
      return -1;
    return 0;
  case K_ALPHA:
    return parse_double(v, 0, 1, &c->alpha);
  case K_FAIRNESS:
    return parse_double(v, 1, 1000, &c->fairness);
  case K_SAMPLER:
    for (int p = AGENT_SAMPLER_AUTO; p <= AGENT_SAMPLER_PROCFS; p++)
      if (strcmp(v, agent_sampler_pref_name(p)) == 0) {
        c->sampler = p;
        return 0;
      }
    return -1;
  case K_DEBUG:
    return parse_bool(v, &c->debug);
  case K_METRICS:
    /* The form (loopback only) is checked by agent_metrics_addr_parse when
     * the daemon opens it; here only what no address can be. */
    if (strlen(v) > 200 || strpbrk(v, " \t") != NULL)
      return -1;
    dup = strdup(v);
    if (dup == NULL)
      return -1;
    free(c->metrics);
    c->metrics = dup;
    return 0;
  case K_PROTECT:
    if (strcmp(v, "declared") == 0)
      c->protect_detected = false;
    else if (strcmp(v, "detected") == 0)
      c->protect_detected = true;
    else
      return -1;
    return 0;
  case K_PROTECT_SHARE:
    return parse_double(v, 0.05, 1, &c->protect_share);
  case K_COUNT:
    break;
  }
  return -1;
}

static int dup_config(struct agent_config *dst, const struct agent_config *src) {
  *dst = *src;
  dst->socket_path = dst->state_dir = dst->matrix_file = dst->cgroup_root = NULL;
  dst->detector_file = dst->metrics = NULL;
  if ((src->metrics && !(dst->metrics = strdup(src->metrics))) ||
      (src->socket_path && !(dst->socket_path = strdup(src->socket_path))) ||
      (src->state_dir && !(dst->state_dir = strdup(src->state_dir))) ||
      (src->matrix_file && !(dst->matrix_file = strdup(src->matrix_file))) ||
      (src->cgroup_root && !(dst->cgroup_root = strdup(src->cgroup_root))) ||
      (src->detector_file && !(dst->detector_file = strdup(src->detector_file)))) {
    agent_config_release(dst);
    return -1;
  }
  return 0;
}

static int parse_line(struct agent_config *c, bool seen[K_COUNT], const char *name, unsigned lineno,
                      char *line, struct iob_error **err) {
  char *hash = strchr(line, '#');
  if (hash)
    *hash = '\0';
  char *s = trim(line);
  if (*s == '\0')
    return 0;
  char *eq = strchr(s, '=');
  if (eq == NULL)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "'%s' line %u: expected 'key = value', got '%s'", name, lineno, s);
  *eq = '\0';
  char *key = trim(s), *val = trim(eq + 1);
  int k;
  for (k = 0; k < K_COUNT; k++)
    if (strcmp(key, key_names[k]) == 0)
      break;
  if (k == K_COUNT)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "'%s' line %u: unknown key '%s'", name,
                          lineno, key);
  if (seen[k])
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "'%s' line %u: key '%s' given twice",
                          name, lineno, key);
  seen[k] = true;
  if (*val == '\0')
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "'%s' line %u: '%s' has no value", name,
                          lineno, key);
  if (set_value(c, (enum key_id)k, val) < 0)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "'%s' line %u: invalid value '%s' for '%s': expected %s", name, lineno,
                          val, key, key_expect[k]);
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
  if (dup_config(&tmp, cfg) < 0)
    return iob_error(err, ENOMEM, "cannot copy the configuration");
  bool seen[K_COUNT] = {false};
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

static int override(char **dst, const char *src) {
  if (src == NULL)
    return 0;
  char *s = strdup(src);
  if (s == NULL)
    return -1;
  free(*dst);
  *dst = s;
  return 0;
}

int agent_config_from_options(struct agent_config *cfg, const struct agent_options *o,
                              struct iob_error **err) {
  agent_config_release(cfg);
  agent_config_default(cfg);
  const char *path = o->config_path ? o->config_path : AGENT_DEFAULT_CONFIG;
  if (agent_config_load(cfg, path, o->config_path != NULL, err) < 0)
    return -1;
  if (override(&cfg->socket_path, o->socket_path) < 0 ||
      override(&cfg->state_dir, o->state_dir) < 0)
    return iob_error(err, ENOMEM, "cannot copy the configuration");
  cfg->debug = cfg->debug || o->debug;
  return 0;
}
