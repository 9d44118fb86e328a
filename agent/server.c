/* The agent's ttrpc API (proto/iobatch/agent.proto).  Handlers translate
 * between protobuf and the admission state machine and answer every call
 * exactly once; Admit is answered later, when the container is admitted,
 * cancelled, or its caller goes away. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/daemon.h"
#include "agent/plan.h"
#include "common/cleanup.h"
#include "common/file.h"
#include "common/log.h"
#include "google/protobuf/empty.pb-c.h"
#include "iobatch/agent.pb-c.h"
#include "ttrpc/ttrpc.h"

/* Leave the caller this much of its own timeout to act on our answer: a
 * shim whose Start is about to hit containerd's deadline must still start
 * the container, not just learn that it may. */
#define CALLER_MARGIN_MS 1000

static uint64_t now_ms(void) {
  return iob_now_ms();
}

static void reply_admit(struct ttrpc_call *call, const struct agent_ctr *c, bool admitted,
                        const char *reason, uint64_t now) {
  Iobatch__Agent__V1__AdmitResponse resp = IOBATCH__AGENT__V1__ADMIT_RESPONSE__INIT;
  resp.admitted = admitted;
  resp.reason = (char *)reason;
  resp.held_ms = c->arrival_ms && now > c->arrival_ms
                     ? (c->state == AGENT_RUNNING ? c->admitted_ms : now) - c->arrival_ms
                     : 0;
  resp.class_ = (char *)batch_class_name(c->cls);
  resp.io_weight = c->weight_written;
  ttrpc_call_reply(call, &resp.base);
}

void agent_server_answer(struct agent_daemon *d, struct agent_ctr *c, bool admitted,
                         const char *reason) {
  (void)d;
  struct agent_waiter *w = c->waiter;
  if (w == NULL)
    return;
  c->waiter = NULL;
  ttrpc_call_on_cancel(w->call, NULL, NULL);
  reply_admit(w->call, c, admitted, reason, now_ms());
  free(w);
}

void agent_server_abort(struct agent_daemon *d, struct agent_ctr *c, const char *why) {
  (void)d;
  struct agent_waiter *w = c->waiter;
  if (w == NULL)
    return;
  c->waiter = NULL;
  ttrpc_call_on_cancel(w->call, NULL, NULL);
  ttrpc_call_fail(w->call, IOB_CODE_UNAVAILABLE, "%s", why);
  free(w);
}

/* The caller's connection closed while it waited: the shim (or whoever
 * asked) is gone, so nobody will start this container on our word. */
static void on_admit_cancelled(struct ttrpc_call *call, void *data) {
  struct agent_waiter *w = data;
  struct agent_daemon *d = w->d;
  struct agent_ctr *c = w->ctr;
  c->waiter = NULL;
  free(w);
  ttrpc_call_fail(call, IOB_CODE_CANCELED, "caller went away");
  iob_info("pending container '%s' dropped: its caller closed the connection", c->id);
  if (c->state == AGENT_PENDING) {
    agent_daemon_remove(d, c, "caller went away");
    agent_daemon_changed(d);
  }
}

static void on_register(struct ttrpc_call *call, const ProtobufCMessage *m, void *user) {
  struct agent_daemon *d = user;
  const Iobatch__Agent__V1__RegisterRequest *req = (const void *)m;
  cleanup_error struct iob_error *err = NULL;
  struct agent_ctr_info in = {
      .id = req->id,
      .ns = req->namespace_,
      .workload_key = req->workload_key,
      .cgroup = req->cgroup,
      .bundle = req->bundle,
      .source = req->source,
      .declared_class = req->declared_class,
      .kind = req->kind,
      .pod_name = req->pod_name,
      .pod_namespace = req->pod_namespace,
      .container_name = req->container_name,
      .pid = req->pid,
      .max_hold_ms = req->max_hold_ms,
      .running = req->running,
  };
  bool fresh = agent_adm_find(&d->adm, req->namespace_, req->id) == NULL;
  struct agent_ctr *c = NULL;
  if (agent_adm_register(&d->adm, &in, now_ms(), &c, &err) < 0) {
    iob_warn("register '%s' refused: %s", req->id, err->msg);
    ttrpc_call_fail_error(call, &err);
    return;
  }
  d->metrics.registrations += fresh;
  if (fresh || c->class_source == AGENT_CLASS_NONE)
    agent_daemon_apply_profile(d, c);
  const Iobatch__Agent__V1__IOSample *b = req->baseline;
  if (b)
    agent_sampler_baseline(d, c, b->monotonic_ns, b->rbytes, b->wbytes, b->rios, b->wios);
  else
    agent_sampler_baseline(d, c, 0, 0, 0, 0, 0);
  iob_info("registered '%s' (namespace '%s', from %s, class %s by %s%s)", c->id, c->ns,
           c->source && *c->source ? c->source : "?", batch_class_name(c->cls),
           agent_class_source_name(c->class_source), req->running ? ", already running" : "");
  Iobatch__Agent__V1__RegisterResponse resp = IOBATCH__AGENT__V1__REGISTER_RESPONSE__INIT;
  resp.class_ = (char *)batch_class_name(c->cls);
  resp.io_weight = c->weight_written;
  ttrpc_call_reply(call, &resp.base);
  agent_daemon_changed(d);
}

