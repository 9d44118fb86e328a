// SPDX-License-Identifier: Apache-2.0
/* Test tool for the interoperability test (tests/integration/shim/ttrpc-events.sh):
 * our ttrpc client against containerd's ttrpc server.
 *
 *   ttrpc-publish ADDRESS exit NAMESPACE CONTAINER_ID PID STATUS [async]
 *       publish containerd.events.TaskExit on /tasks/exit through
 *       containerd.services.events.ttrpc.v1.Events/Forward, as a shim does;
 *       "async" sends it with the loop-driven client instead.
 *   ttrpc-publish ADDRESS call SERVICE METHOD
 *       call with an empty payload; print "code=N message=M". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/cleanup.h"
#include "containerd/events/task.pb-c.h"
#include "containerd/services/events/events.pb-c.h"
#include "google/protobuf/empty.pb-c.h"
#include "ttrpc/ttrpc.h"

#define EVENTS_SVC "containerd.services.events.ttrpc.v1.Events"
#define TIMEOUT_MS 5000

struct async_state {
  struct iob_loop *loop;
  int rc;
};

static void on_done(void *user, ProtobufCMessage *resp, struct iob_error *err) {
  struct async_state *st = user;
  if (resp)
    protobuf_c_message_free_unpacked(resp, NULL);
  if (err) {
    fprintf(stderr, "ttrpc-publish: %s (code %d)\n", err->msg, err->code);
    st->rc = 1;
  } else {
    st->rc = 0;
  }
  iob_loop_stop(st->loop);
}

static int forward_async(struct ttrpc_client *c, const ProtobufCMessage *req,
                         const struct ttrpc_kv *md, struct iob_error **err) {
  struct async_state st = {NULL, 1};
  if (iob_loop_new(&st.loop, err) < 0)
    return -1;
  int rc = -1;
  if (ttrpc_client_attach(c, st.loop, err) == 0 &&
      ttrpc_client_call_async(c, EVENTS_SVC, "Forward", req, &google__protobuf__empty__descriptor,
                              TIMEOUT_MS, md, 1, on_done, &st, err) == 0 &&
      iob_loop_run(st.loop, err) == 0)
    rc = st.rc == 0 ? 0 : iob_error_code(err, IOB_CODE_UNKNOWN, "async forward failed");
  ttrpc_client_free(c); /* before the loop it is attached to */
  iob_loop_free(st.loop);
  return rc;
}

static int publish_exit(const char *address, char **argv, int argc, struct iob_error **err) {
  if (argc < 4)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "usage: exit NS ID PID STATUS [async]");
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  Google__Protobuf__Timestamp ts = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
  ts.seconds = now.tv_sec;
  ts.nanos = (int32_t)now.tv_nsec;
  Containerd__Events__TaskExit ev = CONTAINERD__EVENTS__TASK_EXIT__INIT;
  ev.container_id = argv[1];
  ev.id = argv[1];
  ev.pid = (uint32_t)strtoul(argv[2], NULL, 10);
  ev.exit_status = (uint32_t)strtoul(argv[3], NULL, 10);
  ev.exited_at = &ts;
  size_t n = containerd__events__task_exit__get_packed_size(&ev);
  cleanup_free uint8_t *buf = malloc(n ? n : 1);
  if (buf == NULL)
    return iob_error(err, ENOMEM, "cannot allocate event");
  containerd__events__task_exit__pack(&ev, buf);
  Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT;
  any.type_url = "containerd.events.TaskExit"; /* typeurl v2 writes the bare name */
  any.value.data = buf;
  any.value.len = n;
  Containerd__Types__Envelope env = CONTAINERD__TYPES__ENVELOPE__INIT;
  env.timestamp = &ts;
  env.namespace_ = argv[0];
  env.topic = "/tasks/exit";
  env.event = &any;
  Containerd__Services__Events__Ttrpc__V1__ForwardRequest req =
      CONTAINERD__SERVICES__EVENTS__TTRPC__V1__FORWARD_REQUEST__INIT;
  req.envelope = &env;
  const struct ttrpc_kv md[] = {{"containerd-namespace-ttrpc", argv[0]}};
  struct ttrpc_client *c = NULL;
  if (ttrpc_client_connect(address, &c, err) < 0)
    return -1;
  if (argc > 4 && strcmp(argv[4], "async") == 0)
    return forward_async(c, &req.base, md, err);
  ProtobufCMessage *resp = NULL;
  int rc = ttrpc_client_call(c, EVENTS_SVC, "Forward", &req.base,
                             &google__protobuf__empty__descriptor, &resp, TIMEOUT_MS, md, 1, err);
  if (resp)
    protobuf_c_message_free_unpacked(resp, NULL);
  ttrpc_client_free(c);
  return rc;
}

static int call_empty(const char *address, char **argv, int argc, struct iob_error **err) {
  if (argc < 2)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "usage: call SERVICE METHOD");
  struct ttrpc_client *c = NULL;
  if (ttrpc_client_connect(address, &c, err) < 0)
    return -1;
  const struct ttrpc_kv md[] = {{"containerd-namespace-ttrpc", "default"}};
  cleanup_error struct iob_error *cerr = NULL;
  int rc = ttrpc_client_call(c, argv[0], argv[1], NULL, NULL, NULL, TIMEOUT_MS, md, 1, &cerr);
  ttrpc_client_free(c);
  printf("code=%d message=%s\n", rc == 0 ? 0 : cerr->code, rc == 0 ? "" : cerr->msg);
  return 0;
}

int main(int argc, char **argv) {
  cleanup_error struct iob_error *err = NULL;
  if (argc < 3) {
    fprintf(stderr, "usage: %s ADDRESS exit NS ID PID STATUS [async] | call SERVICE METHOD\n",
            argv[0]);
    return 2;
  }
  int rc;
  if (strcmp(argv[2], "exit") == 0)
    rc = publish_exit(argv[1], argv + 3, argc - 3, &err);
  else if (strcmp(argv[2], "call") == 0)
    rc = call_empty(argv[1], argv + 3, argc - 3, &err);
  else
    rc = iob_error_code(&err, IOB_CODE_INVALID_ARGUMENT, "unknown action '%s'", argv[2]);
  if (rc < 0) {
    iob_error_print("ttrpc-publish", &err);
    return 1;
  }
  return 0;
}
