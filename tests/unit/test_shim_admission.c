// SPDX-License-Identifier: Apache-2.0
/* The shim's admission hold against a fake agent on the same loop: an
 * agent's "not admitted" that the shim did not ask for (a Cancel or a
 * newer Admit from another caller) starts the container when the shim
 * fails open; only fail closed trusts it.  The Register at Create: the
 * agent has the container (pid, cgroup, baseline, class) before Create
 * goes on, and not from the shim when iobatch-hook is in the spec. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgroupv2/cg2.h"
#include "common/cleanup.h"
#include "iobatch/agent.pb-c.h"
#include "shim/admission.h"
#include "ttrpc/ttrpc.h"

#define SVC "iobatch.agent.v1.Agent"

static struct iob_loop *loop;
static struct ttrpc_server *srv;
static char dir[64], sock[96];
static int admits, registers;
static char reg_line[512]; /* what the last Register said */

static void h_register(struct ttrpc_call *call, const ProtobufCMessage *m, void *user) {
  const Iobatch__Agent__V1__RegisterRequest *r = (const void *)m;
  (void)user;
  registers++;
  snprintf(reg_line, sizeof(reg_line), "%s %s %s pid=%s cgroup=%s class=%s base=%s", r->id,
           r->namespace_, r->source, r->pid == (uint32_t)getpid() ? "self" : "other",
           r->cgroup, r->declared_class,
           r->baseline && r->baseline->monotonic_ns ? "yes" : "no");
  Iobatch__Agent__V1__RegisterResponse resp = IOBATCH__AGENT__V1__REGISTER_RESPONSE__INIT;
  resp.class_ = (char *)"seq-write";
  ttrpc_call_reply(call, &resp.base);
}

/* What the agent answers when another caller cancelled the container. */
static void h_admit(struct ttrpc_call *call, const ProtobufCMessage *m, void *user) {
  (void)m;
  (void)user;
  admits++;
  Iobatch__Agent__V1__AdmitResponse resp = IOBATCH__AGENT__V1__ADMIT_RESPONSE__INIT;
  resp.admitted = false;
  resp.reason = (char *)"cancelled";
  resp.class_ = (char *)"seq-write";
  ttrpc_call_reply(call, &resp.base);
}

static int setup(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  snprintf(dir, sizeof(dir), "/tmp/shadm.XXXXXX");
  if (mkdtemp(dir) == NULL || iob_loop_new(&loop, &err) < 0 ||
      ttrpc_server_new(loop, &srv, &err) < 0)
    return -1;
  snprintf(sock, sizeof(sock), "%s/agent.sock", dir);
  if (ttrpc_server_register(srv, SVC, "Register", &iobatch__agent__v1__register_request__descriptor,
                            h_register, NULL, &err) < 0 ||
      ttrpc_server_register(srv, SVC, "Admit", &iobatch__agent__v1__admit_request__descriptor,
                            h_admit, NULL, &err) < 0 ||
      ttrpc_server_listen(srv, sock, &err) < 0)
    return -1;
  return setenv("IOBATCH_AGENT_SOCKET", sock, 1);
}

static int teardown(void **state) {
  (void)state;
  ttrpc_server_free(srv);
  unlink(sock);
  return rmdir(dir);
}

struct outcome {
  int calls, admitted;
  int code;
};

static void on_started(void *data, int admitted, struct iob_error *err) {
  struct outcome *o = data;
  o->calls++;
  o->admitted = admitted;
  o->code = err ? err->code : 0;
}

static void test_foreign_refusal_fails_open(void **state) {
  (void)state;
  struct shim_ctr_info info = {.cls = (char *)"seq-write"};
  /* No options.json in the bundle: the defaults, fail open. */
  struct shim_admission_req req = {.id = "c1", .ns = "default", .bundle = dir, .info = &info};
  struct outcome o = {0};
  shim_admission_wait(loop, &req, on_started, &o);
  uint64_t end = iob_now_ms() + 10000;
  while (o.calls == 0 && iob_now_ms() < end) {
    cleanup_error struct iob_error *err = NULL;
    assert_true(iob_loop_run_once(loop, 20, &err) >= 0);
  }
  assert_int_equal(admits, 1);
  assert_int_equal(o.calls, 1);
  assert_int_equal(o.code, 0);
  assert_int_equal(o.admitted, 1);
}

