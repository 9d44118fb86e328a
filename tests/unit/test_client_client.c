// SPDX-License-Identifier: Apache-2.0
/* libagentclient against a fake agent on the same loop: answers pass
 * through; no agent, an error or a caller deadline fail open (or closed);
 * Cancel completes at once; an agent restart while an Admit waits leads to
 * Register + Admit on the new agent, and an agent that stays away to fail
 * open. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cgroupv2/weight.h"
#include "client/client.h"
#include "common/cleanup.h"
#include "common/log.h"
#include "iobatch/agent.pb-c.h"
#include "ttrpc/ttrpc.h"

#define SVC "iobatch.agent.v1.Agent"

struct fake {
  struct iob_loop *loop;
  struct ttrpc_server *srv;
  char dir[64], path[96];
  int registers, admits, cancels, exiteds;
  bool last_running;
  char last_id[64];
  int reg_kind_source, admit_kind_source; /* of the last Register / Admit */
  int sb_kind_source;                     /* of the last Register of "sb" */
  char reg_kind[16];
  char reg_source[16];                /* of the last Register */
  uint64_t reg_base_wios, reg_base_ns; /* its baseline */
  char reg_base_source[16];
  unsigned reg_weight; /* its hook_weight */
  char reg_weight_was[16];
  struct ttrpc_call *admit; /* deferred */
};

struct result {
  int calls;
  bool admitted, fail_open, no_agent;
  char reason[1024];
  int done_calls;
  int done_code;
};

static struct fake fx;

static void h_register(struct ttrpc_call *call, const ProtobufCMessage *m, void *user) {
  struct fake *f = user;
  const Iobatch__Agent__V1__RegisterRequest *r = (const void *)m;
  f->registers++;
  f->last_running = r->running;
  f->reg_kind_source = (int)r->kind_source;
  if (strcmp(r->id, "sb") == 0)
    f->sb_kind_source = (int)r->kind_source;
  snprintf(f->reg_kind, sizeof(f->reg_kind), "%s", r->kind);
  snprintf(f->last_id, sizeof(f->last_id), "%s", r->id);
  snprintf(f->reg_source, sizeof(f->reg_source), "%s", r->source);
  f->reg_base_wios = r->baseline ? r->baseline->wios : 0;
  f->reg_base_ns = r->baseline ? r->baseline->monotonic_ns : 0;
  snprintf(f->reg_base_source, sizeof(f->reg_base_source), "%s",
           r->baseline ? r->baseline->source : "(none)");
  f->reg_weight = r->hook_weight;
  snprintf(f->reg_weight_was, sizeof(f->reg_weight_was), "%s", r->hook_weight_was);
  Iobatch__Agent__V1__RegisterResponse resp = IOBATCH__AGENT__V1__REGISTER_RESPONSE__INIT;
  resp.class_ = (char *)"seq-write";
  /* a weight of 400 is journalled, any other refused (an untrusted
   * namespace, say) */
  resp.hook_weight_journalled = r->hook_weight == 400;
  ttrpc_call_reply(call, &resp.base);
}

static void admit_gone(struct ttrpc_call *call, void *data) {
  struct fake *f = data;
  f->admit = NULL;
  ttrpc_call_fail(call, IOB_CODE_CANCELED, "caller went away");
}

static void h_admit(struct ttrpc_call *call, const ProtobufCMessage *m, void *user) {
  struct fake *f = user;
  f->admit_kind_source = (int)((const Iobatch__Agent__V1__AdmitRequest *)m)->kind_source;
  f->admits++;
  f->admit = call;
  ttrpc_call_on_cancel(call, admit_gone, f);
}

static void answer_admit(struct fake *f, bool admitted, const char *reason) {
  assert_non_null(f->admit);
  struct ttrpc_call *call = f->admit;
  f->admit = NULL;
  ttrpc_call_on_cancel(call, NULL, NULL);
  Iobatch__Agent__V1__AdmitResponse resp = IOBATCH__AGENT__V1__ADMIT_RESPONSE__INIT;
  resp.admitted = admitted;
  resp.reason = (char *)reason;
  resp.class_ = (char *)"rand-write";
  resp.held_ms = 42;
  ttrpc_call_reply(call, &resp.base);
}

