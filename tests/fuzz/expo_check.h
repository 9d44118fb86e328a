// SPDX-License-Identifier: Apache-2.0
/* A strict reader of the Prometheus text exposition format 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/) for the
 * tests of what iobatchd serves (tests/unit/test_agent_metrics.c,
 * tests/fuzz/fuzz_agent_metrics.c): the whole text is UTF-8, every line
 * is a "# HELP" or "# TYPE" comment or NAME[{LABEL="VALUE",...}] VALUE,
 * label values escape only backslash, double quote and newline, and
 * every sample's name belongs to the last TYPE'd family (or its
 * histogram's _bucket/_sum/_count).  Returns the number of samples, or
 * -1 - (the line number of the first bad line). */
#ifndef IOB_TESTS_EXPO_CHECK_H
#define IOB_TESTS_EXPO_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static inline bool expo_utf8(const unsigned char *p, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned c = p[i];
    size_t k = c < 0x80                 ? 0
               : c >= 0xc2 && c <= 0xdf ? 1
               : c >= 0xe0 && c <= 0xef ? 2
               : c >= 0xf0 && c <= 0xf4 ? 3
                                        : 9;
    if (k == 9)
      return false;
    unsigned cp = k == 0 ? c : c & (0x3fu >> k);
    for (size_t j = 1; j <= k; j++) {
      if (i + j >= n || (p[i + j] & 0xc0) != 0x80)
        return false;
      cp = cp << 6 | (p[i + j] & 0x3fu);
    }
    if ((k == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
        (k == 3 && (cp < 0x10000 || cp > 0x10ffff)))
      return false;
    i += k + 1;
  }
  return true;
}

static inline bool expo_name_char(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
         (!first && c >= '0' && c <= '9');
}

/* NAME at *p (advanced past it); its length, 0 none */
static inline size_t expo_name(const char **p, const char *end) {
  const char *s = *p;
  while (*p < end && expo_name_char(**p, *p == s))
    (*p)++;
  return (size_t)(*p - s);
}

static inline bool expo_family(const char *fam, size_t fn, const char *name, size_t n) {
  if (n == fn && memcmp(name, fam, n) == 0)
    return true;
  static const char *const suffix[] = {"_bucket", "_sum", "_count"};
  for (size_t i = 0; i < 3; i++) {
    size_t sl = strlen(suffix[i]);
    if (n == fn + sl && memcmp(name, fam, fn) == 0 && memcmp(name + fn, suffix[i], sl) == 0)
      return true;
  }
  return false;
}

static inline bool expo_labels(const char **p, const char *end) {
  if (*p >= end || **p != '{')
    return true;
  (*p)++;
  while (*p < end && **p != '}') {
    if (expo_name(p, end) == 0 || *p + 1 >= end || (*p)[0] != '=' || (*p)[1] != '"')
      return false;
    *p += 2;
    while (*p < end && **p != '"') {
      if (**p == '\\') {
        if (*p + 1 >= end || !strchr("\\\"n", (*p)[1]))
          return false;
        (*p)++;
      }
      (*p)++;
    }
    if (*p >= end)
      return false;
    (*p)++;
    if (*p < end && **p == ',')
      (*p)++;
  }
  if (*p >= end)
    return false;
  (*p)++;
  return true;
}

static inline bool expo_value(const char *p, const char *end) {
  if (p >= end || *p != ' ' || end - p > 63)
    return false;
  char num[64];
  memcpy(num, p + 1, (size_t)(end - p - 1));
  num[end - p - 1] = '\0';
  char *e = NULL;
  if (strcmp(num, "NaN") == 0 || strcmp(num, "+Inf") == 0 || strcmp(num, "-Inf") == 0)
    return true;
  (void)strtod(num, &e);
  return e != num && *e == '\0';
}

static inline long expo_check(const char *text, size_t len) {
  if (!expo_utf8((const unsigned char *)text, len) || (len > 0 && text[len - 1] != '\n'))
    return -1;
  const char *fam = "";
  size_t fn = 0;
  long samples = 0, lineno = 0;
  for (const char *l = text; l < text + len;) {
    const char *end = memchr(l, '\n', (size_t)(text + len - l));
    lineno++;
    const char *p = l;
    if (strncmp(l, "# HELP ", 7) == 0) {
      p += 7;
      if (expo_name(&p, end) == 0 || p >= end || *p != ' ')
        return -1 - lineno;
    } else if (strncmp(l, "# TYPE ", 7) == 0) {
      p += 7;
      fam = p;
      fn = expo_name(&p, end);
      if (fn == 0 || p >= end || *p != ' ')
        return -1 - lineno;
    } else {
      const char *name = p;
      size_t n = expo_name(&p, end);
      if (n == 0 || !expo_family(fam, fn, name, n) || !expo_labels(&p, end) || !expo_value(p, end))
        return -1 - lineno;
      samples++;
    }
    l = end + 1;
  }
  return samples;
}

#endif
