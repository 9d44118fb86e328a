// SPDX-License-Identifier: Apache-2.0
/* The agent's ttrpc API (proto/iobatch/agent.proto): the glue between the
 * ttrpc server and the decoded steps of agent/serve/requests.c.  Every call is
 * answered exactly once; Admit is answered later, when the container is
 * admitted, cancelled, or its caller goes away. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/serve/server.h"

#include "agent/serve/requests.h"
#include "common/cleanup.h"
#include "common/file.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "google/protobuf/empty.pb-c.h"
#include "iobatch/agent.pb-c.h"
#include "ttrpc/ttrpc.h"

/* A pending Admit call, hung on ctr->serve.waiter. */
struct agent_waiter {
  struct agent_server *s;
  struct agent_ctr *ctr;
  struct ttrpc_call *call;
};

static uint64_t now_ms(void) {
  return iob_now_ms();
}

static void reply_admit(struct ttrpc_call *call, const struct agent_ctr *c, bool admitted,
                        const char *reason, uint64_t now) {
  Iobatch__Agent__V1__AdmitResponse resp;
  agent_api_admit_reply(c, admitted, reason, now, &resp);
  ttrpc_call_reply(call, &resp.base);
}

void agent_server_answer(struct agent_ctr *c, bool admitted, const char *reason) {
  struct agent_waiter *w = c->serve.waiter;
  if (w == NULL)
    return;
  c->serve.waiter = NULL;
  ttrpc_call_on_cancel(w->call, NULL, NULL);
  reply_admit(w->call, c, admitted, reason, now_ms());
  free(w);
}

void agent_server_abort(struct agent_ctr *c, const char *why) {
  struct agent_waiter *w = c->serve.waiter;
  if (w == NULL)
    return;
  c->serve.waiter = NULL;
  ttrpc_call_on_cancel(w->call, NULL, NULL);
  ttrpc_call_fail(w->call, IOB_CODE_UNAVAILABLE, "%s", why);
  free(w);
}

/* The caller's connection closed while it waited: the shim (or whoever
 * asked) is gone, so nobody will start this container on our word. */
static void on_admit_cancelled(struct ttrpc_call *call, void *data) {
  struct agent_waiter *w = data;
  struct agent_server *s = w->s;
  struct agent_ctr *c = w->ctr;
  c->serve.waiter = NULL;
  free(w);
  ttrpc_call_fail(call, IOB_CODE_CANCELED, "caller went away");
  iob_info("pending container '%s' dropped: its caller closed the connection", c->id);
  if (c->state == AGENT_PENDING) {
    s->ops->remove(c, "caller went away", now_ms(), s->user);
    s->ops->changed(s->user);
  }
}

void agent_server_supersede(struct agent_ctr *c) {
  struct agent_waiter *old = c->serve.waiter;
  if (old == NULL)
    return;
  c->serve.waiter = NULL;
  ttrpc_call_on_cancel(old->call, NULL, NULL);
  ttrpc_call_fail(old->call, IOB_CODE_ABORTED, "superseded by a newer admit for '%s'", c->id);
  free(old);
}

/* Every peer of the socket is root (the ttrpc server takes our uid and
 * gid only), and a root DaemonSet that mounts /run is a peer too: the
 * uid says nothing about whose container it is.  So a container's calls
 * are bound to the connection that registered or admitted it.  While that
 * connection is open (a shim keeps its own for its life) no other may
 * register, admit, cancel it or report its exit; once it has closed (the
 * hook's prestart, a shim that reconnects, iobatchctl) the next caller
 * takes it over, which the hook's poststop and a restarted shim need.
 * Returns 0 when CALL may speak for (NS, ID). */
static int check_owner(struct agent_server *s, struct ttrpc_call *call, const char *what,
                       const char *ns, const char *id, struct iob_error **err) {
  struct agent_ctr *c = agent_ctr_find(s->state->adm, ns, id);
  uint64_t me = ttrpc_call_conn_id(call);
  if (c == NULL || c->serve.owner_conn == 0 || c->serve.owner_conn == me ||
      !ttrpc_server_conn_open(s->ttrpc, c->serve.owner_conn))
    return 0;
  return iob_error_code(err, IOB_CODE_PERMISSION_DENIED,
                        "%s of '%s' (namespace '%s') refused: it was registered by another "
                        "connection (pid %d), which is still open, and only that caller may "
                        "register, admit, cancel it or report its exit (from pid %d)",
                        what, c->id, c->ns, c->serve.owner_pid, ttrpc_call_peer_pid(call));
}

