// SPDX-License-Identifier: Apache-2.0
/* agent/serve/server.c on a real socket: the Agent API served on one loop with
 * a headless daemon's state behind it and ttrpc clients on the same loop.
 *  - the socket's directory is made private (0755 -> 0700);
 *  - Ping, Register and Status answer; Register tells the owner (changed);
 *  - a pending Admit waits for the owner's word: answered (admitted),
 *    superseded (ABORTED), aborted (UNAVAILABLE with the reason), or its
 *    caller gone (the owner removes the container);
 *  - a container is bound to the connection that registered it: another
 *    may not register, admit, cancel it or report its exit while that one
 *    is open (PERMISSION_DENIED), and may once it closed;
 *  - malformed requests (no id, a bad class) are refused with
 *    INVALID_ARGUMENT, a method the service lacks is not found. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/daemon.h"
#include "agent/serve/server.h"
#include "client/api.h"
#include "common/cleanup.h"
#include "common/loop.h"
#include "google/protobuf/empty.pb-c.h"
#include "iobatch/agent.pb-c.h"
#include "ttrpc/ttrpc.h"

struct rig {
  char dir[40];   /* the socket's directory */
  char state[40]; /* the daemon's state directory */
  char sock[80];
  struct iob_loop *loop;
  struct agent_daemon d;
  struct agent_server s;
  int changed, removed;
  char removed_why[64];
};

/* One call's outcome. */
struct answer {
  bool done;
  int code; /* IOB_CODE_*; 0: OK */
  char msg[512];
  ProtobufCMessage *resp;
};

static void on_changed(void *user) {
  struct rig *g = user;
  g->changed++;
}

static void on_remove(struct agent_ctr *c, const char *why, uint64_t now, void *user) {
  struct rig *g = user;
  g->removed++;
  snprintf(g->removed_why, sizeof(g->removed_why), "%s", why);
  agent_daemon_remove(&g->d, c, why, now);
}

static const struct agent_server_ops ops = {.changed = on_changed, .remove = on_remove};

static int setup(void **state) {
  struct rig *g = calloc(1, sizeof(*g));
  assert_non_null(g);
  snprintf(g->dir, sizeof(g->dir), "/tmp/iob-srv.XXXXXX");
  snprintf(g->state, sizeof(g->state), "/tmp/iob-srvst.XXXXXX");
  assert_non_null(mkdtemp(g->dir));
  assert_non_null(mkdtemp(g->state));
  assert_int_equal(chmod(g->dir, 0755), 0);
  snprintf(g->sock, sizeof(g->sock), "%s/agent.sock", g->dir);
  struct agent_config cfg;
  agent_config_default(&cfg);
  cfg.state_dir = g->state;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_daemon_init_headless(&g->d, &cfg, &err), 0);
  assert_int_equal(iob_loop_new(&g->loop, &err), 0);
  if (agent_server_setup(&g->s, g->loop, g->sock, &g->d.api, &ops, g, &err) < 0)
    fail_msg("setup: %s", err->msg);
  *state = g;
  return 0;
}

static int teardown(void **state) {
  struct rig *g = *state;
  agent_server_release(&g->s);
  agent_daemon_release(&g->d);
  iob_loop_free(g->loop);
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", g->dir, g->state);
  assert_int_equal(system(cmd), 0);
  free(g);
  return 0;
}

static struct ttrpc_client *client(struct rig *g) {
  struct ttrpc_client *c = NULL;
  cleanup_error struct iob_error *err = NULL;
  if (ttrpc_client_connect(g->sock, &c, &err) < 0)
    fail_msg("connect: %s", err->msg);
  assert_int_equal(ttrpc_client_attach(c, g->loop, &err), 0);
  return c;
}

static void done(void *user, ProtobufCMessage *resp, struct iob_error *err) {
  struct answer *a = user;
  a->done = true;
  a->resp = resp;
  if (err) {
    a->code = err->code ? err->code : -1;
    snprintf(a->msg, sizeof(a->msg), "%s", err->msg);
  }
}

static void call(struct ttrpc_client *c, const char *method, const ProtobufCMessage *req,
                 const ProtobufCMessageDescriptor *resp_desc, struct answer *a) {
  *a = (struct answer){0};
  cleanup_error struct iob_error *err = NULL;
  if (ttrpc_client_call_async(c, AGENT_SERVICE, method, req, resp_desc, 5000, NULL, 0, done, a,
                              &err) < 0)
    fail_msg("%s: %s", method, err->msg);
}

/* Run the loop until A is answered, or for MS when it never is. */
static void wait_for(struct rig *g, struct answer *a, int ms) {
  uint64_t end = iob_now_ms() + (uint64_t)ms;
  while (!a->done && iob_now_ms() < end)
    assert_true(iob_loop_run_once(g->loop, 20, NULL) >= 0);
}