static void h_cancel(struct ttrpc_call *call, const ProtobufCMessage *m, void *user) {
  struct fake *f = user;
  (void)m;
  f->cancels++;
  if (f->admit)
    answer_admit(f, false, "cancelled");
  ttrpc_call_reply(call, NULL);
}

static void h_exited(struct ttrpc_call *call, const ProtobufCMessage *m, void *user) {
  struct fake *f = user;
  (void)m;
  f->exiteds++;
  ttrpc_call_reply(call, NULL);
}

static void server_up(struct fake *f) {
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(ttrpc_server_new(f->loop, &f->srv, &err), 0);
  assert_int_equal(ttrpc_server_register(f->srv, SVC, "Register",
                                         &iobatch__agent__v1__register_request__descriptor,
                                         h_register, f, &err),
                   0);
  assert_int_equal(ttrpc_server_register(f->srv, SVC, "Admit",
                                         &iobatch__agent__v1__admit_request__descriptor, h_admit, f,
                                         &err),
                   0);
  assert_int_equal(ttrpc_server_register(f->srv, SVC, "Cancel",
                                         &iobatch__agent__v1__cancel_request__descriptor, h_cancel,
                                         f, &err),
                   0);
  assert_int_equal(ttrpc_server_register(f->srv, SVC, "Exited",
                                         &iobatch__agent__v1__exited_request__descriptor, h_exited,
                                         f, &err),
                   0);
  assert_true(ttrpc_server_listen(f->srv, f->path, &err) >= 0);
}

static void server_down(struct fake *f) {
  ttrpc_server_free(f->srv);
  f->srv = NULL;
  f->admit = NULL;
}

static int setup(void **state) {
  (void)state;
  memset(&fx, 0, sizeof(fx));
  snprintf(fx.dir, sizeof(fx.dir), "/tmp/agcl.XXXXXX");
  if (mkdtemp(fx.dir) == NULL)
    return -1;
  snprintf(fx.path, sizeof(fx.path), "%s/agent.sock", fx.dir);
  cleanup_error struct iob_error *err = NULL;
  return iob_loop_new(&fx.loop, &err);
}

static int teardown(void **state) {
  (void)state;
  if (fx.srv)
    server_down(&fx);
  iob_loop_free(fx.loop);
  unlink(fx.path);
  return rmdir(fx.dir);
}

static void on_admitted(void *user, const struct client_admission *a) {
  struct result *r = user;
  r->calls++;
  r->admitted = a->admitted;
  r->fail_open = a->fail_open;
  r->no_agent = a->no_agent;
  snprintf(r->reason, sizeof(r->reason), "%s", a->reason);
}

static void on_done(void *user, const struct iob_error *err) {
  struct result *r = user;
  r->done_calls++;
  r->done_code = err ? err->code : 0;
}

/* Run the loop until *flag >= want or ms pass. */
static void spin(const int *flag, int want, int ms) {
  uint64_t end = iob_now_ms() + (uint64_t)ms;
  while (*flag < want && iob_now_ms() < end) {
    cleanup_error struct iob_error *err = NULL;
    assert_true(iob_loop_run_once(fx.loop, 20, &err) >= 0);
  }
}

static const struct client_container ctr = {
    .id = "c1", .ns = "default", .declared_class = "rand-write", .workload_key = "k"};

static void test_no_agent_fails_open(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct client *c = NULL;
  assert_int_equal(client_new(fx.loop, fx.path, false, &c, &err), 0);
  struct result r = {0};
  assert_int_equal(client_admit(c, &ctr, 0, on_admitted, &r, &err), 0);
  assert_int_equal(r.calls, 0); /* never from inside the call */
  spin(&r.calls, 1, 2000);
  assert_int_equal(r.calls, 1);
  assert_true(r.admitted);
  assert_true(r.fail_open && r.no_agent);
  /* the socket, why, and what follows */
  char want[1024];
  snprintf(want, sizeof(want), "agent at '%s' not asked: cannot connect to '%s': ", fx.path,
           fx.path);
  assert_memory_equal(r.reason, want, strlen(want));
  assert_non_null(strstr(r.reason, " (fail open)"));
  assert_int_equal(client_pending(c), 0);
  /* plain calls report the error directly */
  assert_int_equal(client_exited(c, "default", "c1", 0, NULL, NULL, &err), -1);
  assert_non_null(strstr(err->msg, "cannot connect"));
  client_free(c);
}

