/* containerd.task.v2.Task (and the same handlers as containerd.task.v3.Task):
 * decode, validate, call the process layer, map errors to ttrpc codes. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/log.h"
#include "containerd/runc/options.pb-c.h"
#include "containerd/task/v2/shim.pb-c.h"
#include "google/protobuf/empty.pb-c.h"
#include "google/protobuf/timestamp.pb-c.h"
#include "shim/admission.h"
#include "shim/process.h"
#include "shim/service.h"
#include "shim/stats.h"
#include "shim/validate.h"
#include "ttrpc/ttrpc.h"

#define SPEC_MAX (1u << 20)

static void fail(struct ttrpc_call *call, struct iob_error **err) {
  iob_debug("%s: %s", ttrpc_call_method(call), (*err)->msg);
  ttrpc_call_fail_error(call, err);
}

static void reply_empty(struct ttrpc_call *call) {
  Google__Protobuf__Empty e = GOOGLE__PROTOBUF__EMPTY__INIT;
  ttrpc_call_reply(call, &e.base);
}

static int check_ids(const char *id, const char *exec_id, struct iob_error **err) {
  if (shim_validate_id("id", id, err) < 0)
    return -1;
  if (exec_id && *exec_id && shim_validate_id("exec id", exec_id, err) < 0)
    return -1;
  return 0;
}

static int lookup(struct shim_service *s, const char *id, const char *exec_id,
                  struct shim_container **c, struct shim_process **p, struct iob_error **err) {
  if (check_ids(id, exec_id, err) < 0)
    return -1;
  return shim_process_find(s, id, exec_id, c, p, err);
}

static int check_stdio(const struct shim_stdio *st, struct iob_error **err) {
  const char *v[] = {st->in, st->out, st->err};
  for (size_t i = 0; i < 3; i++)
    if (v[i] && strlen(v[i]) > 4096)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "stdio path too long");
  return 0;
}

static int create_mounts(const Containerd__Task__V2__CreateTaskRequest *r,
                         struct shim_mount **out, struct iob_error **err) {
  if (r->n_rootfs > 16)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "too many rootfs mounts");
  *out = calloc(r->n_rootfs + 1, sizeof(**out));
  if (*out == NULL)
    abort();
  for (size_t i = 0; i < r->n_rootfs; i++) {
    const Containerd__Types__Mount *m = r->rootfs[i];
    if (m == NULL || m->type == NULL || *m->type == '\0' || m->source == NULL)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid rootfs mount");
    (*out)[i] = (struct shim_mount){m->type, m->source, (const char *const *)m->options,
                                    m->n_options};
  }
  return 0;
}

static void h_create(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Containerd__Task__V2__CreateTaskRequest *r = (const void *)msg;
  struct shim_service *s = user;
  cleanup_error struct iob_error *err = NULL;
  cleanup_free struct shim_mount *mounts = NULL;
  struct shim_create cr = {.id = r->id, .bundle = r->bundle,
                           .stdio = {r->stdin, r->stdout, r->stderr, r->terminal}};
  if (check_ids(r->id, NULL, &err) < 0 || shim_validate_path("bundle", r->bundle, true, &err) < 0 ||
      check_stdio(&cr.stdio, &err) < 0 || create_mounts(r, &mounts, &err) < 0) {
    fail(call, &err);
    return;
  }
  if (r->checkpoint && *r->checkpoint) {
    iob_error_code(&err, IOB_CODE_UNIMPLEMENTED, "checkpoint restore is not supported");
    fail(call, &err);
    return;
  }
  cr.mounts = mounts;
  cr.n_mounts = r->n_rootfs;
  if (r->options) {
    cr.options_type = r->options->type_url;
    cr.options = r->options->value.data;
    cr.options_len = r->options->value.len;
  }
  struct shim_container *c;
  if (shim_container_create(s, &cr, &c, &err) < 0) {
    fail(call, &err);
    return;
  }
  Containerd__Task__V2__CreateTaskResponse resp = CONTAINERD__TASK__V2__CREATE_TASK_RESPONSE__INIT;
  resp.pid = (uint32_t)c->init.pid;
  ttrpc_call_reply(call, &resp.base);
}

struct start_ctx {
  struct ttrpc_call *call;
  struct shim_process *p;
};

static void on_admitted(void *data, int admitted, struct iob_error *aerr) {
  struct start_ctx *sc = data;
  struct ttrpc_call *call = sc->call;
  struct shim_process *p = sc->p;
  free(sc);
  cleanup_error struct iob_error *err = NULL;
  if (!admitted) {
    iob_error_code(&err, IOB_CODE_FAILED_PRECONDITION, "not admitted: %s",
                   aerr ? aerr->msg : "refused");
    fail(call, &err);
    return;
  }
  if (shim_process_start(p, &err) < 0) {
    fail(call, &err);
    return;
  }
  Containerd__Task__V2__StartResponse resp = CONTAINERD__TASK__V2__START_RESPONSE__INIT;
  resp.pid = (uint32_t)p->pid;
  ttrpc_call_reply(call, &resp.base);
}

static void h_start(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Containerd__Task__V2__StartRequest *r = (const void *)msg;
  cleanup_error struct iob_error *err = NULL;
  struct shim_container *c;
  struct shim_process *p;
  if (lookup(user, r->id, r->exec_id, &c, &p, &err) < 0) {
    fail(call, &err);
    return;
  }
  struct start_ctx *sc = malloc(sizeof(*sc));
  if (sc == NULL)
    abort();
  *sc = (struct start_ctx){call, p};
  if (p->exec_id) {
    on_admitted(sc, 1, NULL);
    return;
  }
  /* The admission hold: the reply to Start waits until the agent admits. */
  struct shim_service *s = user;
  struct shim_admission_req ar = {c->id, s->ns, c->bundle, p->pid, ttrpc_call_deadline_ms(call)};
  shim_admission_wait(s->loop, &ar, on_admitted, sc);
}

