/* Create: put iobatch-hook into the bundle's config.json as a prestart
 * hook (issue #5, docs/DESIGN.md), so runc runs it during `runc create`, after
 * the container's namespaces and cgroup exist, with the container state on
 * stdin.  runc runs the prestart hooks at the same point and with the same
 * state as createRuntime (runtime-spec config.md: prestart is deprecated
 * in favour of createRuntime/createContainer/startContainer but still
 * called, "in the runtime namespace").  A spec that already has the hook
 * in prestart or createRuntime is left alone.  The rest of the spec is
 * kept as it is; the file is replaced atomically. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "common/cleanup.h"
#include "common/file.h"
#include "shim/hookinject.h"
#include "shim/options.h"

#define HOOK_NAME "iobatch-hook"
#define HOOK_KIND "prestart"

/* $IOBATCH_HOOK, else iobatch-hook next to this binary; NULL: none. */
static int hook_path(char **out, struct iob_error **err) {
  *out = NULL;
  const char *env = getenv("IOBATCH_HOOK");
  if (env && *env) {
    if (*env != '/' || access(env, X_OK) < 0)
      return iob_error_code(err, IOB_CODE_FAILED_PRECONDITION,
                            "IOBATCH_HOOK '%s' is not an absolute path to an executable", env);
    if ((*out = strdup(env)) == NULL)
      return iob_error(err, ENOMEM, "cannot allocate");
    return 0;
  }
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0)
    return 0;
  self[n] = '\0';
  if (asprintf(out, "%s/%s", dirname(self), HOOK_NAME) < 0)
    return iob_error(err, ENOMEM, "cannot allocate");
  if (access(*out, X_OK) < 0) {
    free(*out);
    *out = NULL;
  }
  return 0;
}

static bool is_our_hook(json_t *h, const char *hook) {
  const char *p = json_string_value(json_object_get(h, "path"));
  if (p == NULL)
    return false;
  const char *base = strrchr(p, '/');
  return !strcmp(p, hook) || !strcmp(base ? base + 1 : p, HOOK_NAME);
}

/* A hook that already runs it where it can register the container (a spec
 * made with the hook in mind, or a second Create of the same bundle). */
static bool has_hook(json_t *hooks, const char *hook) {
  static const char *const kinds[] = {HOOK_KIND, "createRuntime"};
  for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
    json_t *list = json_object_get(hooks, kinds[k]);
    for (size_t i = 0; i < json_array_size(list); i++)
      if (is_our_hook(json_array_get(list, i), hook))
        return true;
  }
  return false;
}

static int check_hooks(json_t *hooks, struct iob_error **err) {
  if (hooks == NULL)
    return 0;
  if (!json_is_object(hooks))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "invalid 'config.json': 'hooks' is "
                          "not an object");
  const char *kind;
  json_t *list;
  json_object_foreach(hooks, kind, list) {
    if (!json_is_array(list))
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "invalid 'config.json': 'hooks.%s' is not an array", kind);
  }
  return 0;
}

static json_t *hook_entry(const char *hook, const char *socket) {
  json_t *args = json_pack("[s]", HOOK_NAME);
  if (args && socket && *socket) {
    json_array_append_new(args, json_string("--socket"));
    json_array_append_new(args, json_string(socket));
  }
  return json_pack("{s:s, s:o}", "path", hook, "args", args);
}