static void test_no_agent_fails_closed(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct client *c = NULL;
  assert_int_equal(client_new(fx.loop, fx.path, true, &c, &err), 0);
  struct result r = {0};
  assert_int_equal(client_admit(c, &ctr, 0, on_admitted, &r, &err), 0);
  spin(&r.calls, 1, 2000);
  assert_int_equal(r.calls, 1);
  assert_false(r.admitted);
  assert_false(r.fail_open);
  assert_true(r.no_agent);
  char want[1024];
  snprintf(want, sizeof(want),
           "agent at '%s' not asked: cannot connect to '%s': No such file or directory "
           "(fail closed)",
           fx.path, fx.path);
  assert_string_equal(r.reason, want);
  client_free(c);
}

static void test_admit_answered(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  server_up(&fx);
  struct client *c = NULL;
  assert_int_equal(client_new(fx.loop, fx.path, false, &c, &err), 0);
  struct result r = {0};
  assert_int_equal(client_register(c, &ctr, on_done, &r, &err), 0);
  spin(&r.done_calls, 1, 2000);
  assert_int_equal(r.done_code, 0);
  assert_int_equal(fx.registers, 1);
  assert_string_equal(fx.last_id, "c1");
  assert_int_equal(client_admit(c, &ctr, 0, on_admitted, &r, &err), 0);
  spin(&fx.admits, 1, 2000);
  assert_int_equal(fx.admits, 1);
  assert_int_equal(client_pending(c), 1);
  assert_int_equal(r.calls, 0);
  answer_admit(&fx, true, "no conflict");
  spin(&r.calls, 1, 2000);
  assert_int_equal(r.calls, 1);
  assert_true(r.admitted);
  assert_false(r.fail_open);
  assert_string_equal(r.reason, "no conflict");
  assert_int_equal(client_exited(c, "default", "c1", 0, on_done, &r, &err), 0);
  spin(&r.done_calls, 2, 2000);
  assert_int_equal(fx.exiteds, 1);
  client_free(c);
}

struct born {
  int calls;
  bool journalled;
  int code;
};

static void on_born(void *user, bool journalled, const struct iob_error *err) {
  struct born *b = user;
  b->calls++;
  b->journalled = journalled;
  b->code = err ? err->code : 0;
}

/* A Register with the container's birth carries its baseline and first
 * weight from the shim, and the agent's word on the weight comes back;
 * no agent: it fails at once and the callback never runs. */
static void test_register_birth(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct client *c = NULL;
  assert_int_equal(client_new(fx.loop, fx.path, false, &c, &err), 0);
  struct client_birth b = {.cgroup = "/ctr",
                           .baseline = {.t_ns = 77, .source = CG2_SOURCE_IOSTAT, .io.wios = 1256},
                           .sampled = 1,
                           .weight = 400,
                           .weight_mech = CG2_MECH_IOCOST,
                           .weight_was = "100",
                           .cgdir_ino = 42};
  struct born r = {0};
  assert_int_equal(client_register_birth(c, &ctr, &b, on_born, &r, &err), -1);
  iob_error_release(&err);
  server_up(&fx);
  assert_int_equal(client_register_birth(c, &ctr, &b, on_born, &r, &err), 0);
  spin(&r.calls, 1, 2000);
  assert_int_equal(r.code, 0);
  assert_true(r.journalled);
  assert_string_equal(fx.last_id, "c1");
  assert_string_equal(fx.reg_source, "shim");
  assert_int_equal(fx.reg_base_wios, 1256);
  assert_int_equal(fx.reg_base_ns, 77);
  assert_string_equal(fx.reg_base_source, "io.stat");
  assert_int_equal(fx.reg_weight, 400);
  assert_string_equal(fx.reg_weight_was, "100");
  /* a weight the agent does not journal is not to be written */
  b.weight = 50;
  assert_int_equal(client_register_birth(c, &ctr, &b, on_born, &r, &err), 0);
  spin(&r.calls, 2, 2000);
  assert_false(r.journalled);
  /* no weight planned: none sent; no baseline: an empty source */
  b.weight_mech = 0;
  b.baseline.t_ns = 0;
  assert_int_equal(client_register_birth(c, &ctr, &b, on_born, &r, &err), 0);
  spin(&r.calls, 3, 2000);
  assert_int_equal(fx.reg_weight, 0);
  assert_string_equal(fx.reg_base_source, "");
  client_free(c);
}

