// SPDX-License-Identifier: Apache-2.0
/* containerd.task.v2.Task (and the same handlers as containerd.task.v3.Task):
 * decode, validate, hand the operation to the process layer, answer when it
 * finished (the reply waits; other RPCs go on meanwhile), map errors to
 * ttrpc codes, publish the task events. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "containerd/events/task.pb-c.h"
#include "containerd/runc/options.pb-c.h"
#include "containerd/task/v2/shim.pb-c.h"
#include "google/protobuf/empty.pb-c.h"
#include "google/protobuf/timestamp.pb-c.h"
#include "shim/admission.h"
#include "shim/events.h"
#include "shim/process.h"
#include "shim/requests.h"
#include "shim/service.h"
#include "shim/stats.h"
#include "shim/validate.h"
#include "ttrpc/ttrpc.h"

struct shim_service {
  struct iob_loop *loop;
  struct ttrpc_server *server;
  char *ns;
  struct shim_containers containers;
};

/* The text containerd's errdefs give the class of CODE, for the codes
 * containerd 1.6 and 2.x both turn into a class (errdefs.FromGRPC,
 * errgrpc.ToNative); NULL for the others. */
static const char *errdefs_class(int code) {
  switch (code) {
  case IOB_CODE_INVALID_ARGUMENT:
    return "invalid argument";
  case IOB_CODE_ALREADY_EXISTS:
    return "already exists";
  case IOB_CODE_NOT_FOUND:
    return "not found";
  case IOB_CODE_UNAVAILABLE:
    return "unavailable";
  case IOB_CODE_FAILED_PRECONDITION:
    return "failed precondition";
  case IOB_CODE_UNIMPLEMENTED:
    return "not implemented";
  case IOB_CODE_CANCELED:
    return "context canceled";
  case IOB_CODE_DEADLINE_EXCEEDED:
    return "context deadline exceeded";
  default:
    return NULL;
  }
}

/* The status message ends with its class, as a Go shim's does (errdefs
 * wraps it: runc's shim answers a duplicate exec id with "id e4: already
 * exists").  containerd 1.x appends the class of the code to any message,
 * so ctr showed it either way; 2.x (errdefs v1, errgrpc.ToNative) shows a
 * message that does not end with its class as it is, so ctr 2.1 printed
 * "id 'e4' already in use" with no word of AlreadyExists.  Now both print
 * "id 'e4' already in use: already exists". */
static void fail(struct ttrpc_call *call, struct iob_error **err) {
  const char *msg = (*err)->msg, *cls = errdefs_class((*err)->code);
  iob_debug("%s: %s", ttrpc_call_method(call), msg);
  size_t n = strlen(msg), c = cls ? strlen(cls) : 0;
  if (cls == NULL || (n >= c && strcmp(msg + n - c, cls) == 0)) {
    ttrpc_call_fail_error(call, err);
    return;
  }
  ttrpc_call_fail(call, (*err)->code, "%s: %s", msg, cls);
  iob_error_release(err);
}

static void reply_empty(struct ttrpc_call *call) {
  Google__Protobuf__Empty e = GOOGLE__PROTOBUF__EMPTY__INIT;
  ttrpc_call_reply(call, &e.base);
}

static int lookup(struct shim_service *s, const char *id, const char *exec_id,
                  struct shim_process **p, struct iob_error **err) {
  if (shim_req_ids(id, exec_id, err) < 0)
    return -1;
  return shim_process_find(&s->containers, id, exec_id, p, err);
}

/* One Task RPC whose answer waits for a process operation. */
struct task_call {
  struct ttrpc_call *call;
  struct shim_service *s;
  struct shim_op op;
};

static struct task_call *task_call_new(struct ttrpc_call *call, struct shim_service *s,
                                       shim_op_fn done) {
  struct task_call *tc = xcalloc(1, sizeof(*tc));
  tc->call = call;
  tc->s = s;
  tc->op.done = done;
  return tc;
}

