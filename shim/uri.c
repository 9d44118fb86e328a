// SPDX-License-Identifier: Apache-2.0
/* stdio URIs from containerd: a bare path (fifo), file:///p, binary:///p?k=v
 * (and binary-v2). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/xalloc.h"
#include "shim/uri.h"
#include "shim/validate.h"

#define MAX_QUERY_ARGS 64

static int hexval(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* Percent-decode s[0..n) into a new string; plus is a space in queries. */
static char *decode(const char *s, size_t n, bool query) {
  char *out = xmalloc(n + 1);
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] == '%') {
      /* Go's url.Parse refuses a bad escape ("invalid URL escape"). */
      if (i + 2 >= n || hexval(s[i + 1]) < 0 || hexval(s[i + 2]) < 0) {
        free(out);
        return NULL;
      }
      out[o++] = (char)(hexval(s[i + 1]) << 4 | hexval(s[i + 2]));
      i += 2;
    } else if (query && s[i] == '+') {
      out[o++] = ' ';
    } else {
      out[o++] = s[i];
    }
  }
  out[o] = '\0';
  if (memchr(out, '\0', o)) {
    free(out);
    return NULL;
  }
  return out;
}

void shim_uri_release(struct shim_uri *u) {
  free(u->path);
  if (u->args)
    for (char **a = u->args; *a; a++)
      free(*a);
  free(u->args);
  memset(u, 0, sizeof(*u));
}

static int parse_query(const char *q, struct shim_uri *u, struct iob_error **err) {
  u->args = xcalloc(2 * MAX_QUERY_ARGS + 1, sizeof(char *));
  size_t n = 0;
  while (*q) {
    const char *amp = strchrnul(q, '&');
    const char *eq = memchr(q, '=', (size_t)(amp - q));
    if (amp != q) {
      if (n + 2 > 2 * MAX_QUERY_ARGS)
        return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "too many logger arguments");
      const char *kend = eq ? eq : amp;
      u->args[n] = decode(q, (size_t)(kend - q), true);
      if (u->args[n] == NULL)
        return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid logger argument");
      n++;
      if (eq && eq + 1 < amp) {
        u->args[n] = decode(eq + 1, (size_t)(amp - eq - 1), true);
        if (u->args[n] == NULL)
          return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid logger argument");
        n++;
      }
    }
    q = *amp ? amp + 1 : amp;
  }
  return 0;
}

int shim_uri_parse(const char *s, struct shim_uri *u, struct iob_error **err) {
  memset(u, 0, sizeof(*u));
  const char *sep = strstr(s, "://");
  const char *colon = strchr(s, ':');
  /* No scheme (a plain path) means a FIFO, as url.Parse would say. */
  if (sep == NULL || colon != sep) {
    u->kind = SHIM_URI_FIFO;
    u->path = xstrdup(s);
    if (shim_validate_path("stdio path", u->path, true, err) < 0) {
      shim_uri_release(u);
      return -1;
    }
    return 0;
  }
  size_t sl = (size_t)(sep - s);
  if (sl == 4 && !strncmp(s, "fifo", 4))
    u->kind = SHIM_URI_FIFO;
  else if (sl == 4 && !strncmp(s, "file", 4))
    u->kind = SHIM_URI_FILE;
  else if ((sl == 6 && !strncmp(s, "binary", 6)) || (sl == 9 && !strncmp(s, "binary-v2", 9)))
    u->kind = SHIM_URI_BINARY;
  else
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "unknown stdio scheme in '%s'", s);
  const char *rest = sep + 3;
  const char *path = strchr(rest, '/'); /* skip an authority ("host") part */
  if (path == NULL)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "no path in '%s'", s);
  const char *q = strchr(path, '?');
  size_t pl = q ? (size_t)(q - path) : strlen(path);
  u->path = decode(path, pl, false);
  if (u->path == NULL || shim_validate_path("stdio path", u->path, true, err) < 0) {
    if (u->path == NULL)
      iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid path in '%s'", s);
    shim_uri_release(u);
    return -1;
  }
  if (u->kind == SHIM_URI_BINARY && parse_query(q ? q + 1 : "", u, err) < 0) {
    shim_uri_release(u);
    return -1;
  }
  return 0;
}
