// SPDX-License-Identifier: Apache-2.0
/* Test tool for tests/integration/shim/shim-slowcreate.sh: one Task RPC sent
 * straight to a shim's task socket, so a test sees the shim's own answer
 * and when it came (ctr would go through containerd).
 *
 *   shim-call ADDRESS state CONTAINER_ID     prints "status N pid P"
 *   shim-call ADDRESS kill CONTAINER_ID SIG  prints "ok"
 *   shim-call ADDRESS wait CONTAINER_ID      prints "exit N"
 *   shim-call ADDRESS delete CONTAINER_ID    prints "exit N"
 *
 * An error reply prints "error code=N MESSAGE" and exits 1.  Every call
 * gives up after 60 s. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "containerd/task/v2/shim.pb-c.h"
#include "google/protobuf/empty.pb-c.h"
#include "ttrpc/ttrpc.h"

#define TASK_SVC "containerd.task.v2.Task"
#define TIMEOUT_MS 60000

static int call(struct ttrpc_client *c, const char *method, const ProtobufCMessage *req,
                const ProtobufCMessageDescriptor *desc, ProtobufCMessage **resp) {
  cleanup_error struct iob_error *err = NULL;
  if (ttrpc_client_call(c, TASK_SVC, method, req, desc, resp, TIMEOUT_MS, NULL, 0, &err) < 0) {
    printf("error code=%d %s\n", err->code, err->msg);
    return -1;
  }
  return 0;
}

static int run(struct ttrpc_client *c, const char *verb, char *id, const char *arg) {
  ProtobufCMessage *resp = NULL;
  if (!strcmp(verb, "state")) {
    Containerd__Task__V2__StateRequest r = CONTAINERD__TASK__V2__STATE_REQUEST__INIT;
    r.id = id;
    if (call(c, "State", &r.base, &containerd__task__v2__state_response__descriptor, &resp) < 0)
      return 1;
    const Containerd__Task__V2__StateResponse *s = (const void *)resp;
    printf("status %d pid %u\n", (int)s->status, s->pid);
  } else if (!strcmp(verb, "kill") && arg) {
    Containerd__Task__V2__KillRequest r = CONTAINERD__TASK__V2__KILL_REQUEST__INIT;
    r.id = id;
    r.signal = (uint32_t)atoi(arg);
    if (call(c, "Kill", &r.base, &google__protobuf__empty__descriptor, &resp) < 0)
      return 1;
    printf("ok\n");
  } else if (!strcmp(verb, "wait")) {
    Containerd__Task__V2__WaitRequest r = CONTAINERD__TASK__V2__WAIT_REQUEST__INIT;
    r.id = id;
    if (call(c, "Wait", &r.base, &containerd__task__v2__wait_response__descriptor, &resp) < 0)
      return 1;
    printf("exit %u\n", ((const Containerd__Task__V2__WaitResponse *)resp)->exit_status);
  } else if (!strcmp(verb, "delete")) {
    Containerd__Task__V2__DeleteRequest r = CONTAINERD__TASK__V2__DELETE_REQUEST__INIT;
    r.id = id;
    if (call(c, "Delete", &r.base, &containerd__task__v2__delete_response__descriptor, &resp) < 0)
      return 1;
    printf("exit %u\n", ((const Containerd__Task__V2__DeleteResponse *)resp)->exit_status);
  } else {
    fprintf(stderr, "shim-call: unknown call '%s'\n", verb);
    return 2;
  }
  protobuf_c_message_free_unpacked(resp, NULL);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: shim-call ADDRESS state|kill|wait|delete CONTAINER_ID [SIGNAL]\n");
    return 2;
  }
  cleanup_error struct iob_error *err = NULL;
  struct ttrpc_client *c = NULL;
  if (ttrpc_client_connect(argv[1], &c, &err) < 0) {
    fprintf(stderr, "shim-call: %s\n", err->msg);
    return 1;
  }
  int rc = run(c, argv[2], argv[3], argc > 4 ? argv[4] : NULL);
  fflush(stdout);
  ttrpc_client_free(c);
  return rc;
}