static struct task_call *task_call_of(struct shim_op *op) {
  return (struct task_call *)((char *)op - offsetof(struct task_call, op));
}

/* The failed operation's call is answered with its error; true if so. */
static bool op_failed(struct shim_op *op, struct iob_error **err) {
  if (*err == NULL)
    return false;
  struct task_call *tc = task_call_of(op);
  fail(tc->call, err);
  free(tc);
  return true;
}

static void op_reply_empty(struct shim_op *op, struct iob_error **err) {
  if (op_failed(op, err))
    return;
  struct task_call *tc = task_call_of(op);
  reply_empty(tc->call);
  free(tc);
}

/* Look the process up and queue op (kind, done and arguments) on it. */
static void submit(struct ttrpc_call *call, void *user, const char *id, const char *exec_id,
                   const struct shim_op *op) {
  struct shim_service *s = user;
  cleanup_error struct iob_error *err = NULL;
  struct shim_process *p;
  if (lookup(s, id, exec_id, &p, &err) < 0) {
    fail(call, &err);
    return;
  }
  struct task_call *tc = task_call_new(call, s, op->done);
  tc->op = *op;
  shim_process_submit(p, &tc->op);
}

/* ---- events: published here, in the order the operations finish ---- */

static Google__Protobuf__Timestamp ts_of(struct shim_time t) {
  Google__Protobuf__Timestamp ts = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
  ts.seconds = t.sec;
  ts.nanos = t.nsec;
  return ts;
}

static void publish_create(const struct shim_container *c) {
  Containerd__Events__TaskCreate e = CONTAINERD__EVENTS__TASK_CREATE__INIT;
  Containerd__Events__TaskIO io = CONTAINERD__EVENTS__TASK_IO__INIT;
  io.stdin = c->init.in;
  io.stdout = c->init.out;
  io.stderr = c->init.err;
  io.terminal = c->init.terminal;
  e.container_id = c->id;
  e.bundle = c->bundle;
  e.io = &io;
  e.pid = (uint32_t)c->init.pid;
  /* The rootfs mounts are left out: containerd does not use them from the
   * event, and they would only make it larger. */
  shim_events_publish("/tasks/create", &e.base);
}

static void publish_started(const struct shim_process *p) {
  if (p->exec_id) {
    Containerd__Events__TaskExecStarted e = CONTAINERD__EVENTS__TASK_EXEC_STARTED__INIT;
    e.container_id = p->c->id;
    e.exec_id = p->exec_id;
    e.pid = (uint32_t)p->pid;
    shim_events_publish("/tasks/exec-started", &e.base);
    return;
  }
  Containerd__Events__TaskStart e = CONTAINERD__EVENTS__TASK_START__INIT;
  e.container_id = p->c->id;
  e.pid = (uint32_t)p->pid;
  shim_events_publish("/tasks/start", &e.base);
}

static void on_exited(void *data, struct shim_process *p) {
  struct shim_service *s = data;
  Containerd__Events__TaskExit e = CONTAINERD__EVENTS__TASK_EXIT__INIT;
  Google__Protobuf__Timestamp ts = ts_of(p->exited_at);
  e.container_id = p->c->id;
  e.id = p->exec_id ? p->exec_id : p->c->id;
  e.pid = (uint32_t)p->pid;
  e.exit_status = p->exit_status;
  e.exited_at = &ts;
  shim_events_publish("/tasks/exit", &e.base);
  if (p->exec_id == NULL)
    shim_admission_exited(s->ns, p->c->id, p->exit_status);
}

static void on_oom(void *data, struct shim_container *c) {
  (void)data;
  Containerd__Events__TaskOOM e = CONTAINERD__EVENTS__TASK_OOM__INIT;
  e.container_id = c->id;
  shim_events_publish("/tasks/oom", &e.base);
}

/* ---- handlers ---- */

