// SPDX-License-Identifier: Apache-2.0
/* Escaping of outside text (common/escape.h). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/escape.h"
#include "common/xalloc.h"

/* The length of the valid UTF-8 sequence at s (1-4) and its code point,
 * or 0: not valid (a stray continuation byte, a truncated or overlong
 * sequence, a surrogate, beyond U+10FFFF). */
static size_t utf8_seq(const unsigned char *s, uint32_t *cp) {
  unsigned char c = s[0];
  size_t n;
  uint32_t v, min;
  if (c < 0x80) {
    *cp = c;
    return 1;
  } else if (c >= 0xc2 && c <= 0xdf) {
    n = 2, v = c & 0x1f, min = 0x80;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3, v = c & 0x0f, min = 0x800;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4, v = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xc0) != 0x80) /* also stops at the terminating NUL */
      return 0;
    v = v << 6 | (s[i] & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
    return 0;
  *cp = v;
  return n;
}

static bool is_control(uint32_t cp) {
  return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

/* Writes the escaped form of S into OUT (when not NULL); returns its
 * length and whether anything was escaped. */
static size_t escape(const char *s, bool controls, char *out, bool *changed) {
  const unsigned char *p = (const unsigned char *)s;
  size_t len = 0;
  *changed = false;
  while (*p) {
    uint32_t cp = 0;
    size_t n = utf8_seq(p, &cp);
    char buf[16];
    const char *piece = (const char *)p;
    size_t plen = n;
    if (n == 0) {
      plen = (size_t)snprintf(buf, sizeof(buf), "\\x%02x", *p);
      piece = buf;
      n = 1;
    } else if (controls && cp == '\\') {
      piece = "\\\\";
      plen = 2;
    } else if (controls && is_control(cp)) {
      plen = (size_t)(cp < 0x80 ? snprintf(buf, sizeof(buf), "\\x%02x", (unsigned)cp)
                                : snprintf(buf, sizeof(buf), "\\u%04x", (unsigned)cp));
      piece = buf;
    }
    if (piece != (const char *)p)
      *changed = true;
    if (out)
      memcpy(out + len, piece, plen);
    len += plen;
    p += n;
  }
  if (out)
    out[len] = '\0';
  return len;
}

char *iob_escape_text(const char *s, bool controls) {
  bool changed;
  if (s == NULL)
    s = "";
  char *out = xmalloc(escape(s, controls, NULL, &changed) + 1);
  escape(s, controls, out, &changed);
  return out;
}

bool iob_text_needs_escape(const char *s, bool controls) {
  bool changed;
  if (s)
    escape(s, controls, NULL, &changed);
  return s && changed;
}
