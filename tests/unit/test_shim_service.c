// SPDX-License-Identifier: Apache-2.0
/* The Task service against bad requests: a shim daemon's service runs in a
 * child process on a private socket; every malformed or unknown request
 * must come back as an error reply with the right code, never a crash. */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/cleanup.h"
#include "containerd/task/v2/shim.pb-c.h"
#include "google/protobuf/empty.pb-c.h"
#include "shim/args.h"
#include "shim/daemon.h"
#include "ttrpc/ttrpc.h"

#define SVC "containerd.task.v2.Task"

static char sock[108];
static pid_t child;
static struct ttrpc_client *client;

/* The real daemon (subreaper, signalfd, the service) on a listener passed as
 * fd 3, as `shim start` leaves it. */
static void serve(void) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  strcpy(sa.sun_path, sock);
  if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 8) < 0 ||
      dup2(fd, 3) < 0)
    _exit(2);
  /* A private cwd: the daemon opens "log" there (the bundle's FIFO). */
  char dir[] = "/tmp/shimsvc-cwdXXXXXX";
  if (mkdtemp(dir) == NULL || chdir(dir) < 0 || rmdir(dir) < 0)
    _exit(2);
  int null = open("/dev/null", O_WRONLY);
  if (null >= 0)
    dup2(null, 2);
  unsetenv("TTRPC_ADDRESS");
  char *argv[] = {"shim", "-namespace", "testns", "-id", "svc", "-address", "/nonexistent", NULL};
  struct shim_args a;
  struct iob_error *err = NULL;
  if (shim_args_parse(&a, 7, argv, &err) < 0 || shim_daemon_run(&a, &err) < 0)
    _exit(3);
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
/* The status message of the last failed call. */
static char last_msg[512];

