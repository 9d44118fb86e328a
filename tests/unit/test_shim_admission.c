// SPDX-License-Identifier: Apache-2.0
/* The shim's admission hold against a fake agent on the same loop: an
 * agent's "not admitted" that the shim did not ask for (a Cancel or a
 * newer Admit from another caller) starts the container when the shim
 * fails open; only fail closed trusts it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/cleanup.h"
#include "iobatch/agent.pb-c.h"
#include "shim/admission.h"
#include "ttrpc/ttrpc.h"

#define SVC "iobatch.agent.v1.Agent"

static struct iob_loop *loop;
static struct ttrpc_server *srv;
static char dir[64], sock[96];
static int admits;

static void h_register(struct ttrpc_call *call, const ProtobufCMessage *m, void *user) {
  (void)m;
  (void)user;
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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_foreign_refusal_fails_open),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
