// SPDX-License-Identifier: Apache-2.0
/* The shim's command line (Go flag syntax), start's stdin and config.json. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "common/cleanup.h"
#include "common/xalloc.h"
#include "containerd/runc/options.pb-c.h"
#include "containerd/runtime/bootstrap/bootstrap.pb-c.h"
#include "google/protobuf/any.pb-c.h"
#include "shim/args.h"
#include "shim/validate.h"

#define OPTIONS_TYPE "containerd.runc.v1.Options"
#define CONFIG_PATH_TYPE "runtimeoptions.v1.Options"

struct flag {
  const char *name;
  bool boolean;
  size_t off; /* into struct shim_args */
};

static const struct flag flags[] = {
    {"namespace", false, offsetof(struct shim_args, ns)},
    {"address", false, offsetof(struct shim_args, address)},
    {"publish-binary", false, offsetof(struct shim_args, publish_binary)},
    {"id", false, offsetof(struct shim_args, id)},
    {"bundle", false, offsetof(struct shim_args, bundle)},
    {"socket", false, offsetof(struct shim_args, socket)},
    {"debug-socket", false, offsetof(struct shim_args, debug_socket)},
    {"debug", true, offsetof(struct shim_args, debug)},
    {"v", true, offsetof(struct shim_args, version)},
    {"version", true, offsetof(struct shim_args, version)},
    {"info", true, offsetof(struct shim_args, info)},
};

static int parse_bool(const char *v, bool *out) {
  if (!strcmp(v, "1") || !strcasecmp(v, "true") || !strcmp(v, "t")) {
    *out = true;
    return 0;
  }
  if (!strcmp(v, "0") || !strcasecmp(v, "false") || !strcmp(v, "f")) {
    *out = false;
    return 0;
  }
  return -1;
}

static const struct flag *find_flag(const char *name, size_t n) {
  for (size_t i = 0; i < IOB_ARRAY_SIZE(flags); i++)
    if (strlen(flags[i].name) == n && !strncmp(flags[i].name, name, n))
      return &flags[i];
  return NULL;
}

/* One flag at argv[*i]; Go's flag package: -name, --name, -name=value,
 * -name value (not for booleans). */
static int parse_flag(struct shim_args *a, int argc, char **argv, int *i, struct iob_error **err) {
  const char *s = argv[*i] + 1;
  if (*s == '-')
    s++;
  const char *eq = strchr(s, '=');
  size_t n = eq ? (size_t)(eq - s) : strlen(s);
  const struct flag *f = find_flag(s, n);
  if (f == NULL)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "flag provided but not defined: '%s'",
                          argv[*i]);
  char *field = (char *)a + f->off;
  if (f->boolean) {
    bool v = true;
    if (eq && parse_bool(eq + 1, &v) < 0)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid boolean value '%s' for '%s'",
                            eq + 1, f->name);
    *(bool *)field = v;
    return 0;
  }
  if (eq) {
    *(const char **)field = eq + 1;
    return 0;
  }
  if (*i + 1 >= argc)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "flag needs an argument: '%s'", argv[*i]);
  *(const char **)field = argv[++*i];
  return 0;
}

int shim_args_parse(struct shim_args *a, int argc, char **argv, struct iob_error **err) {
  memset(a, 0, sizeof(*a));
  int i;
  for (i = 1; i < argc; i++) {
    const char *s = argv[i];
    if (s[0] != '-' || s[1] == '\0')
      break;
    if (!strcmp(s, "--")) {
      i++;
      break;
    }
    if (parse_flag(a, argc, argv, &i, err) < 0)
      return -1;
  }
  if (i < argc) {
    a->action = argv[i];
    if (strcmp(a->action, "start") && strcmp(a->action, "delete"))
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "unknown action '%s'", a->action);
    if (i + 1 < argc)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "unexpected argument '%s'",
                            argv[i + 1]);
  }
  if (a->version || a->info)
    return 0;
  if (a->ns == NULL || *a->ns == '\0')
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "shim namespace cannot be empty");
  if (shim_validate_id("namespace", a->ns, err) < 0)
    return -1;
  if (a->id == NULL || *a->id == '\0')
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "shim id cannot be empty");
  if (shim_validate_id("id", a->id, err) < 0)
    return -1;
  if (a->bundle && *a->bundle && shim_validate_path("bundle", a->bundle, true, err) < 0)
    return -1;
  return 0;
}

void shim_options_release(struct shim_options *o) {
  free(o->binary_name);
  free(o->root);
  free(o->shim_cgroup);
  free(o->agent_socket);
  free(o->unknown_keys);
  memset(o, 0, sizeof(*o));
}