static int call(const char *method, const ProtobufCMessage *req,
                const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **resp) {
  struct iob_error *err = NULL;
  ProtobufCMessage *r = NULL;
  struct ttrpc_kv md = {"containerd-namespace-ttrpc", "testns"};
  int rc = ttrpc_client_call(client, SVC, method, req, resp_desc, &r, 5000, &md, 1, &err);
  int code = rc < 0 ? err->code : 0;
  if (rc < 0)
    snprintf(last_msg, sizeof(last_msg), "%s", err->msg);
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
  /* The message ends with its class, as a Go shim's does: containerd 2.x
   * shows the message alone (service.c, fail). */
  size_t n = strlen(last_msg);
  assert_true(n > strlen(": not found"));
  assert_string_equal(last_msg + n - strlen(": not found"), ": not found");
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

/* A real container through runc: Create, Start, Update (resources JSON to
 * `runc update` on stdin), State, Kill, Wait, Delete.  Needs root and runc. */
static char bundle[64];

static int make_bundle(void) {
  snprintf(bundle, sizeof(bundle), "/tmp/shimsvc-b%d", (int)getpid());
  char cmd[1024];
  snprintf(cmd, sizeof(cmd),
           "set -e; rm -rf %s; mkdir -p %s/rootfs/bin %s/rootfs/proc %s/rootfs/dev %s/rootfs/sys; "
           "cp /bin/busybox %s/rootfs/bin/; cd %s; runc spec; "
           "sed -i -e 's/\"terminal\": true/\"terminal\": false/' -e 's/\"sh\"$/\"\\/bin\\/busybox\", \"sleep\", \"60\"/' "
           "-e 's|\"linux\": {|\"linux\": { \"cgroupsPath\": \"/shimsvc-%d\",|' config.json",
           bundle, bundle, bundle, bundle, bundle, bundle, bundle, (int)getpid());
  return system(cmd);
}

static void test_real_container(void **state) {
  (void)state;
  if (geteuid() != 0 || system("command -v runc >/dev/null") != 0 || access("/bin/busybox", X_OK)) {
    skip();
    return;
  }
  assert_int_equal(make_bundle(), 0);
  Containerd__Task__V2__CreateTaskRequest cr = CONTAINERD__TASK__V2__CREATE_TASK_REQUEST__INIT;
  char id[32];
  snprintf(id, sizeof(id), "svc%d", (int)getpid());
  cr.id = id;
  cr.bundle = bundle;
  ProtobufCMessage *r = NULL;
  assert_int_equal(call("Create", &cr.base, &containerd__task__v2__create_task_response__descriptor, &r), 0);
  uint32_t pid = ((Containerd__Task__V2__CreateTaskResponse *)r)->pid;
  protobuf_c_message_free_unpacked(r, NULL);
  assert_true(pid > 0);
  assert_int_equal(call("Create", &cr.base, &containerd__task__v2__create_task_response__descriptor, NULL),
                   IOB_CODE_ALREADY_EXISTS);
  Containerd__Task__V2__StartRequest st = CONTAINERD__TASK__V2__START_REQUEST__INIT;
  st.id = id;
  assert_int_equal(call("Start", &st.base, &containerd__task__v2__start_response__descriptor, NULL), 0);
  /* Update: the pids limit lands in the container's cgroup. */
  const char *res = "{\"pids\":{\"limit\":77}}";
  Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT;
  any.type_url = "types.containerd.io/opencontainers/runtime-spec/1/LinuxResources";
  any.value.data = (uint8_t *)res;
  any.value.len = strlen(res);
  Containerd__Task__V2__UpdateTaskRequest up = CONTAINERD__TASK__V2__UPDATE_TASK_REQUEST__INIT;
  up.id = id;
  up.resources = &any;
  assert_int_equal(call("Update", &up.base, &google__protobuf__empty__descriptor, NULL), 0);
  char path[128], buf[32] = "";
  snprintf(path, sizeof(path), "/sys/fs/cgroup/pids/shimsvc-%d/pids.max", (int)getpid());
  if (access(path, F_OK))
    snprintf(path, sizeof(path), "/sys/fs/cgroup/shimsvc-%d/pids.max", (int)getpid());
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  assert_non_null(fgets(buf, sizeof(buf), f));
  fclose(f);
  assert_int_equal(atoi(buf), 77);
  /* Bad resources JSON: InvalidArgument, not a crash. */
  any.value.data = (uint8_t *)"{not json";
  any.value.len = 9;
  assert_int_equal(call("Update", &up.base, &google__protobuf__empty__descriptor, NULL),
                   IOB_CODE_INVALID_ARGUMENT);
  Containerd__Task__V2__StateRequest sr = CONTAINERD__TASK__V2__STATE_REQUEST__INIT;
  sr.id = id;
  assert_int_equal(call("State", &sr.base, &containerd__task__v2__state_response__descriptor, &r), 0);
  assert_int_equal(((Containerd__Task__V2__StateResponse *)r)->status, CONTAINERD__V1__TYPES__STATUS__RUNNING);
  protobuf_c_message_free_unpacked(r, NULL);
  Containerd__Task__V2__DeleteRequest dl = CONTAINERD__TASK__V2__DELETE_REQUEST__INIT;
  dl.id = id;
  assert_int_equal(call("Delete", &dl.base, &containerd__task__v2__delete_response__descriptor, NULL),
                   IOB_CODE_FAILED_PRECONDITION);
  Containerd__Task__V2__KillRequest k = CONTAINERD__TASK__V2__KILL_REQUEST__INIT;
  k.id = id;
  k.signal = 9;
  assert_int_equal(call("Kill", &k.base, &google__protobuf__empty__descriptor, NULL), 0);
  Containerd__Task__V2__WaitRequest w = CONTAINERD__TASK__V2__WAIT_REQUEST__INIT;
  w.id = id;
  assert_int_equal(call("Wait", &w.base, &containerd__task__v2__wait_response__descriptor, &r), 0);
  assert_int_equal(((Containerd__Task__V2__WaitResponse *)r)->exit_status, 137);
  protobuf_c_message_free_unpacked(r, NULL);
  assert_int_equal(call("Kill", &k.base, &google__protobuf__empty__descriptor, NULL),
                   IOB_CODE_NOT_FOUND);
  assert_int_equal(call("Delete", &dl.base, &containerd__task__v2__delete_response__descriptor, &r), 0);
  assert_int_equal(((Containerd__Task__V2__DeleteResponse *)r)->exit_status, 137);
  protobuf_c_message_free_unpacked(r, NULL);
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf %s", bundle);
  assert_int_equal(system(cmd), 0);
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
      cmocka_unit_test(test_real_container),
      cmocka_unit_test(test_connect_and_shutdown),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
