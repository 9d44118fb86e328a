// SPDX-License-Identifier: Apache-2.0
/* libFuzzer: the request payloads of containerd's Task service (v2 and v3
 * share the messages) as the shim's ttrpc server decodes them, then the
 * checks its handlers run before anything else, the same code
 * (shim_req_check, shim/requests.c): ids, the bundle path, stdio, rootfs
 * mounts, the Exec process spec and the Update resources.  Then what the
 * process layer parses of a Create later: stdio URIs (shim_uri_parse),
 * rootfs mount options (shim_mount_parse_options) and the runc options Any
 * (shim_options_from_any).  Nothing is executed: no runc, no mounts.
 *
 * The first byte picks the method of containerd.task.v2.Task; the rest is
 * the payload. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "containerd/task/v2/shim.pb-c.h"
#include "shim/rootfs.h"
#include "shim/options.h"
#include "shim/requests.h"
#include "shim/uri.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_uri(const char *s) {
  if (s == NULL || *s == '\0')
    return;
  cleanup_error struct iob_error *err = NULL;
  struct shim_uri u;
  if (shim_uri_parse(s, &u, &err) == 0)
    shim_uri_release(&u);
}

/* What shim_container_create does with a Create that passed its checks. */
static void created(const Containerd__Task__V2__CreateTaskRequest *r) {
  cleanup_error struct iob_error *err = NULL;
  struct shim_create cr;
  cleanup_free struct shim_mount *mounts = NULL;
  if (shim_req_create(r, &cr, &mounts, &err) < 0)
    return;
  check_uri(cr.stdio.in);
  check_uri(cr.stdio.out);
  check_uri(cr.stdio.err);
  for (size_t i = 0; i < cr.n_mounts; i++) {
    unsigned long flags = 0, prop = 0;
    char *mdata = NULL;
    if (shim_mount_parse_options(mounts[i].options, mounts[i].n_options, &flags, &prop, &mdata,
                                 &err) == 0)
      free(mdata);
    iob_error_release(&err);
  }
  /* runtimeoptions.v1.Options names a file the shim opens: not here. */
  if (cr.options_type && !strstr(cr.options_type, "runtimeoptions")) {
    struct shim_options o = {0};
    bool found = false;
    shim_options_from_any(cr.options_type, cr.options, cr.options_len, &o, &found, &err);
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
  if (shim_req_check(m, &err) == 0) {
    if (m->descriptor == &containerd__task__v2__create_task_request__descriptor)
      created((const Containerd__Task__V2__CreateTaskRequest *)m);
    if (m->descriptor == &containerd__task__v2__exec_process_request__descriptor) {
      const Containerd__Task__V2__ExecProcessRequest *r = (const void *)m;
      check_uri(r->stdin);
      check_uri(r->stdout);
      check_uri(r->stderr);
    }
  }
  protobuf_c_message_free_unpacked(m, NULL);
  return 0;
}