/* Where the kind came from travels with it, in Register and Admit, and in
 * the Register a restarted agent gets (the client's copy keeps it); no
 * kind: UNSPECIFIED, which the agent takes as an annotation. */
static void test_kind_source_sent(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  server_up(&fx);
  struct client *c = NULL;
  assert_int_equal(client_new(fx.loop, fx.path, false, &c, &err), 0);
  struct result r = {0};
  struct client_container sb = {
      .id = "sb", .ns = "k8s.io", .kind = "sandbox", .kind_from_runtime = true};
  assert_int_equal(client_register(c, &sb, on_done, &r, &err), 0);
  spin(&r.done_calls, 1, 2000);
  assert_string_equal(fx.reg_kind, "sandbox");
  assert_int_equal(fx.reg_kind_source, IOBATCH__AGENT__V1__KIND_SOURCE__KIND_SOURCE_RUNTIME);
  struct client_container svc = {.id = "svc", .ns = "k8s.io", .kind = "service"};
  assert_int_equal(client_register(c, &svc, on_done, &r, &err), 0);
  spin(&r.done_calls, 2, 2000);
  assert_int_equal(fx.reg_kind_source, IOBATCH__AGENT__V1__KIND_SOURCE__KIND_SOURCE_ANNOTATION);
  assert_int_equal(client_register(c, &ctr, on_done, &r, &err), 0);
  spin(&r.done_calls, 3, 2000);
  assert_int_equal(fx.reg_kind_source, IOBATCH__AGENT__V1__KIND_SOURCE__KIND_SOURCE_UNSPECIFIED);
  /* an Admit says it too */
  assert_int_equal(client_admit(c, &svc, 0, on_admitted, &r, &err), 0);
  spin(&fx.admits, 1, 2000);
  assert_int_equal(fx.admit_kind_source, IOBATCH__AGENT__V1__KIND_SOURCE__KIND_SOURCE_ANNOTATION);
  answer_admit(&fx, true, "admitted: a service is never held");
  spin(&r.calls, 1, 2000);
  assert_int_equal(r.calls, 1);
  /* and so does the Register a restarted agent gets (the client's copy) */
  assert_int_equal(client_admit(c, &sb, 0, on_admitted, &r, &err), 0);
  spin(&fx.admits, 2, 2000);
  assert_int_equal(fx.admit_kind_source, IOBATCH__AGENT__V1__KIND_SOURCE__KIND_SOURCE_RUNTIME);
  server_down(&fx);
  for (int i = 0; i < 10; i++)
    iob_loop_run_once(fx.loop, 20, NULL);
  fx.sb_kind_source = -1;
  server_up(&fx);
  spin(&fx.admits, 3, 3000);
  assert_int_equal(fx.admits, 3);
  assert_int_equal(fx.sb_kind_source, IOBATCH__AGENT__V1__KIND_SOURCE__KIND_SOURCE_RUNTIME);
  assert_int_equal(fx.admit_kind_source, IOBATCH__AGENT__V1__KIND_SOURCE__KIND_SOURCE_RUNTIME);
  answer_admit(&fx, true, "admitted: a pod sandbox is never held");
  spin(&r.calls, 2, 2000);
  client_free(c);
}