static void created(struct shim_op *op, struct iob_error **err) {
  if (op_failed(op, err))
    return;
  struct task_call *tc = task_call_of(op);
  struct shim_container *c = op->p->c;
  publish_create(c);
  Containerd__Task__V2__CreateTaskResponse resp = CONTAINERD__TASK__V2__CREATE_TASK_RESPONSE__INIT;
  resp.pid = (uint32_t)c->init.pid;
  ttrpc_call_reply(tc->call, &resp.base);
  free(tc);
}

static void h_create(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  struct shim_service *s = user;
  cleanup_error struct iob_error *err = NULL;
  cleanup_free struct shim_mount *mounts = NULL;
  struct shim_create cr;
  if (shim_req_create((const void *)msg, &cr, &mounts, &err) < 0) {
    fail(call, &err);
    return;
  }
  struct task_call *tc = task_call_new(call, s, created);
  shim_container_create(&s->containers, &cr, &tc->op);
}

static void started(struct shim_op *op, struct iob_error **err) {
  if (op_failed(op, err))
    return;
  struct task_call *tc = task_call_of(op);
  publish_started(op->p);
  Containerd__Task__V2__StartResponse resp = CONTAINERD__TASK__V2__START_RESPONSE__INIT;
  resp.pid = (uint32_t)op->p->pid;
  ttrpc_call_reply(tc->call, &resp.base);
  free(tc);
}

static void on_admitted(void *data, int admitted, struct iob_error *aerr) {
  struct task_call *tc = data;
  cleanup_error struct iob_error *err = NULL;
  ttrpc_call_on_cancel(tc->call, NULL, NULL);
  if (!admitted) {
    iob_error_code(&err, IOB_CODE_FAILED_PRECONDITION, "not admitted: %s",
                   aerr ? aerr->msg : "refused");
    op_failed(&tc->op, &err);
    return;
  }
  shim_process_submit(tc->op.p, &tc->op);
}

/* The caller of a held Start went away (containerd killed or restarting):
 * nobody waits for the start any more, so the hold is cancelled, the agent
 * forgets the container, and the task stays created, as a Start cancelled
 * before runc start leaves it in containerd's runc shim.  A restarted
 * containerd finds it created, and may start it again or delete it. */
static void on_start_gone(struct ttrpc_call *call, void *data) {
  (void)call;
  struct task_call *tc = data;
  iob_warn("'%s': the caller of its held Start went away; the start is cancelled, the task stays "
           "created",
           tc->op.p->c->id);
  shim_admission_cancel(tc->s->ns, tc->op.p->c->id); /* answers (frees) tc when it was held */
}

static void h_start(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Containerd__Task__V2__StartRequest *r = (const void *)msg;
  struct shim_service *s = user;
  cleanup_error struct iob_error *err = NULL;
  struct shim_process *p;
  if (lookup(s, r->id, r->exec_id, &p, &err) < 0) {
    fail(call, &err);
    return;
  }
  struct task_call *tc = task_call_new(call, s, started);
  tc->op.kind = SHIM_OP_START;
  tc->op.p = p;
  if (p->exec_id) {
    shim_process_submit(p, &tc->op);
    return;
  }
  /* The admission hold: the reply to Start waits until the agent admits
   * (a Kill or Delete meanwhile cancels it, so p outlives the hold). */
  struct shim_container *c = p->c;
  struct shim_admission_req ar = {.id = c->id,
                                  .ns = s->ns,
                                  .bundle = c->bundle,
                                  .info = &c->info,
                                  .pid = p->pid,
                                  .deadline_ms = ttrpc_call_deadline_ms(call)};
  ttrpc_call_on_cancel(call, on_start_gone, tc); /* on_admitted clears it */
  shim_admission_wait(s->loop, &ar, on_admitted, tc);
}

static void time_out(struct shim_time t, Google__Protobuf__Timestamp *ts) {
  google__protobuf__timestamp__init(ts);
  ts->seconds = t.sec;
  ts->nanos = t.nsec;
}

