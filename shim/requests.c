// SPDX-License-Identifier: Apache-2.0
/* The checks of the Task requests (shim/requests.h). */
#include "shim/requests.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/xalloc.h"
#include "shim/validate.h"

#define STDIO_MAX 4096
#define ROOTFS_MAX 16

int shim_req_ids(const char *id, const char *exec_id, struct iob_error **err) {
  if (shim_validate_id("id", id, err) < 0)
    return -1;
  if (exec_id && *exec_id && shim_validate_id("exec id", exec_id, err) < 0)
    return -1;
  return 0;
}

static int check_stdio(const struct shim_stdio *st, struct iob_error **err) {
  const char *v[] = {st->in, st->out, st->err};
  for (size_t i = 0; i < 3; i++)
    if (v[i] && strlen(v[i]) > STDIO_MAX)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "stdio path too long");
  return 0;
}

static int create_mounts(const Containerd__Task__V2__CreateTaskRequest *r, struct shim_mount **out,
                         struct iob_error **err) {
  if (r->n_rootfs > ROOTFS_MAX)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "too many rootfs mounts");
  *out = xcalloc(r->n_rootfs + 1, sizeof(**out));
  for (size_t i = 0; i < r->n_rootfs; i++) {
    const Containerd__Types__Mount *m = r->rootfs[i];
    if (m == NULL || m->type == NULL || *m->type == '\0' || m->source == NULL)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid rootfs mount");
    (*out)[i] =
        (struct shim_mount){m->type, m->source, (const char *const *)m->options, m->n_options};
  }
  return 0;
}

int shim_req_create(const Containerd__Task__V2__CreateTaskRequest *r, struct shim_create *out,
                    struct shim_mount **mounts, struct iob_error **err) {
  *mounts = NULL;
  *out = (struct shim_create){
      .id = r->id, .bundle = r->bundle, .stdio = {r->stdin, r->stdout, r->stderr, r->terminal}};
  if (shim_req_ids(r->id, NULL, err) < 0 ||
      shim_validate_path("bundle", r->bundle, true, err) < 0 || check_stdio(&out->stdio, err) < 0 ||
      create_mounts(r, mounts, err) < 0)
    return -1;
  if (r->checkpoint && *r->checkpoint)
    return iob_error_code(err, IOB_CODE_UNIMPLEMENTED, "checkpoint restore is not supported");
  out->mounts = *mounts;
  out->n_mounts = r->n_rootfs;
  if (r->options) {
    out->options_type = r->options->type_url;
    out->options = r->options->value.data;
    out->options_len = r->options->value.len;
  }
  return 0;
}

/* A JSON object of at most SHIM_REQ_SPEC_MAX bytes (runc reads the rest). */
static int check_json_object(const Google__Protobuf__Any *any, const char *what,
                             struct iob_error **err) {
  if (any == NULL || any->value.len == 0 || any->value.len > SHIM_REQ_SPEC_MAX)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "missing or oversized %s", what);
  json_error_t je;
  json_t *j = json_loadb((const char *)any->value.data, any->value.len, 0, &je);
  bool valid = json_is_object(j);
  json_decref(j);
  if (!valid)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid %s: %s", what,
                          j ? "not a JSON object" : je.text);
  return 0;
}

int shim_req_exec(const Containerd__Task__V2__ExecProcessRequest *r, struct shim_stdio *stdio,
                  struct iob_error **err) {
  *stdio = (struct shim_stdio){r->stdin, r->stdout, r->stderr, r->terminal};
  if (shim_req_ids(r->id, NULL, err) < 0 || shim_validate_id("exec id", r->exec_id, err) < 0 ||
      check_stdio(stdio, err) < 0)
    return -1;
  return check_json_object(r->spec, "process spec", err);
}

int shim_req_update(const Containerd__Task__V2__UpdateTaskRequest *r, struct iob_error **err) {
  if (shim_req_ids(r->id, NULL, err) < 0)
    return -1;
  return check_json_object(r->resources, "resources", err);
}

/* The id and exec_id of any request that has them (the Task messages name
 * them alike). */
static const char *str_field(const ProtobufCMessage *m, const char *name) {
  const ProtobufCFieldDescriptor *f =
      protobuf_c_message_descriptor_get_field_by_name(m->descriptor, name);
  if (f == NULL || f->type != PROTOBUF_C_TYPE_STRING || f->label == PROTOBUF_C_LABEL_REPEATED)
    return NULL;
  return *(char *const *)(const void *)((const char *)m + f->offset);
}

int shim_req_check(const ProtobufCMessage *m, struct iob_error **err) {
  const ProtobufCMessageDescriptor *d = m->descriptor;
  if (d == &containerd__task__v2__create_task_request__descriptor) {
    struct shim_create cr;
    struct shim_mount *mounts = NULL;
    int r = shim_req_create((const void *)m, &cr, &mounts, err);
    free(mounts);
    return r;
  }
  if (d == &containerd__task__v2__exec_process_request__descriptor) {
    struct shim_stdio st;
    return shim_req_exec((const void *)m, &st, err);
  }
  if (d == &containerd__task__v2__update_task_request__descriptor)
    return shim_req_update((const void *)m, err);
  /* Answered without looking anything up (Connect, Shutdown) or refused
   * whatever they say (Checkpoint). */
  if (d == &containerd__task__v2__connect_request__descriptor ||
      d == &containerd__task__v2__shutdown_request__descriptor ||
      d == &containerd__task__v2__checkpoint_task_request__descriptor)
    return 0;
  const char *id = str_field(m, "id");
  return shim_req_ids(id ? id : "", str_field(m, "exec_id"), err);
}