static void time_out(struct shim_time t, Google__Protobuf__Timestamp *ts) {
  google__protobuf__timestamp__init(ts);
  ts->seconds = t.sec;
  ts->nanos = t.nsec;
}

static void h_delete(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Containerd__Task__V2__DeleteRequest *r = (const void *)msg;
  cleanup_error struct iob_error *err = NULL;
  struct shim_container *c;
  struct shim_process *p;
  if (lookup(user, r->id, r->exec_id, &c, &p, &err) < 0) {
    fail(call, &err);
    return;
  }
  Containerd__Task__V2__DeleteResponse resp = CONTAINERD__TASK__V2__DELETE_RESPONSE__INIT;
  Google__Protobuf__Timestamp ts;
  struct shim_time at;
  if (p->exec_id == NULL)
    shim_admission_cancel(c->svc->ns, c->id); /* a Start still held fails */
  if (shim_process_delete(p, &resp.pid, &resp.exit_status, &at, &err) < 0) {
    fail(call, &err);
    return;
  }
  time_out(at, &ts);
  resp.exited_at = &ts;
  ttrpc_call_reply(call, &resp.base);
}

static void h_state(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Containerd__Task__V2__StateRequest *r = (const void *)msg;
  cleanup_error struct iob_error *err = NULL;
  struct shim_container *c;
  struct shim_process *p;
  if (lookup(user, r->id, r->exec_id, &c, &p, &err) < 0) {
    fail(call, &err);
    return;
  }
  Containerd__Task__V2__StateResponse resp = CONTAINERD__TASK__V2__STATE_RESPONSE__INIT;
  Google__Protobuf__Timestamp ts;
  resp.id = p->exec_id ? p->exec_id : c->id;
  resp.exec_id = p->exec_id ? p->exec_id : "";
  resp.bundle = c->bundle;
  resp.pid = (uint32_t)p->pid;
  resp.status = (Containerd__V1__Types__Status)(p->exit_pending ? SHIM_STATUS_RUNNING : p->status);
  resp.stdin = p->in;
  resp.stdout = p->out;
  resp.stderr = p->err;
  resp.terminal = p->terminal;
  resp.exit_status = p->exit_status;
  if (p->exited) {
    time_out(p->exited_at, &ts);
    resp.exited_at = &ts;
  }
  ttrpc_call_reply(call, &resp.base);
}