static void settle(struct rig *g, int ms) {
  uint64_t end = iob_now_ms() + (uint64_t)ms;
  while (iob_now_ms() < end)
    assert_true(iob_loop_run_once(g->loop, 10, NULL) >= 0);
}

static void release(struct answer *a) {
  if (a->resp)
    protobuf_c_message_free_unpacked(a->resp, NULL);
  a->resp = NULL;
}

static void do_register(struct rig *g, struct ttrpc_client *c, const char *id, struct answer *a) {
  Iobatch__Agent__V1__RegisterRequest r = IOBATCH__AGENT__V1__REGISTER_REQUEST__INIT;
  r.id = (char *)id;
  r.namespace_ = (char *)"default";
  r.source = (char *)"shim";
  call(c, "Register", &r.base, &iobatch__agent__v1__register_response__descriptor, a);
  wait_for(g, a, 2000);
  assert_true(a->done);
}

static void do_admit(struct ttrpc_client *c, const char *id, struct answer *a) {
  Iobatch__Agent__V1__AdmitRequest r = IOBATCH__AGENT__V1__ADMIT_REQUEST__INIT;
  r.id = (char *)id;
  r.namespace_ = (char *)"default";
  call(c, "Admit", &r.base, &iobatch__agent__v1__admit_response__descriptor, a);
}

static struct agent_ctr *find(struct rig *g, const char *id) {
  return agent_ctr_find(&g->d.adm, "default", id);
}

static void test_private_dir_ping_register_status(void **state) {
  struct rig *g = *state;
  struct stat sb;
  assert_int_equal(stat(g->dir, &sb), 0);
  assert_int_equal(sb.st_mode & 07777, 0700);

  struct ttrpc_client *c = client(g);
  struct answer a;
  Google__Protobuf__Empty e = GOOGLE__PROTOBUF__EMPTY__INIT;
  call(c, "Ping", &e.base, &google__protobuf__empty__descriptor, &a);
  wait_for(g, &a, 2000);
  assert_true(a.done);
  assert_int_equal(a.code, 0);
  release(&a);

  do_register(g, c, "a", &a);
  assert_int_equal(a.code, 0);
  release(&a);
  assert_int_equal(g->changed, 1);
  assert_non_null(find(g, "a"));

  Iobatch__Agent__V1__StatusRequest sr = IOBATCH__AGENT__V1__STATUS_REQUEST__INIT;
  call(c, "Status", &sr.base, &iobatch__agent__v1__status_response__descriptor, &a);
  wait_for(g, &a, 2000);
  assert_int_equal(a.code, 0);
  const Iobatch__Agent__V1__StatusResponse *st = (const void *)a.resp;
  assert_int_equal(st->n_containers, 1);
  assert_string_equal(st->containers[0]->id, "a");
  release(&a);
  ttrpc_client_free(c);
}

/* A pending Admit waits for the owner's word: answered, superseded by a
 * newer Admit (ABORTED), aborted (UNAVAILABLE with the reason). */
static void test_admit_answer_supersede_abort(void **state) {
  struct rig *g = *state;
  struct ttrpc_client *c = client(g);
  struct answer a, b;
  do_register(g, c, "p", &a);
  release(&a);
  int changed = g->changed;
  do_admit(c, "p", &a);
  settle(g, 200);
  assert_false(a.done); /* nobody planned: it waits */
  assert_int_equal(g->changed, changed + 1);
  struct agent_ctr *p = find(g, "p");
  assert_non_null(p);
  assert_non_null(p->serve.waiter);

  agent_server_answer(p, true, "test");
  assert_null(p->serve.waiter);
  wait_for(g, &a, 2000);
  assert_int_equal(a.code, 0);
  const Iobatch__Agent__V1__AdmitResponse *r = (const void *)a.resp;
  assert_true(r->admitted);
  release(&a);
  agent_server_answer(p, true, "again"); /* no waiter: nothing */

  do_register(g, c, "q", &a);
  release(&a);
  do_admit(c, "q", &a);
  settle(g, 100);
  struct agent_ctr *q = find(g, "q");
  assert_non_null(q->serve.waiter);
  agent_server_supersede(q);
  assert_null(q->serve.waiter);
  wait_for(g, &a, 2000);
  assert_int_equal(a.code, IOB_CODE_ABORTED);
  assert_non_null(strstr(a.msg, "superseded by a newer admit for 'q'"));
  release(&a);

  do_admit(c, "q", &b);
  settle(g, 100);
  assert_non_null(q->serve.waiter);
  agent_server_abort(q, "the agent stops");
  assert_null(q->serve.waiter);
  wait_for(g, &b, 2000);
  assert_int_equal(b.code, IOB_CODE_UNAVAILABLE);
  assert_non_null(strstr(b.msg, "the agent stops"));
  release(&b);
  agent_server_abort(q, "twice"); /* no waiter: nothing */
  agent_server_supersede(q);
  ttrpc_client_free(c);
}

