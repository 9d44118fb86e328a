/* libFuzzer: the request payloads of containerd's Task service (v2 and v3
 * share the messages) as the shim's ttrpc server decodes them, then the
 * shim's public checks that its handlers (shim/service.c) apply before
 * anything runs: ids (shim_validate_id), the bundle path
 * (shim_validate_path), stdio URIs (shim_uri_parse), rootfs mount options
 * (shim_mount_parse_options) and a Create's runc options Any
 * (shim_options_from_any).  Nothing is executed: no runc, no mounts.
 *
 * The first byte picks the method of containerd.task.v2.Task; the rest is
 * the payload.  Checks inside static handler code (check_stdio's length
 * limit, create_mounts, the Exec spec and Update resources JSON) are not
 * reached; see tests/fuzz/README.md. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "containerd/task/v2/shim.pb-c.h"
#include "shim/mount.h"
#include "shim/options.h"
#include "shim/uri.h"
#include "shim/validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *str_field(const ProtobufCMessage *m, const char *name) {
  const ProtobufCFieldDescriptor *f =
      protobuf_c_message_descriptor_get_field_by_name(m->descriptor, name);
  if (f == NULL || f->type != PROTOBUF_C_TYPE_STRING || f->label == PROTOBUF_C_LABEL_REPEATED)
    return NULL;
  return *(char *const *)(const void *)((const char *)m + f->offset);
}

static void check_uri(const char *s) {
  if (s == NULL || *s == '\0')
    return;
  cleanup_error struct iob_error *err = NULL;
  struct shim_uri u;
  if (shim_uri_parse(s, &u, &err) == 0)
    shim_uri_release(&u);
}

static void check_create(const Containerd__Task__V2__CreateTaskRequest *r) {
  cleanup_error struct iob_error *err = NULL;
  shim_validate_path("bundle", r->bundle, true, &err);
  iob_error_release(&err);
  for (size_t i = 0; i < r->n_rootfs && i < 16; i++) {
    const Containerd__Types__Mount *m = r->rootfs[i];
    if (m == NULL)
      continue;
    unsigned long flags = 0, prop = 0;
    char *mdata = NULL;
    if (shim_mount_parse_options((const char *const *)m->options, m->n_options, &flags, &prop,
                                 &mdata, &err) == 0)
      free(mdata);
    iob_error_release(&err);
  }
  /* runtimeoptions.v1.Options names a file the shim opens: not here. */
  if (r->options && r->options->type_url && !strstr(r->options->type_url, "runtimeoptions")) {
    struct shim_options o = {0};
    bool found = false;
    shim_options_from_any(r->options->type_url, r->options->value.data, r->options->value.len, &o,
                          &found, &err);
    shim_options_release(&o);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  const ProtobufCServiceDescriptor *svc = &containerd__task__v2__task__descriptor;
  const ProtobufCMethodDescriptor *method = &svc->methods[data[0] % svc->n_methods];
  ProtobufCMessage *m = protobuf_c_message_unpack(method->input, NULL, size - 1, data + 1);
  if (m == NULL)
    return 0;
  cleanup_error struct iob_error *err = NULL;
  const char *id = str_field(m, "id");
  if (id)
    shim_validate_id("id", id, &err);
  iob_error_release(&err);
  const char *exec_id = str_field(m, "exec_id");
  if (exec_id && *exec_id)
    shim_validate_id("exec id", exec_id, &err);
  iob_error_release(&err);
  check_uri(str_field(m, "stdin"));
  check_uri(str_field(m, "stdout"));
  check_uri(str_field(m, "stderr"));
  if (m->descriptor == &containerd__task__v2__create_task_request__descriptor)
    check_create((const Containerd__Task__V2__CreateTaskRequest *)m);
  protobuf_c_message_free_unpacked(m, NULL);
  return 0;
}