static void on_admit(struct ttrpc_call *call, const ProtobufCMessage *m, void *user) {
  struct agent_daemon *d = user;
  const Iobatch__Agent__V1__AdmitRequest *req = (const void *)m;
  cleanup_error struct iob_error *err = NULL;
  uint64_t now = now_ms();
  struct agent_ctr *c = agent_adm_find(&d->adm, req->namespace_, req->id);
  if (c == NULL) {
    /* No hook registered it (an engine without our hook, or the agent
     * restarted in between): the Admit carries enough to go on. */
    struct agent_ctr_info in = {.id = req->id,
                                .ns = req->namespace_,
                                .workload_key = req->workload_key,
                                .declared_class = req->declared_class,
                                .kind = req->kind,
                                .source = "admit",
                                .max_hold_ms = req->max_hold_ms};
    if (agent_adm_register(&d->adm, &in, now, &c, &err) < 0) {
      iob_warn("admit '%s' refused: %s", req->id, err->msg);
      ttrpc_call_fail_error(call, &err);
      return;
    }
    d->metrics.registrations++;
    agent_daemon_apply_profile(d, c);
  } else if (req->kind && *req->kind && agent_kind_from_name(req->kind) < 0) {
    ttrpc_call_fail(call, IOB_CODE_INVALID_ARGUMENT,
                    "unknown kind '%s' (expected job, service or sandbox)", req->kind);
    return;
  } else if (req->declared_class && strcmp(req->declared_class, "latency") == 0) {
    c->protect = c->protect_declared = true;
  } else if (req->declared_class && *req->declared_class) {
    int cls = batch_class_from_name(req->declared_class);
    if (cls < 0) {
      ttrpc_call_fail(call, IOB_CODE_INVALID_ARGUMENT, "unknown class '%s'", req->declared_class);
      return;
    }
    agent_adm_set_class(&d->adm, c, (enum batch_class)cls, 1, AGENT_CLASS_DECLARED, now);
  }
  if (req->kind && *req->kind)
    c->kind = (enum agent_kind)agent_kind_from_name(req->kind); /* checked above */
  if (c->waiter) {
    /* A retry (say, a shim that reconnected): the newest call is the one
     * somebody still waits on. */
    struct agent_waiter *old = c->waiter;
    c->waiter = NULL;
    ttrpc_call_on_cancel(old->call, NULL, NULL);
    ttrpc_call_fail(old->call, IOB_CODE_ABORTED, "superseded by a newer admit for '%s'", c->id);
    free(old);
  }
  uint64_t cap = ttrpc_call_deadline_ms(call);
  if (cap) {
    uint64_t margin = (cap > now ? cap - now : 0) / 10;
    cap -= margin < CALLER_MARGIN_MS ? margin : CALLER_MARGIN_MS;
  }
  if (agent_adm_admit(&d->adm, c, req->max_hold_ms, cap, now) == 1) {
    reply_admit(call, c, true, "already running", now);
    return;
  }
  struct agent_waiter *w = calloc(1, sizeof(*w));
  if (w == NULL) {
    ttrpc_call_fail(call, IOB_CODE_RESOURCE_EXHAUSTED, "cannot allocate a waiter");
    return;
  }
  *w = (struct agent_waiter){.d = d, .ctr = c, .call = call};
  c->waiter = w;
  ttrpc_call_on_cancel(call, on_admit_cancelled, w);
  iob_debug("admit '%s' (class %s): pending, deadline in %llu ms", c->id, batch_class_name(c->cls),
            (unsigned long long)(c->deadline_ms - now));
  agent_daemon_changed(d);
}