static void deleted(struct shim_op *op, struct iob_error **err) {
  if (op_failed(op, err))
    return;
  struct task_call *tc = task_call_of(op);
  Google__Protobuf__Timestamp ts;
  time_out(op->exited_at, &ts);
  if (op->p->exec_id == NULL) {
    Containerd__Events__TaskDelete e = CONTAINERD__EVENTS__TASK_DELETE__INIT;
    e.container_id = op->p->c->id;
    e.pid = op->pid;
    e.exit_status = op->exit_status;
    e.exited_at = &ts;
    shim_events_publish("/tasks/delete", &e.base);
  }
  Containerd__Task__V2__DeleteResponse resp = CONTAINERD__TASK__V2__DELETE_RESPONSE__INIT;
  resp.pid = op->pid;
  resp.exit_status = op->exit_status;
  resp.exited_at = &ts;
  ttrpc_call_reply(tc->call, &resp.base);
  free(tc);
}

static void h_delete(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Containerd__Task__V2__DeleteRequest *r = (const void *)msg;
  struct shim_service *s = user;
  struct shim_process *creating = NULL;
  if (r->id && (r->exec_id == NULL || *r->exec_id == '\0') && shim_req_ids(r->id, NULL, NULL) == 0)
    creating = shim_container_creating(&s->containers, r->id);
  if (creating) {
    /* Its runc create is killed; this Delete is answered (not found) once
     * the create has failed and the container is gone, so the Shutdown
     * containerd sends next finds nothing left. */
    struct task_call *tc = task_call_new(call, s, deleted);
    tc->op.kind = SHIM_OP_DELETE;
    shim_process_submit(creating, &tc->op);
    return;
  }
  if (r->id && (r->exec_id == NULL || *r->exec_id == '\0') &&
      shim_container_find(&s->containers, r->id))
    shim_admission_cancel(s->ns, r->id); /* a Start still held fails */
  submit(call, user, r->id, r->exec_id, &(struct shim_op){.kind = SHIM_OP_DELETE, .done = deleted});
}

static void h_state(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Containerd__Task__V2__StateRequest *r = (const void *)msg;
  cleanup_error struct iob_error *err = NULL;
  struct shim_process *p;
  if (lookup(user, r->id, r->exec_id, &p, &err) < 0) {
    fail(call, &err);
    return;
  }
  struct shim_container *c = p->c;
  Containerd__Task__V2__StateResponse resp = CONTAINERD__TASK__V2__STATE_RESPONSE__INIT;
  Google__Protobuf__Timestamp ts;
  resp.id = p->exec_id ? p->exec_id : c->id;
  resp.exec_id = p->exec_id ? p->exec_id : "";
  resp.bundle = c->bundle;
  resp.pid = (uint32_t)p->pid;
  resp.status = (Containerd__V1__Types__Status)shim_process_status(p);
  resp.stdin = p->in;
  resp.stdout = p->out;
  resp.stderr = p->err;
  resp.terminal = p->terminal;
  resp.exit_status = p->exit_status;
  if (shim_process_exited(p)) {
    time_out(p->exited_at, &ts);
    resp.exited_at = &ts;
  }
  ttrpc_call_reply(call, &resp.base);
}

struct wait_call {
  struct ttrpc_call *call;
  struct shim_process *p;
  struct shim_waiter w;
};

static void wait_reply(struct ttrpc_call *call, const struct shim_process *p) {
  Containerd__Task__V2__WaitResponse resp = CONTAINERD__TASK__V2__WAIT_RESPONSE__INIT;
  Google__Protobuf__Timestamp ts;
  time_out(p->exited_at, &ts);
  resp.exit_status = p->exit_status;
  resp.exited_at = &ts;
  ttrpc_call_reply(call, &resp.base);
}

static void on_wait_cancel(struct ttrpc_call *call, void *data) {
  struct wait_call *wc = data;
  (void)call;
  shim_process_unwait(wc->p, &wc->w);
  free(wc);
}

static void on_wait_done(struct shim_waiter *w, struct shim_process *p) {
  struct wait_call *wc = w->data;
  ttrpc_call_on_cancel(wc->call, NULL, NULL);
  wait_reply(wc->call, p);
  free(wc);
}