static char *dup_nonempty(const char *s) {
  if (s == NULL || *s == '\0')
    return NULL;
  char *r = xstrdup(s);
  return r;
}

static int options_check(struct shim_options *o, struct iob_error **err) {
  if (o->binary_name && (strchr(o->binary_name, '\n') || strlen(o->binary_name) > 4096))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid binary_name");
  if (o->root && shim_validate_path("root", o->root, true, err) < 0)
    return -1;
  /* Absolute, no '..': a relative or climbing path would put the shim
   * somewhere under whatever cgroup it happens to start in. */
  if (o->shim_cgroup && shim_validate_path("ShimCgroup", o->shim_cgroup, true, err) < 0)
    return -1;
  if (o->agent_socket && shim_validate_path("IobatchAgentSocket", o->agent_socket, true, err) < 0)
    return -1;
  return 0;
}

/* Strip "type.googleapis.com/" and the like: containerd resolves an Any by
 * the last path segment of its type_url. */
static const char *type_name(const char *type_url) {
  const char *slash = strrchr(type_url, '/');
  return slash ? slash + 1 : type_url;
}

int shim_options_from_any(const char *type_url, const uint8_t *data, size_t len,
                          struct shim_options *o, bool *found, struct iob_error **err) {
  *found = false;
  if (type_url && !strcmp(type_name(type_url), CONFIG_PATH_TYPE)) {
    shim_options_release(o);
    if (shim_options_from_config_path(data, len, o, err) < 0)
      return -1;
    *found = true;
    return options_check(o, err);
  }
  if (type_url == NULL || strcmp(type_name(type_url), OPTIONS_TYPE))
    return 0;
  Containerd__Runc__V1__Options *m = containerd__runc__v1__options__unpack(NULL, len, data);
  if (m == NULL)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "cannot decode '%s'", OPTIONS_TYPE);
  shim_options_release(o);
  o->binary_name = dup_nonempty(m->binary_name);
  o->root = dup_nonempty(m->root);
  o->shim_cgroup = dup_nonempty(m->shim_cgroup);
  o->systemd_cgroup = m->systemd_cgroup;
  o->no_pivot_root = m->no_pivot_root;
  o->no_new_keyring = m->no_new_keyring;
  o->io_uid = m->io_uid;
  o->io_gid = m->io_gid;
  containerd__runc__v1__options__free_unpacked(m, NULL);
  *found = true;
  return options_check(o, err);
}

void shim_bootstrap_release(struct shim_bootstrap *b) {
  free(b->ttrpc_address);
  free(b->socket_dir);
  shim_options_release(&b->options);
  memset(b, 0, sizeof(*b));
}

static int from_bootstrap(const Containerd__Runtime__Bootstrap__V1__BootstrapParams *p,
                          struct shim_bootstrap *out, struct iob_error **err) {
  out->is_bootstrap = true;
  out->log_level = p->log_level;
  out->ttrpc_address = dup_nonempty(p->containerd_ttrpc_address);
  out->socket_dir = dup_nonempty(p->socket_dir);
  if (out->socket_dir && shim_validate_path("socket_dir", out->socket_dir, true, err) < 0)
    return -1;
  for (size_t i = 0; i < p->n_extensions; i++) {
    const Google__Protobuf__Any *any = p->extensions[i] ? p->extensions[i]->value : NULL;
    if (any == NULL)
      continue;
    bool found;
    if (shim_options_from_any(any->type_url, any->value.data, any->value.len, &out->options, &found,
                              err) < 0)
      return -1;
    if (found)
      out->have_options = true;
  }
  return 0;
}

int shim_bootstrap_parse(const uint8_t *data, size_t len, const char *id, const char *ns,
                         struct shim_bootstrap *out, struct iob_error **err) {
  memset(out, 0, sizeof(*out));
  if (len == 0)
    return 0;
  /* A legacy Any also decodes as BootstrapParams (field 1 and 2 are strings
   * in both); only matching instance_id and namespace make it one
   * (pkg/shim/compat.go). */
  Containerd__Runtime__Bootstrap__V1__BootstrapParams *p =
      containerd__runtime__bootstrap__v1__bootstrap_params__unpack(NULL, len, data);
  if (p && id && ns && !strcmp(p->instance_id, id) && !strcmp(p->namespace_, ns)) {
    int r = from_bootstrap(p, out, err);
    containerd__runtime__bootstrap__v1__bootstrap_params__free_unpacked(p, NULL);
    if (r < 0)
      shim_bootstrap_release(out);
    return r;
  }
  if (p)
    containerd__runtime__bootstrap__v1__bootstrap_params__free_unpacked(p, NULL);
  Google__Protobuf__Any *any = google__protobuf__any__unpack(NULL, len, data);
  if (any == NULL)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "cannot decode start options: neither BootstrapParams nor Any");
  int r = shim_options_from_any(any->type_url, any->value.data, any->value.len, &out->options,
                                &out->have_options, err);
  google__protobuf__any__free_unpacked(any, NULL);
  if (r < 0)
    shim_bootstrap_release(out);
  return r;
}

