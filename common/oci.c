// SPDX-License-Identifier: Apache-2.0
/* The OCI config reader (common/oci.h). */
#include "common/oci.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cleanup.h"
#include "common/file.h"
#include "common/xalloc.h"

static int bad_type(const char *name, const char *field, const char *what, struct iob_error **err) {
  return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid '%s': '%.128s' is not %s", name,
                        field, what);
}

static int take_annotations(json_t *root, const char *name, struct iob_oci_config *cfg,
                            struct iob_error **err) {
  json_t *ann = json_object_get(root, "annotations");
  if (ann == NULL)
    return 0;
  if (!json_is_object(ann))
    return bad_type(name, "annotations", "an object", err);
  const char *k;
  json_t *v;
  json_object_foreach(ann, k, v) {
    if (!json_is_string(v))
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "invalid '%s': annotation '%.64s' is not a string", name, k);
  }
  cfg->annotations = ann;
  return 0;
}

static int take_args(json_t *root, const char *name, struct iob_oci_config *cfg,
                     struct iob_error **err) {
  json_t *proc = json_object_get(root, "process");
  if (proc == NULL)
    return 0;
  if (!json_is_object(proc))
    return bad_type(name, "process", "an object", err);
  json_t *args = json_object_get(proc, "args");
  if (args == NULL)
    return 0;
  if (!json_is_array(args))
    return bad_type(name, "process.args", "an array", err);
  size_t n = json_array_size(args);
  cfg->args = xcalloc(n + 1, sizeof(*cfg->args));
  for (size_t i = 0; i < n; i++) {
    const char *a = json_string_value(json_array_get(args, i));
    if (a == NULL)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "invalid '%s': 'process.args[%zu]' is not a string", name, i);
    cfg->args[i] = a;
  }
  cfg->nargs = n;
  return 0;
}

static int take_hooks(json_t *root, const char *name, struct iob_oci_config *cfg,
                      struct iob_error **err) {
  json_t *hooks = json_object_get(root, "hooks");
  if (hooks == NULL)
    return 0;
  if (!json_is_object(hooks))
    return bad_type(name, "hooks", "an object", err);
  const char *kind;
  json_t *list;
  json_object_foreach(hooks, kind, list) {
    if (!json_is_array(list))
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "invalid '%s': 'hooks.%.64s' is not an array", name, kind);
  }
  cfg->hooks = hooks;
  return 0;
}

int iob_oci_config_parse(const char *buf, size_t len, const char *name, struct iob_oci_config *cfg,
                         struct iob_error **err) {
  memset(cfg, 0, sizeof(*cfg));
  if (len > IOB_OCI_CONFIG_MAX)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid '%s': larger than %u bytes",
                          name, IOB_OCI_CONFIG_MAX);
  json_error_t je;
  cfg->root = json_loadb(buf, len, 0, &je);
  if (cfg->root == NULL)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid '%s': %s (line %d, column %d)",
                          name, je.text, je.line, je.column);
  if (!json_is_object(cfg->root)) {
    iob_oci_config_release(cfg);
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid '%s': not a JSON object", name);
  }
  if (take_annotations(cfg->root, name, cfg, err) < 0 || take_args(cfg->root, name, cfg, err) < 0 ||
      take_hooks(cfg->root, name, cfg, err) < 0) {
    iob_oci_config_release(cfg);
    return -1;
  }
  return 0;
}

int iob_oci_config_load(const char *bundle, struct iob_oci_config *cfg, struct iob_error **err) {
  memset(cfg, 0, sizeof(*cfg));
  cleanup_free char *path = xasprintf("%s/config.json", bundle);
  cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return iob_error(err, errno, "cannot open '%s'", path);
  /* Refused before anything is allocated; iob_read_fd bounds a file that
   * grows meanwhile. */
  struct stat sb;
  if (fstat(fd, &sb) == 0 && sb.st_size > (off_t)IOB_OCI_CONFIG_MAX)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid '%s': larger than %u bytes",
                          path, IOB_OCI_CONFIG_MAX);
  cleanup_free char *buf = NULL;
  size_t len = 0;
  if (iob_read_fd(fd, path, IOB_OCI_CONFIG_MAX, &buf, &len, err) < 0)
    return -1;
  return iob_oci_config_parse(buf, len, path, cfg, err);
}

void iob_oci_config_release(struct iob_oci_config *cfg) {
  free(cfg->args);
  json_decref(cfg->root);
  memset(cfg, 0, sizeof(*cfg));
}

const char *iob_oci_annotation(const struct iob_oci_config *cfg, const char *key) {
  const char *v = json_string_value(json_object_get(cfg->annotations, key));
  return v && *v ? v : NULL;
}