static void h_wait(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Containerd__Task__V2__WaitRequest *r = (const void *)msg;
  cleanup_error struct iob_error *err = NULL;
  struct shim_process *p;
  if (lookup(user, r->id, r->exec_id, &p, &err) < 0) {
    fail(call, &err);
    return;
  }
  if (shim_process_exited(p)) {
    wait_reply(call, p);
    return;
  }
  struct wait_call *wc = xcalloc(1, sizeof(*wc));
  wc->call = call;
  wc->p = p;
  wc->w.fn = on_wait_done;
  wc->w.data = wc;
  shim_process_wait(p, &wc->w);
  ttrpc_call_on_cancel(call, on_wait_cancel, wc);
}

static void killed(struct shim_op *op, struct iob_error **err) {
  if (*err == NULL && op->p->exec_id == NULL)
    shim_admission_cancel(task_call_of(op)->s->ns, op->p->c->id); /* a Start still held fails */
  op_reply_empty(op, err);
}

static void h_kill(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Containerd__Task__V2__KillRequest *r = (const void *)msg;
  submit(
      call, user, r->id, r->exec_id,
      &(struct shim_op){.kind = SHIM_OP_KILL, .done = killed, .signal = r->signal, .all = r->all});
}

static void h_exec(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Containerd__Task__V2__ExecProcessRequest *r = (const void *)msg;
  cleanup_error struct iob_error *err = NULL;
  struct shim_process *p, *e;
  struct shim_stdio st;
  if (lookup(user, r->id, NULL, &p, &err) < 0 || shim_req_exec(r, &st, &err) < 0 ||
      shim_exec_add(p->c, r->exec_id, &st, (const char *)r->spec->value.data, r->spec->value.len,
                    &e, &err) < 0) {
    fail(call, &err);
    return;
  }
  Containerd__Events__TaskExecAdded ev = CONTAINERD__EVENTS__TASK_EXEC_ADDED__INIT;
  ev.container_id = p->c->id;
  ev.exec_id = e->exec_id;
  shim_events_publish("/tasks/exec-added", &ev.base);
  reply_empty(call);
}

static void h_resize(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Containerd__Task__V2__ResizePtyRequest *r = (const void *)msg;
  cleanup_error struct iob_error *err = NULL;
  struct shim_process *p;
  if (lookup(user, r->id, r->exec_id, &p, &err) < 0 ||
      shim_io_resize(p->io, r->width, r->height, &err) < 0) {
    fail(call, &err);
    return;
  }
  reply_empty(call);
}

static void h_closeio(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Containerd__Task__V2__CloseIORequest *r = (const void *)msg;
  cleanup_error struct iob_error *err = NULL;
  struct shim_process *p;
  if (lookup(user, r->id, r->exec_id, &p, &err) < 0) {
    fail(call, &err);
    return;
  }
  if (r->stdin)
    shim_io_close_stdin(p->io);
  reply_empty(call);
}

