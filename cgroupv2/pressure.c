// SPDX-License-Identifier: Apache-2.0
#include "cgroupv2/pressure.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroupv2/cg2.h"
#include "common/cleanup.h"
#include "common/xalloc.h"

/* The kernel prints averages as "%lu.%02lu"; accept digits[.digits] only, so
 * "nan", "1e5" or "-1" never get through strtod's generosity. */
static int parse_avg(const char *s, size_t len, double *out) {
  char tmp[32];
  size_t dots = 0;
  if (len == 0 || len >= sizeof(tmp) || s[0] == '.')
    return -1;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '.')
      dots++;
    else if (s[i] < '0' || s[i] > '9')
      return -1;
  }
  if (dots > 1 || s[len - 1] == '.')
    return -1;
  memcpy(tmp, s, len);
  tmp[len] = '\0';
  double v = strtod(tmp, NULL);
  if (!(v >= 0.0 && v <= 100.0))
    return -1;
  *out = v;
  return 0;
}

static int parse_line(const char *line, size_t len, int lineno, struct cg2_psi *p,
                      struct iob_error **err) {
  static const char *const keys[] = {"avg10", "avg60", "avg300", "total"};
  unsigned seen = 0;
  for (size_t i = 0; i < len;) {
    while (i < len && line[i] == ' ')
      i++;
    if (i == len)
      break;
    const char *tok = line + i;
    size_t n = 0;
    while (i + n < len && line[i + n] != ' ')
      n++;
    i += n;
    const char *eq = memchr(tok, '=', n);
    if (eq == NULL)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "io.pressure line %d: expected key=value, got '%.*s'", lineno,
                            (int)(n > 32 ? 32 : n), tok);
    size_t kl = (size_t)(eq - tok), vl = n - kl - 1;
    size_t k = 0;
    while (k < IOB_ARRAY_SIZE(keys) && (strlen(keys[k]) != kl || memcmp(keys[k], tok, kl) != 0))
      k++;
    if (k == IOB_ARRAY_SIZE(keys))
      continue; /* a future key is not an error */
    if (seen & (1u << k))
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "io.pressure line %d: key '%s' given twice", lineno, keys[k]);
    seen |= 1u << k;
    int bad = k < 3 ? parse_avg(eq + 1, vl,
                                k == 0   ? &p->avg10
                                : k == 1 ? &p->avg60
                                         : &p->avg300)
                    : cg2_parse_u64(eq + 1, vl, &p->total);
    if (bad)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "io.pressure line %d: invalid value for '%s': '%.*s'", lineno, keys[k],
                            (int)(vl > 32 ? 32 : vl), eq + 1);
  }
  if (seen != 0xf)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "io.pressure line %d: missing key '%s'",
                          lineno, keys[__builtin_ctz(~seen & 0xf)]);
  return 0;
}

int cg2_pressure_parse(const char *buf, size_t len, struct cg2_pressure *out,
                       struct iob_error **err) {
  struct cg2_pressure p;
  memset(&p, 0, sizeof(p));
  int has_some = 0, lineno = 0;
  for (size_t off = 0; off < len;) {
    const char *line = buf + off;
    const char *nl = memchr(line, '\n', len - off);
    size_t ll = nl ? (size_t)(nl - line) : len - off;
    off += ll + 1;
    lineno++;
    if (ll == 0)
      continue;
    if (memchr(line, '\0', ll) != NULL)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "io.pressure line %d: contains a NUL byte", lineno);
    /* The buffer is not NUL-terminated: stay within the line. */
    size_t wl = 0;
    while (wl < ll && line[wl] != ' ')
      wl++;
    int *flag;
    struct cg2_psi *dst;
    if (wl == 4 && memcmp(line, "some", 4) == 0) {
      flag = &has_some;
      dst = &p.some;
    } else if (wl == 4 && memcmp(line, "full", 4) == 0) {
      flag = &p.has_full;
      dst = &p.full;
    } else {
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "io.pressure line %d: expected 'some' or 'full', got '%.*s'", lineno,
                            (int)(wl > 32 ? 32 : wl), line);
    }
    if (*flag)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "io.pressure line %d: '%.4s' given twice", lineno, line);
    *flag = 1;
    if (parse_line(line + wl, ll - wl, lineno, dst, err) < 0)
      return -1;
  }
  if (!has_some)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "io.pressure: no 'some' line");
  *out = p;
  return 0;
}

int cg2_pressure_read(const char *cgdir, struct cg2_pressure *out, struct iob_error **err) {
  cleanup_free char *path = xasprintf("%s/io.pressure", cgdir);
  cleanup_free char *buf = NULL;
  size_t len = 0;
  if (cg2_read_file(path, CG2_FILE_MAX, &buf, &len, err) < 0)
    return -1;
  if (cg2_pressure_parse(buf, len, out, err) < 0)
    return iob_error_prefix(err, "cannot parse '%s'", path);
  return 0;
}
