// SPDX-License-Identifier: Apache-2.0
/* Runtime options given as a file: containerd's CRI plugin (and `ctr run
 * --runtime-config-path`) send `runtimeoptions.v1.Options{type_url,
 * config_path}` for runtimes it does not know, so the runc options of
 * io.containerd.iobatch.v2 live in a small TOML file:
 *
 *   BinaryName = "crun"
 *   Root = "/run/containerd/crun"
 *   SystemdCgroup = false
 *   IobatchAgentSocket = "/run/iobatch/iobatchd.sock"
 *   IobatchFailClosed = false
 *   IobatchAgentTimeoutMs = 5000
 *
 * The keys are those of the runc shim's options table in containerd's
 * config.toml (snake_case works too); sections are ignored, comments may
 * follow a value.  A key nobody reads is kept in unknown_keys and warned
 * about at Create; a value of the wrong type is an error naming the key. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/xalloc.h"
#include "google/protobuf/any.pb-c.h"
#include "shim/options.h"
#include "shim/validate.h"

#define FILE_MAX 65536

enum kind { STR, BOOL, U32 };

struct key {
  const char *camel;
  const char *snake;
  enum kind kind;
  size_t off;
};

#define K(c, s, k, f)                                                                              \
  { c, s, k, offsetof(struct shim_options, f) }
static const struct key keys[] = {
    K("BinaryName", "binary_name", STR, binary_name),
    K("Root", "root", STR, root),
    K("ShimCgroup", "shim_cgroup", STR, shim_cgroup),
    K("SystemdCgroup", "systemd_cgroup", BOOL, systemd_cgroup),
    K("NoPivotRoot", "no_pivot_root", BOOL, no_pivot_root),
    K("NoNewKeyring", "no_new_keyring", BOOL, no_new_keyring),
    K("IoUid", "io_uid", U32, io_uid),
    K("IoGid", "io_gid", U32, io_gid),
    K("IobatchAgentSocket", "iobatch_agent_socket", STR, agent_socket),
    K("IobatchFailClosed", "iobatch_fail_closed", BOOL, fail_closed),
    K("IobatchAgentTimeoutMs", "iobatch_agent_timeout_ms", U32, agent_timeout_ms),
};

/* Keys of the runc shim's options that this shim does not use: accepted
 * without a word, so that one file can serve both shims. */
static const char *const unused_keys[] = {
    "CriuPath",       "criu_path",      "CriuImagePath",    "criu_image_path", "CriuWorkPath",
    "criu_work_path", "TaskApiAddress", "task_api_address", "TaskApiVersion",  "task_api_version",
};

static char *skip_blank(char *s) {
  while (*s == ' ' || *s == '\t' || *s == '\r')
    s++;
  return s;
}

static char *trim(char *s) {
  s = skip_blank(s);
  char *e = s + strlen(s);
  while (e > s && isspace((unsigned char)e[-1]))
    *--e = '\0';
  return s;
}

/* After a value only blanks and a comment may follow (TOML: a comment
 * starts at a '#' outside a string and runs to the end of the line). */
static bool rest_is_comment(const char *s) {
  s = skip_blank((char *)s);
  return *s == '\0' || *s == '#';
}

/* A TOML basic string starting at s[0] == '"', unescaped in place.  On
 * success *end points after the closing quote.  The escapes are TOML's
 * except \u and \U, which runc options (paths, binary names) do not need. */
static int basic_string(char *s, char **out, char **end, const char *key, int line,
                        struct iob_error **err) {
  char *r = s + 1, *w = s + 1;
  for (; *r && *r != '"'; r++) {
    unsigned char c = (unsigned char)*r;
    if ((c < 0x20 && c != '\t') || c == 0x7f)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "line %d: '%s': control character in a string", line, key);
    if (c != '\\') {
      *w++ = *r;
      continue;
    }
    static const char from[] = "\"\\btnfr", to[] = "\"\\\b\t\n\f\r";
    const char *e = r[1] ? strchr(from, r[1]) : NULL;
    if (e == NULL)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "line %d: '%s': unsupported escape '\\%.1s' in a string", line, key,
                            r + 1);
    *w++ = to[e - from];
    r++;
  }
  if (*r != '"')
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "line %d: '%s': string without its closing quote", line, key);
  *w = '\0';
  *out = s + 1;
  *end = r + 1;
  return 0;
}

/* A TOML literal string: '...', no escapes. */
static int literal_string(char *s, char **out, char **end, const char *key, int line,
                          struct iob_error **err) {
  char *q = strchr(s + 1, '\'');
  if (q == NULL)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "line %d: '%s': string without its closing quote", line, key);
  for (char *p = s + 1; p < q; p++)
    if (((unsigned char)*p < 0x20 && *p != '\t') || *p == 0x7f)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "line %d: '%s': control character in a string", line, key);
  *q = '\0';
  *out = s + 1;
  *end = q + 1;
  return 0;
}