static void listed(struct shim_op *op, struct iob_error **err) {
  cleanup_free pid_t *pids = op->pids;
  size_t n = op->n_pids;
  if (op_failed(op, err))
    return;
  struct task_call *tc = task_call_of(op);
  struct shim_container *c = op->p->c;
  cleanup_free Containerd__Task__V2__ProcessInfo *infos = xcalloc(n + 1, sizeof(*infos));
  cleanup_free Containerd__Task__V2__ProcessInfo **ptrs = xcalloc(n + 1, sizeof(*ptrs));
  cleanup_free Google__Protobuf__Any *anys = xcalloc(n + 1, sizeof(*anys));
  cleanup_free uint8_t *buf = NULL;
  size_t used = 0, cap = 0;
  /* Sizes first, so the packed ProcessDetails can share one buffer. */
  for (struct shim_process *e = c->execs; e; e = e->next)
    cap += strlen(e->exec_id) + 8;
  buf = xmalloc(cap + 1);
  for (size_t i = 0; i < n; i++) {
    containerd__task__v2__process_info__init(&infos[i]);
    infos[i].pid = (uint32_t)pids[i];
    ptrs[i] = &infos[i];
    for (struct shim_process *e = c->execs; e && buf; e = e->next) {
      if (e->pid != pids[i] || shim_process_exited(e))
        continue;
      Containerd__Runc__V1__ProcessDetails d = CONTAINERD__RUNC__V1__PROCESS_DETAILS__INIT;
      d.exec_id = e->exec_id;
      size_t len = containerd__runc__v1__process_details__get_packed_size(&d);
      if (used + len > cap)
        break;
      google__protobuf__any__init(&anys[i]);
      anys[i].type_url = (char *)containerd__runc__v1__process_details__descriptor.name;
      anys[i].value.data = buf + used;
      anys[i].value.len = containerd__runc__v1__process_details__pack(&d, buf + used);
      used += len;
      infos[i].info = &anys[i];
      break;
    }
  }
  Containerd__Task__V2__PidsResponse resp = CONTAINERD__TASK__V2__PIDS_RESPONSE__INIT;
  resp.n_processes = n;
  resp.processes = ptrs;
  ttrpc_call_reply(tc->call, &resp.base);
  free(tc);
}

static void h_pids(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Containerd__Task__V2__PidsRequest *r = (const void *)msg;
  submit(call, user, r->id, NULL, &(struct shim_op){.kind = SHIM_OP_PIDS, .done = listed});
}

static void paused(struct shim_op *op, struct iob_error **err) {
  if (*err == NULL) {
    Containerd__Events__TaskPaused e = CONTAINERD__EVENTS__TASK_PAUSED__INIT;
    e.container_id = op->p->c->id;
    /* TaskPaused and TaskResumed have the same shape; only the descriptor
     * (and so the type_url) differs. */
    bool pause = op->kind == SHIM_OP_PAUSE;
    if (!pause)
      e.base.descriptor = &containerd__events__task_resumed__descriptor;
    shim_events_publish(pause ? "/tasks/paused" : "/tasks/resumed", &e.base);
  }
  op_reply_empty(op, err);
}

static void h_pause(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Containerd__Task__V2__PauseRequest *r = (const void *)msg;
  bool pause = !strcmp(ttrpc_call_method(call), "Pause");
  submit(call, user, r->id, NULL,
         &(struct shim_op){.kind = pause ? SHIM_OP_PAUSE : SHIM_OP_RESUME, .done = paused});
}

static void h_update(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Containerd__Task__V2__UpdateTaskRequest *r = (const void *)msg;
  cleanup_error struct iob_error *err = NULL;
  struct shim_process *p;
  if (lookup(user, r->id, NULL, &p, &err) < 0) {
    fail(call, &err);
    return;
  }
  if (shim_req_update(r, &err) < 0) {
    fail(call, &err);
    return;
  }
  const char *json = (const char *)r->resources->value.data;
  size_t len = r->resources->value.len;
  submit(
      call, user, r->id, NULL,
      &(struct shim_op){
          .kind = SHIM_OP_UPDATE, .done = op_reply_empty, .resources = json, .resources_len = len});
}

static void h_stats(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Containerd__Task__V2__StatsRequest *r = (const void *)msg;
  cleanup_error struct iob_error *err = NULL;
  struct shim_process *p;
  cleanup_free char *type = NULL;
  cleanup_free uint8_t *value = NULL;
  size_t len = 0;
  if (lookup(user, r->id, NULL, &p, &err) < 0) {
    fail(call, &err);
    return;
  }
  if (shim_process_exited(p)) {
    iob_error_code(&err, IOB_CODE_NOT_FOUND, "container '%s' has exited", p->c->id);
    fail(call, &err);
    return;
  }
  if (shim_stats_collect(p->pid, &type, &value, &len, &err) < 0) {
    fail(call, &err);
    return;
  }
  Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT;
  any.type_url = type;
  any.value.data = value;
  any.value.len = len;
  Containerd__Task__V2__StatsResponse resp = CONTAINERD__TASK__V2__STATS_RESPONSE__INIT;
  resp.stats = &any;
  ttrpc_call_reply(call, &resp.base);
}

