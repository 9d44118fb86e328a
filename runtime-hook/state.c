// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/xalloc.h"
#include "runtime-hook/hook.h"

static int printable(const char *s) {
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f)
      return 0;
  return 1;
}

static int has_dotdot(const char *p) {
  for (const char *c = p; (c = strstr(c, "..")) != NULL; c += 2)
    if ((c == p || c[-1] == '/') && (c[2] == '\0' || c[2] == '/'))
      return 1;
  return 0;
}

/* runc's own rule for ids is ^[\w+-\.]+$; other runtimes are looser, so
 * refuse only what could escape the record directory or fool a log. */
static int check_id(const char *id, struct iob_error **err) {
  size_t l = strnlen(id, HOOK_ID_MAX + 1);
  if (l == 0 || l > HOOK_ID_MAX)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "invalid container id: length must be 1..%d", HOOK_ID_MAX);
  if (!printable(id))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "invalid container id: contains control characters");
  if (strchr(id, '/') || strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid container id '%.64s'", id);
  return 0;
}

static int check_bundle(const char *b, struct iob_error **err) {
  size_t l = strnlen(b, PATH_MAX);
  if (l == 0 || l >= PATH_MAX - 64)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid bundle: length must be 1..%d",
                          PATH_MAX - 65);
  if (!printable(b))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "invalid bundle: contains control characters");
  if (b[0] != '/' || has_dotdot(b))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "invalid bundle '%.128s': must be an absolute path without '..'", b);
  return 0;
}

static int check_annotations(json_t *a, const char *where, struct iob_error **err) {
  if (!json_is_object(a))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "invalid %s: 'annotations' must be an object", where);
  if (json_object_size(a) > HOOK_ANNOTATIONS_MAX)
    return iob_error_code(err, IOB_CODE_RESOURCE_EXHAUSTED, "invalid %s: more than %d annotations",
                          where, HOOK_ANNOTATIONS_MAX);
  const char *k;
  json_t *v;
  json_object_foreach(a, k, v) {
    if (!json_is_string(v))
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "invalid %s: annotation '%.64s' must be a string", where, k);
    if (json_string_length(v) > HOOK_ANNOTATION_VALUE_MAX)
      return iob_error_code(err, IOB_CODE_RESOURCE_EXHAUSTED,
                            "invalid %s: annotation '%.64s' longer than %d bytes", where, k,
                            HOOK_ANNOTATION_VALUE_MAX);
  }
  return 0;
}

static int get_string(json_t *o, const char *key, const char **out, struct iob_error **err) {
  json_t *v = json_object_get(o, key);
  if (v == NULL)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid state: missing '%s'", key);
  if (!json_is_string(v))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid state: '%s' must be a string",
                          key);
  /* An embedded NUL would make C see a different string than JSON did. */
  if (strlen(json_string_value(v)) != json_string_length(v))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid state: '%s' contains a NUL byte",
                          key);
  *out = json_string_value(v);
  return 0;
}

int hook_state_parse(const char *buf, size_t len, struct hook_state *st, struct iob_error **err) {
  memset(st, 0, sizeof(*st));
  if (len > HOOK_STATE_MAX)
    return iob_error(err, EFBIG, "invalid state: larger than %d bytes", HOOK_STATE_MAX);
  json_error_t jerr;
  json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
  if (root == NULL)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "invalid state JSON: %s at line %d column %d", jerr.text, jerr.line,
                          jerr.column);
  int rc = -1;
  const char *ver, *id, *bundle, *status = "";
  json_t *pid, *ann;
  if (!json_is_object(root)) {
    iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid state: not a JSON object");
    goto out;
  }
  if (get_string(root, "ociVersion", &ver, err) < 0 || get_string(root, "id", &id, err) < 0 ||
      check_id(id, err) < 0 || get_string(root, "bundle", &bundle, err) < 0 ||
      check_bundle(bundle, err) < 0)
    goto out;
  if (json_object_get(root, "status")) {
    if (get_string(root, "status", &status, err) < 0)
      goto out;
    if (strlen(status) > 64) {
      iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid state: 'status' too long");
      goto out;
    }
  }
  pid = json_object_get(root, "pid");
  bool stopped = strcmp(status, "stopped") == 0;
  if (stopped && (pid == NULL || (json_is_integer(pid) && json_integer_value(pid) == 0))) {
    pid = NULL; /* a stopped container has no process */
  } else if (pid == NULL) {
    iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                   "invalid state: missing 'pid' (a prestart hook needs the container's "
                   "process)");
    goto out;
  }
  if (pid && (!json_is_integer(pid) || json_integer_value(pid) <= 0 ||
              json_integer_value(pid) > INT_MAX)) {
    iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                   "invalid state: 'pid' must be an integer in 1..%d", INT_MAX);
    goto out;
  }
  ann = json_object_get(root, "annotations");
  if (ann && check_annotations(ann, "state", err) < 0)
    goto out;
  st->id = xstrdup(id);
  st->bundle = xstrdup(bundle);
  st->status = xstrdup(status);
  st->pid = pid ? (pid_t)json_integer_value(pid) : 0;
  st->have_annotations = ann != NULL && json_object_size(ann) > 0;
  st->annotations = ann ? json_incref(ann) : json_object();
  rc = 0;
out:
  json_decref(root);
  return rc;
}

int hook_state_take_config(struct hook_state *st, const struct iob_oci_config *cfg,
                           struct iob_error **err) {
  /* Types are the reader's; these bounds are what the hook sends on. */
  if (cfg->annotations && !st->have_annotations) {
    if (check_annotations(cfg->annotations, "config.json", err) < 0)
      return -1;
    json_decref(st->annotations);
    st->annotations = json_incref(cfg->annotations);
    st->have_annotations = 1;
  }
  if (cfg->nargs > HOOK_ARGS_MAX)
    return iob_error_code(err, IOB_CODE_RESOURCE_EXHAUSTED,
                          "invalid config.json: 'process.args' may hold at most %d strings",
                          HOOK_ARGS_MAX);
  if (cfg->args) {
    st->args = xcalloc(cfg->nargs + 1, sizeof(*st->args));
    for (size_t i = 0; i < cfg->nargs; i++)
      st->args[i] = xstrdup(cfg->args[i]);
    st->nargs = cfg->nargs;
  }
  return 0;
}

int hook_state_load_bundle(struct hook_state *st, struct iob_error **err) {
  struct iob_oci_config cfg;
  if (iob_oci_config_load(st->bundle, &cfg, err) < 0)
    return -1;
  int r = hook_state_take_config(st, &cfg, err);
  iob_oci_config_release(&cfg);
  return r;
}

void hook_state_release(struct hook_state *st) {
  free(st->id);
  free(st->bundle);
  free(st->status);
  json_decref(st->annotations);
  for (size_t i = 0; st->args && i < st->nargs; i++)
    free(st->args[i]);
  free(st->args);
  memset(st, 0, sizeof(*st));
}

const char *hook_annotation(const struct hook_state *st, const char *key) {
  json_t *v = st->annotations ? json_object_get(st->annotations, key) : NULL;
  return json_is_string(v) ? json_string_value(v) : NULL;
}

const char *hook_annotation_get(void *st, const char *key) {
  return hook_annotation(st, key);
}