static void on_cancel(struct ttrpc_call *call, const ProtobufCMessage *m, void *user) {
  struct agent_daemon *d = user;
  const Iobatch__Agent__V1__CancelRequest *req = (const void *)m;
  struct agent_ctr *c = agent_adm_find(&d->adm, req->namespace_, req->id);
  /* Unknown is fine: cancelling twice, or after an agent restart, must not
   * make a Kill or Delete fail. */
  if (c) {
    iob_info("cancelled '%s' (%s)", c->id, agent_state_name(c->state));
    d->metrics.cancellations++;
    agent_daemon_remove(d, c, "cancelled");
    agent_daemon_changed(d);
  }
  ttrpc_call_reply(call, NULL);
}

static void on_exited(struct ttrpc_call *call, const ProtobufCMessage *m, void *user) {
  struct agent_daemon *d = user;
  const Iobatch__Agent__V1__ExitedRequest *req = (const void *)m;
  struct agent_ctr *c = agent_adm_find(&d->adm, req->namespace_, req->id);
  if (c) {
    iob_info("'%s' exited with status %u after %llu ms", c->id, req->exit_status,
             (unsigned long long)(c->admitted_ms ? now_ms() - c->admitted_ms : 0));
    agent_daemon_remove(d, c, "exited");
    agent_daemon_changed(d);
  }
  ttrpc_call_reply(call, NULL);
}

static void status_free(Iobatch__Agent__V1__StatusResponse *r) {
  for (size_t i = 0; i < r->n_containers; i++) {
    if (r->containers[i] == NULL)
      continue;
    free(r->containers[i]->reason);
    if (r->containers[i]->waits_for != protobuf_c_empty_string)
      free(r->containers[i]->waits_for);
    free(r->containers[i]);
  }
  free(r->containers);
  for (size_t i = 0; i < r->n_penalties; i++)
    free(r->penalties[i]);
  free(r->penalties);
}

static char *describe_reason(const struct agent_ctr *c) {
  char *s = NULL;
  const char *r = c->reason >= 0 ? batch_reason_name((enum batch_reason)c->reason) : "";
  if (c->state == AGENT_CREATED)
    r = "not started";
  else if (c->state == AGENT_PENDING && c->reason < 0)
    r = "batch window";
  else if (c->state == AGENT_RUNNING && c->kind == AGENT_KIND_SANDBOX)
    r = "admitted: a pod sandbox is never held";
  else if (c->state == AGENT_RUNNING && c->reason < 0)
    r = "registered running";
  if (asprintf(&s, "%s", r) < 0)
    return NULL;
  return s;
}

/* How status names a container a pending one waits for: its CRI names when
 * it has them (what a kubectl user knows), else its id.  A conflict is
 * recorded by id alone: the same namespace first, else any. */
static void ctr_label(const struct agent_daemon *d, const char *ns, const char *id, char *buf,
                      size_t n) {
  const struct agent_ctr *c = agent_adm_find(&d->adm, ns, id);
  for (const struct agent_ctr *o = d->adm.list; c == NULL && o; o = o->next)
    if (!strcmp(o->id, id))
      c = o;
  if (c && c->pod_name && *c->pod_name)
    snprintf(buf, n, "%s/%s%s%s ('%.12s')", c->pod_namespace, c->pod_name,
             c->container_name && *c->container_name ? "/" : "",
             c->container_name ? c->container_name : "", c->id);
  else
    snprintf(buf, n, "'%s'", id);
}

/* ContainerStatus.waits_for of a pending container: what would admit it
 * and why it is held, naming the container it conflicts with.  The latest
 * admission (its deadline) is admit_by_ms. */
