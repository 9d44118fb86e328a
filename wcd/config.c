// SPDX-License-Identifier: Apache-2.0
#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroupv2/cg2.h"
#include "common/cleanup.h"
#include "common/conf.h"
#include "wcd/wcd.h"

#define WCD_CONFIG_MAX (64 * 1024)
#define WCD_LINE_MAX 1024

/* Defaults: see wcd/CALIBRATION.md.  16 KiB / 128 KiB are the edges of the
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
   * I/O at any depth runs at tens of thousands.  PostgreSQL groups the WAL
   * of concurrent commits into one write: under pgbench -c 4 on this host
   * its writes averaged 32 KiB (bench/results/wcd-latency.md), so 64 KiB,
   * still half of what a sequential stream moves (seq_min_bytes). */
  cfg->lat_max_req = 64 * 1024;
  cfg->lat_max_iops = 5000;
  cfg->lat_max_bps = 32.0 * 1024 * 1024;
}

#define F(f) offsetof(struct wcd_config, f)
static const struct iob_conf_key keys[] = {
    {"idle_bytes_per_s", iob_conf_double, F(idle_bytes_per_s), 0, 1e12, NULL},
    {"idle_max_stall", iob_conf_double, F(idle_max_stall), 0, 100, NULL},
    {"dir_share", iob_conf_double, F(dir_share), 0.5000001, 1, NULL},
    {"rand_max_bytes", iob_conf_bytes, F(rand_max_bytes), 512, 1 << 30, NULL},
    {"seq_min_bytes", iob_conf_bytes, F(seq_min_bytes), 512, 1 << 30, NULL},
    {"min_window_ms", iob_conf_u64, F(min_window_ms), 1, 3600000, NULL},
    {"fallback_factor", iob_conf_double, F(fallback_factor), 0, 1, NULL},
    {"lat_max_req", iob_conf_bytes, F(lat_max_req), 512, 1 << 30, NULL},
    {"lat_max_iops", iob_conf_double, F(lat_max_iops), 0, 1e9, NULL},
    {"lat_max_bps", iob_conf_double, F(lat_max_bps), 0, 1e12, NULL},
};
#undef F

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
    char *k = NULL, *v = NULL;
    int r = iob_conf_split(line, 0, &k, &v);
    if (r == 0)
      continue;
    if (r < 0)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "expected 'key = value' in '%s' line %d, got '%s'", name, lineno, k);
    int i = iob_conf_find(keys, IOB_ARRAY_SIZE(keys), k);
    if (i < 0)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "unknown key '%s' in '%s' line %d", k,
                            name, lineno);
    if (seen & (1u << i))
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "key '%s' given twice in '%s' line %d",
                            k, name, lineno);
    seen |= 1u << i;
    if (*v == '\0')
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "missing value for '%s' in '%s' line %d", k, name, lineno);
    if (iob_conf_set(&keys[i], v, &c, NULL) < 0)
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
