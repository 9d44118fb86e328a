#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroupv2/cg2.h"
#include "common/cleanup.h"
#include "wcd/wcd.h"

#define WCD_CONFIG_MAX (64 * 1024)
#define WCD_LINE_MAX 1024

/* Defaults: see cgroupv2/CALIBRATION.md.  16 KiB / 128 KiB are the edges of the
 * ambiguous zone in docs/reference/cgroup-v2-io.md (128 KiB = default readahead, so
 * buffered sequential reads land at or above it); 64 KiB/s is below what a
 * shell or a logger writes back. */
void wcd_config_default(struct wcd_config *cfg) {
  cfg->idle_bytes_per_s = 64 * 1024;
  cfg->idle_max_stall = 10.0;
  cfg->dir_share = 0.8;
  cfg->rand_max_bytes = 16 * 1024;
  cfg->seq_min_bytes = 128 * 1024;
  cfg->min_window_ms = 500;
  cfg->fallback_factor = 0.8;
  /* A database's 8 KiB pages and WAL writes with fsync, a QD1 reader:
   * a few hundred to a few thousand requests/s on NVMe, while batch random
   * I/O at any depth runs at tens of thousands. */
  cfg->lat_max_req = 16 * 1024;
  cfg->lat_max_iops = 5000;
  cfg->lat_max_bps = 32.0 * 1024 * 1024;
}

enum kind { K_BYTES, K_DOUBLE, K_MS };
struct key {
  const char *name;
  enum kind kind;
  size_t off;
  double lo, hi; /* valid range */
};

#define F(f) offsetof(struct wcd_config, f)
static const struct key keys[] = {
    {"idle_bytes_per_s", K_DOUBLE, F(idle_bytes_per_s), 0, 1e12},
    {"idle_max_stall", K_DOUBLE, F(idle_max_stall), 0, 100},
    {"dir_share", K_DOUBLE, F(dir_share), 0.5000001, 1},
    {"rand_max_bytes", K_BYTES, F(rand_max_bytes), 512, 1 << 30},
    {"seq_min_bytes", K_BYTES, F(seq_min_bytes), 512, 1 << 30},
    {"min_window_ms", K_MS, F(min_window_ms), 1, 3600000},
    {"fallback_factor", K_DOUBLE, F(fallback_factor), 0, 1},
    {"lat_max_req", K_BYTES, F(lat_max_req), 512, 1 << 30},
    {"lat_max_iops", K_DOUBLE, F(lat_max_iops), 0, 1e9},
    {"lat_max_bps", K_DOUBLE, F(lat_max_bps), 0, 1e12},
};
#undef F

static int parse_bytes(const char *v, uint64_t *out) {
  size_t l = strlen(v);
  uint64_t mul = 1;
  if (l > 0) {
    switch (v[l - 1]) {
    case 'k':
    case 'K':
      mul = 1024;
      l--;
      break;
    case 'm':
    case 'M':
      mul = 1024 * 1024;
      l--;
      break;
    case 'g':
    case 'G':
      mul = 1024 * 1024 * 1024;
      l--;
      break;
    }
  }
  uint64_t x;
  if (cg2_parse_u64(v, l, &x) < 0 || x > UINT64_MAX / mul)
    return -1;
  *out = x * mul;
  return 0;
}

static int parse_double(const char *v, double *out) {
  char *end = NULL;
  if (*v == '\0' || isspace((unsigned char)*v))
    return -1;
  errno = 0;
  double d = strtod(v, &end);
  if (errno || *end != '\0' || !isfinite(d))
    return -1;
  *out = d;
  return 0;
}

static char *trim(char *s) {
  while (*s == ' ' || *s == '\t')
    s++;
  size_t l = strlen(s);
  while (l > 0 && (s[l - 1] == ' ' || s[l - 1] == '\t' || s[l - 1] == '\r'))
    s[--l] = '\0';
  return s;
}

static int set_key(const struct key *k, const char *v, struct wcd_config *c) {
  char *base = (char *)c + k->off;
  if (k->kind == K_DOUBLE) {
    double d;
    if (parse_double(v, &d) < 0 || d < k->lo || d > k->hi)
      return -1;
    memcpy(base, &d, sizeof(d));
  } else {
    uint64_t x;
    if ((k->kind == K_BYTES ? parse_bytes(v, &x) : cg2_parse_u64(v, strlen(v), &x)) < 0 ||
        (double)x < k->lo || (double)x > k->hi)
      return -1;
    memcpy(base, &x, sizeof(x));
  }
  return 0;
}

int wcd_config_parse(const char *text, size_t len, const char *name, struct wcd_config *cfg,
                     struct iob_error **err) {
  struct wcd_config c = *cfg;
  unsigned seen = 0;
  int lineno = 0;
  if (len > WCD_CONFIG_MAX)
    return iob_error(err, EFBIG, "config '%s' larger than %d bytes", name, WCD_CONFIG_MAX);
  for (size_t off = 0; off < len;) {
    const char *start = text + off;
    const char *nl = memchr(start, '\n', len - off);
    size_t ll = nl ? (size_t)(nl - start) : len - off;
    off += ll + 1;
    lineno++;
    if (ll > WCD_LINE_MAX)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "line too long in '%s' line %d", name,
                            lineno);
    if (memchr(start, '\0', ll))
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "NUL byte in '%s' line %d", name,
                            lineno);
    char line[WCD_LINE_MAX + 1];
    memcpy(line, start, ll);
    line[ll] = '\0';
    char *hash = strchr(line, '#');
    if (hash)
      *hash = '\0';
    char *s = trim(line);
    if (*s == '\0')
      continue;
    char *eq = strchr(s, '=');
    if (eq == NULL)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "expected 'key = value' in '%s' line %d, got '%s'", name, lineno, s);
    *eq = '\0';
    char *k = trim(s), *v = trim(eq + 1);
    size_t i = 0;
    while (i < IOB_ARRAY_SIZE(keys) && strcmp(keys[i].name, k) != 0)
      i++;
    if (i == IOB_ARRAY_SIZE(keys))
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "unknown key '%s' in '%s' line %d", k,
                            name, lineno);
    if (seen & (1u << i))
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "key '%s' given twice in '%s' line %d",
                            k, name, lineno);
    seen |= 1u << i;
    if (*v == '\0')
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "missing value for '%s' in '%s' line %d", k, name, lineno);
    if (set_key(&keys[i], v, &c) < 0)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "invalid value '%s' for '%s' in '%s' line %d (range %g..%g)", v, k,
                            name, lineno, keys[i].lo, keys[i].hi);
  }
  if (c.rand_max_bytes >= c.seq_min_bytes)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "invalid config '%s': rand_max_bytes (%llu) must be below "
                          "seq_min_bytes (%llu)",
                          name, (unsigned long long)c.rand_max_bytes,
                          (unsigned long long)c.seq_min_bytes);
  *cfg = c;
  return 0;
}

int wcd_config_load(const char *path, struct wcd_config *cfg, struct iob_error **err) {
  cleanup_free char *buf = NULL;
  size_t len = 0;
  if (cg2_read_file(path, WCD_CONFIG_MAX, &buf, &len, err) < 0)
    return -1;
  return wcd_config_parse(buf, len, path, cfg, err);
}
