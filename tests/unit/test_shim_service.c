/* The Task service against bad requests: a shim daemon's service runs in a
 * child process on a private socket; every malformed or unknown request
 * must come back as an error reply with the right code, never a crash. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/cleanup.h"
#include "containerd/task/v2/shim.pb-c.h"
#include "google/protobuf/empty.pb-c.h"
#include "shim/shim.h"
#include "ttrpc/ttrpc.h"

#define SVC "containerd.task.v2.Task"

static char sock[108];
static pid_t child;
static struct ttrpc_client *client;

static void serve(void) {
  struct iob_loop *loop;
  struct ttrpc_server *server;
  struct shim_service *svc;
  struct iob_error *err = NULL;
  if (iob_loop_new(&loop, &err) < 0 || ttrpc_server_new(loop, &server, &err) < 0 ||
      shim_service_new(loop, server, "testns", &svc, &err) < 0 ||
      ttrpc_server_listen(server, sock, &err) < 0 || iob_loop_run(loop, &err) < 0)
    _exit(2);
  /* Shutdown stopped the loop: flush its reply. */
  for (int i = 0; i < 5; i++)
    iob_loop_run_once(loop, 10, NULL);
  _exit(0);
}

static int setup(void **state) {
  (void)state;
  snprintf(sock, sizeof(sock), "/tmp/shimsvc-%d.sock", (int)getpid());
  unlink(sock);
  child = fork();
  if (child == 0)
    serve();
  struct iob_error *err = NULL;
  for (int i = 0; i < 100; i++) {
    if (ttrpc_client_connect(sock, &client, &err) == 0)
      return 0;
    iob_error_release(&err);
    usleep(20000);
  }
  return -1;
}

static int teardown(void **state) {
  (void)state;
  ttrpc_client_free(client);
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  unlink(sock);
  return 0;
}

/* Call method with req; return the status code (0 on success). */
static int call(const char *method, const ProtobufCMessage *req,
                const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **resp) {
  struct iob_error *err = NULL;
  ProtobufCMessage *r = NULL;
  struct ttrpc_kv md = {"containerd-namespace-ttrpc", "testns"};
  int rc = ttrpc_client_call(client, SVC, method, req, resp_desc, &r, 5000, &md, 1, &err);
  int code = rc < 0 ? err->code : 0;
  iob_error_release(&err);
  if (resp)
    *resp = r;
  else if (r)
    protobuf_c_message_free_unpacked(r, NULL);
  return code;
}

static void test_create_invalid(void **state) {
  (void)state;
  Containerd__Task__V2__CreateTaskRequest r = CONTAINERD__TASK__V2__CREATE_TASK_REQUEST__INIT;
  const ProtobufCMessageDescriptor *d = &containerd__task__v2__create_task_response__descriptor;
  assert_int_equal(call("Create", &r.base, d, NULL), IOB_CODE_INVALID_ARGUMENT); /* empty id */
  r.id = "../escape";
  r.bundle = "/tmp";
  assert_int_equal(call("Create", &r.base, d, NULL), IOB_CODE_INVALID_ARGUMENT);
  r.id = "c1";
  r.bundle = "relative/bundle";
  assert_int_equal(call("Create", &r.base, d, NULL), IOB_CODE_INVALID_ARGUMENT);
  r.bundle = "/run/../etc";
  assert_int_equal(call("Create", &r.base, d, NULL), IOB_CODE_INVALID_ARGUMENT);
  /* Runtime options that do not decode. */
  Google__Protobuf__Any opts = GOOGLE__PROTOBUF__ANY__INIT;
  uint8_t junk[] = {0xff, 0xff, 0xff};
  opts.type_url = "containerd.runc.v1.Options";
  opts.value.data = junk;
  opts.value.len = sizeof(junk);
  r.bundle = "/nonexistent/bundle";
  r.options = &opts;
  assert_int_equal(call("Create", &r.base, d, NULL), IOB_CODE_INVALID_ARGUMENT);
  /* A rootfs mount without a type. */
  Containerd__Types__Mount m = CONTAINERD__TYPES__MOUNT__INIT;
  Containerd__Types__Mount *mounts[] = {&m};
  r.options = NULL;
  r.n_rootfs = 1;
  r.rootfs = mounts;
  assert_int_equal(call("Create", &r.base, d, NULL), IOB_CODE_INVALID_ARGUMENT);
  /* Checkpoint restore is not implemented. */
  r.n_rootfs = 0;
  r.checkpoint = "/some/checkpoint";
  assert_int_equal(call("Create", &r.base, d, NULL), IOB_CODE_UNIMPLEMENTED);
}