/* The caller of a pending Admit closes its connection: the owner is told
 * to remove the container (it is pending) and to plan again. */
static void test_caller_gone(void **state) {
  struct rig *g = *state;
  struct ttrpc_client *c = client(g);
  struct answer a;
  do_register(g, c, "gone", &a);
  release(&a);
  do_admit(c, "gone", &a);
  settle(g, 100);
  assert_non_null(find(g, "gone"));
  int changed = g->changed;
  ttrpc_client_free(c);
  settle(g, 300);
  assert_int_equal(g->removed, 1);
  assert_string_equal(g->removed_why, "caller went away");
  assert_int_equal(g->changed, changed + 1);
  assert_null(find(g, "gone"));
}

/* A container is its registering connection's while that is open. */
static void test_owner_connection(void **state) {
  struct rig *g = *state;
  struct ttrpc_client *owner = client(g), *other = client(g);
  struct answer a;
  do_register(g, owner, "o", &a);
  assert_int_equal(a.code, 0);
  release(&a);

  do_register(g, other, "o", &a);
  assert_int_equal(a.code, IOB_CODE_PERMISSION_DENIED);
  assert_non_null(strstr(a.msg, "register of 'o' (namespace 'default') refused"));
  release(&a);
  do_admit(other, "o", &a);
  wait_for(g, &a, 2000);
  assert_int_equal(a.code, IOB_CODE_PERMISSION_DENIED);
  release(&a);
  Iobatch__Agent__V1__CancelRequest cr = IOBATCH__AGENT__V1__CANCEL_REQUEST__INIT;
  cr.id = (char *)"o";
  cr.namespace_ = (char *)"default";
  call(other, "Cancel", &cr.base, &google__protobuf__empty__descriptor, &a);
  wait_for(g, &a, 2000);
  assert_int_equal(a.code, IOB_CODE_PERMISSION_DENIED);
  release(&a);
  Iobatch__Agent__V1__ExitedRequest er = IOBATCH__AGENT__V1__EXITED_REQUEST__INIT;
  er.id = (char *)"o";
  er.namespace_ = (char *)"default";
  call(other, "Exited", &er.base, &google__protobuf__empty__descriptor, &a);
  wait_for(g, &a, 2000);
  assert_int_equal(a.code, IOB_CODE_PERMISSION_DENIED);
  release(&a);
  assert_non_null(find(g, "o"));

  /* the owner closed: the next caller takes it over and may end it */
  ttrpc_client_free(owner);
  settle(g, 200);
  call(other, "Exited", &er.base, &google__protobuf__empty__descriptor, &a);
  wait_for(g, &a, 2000);
  assert_int_equal(a.code, 0);
  release(&a);
  assert_null(find(g, "o"));
  ttrpc_client_free(other);
}

/* Malformed requests are refused with a reason; nothing is registered. */
static void test_malformed(void **state) {
  struct rig *g = *state;
  struct ttrpc_client *c = client(g);
  struct answer a;
  do_register(g, c, "", &a);
  assert_int_equal(a.code, IOB_CODE_INVALID_ARGUMENT);
  release(&a);

  Iobatch__Agent__V1__RegisterRequest r = IOBATCH__AGENT__V1__REGISTER_REQUEST__INIT;
  r.id = (char *)"bad";
  r.namespace_ = (char *)"default";
  r.declared_class = (char *)"very-fast";
  call(c, "Register", &r.base, &iobatch__agent__v1__register_response__descriptor, &a);
  wait_for(g, &a, 2000);
  assert_int_equal(a.code, IOB_CODE_INVALID_ARGUMENT);
  release(&a);
  assert_null(find(g, "bad"));
  assert_int_equal(g->changed, 0);

  Google__Protobuf__Empty e = GOOGLE__PROTOBUF__EMPTY__INIT;
  call(c, "Reboot", &e.base, &google__protobuf__empty__descriptor, &a);
  wait_for(g, &a, 2000);
  assert_true(a.done);
  assert_int_not_equal(a.code, 0);
  release(&a);
  ttrpc_client_free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_private_dir_ping_register_status, setup, teardown),
      cmocka_unit_test_setup_teardown(test_admit_answer_supersede_abort, setup, teardown),
      cmocka_unit_test_setup_teardown(test_caller_gone, setup, teardown),
      cmocka_unit_test_setup_teardown(test_owner_connection, setup, teardown),
      cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
  };
  return cmocka_run_group_tests_name("agent_server", tests, NULL, NULL);
}