static int set_string(struct shim_options *o, const struct key *k, char *v, int line,
                      struct iob_error **err) {
  char *str = NULL, *end = NULL;
  if (v[0] != '"' && v[0] != '\'')
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "line %d: '%s' needs a quoted string",
                          line, k->camel);
  if ((v[0] == '"' ? basic_string(v, &str, &end, k->camel, line, err)
                   : literal_string(v, &str, &end, k->camel, line, err)) < 0)
    return -1;
  if (!rest_is_comment(end))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "line %d: '%s': unexpected text after the string", line, k->camel);
  char **field = (char **)((char *)o + k->off);
  free(*field);
  *field = NULL;
  if (*str) {
    *field = xstrdup(str);
  }
  return 0;
}

static int set_value(struct shim_options *o, const struct key *k, char *v, int line,
                     struct iob_error **err) {
  if (k->kind == STR)
    return set_string(o, k, v, line, err);
  char *hash = strchr(v, '#');
  if (hash)
    *hash = '\0';
  v = trim(v);
  void *field = (char *)o + k->off;
  if (k->kind == BOOL) {
    if (strcmp(v, "true") && strcmp(v, "false"))
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "line %d: '%s' needs true or false",
                            line, k->camel);
    *(bool *)field = !strcmp(v, "true");
    return 0;
  }
  char *end;
  errno = 0;
  unsigned long u = strtoul(v, &end, 10);
  if (errno || *end || end == v || !isdigit((unsigned char)*v) || u > UINT32_MAX)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "line %d: '%s' needs a number", line,
                          k->camel);
  *(uint32_t *)field = (uint32_t)u;
  return 0;
}

/* Remember a key nobody reads, for the warning at Create (a typo such as
 * SystemdCgroups would otherwise silently keep the default). */
static void note_unknown(struct shim_options *o, const char *k, int line) {
  char *s = xasprintf("%s%s'%.64s' (line %d)", o->unknown_keys ? o->unknown_keys : "",
                      o->unknown_keys ? ", " : "", k, line);
  free(o->unknown_keys);
  o->unknown_keys = s;
}

static int parse_line(struct shim_options *o, char *s, int line, struct iob_error **err) {
  s = trim(s);
  if (*s == '\0' || *s == '#' || *s == '[')
    return 0;
  char *eq = strchr(s, '=');
  if (eq == NULL)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "line %d: expected 'key = value'", line);
  *eq = '\0';
  char *k = trim(s), *v = trim(eq + 1);
  size_t kn = strlen(k);
  if (kn >= 2 && k[0] == '"' && k[kn - 1] == '"') { /* a quoted key */
    k[kn - 1] = '\0';
    k++;
  }
  if (*k == '\0')
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "line %d: empty key", line);
  if (*v == '\0' || *v == '#')
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "line %d: '%s' has no value", line, k);
  for (size_t i = 0; i < IOB_ARRAY_SIZE(keys); i++)
    if (!strcmp(k, keys[i].camel) || !strcmp(k, keys[i].snake))
      return set_value(o, &keys[i], v, line, err);
  for (size_t i = 0; i < IOB_ARRAY_SIZE(unused_keys); i++)
    if (!strcmp(k, unused_keys[i]))
      return 0;
  note_unknown(o, k, line);
  return 0;
}

int shim_options_parse_toml(const char *text, size_t len, struct shim_options *o,
                            struct iob_error **err) {
  if (memchr(text, '\0', len))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "a NUL byte in the options file");
  cleanup_free char *copy = xstrndup(text, len);
  int line = 1;
  for (char *l = copy; *l; line++) {
    char *nl = strchr(l, '\n');
    if (nl)
      *nl = '\0';
    if (parse_line(o, l, line, err) < 0)
      return -1;
    if (nl == NULL)
      break;
    l = nl + 1;
  }
  return 0;
}

int shim_options_from_config_path(const uint8_t *data, size_t len, struct shim_options *o,
                                  struct iob_error **err) {
  /* runtimeoptions.v1.Options is {1 type_url: string, 2 config_path:
   * string}: the same wire shape as google.protobuf.Any. */
  Google__Protobuf__Any *m = google__protobuf__any__unpack(NULL, len, data);
  if (m == NULL)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "cannot decode 'runtimeoptions.v1.Options'");
  cleanup_free char *path = xstrndup((const char *)m->value.data, m->value.len);
  google__protobuf__any__free_unpacked(m, NULL);
  if (*path == '\0')
    return 0;
  if (strlen(path) != strnlen(path, FILE_MAX) ||
      shim_validate_path("config_path", path, true, err) < 0)
    return -1;
  cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return iob_error(err, errno, "cannot open '%s'", path);
  cleanup_free char *buf = xmalloc(FILE_MAX + 1);
  ssize_t n = read(fd, buf, FILE_MAX);
  if (n < 0)
    return iob_error(err, errno, "cannot read '%s'", path);
  if (n == FILE_MAX)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "'%s' is too large", path);
  if (shim_options_parse_toml(buf, (size_t)n, o, err) < 0)
    return iob_error_prefix(err, "'%s'", path);
  return 0;
}