static void test_cancel(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  server_up(&fx);
  struct client *c = NULL;
  assert_int_equal(client_new(fx.loop, fx.path, false, &c, &err), 0);
  struct result r = {0};
  assert_int_equal(client_admit(c, &ctr, 0, on_admitted, &r, &err), 0);
  spin(&fx.admits, 1, 2000);
  assert_int_equal(client_cancel(c, "default", "c1", NULL, NULL, &err), 0);
  /* completes at once, before the agent has even seen the Cancel */
  assert_int_equal(r.calls, 1);
  assert_false(r.admitted);
  assert_string_equal(r.reason, "cancelled");
  spin(&fx.cancels, 1, 2000);
  assert_int_equal(fx.cancels, 1);
  /* the agent's late "not admitted" answer does not call back again */
  for (int i = 0; i < 5; i++)
    iob_loop_run_once(fx.loop, 20, NULL);
  assert_int_equal(r.calls, 1);
  assert_int_equal(client_pending(c), 0);
  client_free(c);
}

static void test_caller_deadline_fails_open(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  server_up(&fx);
  struct client *c = NULL;
  assert_int_equal(client_new(fx.loop, fx.path, false, &c, &err), 0);
  struct result r = {0};
  uint64_t t0 = iob_now_ms();
  assert_int_equal(client_admit(c, &ctr, 300, on_admitted, &r, &err), 0);
  spin(&r.calls, 1, 3000);
  uint64_t el = iob_now_ms() - t0;
  assert_int_equal(r.calls, 1);
  assert_true(r.admitted && r.fail_open);
  assert_non_null(
      strstr(r.reason, "' not asked: no answer before the caller's deadline (fail open)"));
  assert_true(el >= 290 && el < 1500);
  client_free(c);
}

static void test_agent_restart_reregisters(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  server_up(&fx);
  struct client *c = NULL;
  assert_int_equal(client_new(fx.loop, fx.path, false, &c, &err), 0);
  struct result r = {0};
  assert_int_equal(client_admit(c, &ctr, 0, on_admitted, &r, &err), 0);
  spin(&fx.admits, 1, 2000);
  server_down(&fx); /* the agent dies with the Admit pending */
  for (int i = 0; i < 10; i++)
    iob_loop_run_once(fx.loop, 20, NULL);
  assert_int_equal(r.calls, 0); /* not failed open yet: it waits for a restart */
  server_up(&fx);
  spin(&fx.admits, 2, 3000);
  assert_int_equal(fx.registers, 1); /* registered again before the Admit */
  assert_string_equal(fx.last_id, "c1");
  assert_false(fx.last_running);
  answer_admit(&fx, true, "no conflict");
  spin(&r.calls, 1, 2000);
  assert_int_equal(r.calls, 1);
  assert_true(r.admitted);
  assert_false(r.fail_open);
  client_free(c);
}

static void test_agent_stays_away_fails_open(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  server_up(&fx);
  struct client *c = NULL;
  assert_int_equal(client_new(fx.loop, fx.path, false, &c, &err), 0);
  struct result r = {0};
  assert_int_equal(client_admit(c, &ctr, 0, on_admitted, &r, &err), 0);
  spin(&fx.admits, 1, 2000);
  uint64_t t0 = iob_now_ms();
  server_down(&fx);
  spin(&r.calls, 1, CLIENT_RETRY_MS + 2000);
  uint64_t el = iob_now_ms() - t0;
  assert_int_equal(r.calls, 1);
  assert_true(r.admitted && r.fail_open);
  assert_non_null(strstr(r.reason, "' not asked: cannot connect"));
  assert_true(el >= CLIENT_RETRY_MS - 100);
  client_free(c);
}