static char *describe_wait(const struct agent_daemon *d, const struct agent_ctr *c, uint64_t now) {
  char who[AGENT_ID_MAX * 4 + 16], *s = NULL;
  int r = 0;
  if (c->state != AGENT_PENDING)
    return NULL;
  if (c->conflict[0])
    ctr_label(d, c->ns, c->conflict, who, sizeof(who));
  else
    snprintf(who, sizeof(who), "a running container");
  switch (c->reason) {
  case BATCH_HOLD_FULL:
    r = asprintf(&s, "a free slot (max concurrency %u reached)", d->bcfg.max_batch);
    break;
  case BATCH_HOLD_MAKESPAN:
    r = asprintf(&s, "%s to finish: holding finishes the set sooner than running beside it", who);
    break;
  case BATCH_HOLD_FAIRNESS:
    r = asprintf(&s, "%s to finish: running beside it would stretch a job beyond %gx its solo time",
                 who, d->bcfg.fairness);
    break;
  case BATCH_HOLD_PLAN:
    r = c->conflict[0] ? asprintf(&s, "a later batch of the plan (conflicts with %s)", who)
                       : asprintf(&s, "a later batch of the plan");
    break;
  case BATCH_HOLD_BEHIND:
    r = c->conflict[0]
            ? asprintf(&s, "%s, held longer and in conflict with it, to start first", who)
            : asprintf(&s, "an older held container it conflicts with to start first");
    break;
  case BATCH_HOLD_NEXT:
    r = asprintf(&s, "the next plan (this one ran out of its forecast budget)");
    break;
  case BATCH_HOLD_PROTECT:
    r = c->conflict[0]
            ? asprintf(&s, "the latency-sensitive %s to get its rate back (it is short of it)", who)
            : asprintf(&s, "a latency-sensitive container to get its rate back");
    break;
  default:
    if (now < d->adm.settle_ms)
      r = asprintf(&s, "the agent's start-up (running containers register again first)");
    else if (c->reason < 0)
      r = asprintf(&s, "the batch window (%llu ms) to close",
                   (unsigned long long)d->cfg.batch_window_ms);
    else
      r = asprintf(&s, "the next plan (last decision: %s)",
                   batch_reason_name((enum batch_reason)c->reason));
  }
  return r < 0 ? NULL : s;
}

static void on_status(struct ttrpc_call *call, const ProtobufCMessage *m, void *user) {
  (void)m;
  struct agent_daemon *d = user;
  uint64_t now = now_ms();
  Iobatch__Agent__V1__StatusResponse r = IOBATCH__AGENT__V1__STATUS_RESPONSE__INIT;
  r.containers = calloc(d->adm.n + 1, sizeof(*r.containers));
  if (r.containers == NULL) {
    ttrpc_call_fail(call, IOB_CODE_RESOURCE_EXHAUSTED, "cannot allocate status");
    return;
  }
  for (struct agent_ctr *c = d->adm.list; c; c = c->next) {
    Iobatch__Agent__V1__ContainerStatus *s = calloc(1, sizeof(*s));
    if (s == NULL)
      break;
    iobatch__agent__v1__container_status__init(s);
    r.containers[r.n_containers++] = s;
    s->id = c->id;
    s->namespace_ = c->ns;
    s->state = (char *)agent_state_name(c->state);
    s->class_ = (char *)batch_class_name(c->cls);
    s->class_source = (char *)agent_class_source_name(c->class_source);
    s->confidence = c->confidence;
    s->read_bps = c->read_bps;
    s->write_bps = c->write_bps;
    s->read_iops = c->read_iops;
    s->write_iops = c->write_iops;
    s->io_weight = c->state == AGENT_RUNNING ? c->weight : 0;
    s->weight_effective = c->weight_effective;
    s->weight_note = c->weight_note;
    if (c->state == AGENT_PENDING)
      s->held_ms = now - c->arrival_ms;
    else if (c->state == AGENT_RUNNING && c->admitted_ms >= c->arrival_ms)
      s->held_ms = c->admitted_ms - c->arrival_ms;
    s->age_ms = now - c->registered_ms;
    s->workload_key = c->workload_key;
    s->pid = c->pid;
    s->reason = describe_reason(c);
    s->conflict = c->conflict;
    s->kind = (char *)agent_kind_name(c->kind);
    s->protected_ = c->protect;
    s->share = c->protect ? c->share : -1;
    s->cap_bps = (uint64_t)c->cap_bps;
    s->pod_name = c->pod_name;
    s->pod_namespace = c->pod_namespace;
    s->container_name = c->container_name;
    if (c->state == AGENT_PENDING)
      s->admit_by_ms = c->deadline_ms > now ? c->deadline_ms - now : 0;
    s->waits_for = describe_wait(d, c, now);
    if (s->waits_for == NULL)
      s->waits_for = (char *)protobuf_c_empty_string;
    if (c->kind != AGENT_KIND_SANDBOX && c->state != AGENT_CREATED) {
      struct batch_job j;
      agent_adm_job(&d->adm, c, now, &j);
      double left = batch_work_left(&d->bcfg, &j, (double)now / 1000.0);
      s->open_ended = !isfinite(left);
      s->work_left_s = isfinite(left) && j.running ? left : 0;
    }
  }
  r.protect_cap_bps = (uint64_t)d->adm.prot.level_bps;
  r.protect_holding = d->adm.prot.short_;
  r.penalties = calloc(BATCH_NCLASS * BATCH_NCLASS + 1, sizeof(*r.penalties));
  for (int v = 0; r.penalties && v < BATCH_NCLASS; v++)
    for (int n = 0; n < BATCH_NCLASS; n++) {
      const struct agent_pen_pair *e = &d->penalties.p[v][n];
      if (e->samples == 0)
        continue;
      Iobatch__Agent__V1__PenaltyPair *pp = calloc(1, sizeof(*pp));
      if (pp == NULL)
        break;
      iobatch__agent__v1__penalty_pair__init(pp);
      pp->victim = (char *)batch_class_name((enum batch_class)v);
      pp->neighbour = (char *)batch_class_name((enum batch_class)n);
      pp->slowdown = e->slowdown;
      pp->samples = e->samples;
      pp->coruns = e->coruns;
      pp->in_use = agent_penalties_in_use(&d->penalties, (enum batch_class)v, (enum batch_class)n);
      r.penalties[r.n_penalties++] = pp;
    }
  r.policy = (char *)batch_policy_name(d->bcfg.policy);
  r.matrix_source = d->matrix_source;
  r.max_concurrency = d->bcfg.max_batch;
  r.sampler = (char *)agent_sampler_name(&d->sampler);
  r.plans = d->adm.plans;
  r.admissions = d->adm.admissions;
  r.forced_admissions = d->adm.forced_admissions;
  r.profiles = (uint32_t)d->profiles.n;
  r.batch_window_ms = d->cfg.batch_window_ms;
  ttrpc_call_reply(call, &r.base);
  status_free(&r);
}