static int set_str(json_t *o, const char *k, const char *v) {
  return v ? json_object_set_new(o, k, json_string(v)) : 0;
}

int shim_options_write(const char *bundle, const struct shim_options *o, struct iob_error **err) {
  json_t *j = json_object();
  if (j == NULL)
    iob_oom();
  set_str(j, "binary_name", o->binary_name);
  set_str(j, "root", o->root);
  set_str(j, "shim_cgroup", o->shim_cgroup);
  json_object_set_new(j, "systemd_cgroup", json_boolean(o->systemd_cgroup));
  json_object_set_new(j, "no_pivot_root", json_boolean(o->no_pivot_root));
  json_object_set_new(j, "no_new_keyring", json_boolean(o->no_new_keyring));
  json_object_set_new(j, "io_uid", json_integer(o->io_uid));
  json_object_set_new(j, "io_gid", json_integer(o->io_gid));
  set_str(j, "agent_socket", o->agent_socket);
  json_object_set_new(j, "fail_closed", json_boolean(o->fail_closed));
  json_object_set_new(j, "agent_timeout_ms", json_integer(o->agent_timeout_ms));
  set_str(j, "unknown_keys", o->unknown_keys);
  cleanup_free char *path = xasprintf("%s/options.json", bundle);
  int r = json_dump_file(j, path, JSON_COMPACT);
  json_decref(j);
  if (r < 0)
    return iob_error(err, errno ? errno : EIO, "cannot write '%s'", path);
  return 0;
}

static char *json_str(json_t *o, const char *k) {
  const char *s = json_string_value(json_object_get(o, k));
  return dup_nonempty(s);
}

int shim_options_read(const char *bundle, struct shim_options *o, struct iob_error **err) {
  memset(o, 0, sizeof(*o));
  cleanup_free char *path = xasprintf("%s/options.json", bundle);
  json_error_t je;
  json_t *j = json_load_file(path, 0, &je);
  if (j == NULL) {
    if (access(path, F_OK) < 0 && errno == ENOENT)
      return 0; /* no options: the defaults */
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "cannot parse '%s': %s", path, je.text);
  }
  o->binary_name = json_str(j, "binary_name");
  o->root = json_str(j, "root");
  o->shim_cgroup = json_str(j, "shim_cgroup");
  o->systemd_cgroup = json_is_true(json_object_get(j, "systemd_cgroup"));
  o->no_pivot_root = json_is_true(json_object_get(j, "no_pivot_root"));
  o->no_new_keyring = json_is_true(json_object_get(j, "no_new_keyring"));
  json_t *uid = json_object_get(j, "io_uid"), *gid = json_object_get(j, "io_gid");
  json_int_t u = json_integer_value(uid), g = json_integer_value(gid);
  if ((uid && !json_is_integer(uid)) || (gid && !json_is_integer(gid)) || u < 0 || u > UINT32_MAX ||
      g < 0 || g > UINT32_MAX) {
    json_decref(j);
    shim_options_release(o);
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "invalid '%s': io_uid and io_gid must be integers in 0..%u", path,
                          UINT32_MAX);
  }
  o->io_uid = (uint32_t)u;
  o->io_gid = (uint32_t)g;
  o->agent_socket = json_str(j, "agent_socket");
  o->fail_closed = json_is_true(json_object_get(j, "fail_closed"));
  json_int_t t = json_integer_value(json_object_get(j, "agent_timeout_ms"));
  o->agent_timeout_ms = t > 0 && t <= UINT32_MAX ? (uint32_t)t : 0;
  o->unknown_keys = json_str(j, "unknown_keys");
  json_decref(j);
  return options_check(o, err);
}

int shim_config_group(const struct iob_oci_config *cfg, const char *id, char **group,
                      struct iob_error **err) {
  static const char *const keys[] = {"io.containerd.runc.v2.group", "io.kubernetes.cri.sandbox-id"};
  const char *g = NULL;
  for (size_t i = 0; i < IOB_ARRAY_SIZE(keys) && g == NULL; i++)
    g = iob_oci_annotation(cfg, keys[i]);
  if (g && shim_validate_id("group", g, err) < 0)
    return -1;
  *group = xstrdup(g ? g : id);
  return 0;
}