static void wait_reply(struct ttrpc_call *call, struct shim_process *p) {
  Containerd__Task__V2__WaitResponse resp = CONTAINERD__TASK__V2__WAIT_RESPONSE__INIT;
  Google__Protobuf__Timestamp ts;
  time_out(p->exited_at, &ts);
  resp.exit_status = p->exit_status;
  resp.exited_at = &ts;
  ttrpc_call_reply(call, &resp.base);
}

static void on_wait_cancel(struct ttrpc_call *call, void *data) {
  struct shim_waitcall *w = data;
  (void)call;
  for (struct shim_waitcall **pp = &w->p->waits; *pp; pp = &(*pp)->next) {
    if (*pp == w) {
      *pp = w->next;
      break;
    }
  }
  free(w);
}

void shim_process_wake(struct shim_process *p) {
  while (p->waits) {
    struct shim_waitcall *w = p->waits;
    p->waits = w->next;
    ttrpc_call_on_cancel(w->call, NULL, NULL);
    wait_reply(w->call, p);
    free(w);
  }
}

static void h_wait(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Containerd__Task__V2__WaitRequest *r = (const void *)msg;
  cleanup_error struct iob_error *err = NULL;
  struct shim_container *c;
  struct shim_process *p;
  if (lookup(user, r->id, r->exec_id, &c, &p, &err) < 0) {
    fail(call, &err);
    return;
  }
  if (p->exited) {
    wait_reply(call, p);
    return;
  }
  struct shim_waitcall *w = calloc(1, sizeof(*w));
  if (w == NULL)
    abort();
  *w = (struct shim_waitcall){call, p, p->waits};
  p->waits = w;
  ttrpc_call_on_cancel(call, on_wait_cancel, w);
}

static void h_kill(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Containerd__Task__V2__KillRequest *r = (const void *)msg;
  cleanup_error struct iob_error *err = NULL;
  struct shim_container *c;
  struct shim_process *p;
  if (lookup(user, r->id, r->exec_id, &c, &p, &err) < 0 ||
      shim_process_kill(p, r->signal, r->all, &err) < 0) {
    fail(call, &err);
    return;
  }
  if (p->exec_id == NULL)
    shim_admission_cancel(c->svc->ns, c->id); /* a Start still held fails */
  reply_empty(call);
}

static void h_exec(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Containerd__Task__V2__ExecProcessRequest *r = (const void *)msg;
  cleanup_error struct iob_error *err = NULL;
  struct shim_container *c;
  struct shim_process *p;
  struct shim_stdio st = {r->stdin, r->stdout, r->stderr, r->terminal};
  if (lookup(user, r->id, NULL, &c, &p, &err) < 0 ||
      shim_validate_id("exec id", r->exec_id, &err) < 0 || check_stdio(&st, &err) < 0) {
    fail(call, &err);
    return;
  }
  if (r->spec == NULL || r->spec->value.len == 0 || r->spec->value.len > SPEC_MAX) {
    iob_error_code(&err, IOB_CODE_INVALID_ARGUMENT, "missing or oversized process spec");
    fail(call, &err);
    return;
  }
  if (shim_exec_add(c, r->exec_id, &st, (const char *)r->spec->value.data, r->spec->value.len,
                    &err) < 0) {
    fail(call, &err);
    return;
  }
  reply_empty(call);
}

static void h_resize(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Containerd__Task__V2__ResizePtyRequest *r = (const void *)msg;
  cleanup_error struct iob_error *err = NULL;
  struct shim_container *c;
  struct shim_process *p;
  if (lookup(user, r->id, r->exec_id, &c, &p, &err) < 0 ||
      shim_io_resize(p->io, r->width, r->height, &err) < 0) {
    fail(call, &err);
    return;
  }
  reply_empty(call);
}

static void h_closeio(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Containerd__Task__V2__CloseIORequest *r = (const void *)msg;
  cleanup_error struct iob_error *err = NULL;
  struct shim_container *c;
  struct shim_process *p;
  if (lookup(user, r->id, r->exec_id, &c, &p, &err) < 0) {
    fail(call, &err);
    return;
  }
  if (r->stdin)
    shim_io_close_stdin(p->io);
  reply_empty(call);
}