static void test_running_reregistered_after_restart(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  server_up(&fx);
  struct client *c = NULL;
  assert_int_equal(client_new(fx.loop, fx.path, false, &c, &err), 0);
  struct result r = {0};
  assert_int_equal(client_admit(c, &ctr, 0, on_admitted, &r, &err), 0);
  spin(&fx.admits, 1, 2000);
  answer_admit(&fx, true, "no conflict");
  spin(&r.calls, 1, 2000);
  assert_true(r.admitted);
  /* the agent restarts while the container runs and nothing is pending */
  server_down(&fx);
  for (int i = 0; i < 10; i++)
    iob_loop_run_once(fx.loop, 20, NULL);
  server_up(&fx);
  spin(&fx.registers, 1, CLIENT_WATCH_MS + 2000);
  assert_int_equal(fx.registers, 1);
  assert_string_equal(fx.last_id, "c1");
  assert_true(fx.last_running);
  /* after Exited it is forgotten: the next restart hears nothing of it */
  assert_int_equal(client_exited(c, "default", "c1", 0, on_done, &r, &err), 0);
  spin(&r.done_calls, 1, 2000);
  server_down(&fx);
  server_up(&fx);
  for (int i = 0; i < (CLIENT_WATCH_MS + 500) / 20; i++)
    iob_loop_run_once(fx.loop, 20, NULL);
  assert_int_equal(fx.registers, 1);
  client_free(c);
}

static void test_free_completes_pending(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  server_up(&fx);
  struct client *c = NULL;
  assert_int_equal(client_new(fx.loop, fx.path, false, &c, &err), 0);
  struct result r = {0};
  assert_int_equal(client_admit(c, &ctr, 0, on_admitted, &r, &err), 0);
  spin(&fx.admits, 1, 2000);
  client_free(c);
  assert_int_equal(r.calls, 1);
  assert_false(r.admitted);
  assert_string_equal(r.reason, "client closed");
  /* the agent sees the connection go */
  for (int i = 0; i < 5 && fx.admit; i++)
    iob_loop_run_once(fx.loop, 20, NULL);
  assert_null(fx.admit);
}

/* A listener nobody accepts on: what a SIGSTOPped agent looks like.
 * backlog 0 plus fill: what one looks like once its backlog is full. */
static int silent_listener(int backlog, bool fill, int *extra, size_t n_extra) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  assert_true(fd >= 0);
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", fx.path);
  assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
  assert_int_equal(listen(fd, backlog), 0);
  for (size_t i = 0; fill && i < n_extra; i++) {
    extra[i] = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (connect(extra[i], (struct sockaddr *)&sa, sizeof(sa)) < 0) {
      assert_int_equal(errno, EAGAIN); /* full now */
      close(extra[i]);
      extra[i] = -1;
      break;
    }
  }
  return fd;
}

static void run_silent(bool fail_closed, bool full, const char *want) {
  cleanup_error struct iob_error *err = NULL;
  int extra[64];
  for (size_t i = 0; i < IOB_ARRAY_SIZE(extra); i++)
    extra[i] = -1;
  int lfd = silent_listener(full ? 0 : 8, full, extra, IOB_ARRAY_SIZE(extra));
  struct client *c = NULL;
  assert_int_equal(client_new(fx.loop, fx.path, fail_closed, &c, &err), 0);
  client_set_timeout(c, 300);
  struct result r = {0};
  /* No caller deadline: only the client's own bound can end the wait. */
  assert_int_equal(client_admit(c, &ctr, 0, on_admitted, &r, &err), 0);
  spin(&r.calls, 1, 10000); /* a hang watchdog, not a threshold */
  assert_int_equal(r.calls, 1);
  assert_int_equal(r.admitted, !fail_closed);
  assert_int_equal(r.fail_open, !fail_closed);
  assert_true(r.no_agent);
  if (strstr(r.reason, want) == NULL)
    fail_msg("reason '%s' lacks '%s'", r.reason, want);
  assert_non_null(strstr(r.reason, fx.path));
  assert_non_null(strstr(r.reason, fail_closed ? "(fail closed)" : "(fail open)"));
  assert_int_equal(client_pending(c), 0);
  client_free(c);
  for (size_t i = 0; i < IOB_ARRAY_SIZE(extra); i++)
    if (extra[i] >= 0)
      close(extra[i]);
  close(lfd);
  unlink(fx.path);
}

/* A socket that another uid listens on: the client does not
 * talk to it, and fails open saying why.  SO_PEERCRED gives the
 * credentials of listen(), so a child that drops to 65534 listens on a
 * socket root bound. */