static void set_owner(struct agent_ctr *c, struct ttrpc_call *call) {
  c->serve.owner_conn = ttrpc_call_conn_id(call);
  c->serve.owner_pid = ttrpc_call_peer_pid(call);
}

/* Refuse CALL when check_owner does; logged here, the boundary. */
static bool refused(struct agent_server *s, struct ttrpc_call *call, const char *what,
                    const char *ns, const char *id) {
  cleanup_error struct iob_error *err = NULL;
  if (check_owner(s, call, what, ns, id, &err) == 0)
    return false;
  iob_warn("%s", err->msg);
  ttrpc_call_fail_error(call, &err);
  return true;
}

static void on_register(struct ttrpc_call *call, const ProtobufCMessage *m, void *user) {
  struct agent_server *s = user;
  struct agent_api *a = s->state;
  const Iobatch__Agent__V1__RegisterRequest *req = (const void *)m;
  cleanup_error struct iob_error *err = NULL;
  Iobatch__Agent__V1__RegisterResponse resp;
  if (refused(s, call, "register", req->namespace_, req->id))
    return;
  if (agent_api_register(a, req, now_ms(), &resp, &err) < 0) {
    iob_warn("register '%s' refused: %s", req->id, err->msg);
    ttrpc_call_fail_error(call, &err);
    return;
  }
  struct agent_ctr *c = agent_ctr_find(a->adm, req->namespace_, req->id);
  if (c)
    set_owner(c, call);
  ttrpc_call_reply(call, &resp.base);
  s->ops->changed(s->user);
}

static void on_admit(struct ttrpc_call *call, const ProtobufCMessage *m, void *user) {
  struct agent_server *s = user;
  struct agent_api *a = s->state;
  const Iobatch__Agent__V1__AdmitRequest *req = (const void *)m;
  cleanup_error struct iob_error *err = NULL;
  uint64_t now = now_ms();
  struct agent_ctr *c = NULL;
  if (refused(s, call, "admit", req->namespace_, req->id))
    return;
  int r = agent_api_admit(a, req, now, ttrpc_call_deadline_ms(call), &c, &err);
  if (r < 0) {
    ttrpc_call_fail_error(call, &err);
    return;
  }
  set_owner(c, call);
  if (r == 1) {
    reply_admit(call, c, true, "already running", now);
    return;
  }
  struct agent_waiter *w = xmalloc(sizeof(*w));
  *w = (struct agent_waiter){.s = s, .ctr = c, .call = call};
  c->serve.waiter = w;
  ttrpc_call_on_cancel(call, on_admit_cancelled, w);
  iob_debug("admit '%s' (class %s): pending, deadline in %llu ms", c->id, batch_class_name(c->cls),
            (unsigned long long)(c->plan.deadline_ms - now));
  s->ops->changed(s->user);
}

static void on_cancel(struct ttrpc_call *call, const ProtobufCMessage *m, void *user) {
  struct agent_server *s = user;
  const Iobatch__Agent__V1__CancelRequest *req = (const void *)m;
  if (refused(s, call, "cancel", req->namespace_, req->id))
    return;
  if (agent_api_cancel(s->state, req, now_ms()))
    s->ops->changed(s->user);
  ttrpc_call_reply(call, NULL);
}

static void on_exited(struct ttrpc_call *call, const ProtobufCMessage *m, void *user) {
  struct agent_server *s = user;
  const Iobatch__Agent__V1__ExitedRequest *req = (const void *)m;
  if (refused(s, call, "exit report", req->namespace_, req->id))
    return;
  if (agent_api_exited(s->state, req, now_ms()))
    s->ops->changed(s->user);
  ttrpc_call_reply(call, NULL);
}

static void on_status(struct ttrpc_call *call, const ProtobufCMessage *m, void *user) {
  struct agent_server *s = user;
  cleanup_error struct iob_error *err = NULL;
  Iobatch__Agent__V1__StatusResponse r;
  if (agent_api_status(s->state, (const Iobatch__Agent__V1__StatusRequest *)m, now_ms(), &r, &err) <
      0) {
    ttrpc_call_fail_error(call, &err);
    return;
  }
  ttrpc_call_reply(call, &r.base);
  agent_api_status_release(&r);
}

