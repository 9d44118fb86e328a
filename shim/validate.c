// SPDX-License-Identifier: Apache-2.0
/* Validation of what containerd sends: identifiers and paths. */
#include <string.h>

#include "shim/validate.h"

/* containerd's identifiers package, 76 bytes at most. */
#define ID_MAX 76
#define PATH_MAX_LEN 4096

static bool alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

int shim_validate_id(const char *what, const char *id, struct iob_error **err) {
  if (id == NULL || *id == '\0')
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "%s must not be empty", what);
  size_t n = strlen(id);
  if (n > ID_MAX)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "%s '%.*s...' longer than %d bytes", what,
                          16, id, ID_MAX);
  if (!alnum(id[0]))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "%s '%s' must start with a letter or digit", what, id);
  /* ^[A-Za-z0-9]+(?:[._-](?:[A-Za-z0-9]+))*$: separators single, inside. */
  for (size_t i = 1; i < n; i++) {
    char c = id[i];
    bool sep = c == '.' || c == '_' || c == '-';
    if ((!alnum(c) && !sep) || (sep && (i + 1 == n || !alnum(id[i + 1]))))
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "%s '%s' must match [A-Za-z0-9]+([._-][A-Za-z0-9]+)*", what, id);
  }
  return 0;
}

int shim_validate_path(const char *what, const char *path, bool absolute, struct iob_error **err) {
  if (path == NULL || *path == '\0')
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "%s must not be empty", what);
  size_t n = strlen(path);
  if (n > PATH_MAX_LEN)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "%s longer than %d bytes", what,
                          PATH_MAX_LEN);
  if (absolute && path[0] != '/')
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "%s '%s' is not an absolute path", what,
                          path);
  for (size_t i = 0; i < n; i++)
    if (path[i] == '\n' || (unsigned char)path[i] < 0x20)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "%s contains a control character",
                            what);
  /* ".." components would let a request escape the bundle or state dir. */
  for (const char *p = path; (p = strstr(p, "..")) != NULL; p += 2) {
    bool start = p == path || p[-1] == '/';
    bool end = p[2] == '\0' || p[2] == '/';
    if (start && end)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "%s '%s' contains '..'", what, path);
  }
  return 0;
}