static void test_unknown_container(void **state) {
  (void)state;
  Containerd__Task__V2__StateRequest s = CONTAINERD__TASK__V2__STATE_REQUEST__INIT;
  s.id = "nosuch";
  assert_int_equal(call("State", &s.base, &containerd__task__v2__state_response__descriptor, NULL),
                   IOB_CODE_NOT_FOUND);
  Containerd__Task__V2__KillRequest k = CONTAINERD__TASK__V2__KILL_REQUEST__INIT;
  k.id = "nosuch";
  k.signal = 9;
  assert_int_equal(call("Kill", &k.base, &google__protobuf__empty__descriptor, NULL),
                   IOB_CODE_NOT_FOUND);
  Containerd__Task__V2__WaitRequest w = CONTAINERD__TASK__V2__WAIT_REQUEST__INIT;
  w.id = "nosuch";
  assert_int_equal(call("Wait", &w.base, &containerd__task__v2__wait_response__descriptor, NULL),
                   IOB_CODE_NOT_FOUND);
  Containerd__Task__V2__ExecProcessRequest e = CONTAINERD__TASK__V2__EXEC_PROCESS_REQUEST__INIT;
  e.id = "nosuch";
  e.exec_id = "e1";
  assert_int_equal(call("Exec", &e.base, &google__protobuf__empty__descriptor, NULL),
                   IOB_CODE_NOT_FOUND);
  Containerd__Task__V2__StartRequest st = CONTAINERD__TASK__V2__START_REQUEST__INIT;
  st.id = "a b";
  assert_int_equal(call("Start", &st.base, &containerd__task__v2__start_response__descriptor, NULL),
                   IOB_CODE_INVALID_ARGUMENT);
  st.id = "ok";
  st.exec_id = "bad/exec";
  assert_int_equal(call("Start", &st.base, &containerd__task__v2__start_response__descriptor, NULL),
                   IOB_CODE_INVALID_ARGUMENT);
  Containerd__Task__V2__DeleteRequest dl = CONTAINERD__TASK__V2__DELETE_REQUEST__INIT;
  dl.id = "nosuch";
  assert_int_equal(call("Delete", &dl.base, &containerd__task__v2__delete_response__descriptor, NULL),
                   IOB_CODE_NOT_FOUND);
  Containerd__Task__V2__PidsRequest p = CONTAINERD__TASK__V2__PIDS_REQUEST__INIT;
  p.id = "nosuch";
  assert_int_equal(call("Pids", &p.base, &containerd__task__v2__pids_response__descriptor, NULL),
                   IOB_CODE_NOT_FOUND);
  Containerd__Task__V2__UpdateTaskRequest up = CONTAINERD__TASK__V2__UPDATE_TASK_REQUEST__INIT;
  up.id = "nosuch";
  assert_int_equal(call("Update", &up.base, &google__protobuf__empty__descriptor, NULL),
                   IOB_CODE_NOT_FOUND);
  Containerd__Task__V2__ResizePtyRequest rz = CONTAINERD__TASK__V2__RESIZE_PTY_REQUEST__INIT;
  rz.id = "nosuch";
  assert_int_equal(call("ResizePty", &rz.base, &google__protobuf__empty__descriptor, NULL),
                   IOB_CODE_NOT_FOUND);
  Containerd__Task__V2__PauseRequest pz = CONTAINERD__TASK__V2__PAUSE_REQUEST__INIT;
  pz.id = "nosuch";
  assert_int_equal(call("Pause", &pz.base, &google__protobuf__empty__descriptor, NULL),
                   IOB_CODE_NOT_FOUND);
  Containerd__Task__V2__StatsRequest sr = CONTAINERD__TASK__V2__STATS_REQUEST__INIT;
  sr.id = "nosuch";
  assert_int_equal(call("Stats", &sr.base, &containerd__task__v2__stats_response__descriptor, NULL),
                   IOB_CODE_NOT_FOUND);
}

static void test_checkpoint_unimplemented(void **state) {
  (void)state;
  Containerd__Task__V2__CheckpointTaskRequest c = CONTAINERD__TASK__V2__CHECKPOINT_TASK_REQUEST__INIT;
  c.id = "x";
  assert_int_equal(call("Checkpoint", &c.base, &google__protobuf__empty__descriptor, NULL),
                   IOB_CODE_UNIMPLEMENTED);
}

static void test_connect_and_shutdown(void **state) {
  (void)state;
  Containerd__Task__V2__ConnectRequest c = CONTAINERD__TASK__V2__CONNECT_REQUEST__INIT;
  c.id = "nosuch";
  ProtobufCMessage *r = NULL;
  assert_int_equal(call("Connect", &c.base, &containerd__task__v2__connect_response__descriptor, &r), 0);
  Containerd__Task__V2__ConnectResponse *cr = (Containerd__Task__V2__ConnectResponse *)r;
  assert_int_equal(cr->shim_pid, (uint32_t)child);
  assert_int_equal(cr->task_pid, 0);
  protobuf_c_message_free_unpacked(r, NULL);
  Containerd__Task__V2__ShutdownRequest s = CONTAINERD__TASK__V2__SHUTDOWN_REQUEST__INIT;
  s.id = "x";
  assert_int_equal(call("Shutdown", &s.base, &google__protobuf__empty__descriptor, NULL), 0);
  int status;
  assert_int_equal(waitpid(child, &status, 0), child);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_create_invalid),
      cmocka_unit_test(test_unknown_container),
      cmocka_unit_test(test_checkpoint_unimplemented),
      cmocka_unit_test(test_connect_and_shutdown),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