static void on_plan(struct ttrpc_call *call, const ProtobufCMessage *m, void *user) {
  struct agent_server *s = user;
  struct agent_api *a = s->state;
  cleanup_error struct iob_error *err = NULL;
  struct batch_config cfg;
  if (agent_api_plan_check(a, (const void *)m, &cfg, &err) < 0 ||
      /* Solved off the loop (agent/serve/plan_async.c): admissions go on meanwhile. */
      agent_plan_async_start(&s->plan, call, &cfg, (const void *)m, &err) < 0)
    ttrpc_call_fail_error(call, &err);
}

static int mkdir_parent(const char *path, struct iob_error **err) {
  cleanup_free char *dir = xstrdup(path);
  char *slash = strrchr(dir, '/');
  if (slash == NULL || slash == dir)
    return 0;
  *slash = '\0';
  /* The socket itself is 0600; the directory only needs to exist. */
  if (mkdir(dir, 0700) < 0 && errno != EEXIST) /* checked: check_socket_dir */
    return iob_error(err, errno, "cannot create socket directory '%s'", dir);
  return 0;
}

/* Whoever can write the socket's directory can put their own socket in
 * its place, and every shim would tell them its containers and take their
 * word on starting them: root's, 0700, or no start.  A directory of ours
 * that others can only read (systemd's RuntimeDirectory= of an older unit,
 * a kubelet's hostPath DirectoryOrCreate: 0755) is made 0700. */
static int check_socket_dir(const char *path, struct iob_error **err) {
  if (path[0] != '/')
    return 0; /* abstract (tests): no directory */
  cleanup_free char *dir = xstrdup(path);
  char *slash = strrchr(dir, '/');
  if (slash == dir)
    slash[1] = '\0';
  else
    *slash = '\0';
  unsigned old_mode;
  int r = iob_dir_make_private(dir, "socket directory", &old_mode, err);
  if (r == 1 && old_mode != 0)
    iob_warn("socket directory '%s' had mode %04o, which lets other users see what is in it; "
             "changed it to 0700",
             dir, old_mode);
  return r < 0 ? -1 : 0;
}

/* Liveness (client/client.h): answered from the loop, so an answer means
 * the loop runs. */
static void on_ping(struct ttrpc_call *call, const ProtobufCMessage *m, void *user) {
  (void)m;
  (void)user;
  ttrpc_call_reply(call, NULL);
}

int agent_server_setup(struct agent_server *s, struct iob_loop *loop, const char *socket_path,
                       struct agent_api *state, const struct agent_server_ops *ops, void *user,
                       struct iob_error **err) {
  static const struct {
    const char *method;
    const ProtobufCMessageDescriptor *desc;
    ttrpc_handler_fn fn;
  } methods[] = {
      {"Register", &iobatch__agent__v1__register_request__descriptor, on_register},
      {"Admit", &iobatch__agent__v1__admit_request__descriptor, on_admit},
      {"Cancel", &iobatch__agent__v1__cancel_request__descriptor, on_cancel},
      {"Exited", &iobatch__agent__v1__exited_request__descriptor, on_exited},
      {"Status", &iobatch__agent__v1__status_request__descriptor, on_status},
      {"Plan", &iobatch__agent__v1__plan_request__descriptor, on_plan},
      {"Ping", &google__protobuf__empty__descriptor, on_ping},
  };
  *s = (struct agent_server){.state = state, .ops = ops, .user = user};
  agent_plan_async_init(&s->plan, loop, agent_api_plan_solve, agent_api_plan_free);
  if (ttrpc_server_new(loop, &s->ttrpc, err) < 0)
    return -1;
  for (size_t i = 0; i < IOB_ARRAY_SIZE(methods); i++)
    if (ttrpc_server_register(s->ttrpc, AGENT_SERVICE, methods[i].method, methods[i].desc,
                              methods[i].fn, s, err) < 0)
      return -1;
  const char *path = socket_path ? socket_path : AGENT_DEFAULT_SOCKET;
  if (mkdir_parent(path, err) < 0 || check_socket_dir(path, err) < 0 ||
      ttrpc_server_listen(s->ttrpc, path, err) < 0)
    return -1;
  return 0;
}

void agent_server_release(struct agent_server *s) {
  if (s->ttrpc)
    ttrpc_server_free(s->ttrpc); /* unlinks the socket */
  s->ttrpc = NULL;
}
