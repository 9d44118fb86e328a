// SPDX-License-Identifier: Apache-2.0
#include "common/conf.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static char *trim(char *s, unsigned flags) {
  while (*s == ' ' || *s == '\t' || (*s == '\r' && (flags & IOB_CONF_TRIM_CR)))
    s++;
  size_t l = strlen(s);
  while (l > 0 && (s[l - 1] == ' ' || s[l - 1] == '\t' || s[l - 1] == '\r'))
    s[--l] = '\0';
  return s;
}

int iob_conf_split(char *line, unsigned flags, char **key, char **val) {
  char *hash = strchr(line, '#');
  if (hash)
    *hash = '\0';
  char *s = trim(line, flags);
  if (*s == '\0')
    return 0;
  char *eq = strchr(s, '=');
  if (eq == NULL) {
    *key = s;
    return -1;
  }
  *eq = '\0';
  *key = trim(s, flags);
  *val = trim(eq + 1, flags);
  return 1;
}

int iob_conf_find(const struct iob_conf_key *keys, size_t n, const char *name) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(keys[i].name, name) == 0)
      return (int)i;
  return -1;
}

int iob_conf_set(const struct iob_conf_key *k, const char *val, void *obj, void *ctx) {
  return k->parse(k, val, (char *)obj + k->off, ctx);
}

int iob_conf_double(const struct iob_conf_key *k, const char *val, void *field, void *ctx) {
  (void)ctx;
  char *end = NULL;
  if (*val == '\0' || isspace((unsigned char)*val))
    return -1;
  errno = 0;
  double d = strtod(val, &end);
  if (errno || *end != '\0' || !isfinite(d) || d < k->lo || d > k->hi)
    return -1;
  memcpy(field, &d, sizeof(d));
  return 0;
}

static int digits(const char *s, size_t len, uint64_t *out) {
  uint64_t v = 0;
  if (len == 0 || len > 20)
    return -1;
  for (size_t i = 0; i < len; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -1;
    unsigned d = (unsigned)(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10)
      return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

static int set_u64(const struct iob_conf_key *k, uint64_t x, void *field) {
  if ((double)x < k->lo || (double)x > k->hi)
    return -1;
  memcpy(field, &x, sizeof(x));
  return 0;
}

int iob_conf_u64(const struct iob_conf_key *k, const char *val, void *field, void *ctx) {
  (void)ctx;
  uint64_t x;
  if (digits(val, strlen(val), &x) < 0)
    return -1;
  return set_u64(k, x, field);
}

int iob_conf_bytes(const struct iob_conf_key *k, const char *val, void *field, void *ctx) {
  (void)ctx;
  size_t l = strlen(val);
  uint64_t mul = 1;
  if (l > 0) {
    switch (val[l - 1]) {
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
  if (digits(val, l, &x) < 0 || x > UINT64_MAX / mul)
    return -1;
  return set_u64(k, x * mul, field);
}