static void h_pids(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Containerd__Task__V2__PidsRequest *r = (const void *)msg;
  cleanup_error struct iob_error *err = NULL;
  struct shim_container *c;
  struct shim_process *p;
  cleanup_free pid_t *pids = NULL;
  size_t n = 0;
  if (lookup(user, r->id, NULL, &c, &p, &err) < 0 || shim_container_pids(c, &pids, &n, &err) < 0) {
    fail(call, &err);
    return;
  }
  cleanup_free Containerd__Task__V2__ProcessInfo *infos = calloc(n + 1, sizeof(*infos));
  cleanup_free Containerd__Task__V2__ProcessInfo **ptrs = calloc(n + 1, sizeof(*ptrs));
  cleanup_free Google__Protobuf__Any *anys = calloc(n + 1, sizeof(*anys));
  cleanup_free uint8_t *buf = NULL;
  size_t used = 0, cap = 0;
  if (infos == NULL || ptrs == NULL || anys == NULL)
    abort();
  /* Sizes first, so the packed ProcessDetails can share one buffer. */
  for (struct shim_process *e = c->execs; e; e = e->next)
    cap += strlen(e->exec_id) + 8;
  buf = malloc(cap + 1);
  for (size_t i = 0; i < n; i++) {
    containerd__task__v2__process_info__init(&infos[i]);
    infos[i].pid = (uint32_t)pids[i];
    ptrs[i] = &infos[i];
    for (struct shim_process *e = c->execs; e && buf; e = e->next) {
      if (e->pid != pids[i] || e->exited)
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
  ttrpc_call_reply(call, &resp.base);
}

static void h_pause(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Containerd__Task__V2__PauseRequest *r = (const void *)msg;
  cleanup_error struct iob_error *err = NULL;
  struct shim_container *c;
  struct shim_process *p;
  bool pause = !strcmp(ttrpc_call_method(call), "Pause");
  if (lookup(user, r->id, NULL, &c, &p, &err) < 0 || shim_container_pause(c, pause, &err) < 0) {
    fail(call, &err);
    return;
  }
  reply_empty(call);
}

static void h_update(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Containerd__Task__V2__UpdateTaskRequest *r = (const void *)msg;
  cleanup_error struct iob_error *err = NULL;
  struct shim_container *c;
  struct shim_process *p;
  if (lookup(user, r->id, NULL, &c, &p, &err) < 0) {
    fail(call, &err);
    return;
  }
  if (r->resources == NULL || r->resources->value.len == 0 || r->resources->value.len > SPEC_MAX) {
    iob_error_code(&err, IOB_CODE_INVALID_ARGUMENT, "missing or oversized resources");
    fail(call, &err);
    return;
  }
  if (shim_container_update(c, (const char *)r->resources->value.data, r->resources->value.len,
                            &err) < 0) {
    fail(call, &err);
    return;
  }
  reply_empty(call);
}

static void h_stats(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Containerd__Task__V2__StatsRequest *r = (const void *)msg;
  cleanup_error struct iob_error *err = NULL;
  struct shim_container *c;
  struct shim_process *p;
  cleanup_free char *type = NULL;
  cleanup_free uint8_t *value = NULL;
  size_t len = 0;
  if (lookup(user, r->id, NULL, &c, &p, &err) < 0) {
    fail(call, &err);
    return;
  }
  if (p->exited) {
    iob_error_code(&err, IOB_CODE_NOT_FOUND, "container '%s' has exited", c->id);
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
  struct shim_container *c = r->id ? shim_container_find(user, r->id) : NULL;
  Containerd__Task__V2__ConnectResponse resp = CONTAINERD__TASK__V2__CONNECT_RESPONSE__INIT;
  resp.shim_pid = (uint32_t)getpid();
  resp.task_pid = c ? (uint32_t)c->init.pid : 0;
  ttrpc_call_reply(call, &resp.base);
}

static void h_shutdown(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  (void)msg;
  struct shim_service *s = user;
  /* A grouped shim stays while it owns containers (runc shim rule). */
  if (s->containers == NULL)
    s->exit_requested = true;
  reply_empty(call);
  if (s->exit_requested)
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
  struct shim_service *s = calloc(1, sizeof(*s));
  if (s == NULL || (s->ns = strdup(ns)) == NULL)
    abort();
  s->loop = loop;
  s->server = server;
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