static void on_plan(struct ttrpc_call *call, const ProtobufCMessage *m, void *user) {
  struct agent_daemon *d = user;
  const Iobatch__Agent__V1__PlanRequest *req = (const void *)m;
  cleanup_error struct iob_error *err = NULL;
  struct batch_config cfg = d->bcfg;
  if (req->cap > BATCH_MAX_BATCH) {
    ttrpc_call_fail(call, IOB_CODE_INVALID_ARGUMENT, "cap %u out of range 1..%d", req->cap,
                    BATCH_MAX_BATCH);
    return;
  }
  if (req->cap)
    cfg.max_batch = req->cap;
  /* proto3 cannot tell 0 from unset; 0 means "the agent's alpha". */
  if (req->alpha > 0 && req->alpha <= 1)
    cfg.alpha = req->alpha;
  else if (req->alpha != 0) {
    ttrpc_call_fail(call, IOB_CODE_INVALID_ARGUMENT, "alpha %g out of range (0, 1]", req->alpha);
    return;
  }
  Iobatch__Agent__V1__PlanResponse *resp = NULL;
  if (agent_plan_solve(&cfg, req->jobs, req->n_jobs, &resp, &err) < 0) {
    ttrpc_call_fail_error(call, &err);
    return;
  }
  ttrpc_call_reply(call, &resp->base);
  agent_plan_response_free(resp);
}

/* Whoever can write the socket's directory can put their own socket in
 * its place, and every shim would tell them its containers and take their
 * word on starting them: root's, 0700, or no start. */
static int check_socket_dir(const char *path, struct iob_error **err) {
  if (path[0] != '/')
    return 0; /* abstract (tests): no directory */
  cleanup_free char *dir = strdup(path);
  if (dir == NULL)
    return iob_error(err, ENOMEM, "cannot allocate");
  char *slash = strrchr(dir, '/');
  if (slash == dir)
    slash[1] = '\0';
  else
    *slash = '\0';
  return iob_dir_check_private(dir, "socket directory", err);
}

/* Liveness (agent/client.h): answered from the loop, so an answer means
 * the loop runs. */
static void on_ping(struct ttrpc_call *call, const ProtobufCMessage *m, void *user) {
  (void)m;
  (void)user;
  ttrpc_call_reply(call, NULL);
}

int agent_server_setup(struct agent_daemon *d, struct iob_error **err) {
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
  if (ttrpc_server_new(d->loop, &d->server, err) < 0)
    return -1;
  for (size_t i = 0; i < IOB_ARRAY_SIZE(methods); i++)
    if (ttrpc_server_register(d->server, AGENT_SERVICE, methods[i].method, methods[i].desc,
                              methods[i].fn, d, err) < 0)
      return -1;
  const char *path = d->cfg.socket_path ? d->cfg.socket_path : AGENT_DEFAULT_SOCKET;
  if (check_socket_dir(path, err) < 0 || ttrpc_server_listen(d->server, path, err) < 0)
    return -1;
  return 0;
}
