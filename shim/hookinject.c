// SPDX-License-Identifier: Apache-2.0
/* Create: put iobatch-hook into the bundle's config.json as a prestart
 * hook (docs/DESIGN.md), so runc runs it during `runc create`, after
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
#include "common/xalloc.h"
#include "shim/hookinject.h"
#include "shim/options.h"

#define HOOK_NAME "iobatch-hook"
#define HOOK_KIND "prestart"
/* The injected entry's timeout, seconds: the hook itself gives up on the
 * agent after HOOK_DEFAULT_TIMEOUT_MS a call (runtime-hook/hook.h). */
#define HOOK_TIMEOUT_S 10

/* $IOBATCH_HOOK, else iobatch-hook next to this binary; NULL: none. */
static int hook_path(char **out, struct iob_error **err) {
  *out = NULL;
  const char *env = getenv("IOBATCH_HOOK");
  if (env && *env) {
    if (*env != '/' || access(env, X_OK) < 0)
      return iob_error_code(err, IOB_CODE_FAILED_PRECONDITION,
                            "IOBATCH_HOOK '%s' is not an absolute path to an executable", env);
    *out = xstrdup(env);
    return 0;
  }
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n <= 0)
    return 0;
  self[n] = '\0';
  *out = xasprintf("%s/%s", dirname(self), HOOK_NAME);
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

/* NULL when hook or socket is no UTF-8 string (jansson refuses it). */
static json_t *hook_entry(const char *hook, const char *socket) {
  json_t *args = socket && *socket ? json_pack("[s,s,s]", HOOK_NAME, "--socket", socket)
                                   : json_pack("[s]", HOOK_NAME);
  /* runc kills a hook past its timeout and fails the create: a bound on a
   * hook that hangs (the hook's own agent calls are bounded well below). */
  return args ? json_pack("{s:s, s:o, s:i}", "path", hook, "args", args, "timeout", HOOK_TIMEOUT_S)
              : NULL;
}

/* Adds the hook to cfg's root; 1 when it did, 0 when it is there already. */
static int inject(struct iob_oci_config *cfg, const char *hook, const char *socket,
                  struct iob_error **err) {
  if (cfg->hooks && has_hook(cfg->hooks, hook))
    return 0;
  json_t *entry = hook_entry(hook, socket);
  if (entry == NULL)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "cannot add hook '%s' (agent socket '%s') to 'config.json': not UTF-8",
                          hook, socket ? socket : "");
  if (cfg->hooks == NULL) {
    cfg->hooks = json_object();
    if (cfg->hooks == NULL || json_object_set_new(cfg->root, "hooks", cfg->hooks) < 0)
      iob_oom();
  }
  json_t *list = json_object_get(cfg->hooks, HOOK_KIND);
  if (list == NULL) {
    list = json_array();
    if (list == NULL || json_object_set_new(cfg->hooks, HOOK_KIND, list) < 0)
      iob_oom();
  }
  if (json_array_append_new(list, entry) < 0)
    iob_oom();
  return 1;
}

static char *dump(const struct iob_oci_config *cfg) {
  char *out = json_dumps(cfg->root, JSON_COMPACT);
  if (out == NULL)
    iob_oom();
  return out;
}

int shim_hook_inject_json(const char *json, size_t len, const char *hook, const char *socket,
                          char **out, struct iob_error **err) {
  *out = NULL;
  struct iob_oci_config cfg;
  if (iob_oci_config_parse(json, len, "config.json", &cfg, err) < 0)
    return -1;
  int r = inject(&cfg, hook, socket, err);
  if (r > 0)
    *out = dump(&cfg);
  iob_oci_config_release(&cfg);
  return r < 0 ? -1 : 0;
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
static int replace_file(const char *path, const char *data, struct iob_error **err) {
  struct stat sb;
  if (stat(path, &sb) < 0)
    return iob_error(err, errno, "cannot stat '%s'", path);
  cleanup_free char *tmp = xasprintf("%s.iobatch.XXXXXX", path);
  cleanup_close int fd = mkostemp(tmp, O_CLOEXEC);
  if (fd < 0)
    return iob_error(err, errno, "cannot create '%s'", tmp);
  if (fchmod(fd, sb.st_mode & 07777) < 0 || write_all(fd, data, strlen(data)) < 0 ||
      rename(tmp, path) < 0) {
    int e = errno ? errno : EIO;
    unlink(tmp);
    return iob_error(err, e, "cannot write '%s'", path);
  }
  return 0;
}

int shim_hook_inject(const char *bundle, struct iob_oci_config *cfg, struct iob_error **err) {
  cleanup_free char *hook = NULL;
  if (hook_path(&hook, err) < 0)
    return -1;
  if (hook == NULL)
    return 0;
  /* The hook asks the agent the shim asks: IobatchAgentSocket of the
   * runtime options (stored by Create just before), else the environment. */
  struct shim_options o;
  if (shim_options_read(bundle, &o, err) < 0)
    return -1;
  const char *socket =
      o.agent_socket && *o.agent_socket ? o.agent_socket : getenv("IOBATCH_AGENT_SOCKET");
  int r = inject(cfg, hook, socket, err);
  shim_options_release(&o);
  if (r <= 0)
    return r;
  cleanup_free char *path = xasprintf("%s/config.json", bundle);
  cleanup_free char *out = dump(cfg);
  return replace_file(path, out, err);
}
