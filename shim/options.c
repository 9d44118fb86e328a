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
 * config.toml (snake_case works too); sections and comments are ignored. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "google/protobuf/any.pb-c.h"
#include "shim/shim.h"

#define FILE_MAX 65536

enum kind { STR, BOOL, U32 };

struct key {
  const char *camel;
  const char *snake;
  enum kind kind;
  size_t off;
};

#define K(c, s, k, f) {c, s, k, offsetof(struct shim_options, f)}
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

static char *trim(char *s) {
  while (isspace((unsigned char)*s))
    s++;
  char *e = s + strlen(s);
  while (e > s && isspace((unsigned char)e[-1]))
    *--e = '\0';
  return s;
}

static int set_value(struct shim_options *o, const struct key *k, char *v, int line,
                     struct iob_error **err) {
  void *field = (char *)o + k->off;
  size_t n = strlen(v);
  if (k->kind == STR) {
    if (n < 2 || v[0] != '"' || v[n - 1] != '"' || memchr(v + 1, '"', n - 2))
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "line %d: '%s' needs a quoted string",
                            line, k->camel);
    free(*(char **)field);
    *(char **)field = n > 2 ? strndup(v + 1, n - 2) : NULL;
    return 0;
  }
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
  if (errno || *end || end == v || u > UINT32_MAX)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "line %d: '%s' needs a number", line,
                          k->camel);
  *(uint32_t *)field = (uint32_t)u;
  return 0;
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
  char *hash = v[0] == '"' ? NULL : strchr(v, '#');
  if (hash) {
    *hash = '\0';
    v = trim(v);
  }
  for (size_t i = 0; i < IOB_ARRAY_SIZE(keys); i++)
    if (!strcmp(k, keys[i].camel) || !strcmp(k, keys[i].snake))
      return set_value(o, &keys[i], v, line, err);
  return 0; /* options of the runc shim we do not use (CriuPath, ...) */
}

int shim_options_parse_toml(const char *text, size_t len, struct shim_options *o,
                            struct iob_error **err) {
  cleanup_free char *copy = strndup(text, len);
  if (copy == NULL)
    abort();
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
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "cannot decode 'runtimeoptions.v1.Options'");
  cleanup_free char *path = strndup((const char *)m->value.data, m->value.len);
  google__protobuf__any__free_unpacked(m, NULL);
  if (path == NULL)
    abort();
  if (*path == '\0')
    return 0;
  if (strlen(path) != strnlen(path, FILE_MAX) || shim_validate_path("config_path", path, true, err) < 0)
    return -1;
  cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return iob_error(err, errno, "cannot open '%s'", path);
  cleanup_free char *buf = malloc(FILE_MAX + 1);
  if (buf == NULL)
    abort();
  ssize_t n = read(fd, buf, FILE_MAX);
  if (n < 0)
    return iob_error(err, errno, "cannot read '%s'", path);
  if (n == FILE_MAX)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "'%s' is too large", path);
  if (shim_options_parse_toml(buf, (size_t)n, o, err) < 0)
    return iob_error_prefix(err, "'%s'", path);
  return 0;
}