int shim_hook_inject_json(const char *json, size_t len, const char *hook, const char *socket,
                          char **out, struct iob_error **err) {
  *out = NULL;
  if (len > IOB_OCI_CONFIG_MAX)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "'config.json' is larger than %u bytes",
                          IOB_OCI_CONFIG_MAX);
  json_error_t je;
  json_auto_t *cfg = json_loadb(json, len, 0, &je);
  if (cfg == NULL)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "invalid 'config.json': %s (line %d, column %d)", je.text, je.line,
                          je.column);
  if (!json_is_object(cfg))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "invalid 'config.json': not a JSON object");
  json_t *hooks = json_object_get(cfg, "hooks");
  if (check_hooks(hooks, err) < 0)
    return -1;
  if (hooks && has_hook(hooks, hook))
    return 0;
  if (hooks == NULL) {
    hooks = json_object();
    if (hooks == NULL || json_object_set_new(cfg, "hooks", hooks) < 0)
      return iob_error(err, ENOMEM, "cannot allocate");
  }
  json_t *list = json_object_get(hooks, HOOK_KIND);
  if (list == NULL) {
    list = json_array();
    if (list == NULL || json_object_set_new(hooks, HOOK_KIND, list) < 0)
      return iob_error(err, ENOMEM, "cannot allocate");
  }
  json_t *entry = hook_entry(hook, socket);
  if (entry == NULL || json_array_append_new(list, entry) < 0)
    return iob_error(err, ENOMEM, "cannot allocate");
  *out = json_dumps(cfg, JSON_COMPACT);
  if (*out == NULL)
    return iob_error(err, ENOMEM, "cannot encode 'config.json'");
  return 0;
}

static int read_config(int fd, const char *path, const struct stat *st, char **buf, size_t *len,
                       struct iob_error **err) {
  struct stat sb = *st;
  if (sb.st_size > (off_t)IOB_OCI_CONFIG_MAX)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "'%s' is larger than %u bytes", path,
                          IOB_OCI_CONFIG_MAX);
  *buf = malloc((size_t)sb.st_size + 1);
  if (*buf == NULL)
    return iob_error(err, ENOMEM, "cannot allocate");
  size_t got = 0;
  while (got < (size_t)sb.st_size) {
    ssize_t n = read(fd, *buf + got, (size_t)sb.st_size - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return iob_error(err, n < 0 ? errno : EIO, "cannot read '%s'", path);
    got += (size_t)n;
  }
  *len = got;
  return 0;
}

static int write_all(int fd, const char *s, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, s, len);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return -1;
    s += n;
    len -= (size_t)n;
  }
  return 0;
}

/* tmp + rename in the same directory: runc never sees half a file. */
static int replace_file(const char *path, const char *data, mode_t mode, struct iob_error **err) {
  cleanup_free char *tmp = NULL;
  if (asprintf(&tmp, "%s.iobatch.XXXXXX", path) < 0)
    return iob_error(err, ENOMEM, "cannot allocate");
  cleanup_close int fd = mkostemp(tmp, O_CLOEXEC);
  if (fd < 0)
    return iob_error(err, errno, "cannot create '%s'", tmp);
  if (fchmod(fd, mode & 07777) < 0 || write_all(fd, data, strlen(data)) < 0 ||
      rename(tmp, path) < 0) {
    int e = errno ? errno : EIO;
    unlink(tmp);
    return iob_error(err, e, "cannot write '%s'", path);
  }
  return 0;
}

int shim_hook_inject(const char *bundle, struct iob_error **err) {
  cleanup_free char *hook = NULL;
  if (hook_path(&hook, err) < 0)
    return -1;
  if (hook == NULL)
    return 0;
  cleanup_free char *path = NULL, *buf = NULL, *out = NULL;
  if (asprintf(&path, "%s/config.json", bundle) < 0)
    return iob_error(err, ENOMEM, "cannot allocate");
  cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return iob_error(err, errno, "cannot open '%s'", path);
  struct stat sb;
  size_t len = 0;
  if (fstat(fd, &sb) < 0)
    return iob_error(err, errno, "cannot stat '%s'", path);
  /* The hook asks the agent the shim asks: IobatchAgentSocket of the
   * runtime options (stored by Create just before), else the environment. */
  struct shim_options o;
  if (shim_options_read(bundle, &o, err) < 0)
    return -1;
  const char *socket =
      o.agent_socket && *o.agent_socket ? o.agent_socket : getenv("IOBATCH_AGENT_SOCKET");
  int r = read_config(fd, path, &sb, &buf, &len, err) < 0 ||
                  shim_hook_inject_json(buf, len, hook, socket, &out, err) < 0
              ? -1
              : 0;
  shim_options_release(&o);
  if (r < 0)
    return -1;
  if (out == NULL)
    return 0;
  return replace_file(path, out, sb.st_mode, err);
}