static void h_connect(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Containerd__Task__V2__ConnectRequest *r = (const void *)msg;
  struct shim_service *s = user;
  struct shim_container *c = r->id ? shim_container_find(&s->containers, r->id) : NULL;
  Containerd__Task__V2__ConnectResponse resp = CONTAINERD__TASK__V2__CONNECT_RESPONSE__INIT;
  resp.shim_pid = (uint32_t)getpid();
  resp.task_pid = c ? (uint32_t)c->init.pid : 0;
  ttrpc_call_reply(call, &resp.base);
}

static void h_shutdown(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  (void)msg;
  struct shim_service *s = user;
  /* A grouped shim stays while it owns containers (runc shim rule); one
   * still being created counts. */
  bool exit = shim_containers_empty(&s->containers);
  reply_empty(call);
  if (exit)
    iob_loop_stop(s->loop);
}

static void h_checkpoint(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  (void)msg;
  (void)user;
  ttrpc_call_fail(call, IOB_CODE_UNIMPLEMENTED, "checkpoint is not supported by %s", SHIM_NAME);
}

struct method {
  const char *name;
  const ProtobufCMessageDescriptor *desc;
  ttrpc_handler_fn fn;
};

static const struct method methods[] = {
    {"State", &containerd__task__v2__state_request__descriptor, h_state},
    {"Create", &containerd__task__v2__create_task_request__descriptor, h_create},
    {"Start", &containerd__task__v2__start_request__descriptor, h_start},
    {"Delete", &containerd__task__v2__delete_request__descriptor, h_delete},
    {"Pids", &containerd__task__v2__pids_request__descriptor, h_pids},
    {"Pause", &containerd__task__v2__pause_request__descriptor, h_pause},
    {"Resume", &containerd__task__v2__resume_request__descriptor, h_pause},
    {"Checkpoint", &containerd__task__v2__checkpoint_task_request__descriptor, h_checkpoint},
    {"Kill", &containerd__task__v2__kill_request__descriptor, h_kill},
    {"Exec", &containerd__task__v2__exec_process_request__descriptor, h_exec},
    {"ResizePty", &containerd__task__v2__resize_pty_request__descriptor, h_resize},
    {"CloseIO", &containerd__task__v2__close_iorequest__descriptor, h_closeio},
    {"Update", &containerd__task__v2__update_task_request__descriptor, h_update},
    {"Wait", &containerd__task__v2__wait_request__descriptor, h_wait},
    {"Stats", &containerd__task__v2__stats_request__descriptor, h_stats},
    {"Connect", &containerd__task__v2__connect_request__descriptor, h_connect},
    {"Shutdown", &containerd__task__v2__shutdown_request__descriptor, h_shutdown},
};

int shim_service_new(struct iob_loop *loop, struct ttrpc_server *server, const char *ns,
                     struct shim_service **out, struct iob_error **err) {
  static const char *const services[] = {"containerd.task.v2.Task", "containerd.task.v3.Task"};
  struct shim_service *s = xcalloc(1, sizeof(*s));
  s->ns = xstrdup(ns);
  s->loop = loop;
  s->server = server;
  s->containers =
      (struct shim_containers){.loop = loop, .ns = s->ns, .observer = {on_exited, on_oom, s}};
  for (size_t i = 0; i < IOB_ARRAY_SIZE(services); i++) {
    for (size_t m = 0; m < IOB_ARRAY_SIZE(methods); m++) {
      if (ttrpc_server_register(server, services[i], methods[m].name, methods[m].desc,
                                methods[m].fn, s, err) < 0) {
        shim_service_free(s);
        return -1;
      }
    }
  }
  *out = s;
  return 0;
}

void shim_service_free(struct shim_service *s) {
  if (s == NULL)
    return;
  free(s->ns);
  free(s);
}