static void test_foreign_listener_fails_open(void **state) {
  (void)state;
  if (geteuid() != 0)
    skip(); /* needs to switch uid */
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  assert_true(fd >= 0);
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", fx.path);
  assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
  int ready[2];
  assert_int_equal(pipe(ready), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    if (setgid(65534) < 0 || setuid(65534) < 0 || listen(fd, 8) < 0)
      _exit(1);
    (void)!write(ready[1], "x", 1);
    pause();
    _exit(0);
  }
  char b;
  assert_int_equal(read(ready[0], &b, 1), 1);
  cleanup_error struct iob_error *err = NULL;
  struct client *c = NULL;
  assert_int_equal(client_new(fx.loop, fx.path, false, &c, &err), 0);
  struct result r = {0};
  assert_int_equal(client_admit(c, &ctr, 0, on_admitted, &r, &err), 0);
  spin(&r.calls, 1, 10000); /* a hang watchdog, not a threshold */
  assert_int_equal(r.calls, 1);
  assert_true(r.admitted && r.fail_open && r.no_agent);
  if (strstr(r.reason, "not root's nor ours (uid 65534") == NULL)
    fail_msg("reason '%s' does not name the listener's uid", r.reason);
  assert_non_null(strstr(r.reason, "(fail open)"));
  client_free(c);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  close(ready[0]);
  close(ready[1]);
  close(fd);
  unlink(fx.path);
}

static void test_stopped_agent_fails_open(void **state) {
  (void)state;
  run_silent(false, false, "no answer to a liveness ping within 300 ms");
}

static void test_stopped_agent_fails_closed(void **state) {
  (void)state;
  run_silent(true, false, "no answer to a liveness ping within 300 ms");
}

static void test_full_backlog_fails_open(void **state) {
  (void)state;
  run_silent(false, true, "its listen backlog stayed full for 300 ms");
}

static void test_full_backlog_fails_closed(void **state) {
  (void)state;
  run_silent(true, true, "its listen backlog stayed full for 300 ms");
}

/* An agent that holds the container but answers pings (here: UNIMPLEMENTED,
 * as an agent from before Ping would) is waited for, however long. */
static void test_holding_agent_is_waited_for(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  server_up(&fx);
  struct client *c = NULL;
  assert_int_equal(client_new(fx.loop, fx.path, false, &c, &err), 0);
  client_set_timeout(c, 200);
  struct result r = {0};
  assert_int_equal(client_admit(c, &ctr, 0, on_admitted, &r, &err), 0);
  spin(&r.calls, 1, 1500); /* 7 times the silence bound */
  assert_int_equal(r.calls, 0);
  assert_int_equal(client_pending(c), 1);
  answer_admit(&fx, true, "no conflict");
  spin(&r.calls, 1, 2000);
  assert_int_equal(r.calls, 1);
  assert_true(r.admitted);
  assert_false(r.fail_open);
  client_free(c);
}

int main(void) {
  iob_log_init("test_client_client", 0);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_no_agent_fails_open, setup, teardown),
      cmocka_unit_test_setup_teardown(test_no_agent_fails_closed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_admit_answered, setup, teardown),
      cmocka_unit_test_setup_teardown(test_kind_source_sent, setup, teardown),
      cmocka_unit_test_setup_teardown(test_register_birth, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cancel, setup, teardown),
      cmocka_unit_test_setup_teardown(test_caller_deadline_fails_open, setup, teardown),
      cmocka_unit_test_setup_teardown(test_agent_restart_reregisters, setup, teardown),
      cmocka_unit_test_setup_teardown(test_agent_stays_away_fails_open, setup, teardown),
      cmocka_unit_test_setup_teardown(test_running_reregistered_after_restart, setup, teardown),
      cmocka_unit_test_setup_teardown(test_free_completes_pending, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stopped_agent_fails_open, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stopped_agent_fails_closed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_full_backlog_fails_open, setup, teardown),
      cmocka_unit_test_setup_teardown(test_full_backlog_fails_closed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_foreign_listener_fails_open, setup, teardown),
      cmocka_unit_test_setup_teardown(test_holding_agent_is_waited_for, setup, teardown),
  };
  return cmocka_run_group_tests_name("agent_client", tests, NULL, NULL);
}
