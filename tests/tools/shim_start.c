// SPDX-License-Identifier: Apache-2.0
/* Test tool for tests/integration/shim/admission-options.sh: a Start sent
 * straight to a shim's task socket with a deadline (ttrpc timeout_nano), the
 * way containerd and the kubelet put one on it, which `ctr` cannot do.
 *
 *   shim-start ADDRESS CONTAINER_ID TIMEOUT_MS
 *       Task.Start(id) with timeout_nano = TIMEOUT_MS; prints "pid N" and
 *       exits 0, or prints the error and its code and exits 1 (also when
 *       no reply came by the deadline: the shim missed it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "containerd/task/v2/shim.pb-c.h"
#include "ttrpc/ttrpc.h"

#define TASK_SVC "containerd.task.v2.Task"

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: shim-start ADDRESS CONTAINER_ID TIMEOUT_MS\n");
    return 2;
  }
  char *end;
  long timeout = strtol(argv[3], &end, 10);
  if (*argv[3] == '\0' || *end || timeout <= 0 || timeout > 3600 * 1000) {
    fprintf(stderr, "shim-start: invalid timeout '%s'\n", argv[3]);
    return 2;
  }
  cleanup_error struct iob_error *err = NULL;
  struct ttrpc_client *c = NULL;
  if (ttrpc_client_connect(argv[1], &c, &err) < 0) {
    fprintf(stderr, "shim-start: %s\n", err->msg);
    return 1;
  }
  Containerd__Task__V2__StartRequest req = CONTAINERD__TASK__V2__START_REQUEST__INIT;
  req.id = argv[2];
  ProtobufCMessage *resp = NULL;
  int rc = ttrpc_client_call(c, TASK_SVC, "Start", &req.base,
                             &containerd__task__v2__start_response__descriptor, &resp,
                             (int)timeout, NULL, 0, &err);
  if (rc < 0) {
    printf("error code=%d %s\n", err->code, err->msg);
    ttrpc_client_free(c);
    return 1;
  }
  const Containerd__Task__V2__StartResponse *r = (const void *)resp;
  printf("pid %u\n", r->pid);
  protobuf_c_message_free_unpacked(resp, NULL);
  ttrpc_client_free(c);
  return 0;
}