/* Whether iobatch-hook is among the hooks that run at create, by its
 * file name wherever it is installed. */
static void test_hook_in_spec(void **state) {
  (void)state;
  static const struct {
    const char *json;
    bool in;
  } cases[] = {
      {"{\"ociVersion\":\"1.0.2\"}", false},
      {"{\"hooks\":{\"prestart\":[{\"path\":\"/usr/bin/iobatch-hook\"}]}}", true},
      {"{\"hooks\":{\"createRuntime\":[{\"path\":\"/bin/true\"},"
       "{\"path\":\"/opt/x/iobatch-hook\",\"args\":[\"iobatch-hook\"]}]}}",
       true},
      {"{\"hooks\":{\"poststop\":[{\"path\":\"/usr/bin/iobatch-hook\"}]}}", false},
      {"{\"hooks\":{\"createContainer\":[{\"path\":\"/usr/bin/iobatch-hook\"}]}}", false},
      {"{\"hooks\":{\"prestart\":[{\"path\":\"/usr/bin/iobatch-hook-wrapper\"}]}}", false},
      {"{\"hooks\":{\"prestart\":[{\"args\":[\"iobatch-hook\"]}]}}", false},
  };
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    cleanup_error struct iob_error *err = NULL;
    struct shim_ctr_info info;
    assert_int_equal(shim_ctr_info_parse(cases[i].json, strlen(cases[i].json), &info, &err), 0);
    if (info.hook_in_spec != cases[i].in)
      fail_msg("%s: hook_in_spec %d", cases[i].json, info.hook_in_spec);
    shim_ctr_info_release(&info);
  }
}

static void on_registered(void *data) {
  int *seen = data;
  *seen = registers + 1; /* the Registers the agent had answered, plus one */
}

static void spin_until(const int *v) {
  uint64_t end = iob_now_ms() + 10000;
  while (*v == 0 && iob_now_ms() < end) {
    cleanup_error struct iob_error *err = NULL;
    assert_true(iob_loop_run_once(loop, 20, &err) >= 0);
  }
}

/* Create goes on only once the agent answered the Register, which carries
 * the init's pid and cgroup, a baseline and the declared class; with
 * iobatch-hook in the spec the hook registers it, not the shim. */
static void test_register_at_create(void **state) {
  (void)state;
  struct shim_ctr_info info = {.cls = (char *)"rand-read"};
  struct shim_admission_req req = {
      .id = "c2", .ns = "default", .bundle = dir, .info = &info, .pid = getpid()};
  int before = registers, seen = 0;
  shim_admission_register(loop, &req, on_registered, &seen);
  spin_until(&seen);
  assert_int_equal(registers, before + 1);
  assert_int_equal(seen, registers + 1); /* after the answer, not before */
  /* its v2 cgroup, "" when it has none of its own (the v2 root) */
  cleanup_free char *cg = NULL;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(cg2_pid_cgroup(NULL, getpid(), &cg, &err), 0);
  char want[512];
  snprintf(want, sizeof(want), "c2 default shim pid=self cgroup=%s class=rand-read base=yes",
           strcmp(cg, "/") ? cg : "");
  assert_string_equal(reg_line, want);
  info.hook_in_spec = true;
  seen = 0;
  shim_admission_register(loop, &req, on_registered, &seen);
  assert_int_equal(seen, registers + 1); /* at once */
  for (int i = 0; i < 10; i++)
    iob_loop_run_once(loop, 10, NULL);
  assert_int_equal(registers, before + 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_foreign_refusal_fails_open),
      cmocka_unit_test(test_hook_in_spec),
      cmocka_unit_test(test_register_at_create),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
