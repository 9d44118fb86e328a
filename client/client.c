// SPDX-License-Identifier: Apache-2.0
#include "client/client.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "google/protobuf/empty.pb-c.h"
#include "iobatch/agent.pb-c.h"
#include "ttrpc/ttrpc.h"

#include "client/api.h"
#define RETRY_EVERY_MS 200

struct ctr_copy {
  char *id, *ns, *cgroup, *bundle, *declared_class, *workload_key;
  char *kind, *pod_name, *pod_namespace, *container_name;
  uint32_t pid, max_hold_ms, lat_target_us;
  bool running, kind_from_runtime;
};

struct admit_req {
  struct admit_req *next, *prev;
  struct client *c;
  struct ctr_copy ctr;
  client_admit_fn fn;
  void *user;
  uint64_t deadline_ms; /* the caller's, absolute; 0: none */
  uint64_t retry_until; /* 0: not retrying */
  uint64_t busy_until;  /* the agent's backlog is full: give up then (0: not yet) */
  struct iob_timer *timer;
  bool finished;   /* fn has run */
  bool in_flight;  /* an Admit call with this as user is outstanding */
  bool reregister; /* the agent may have lost us: Register first */
};

/* A container admitted through us (or registered as running) and not
 * exited yet: told to the agent again (as running) whenever we connect
 * anew, since an agent that restarted knows nothing (its state is soft). */
struct known {
  struct known *next;
  struct ctr_copy ctr;
};

struct client {
  struct iob_loop *loop;
  char *path;
  bool fail_closed;
  struct ttrpc_client *tc;
  struct admit_req *admits;
  unsigned pending;
  struct known *known;
  struct iob_timer *watch;
  uint64_t watch_ms;      /* next watch interval: backs off while the agent stays away */
  uint64_t lost_ms;       /* when the connection was lost (0: not lost) */
  unsigned timeout_ms;    /* client_set_timeout */
  struct iob_timer *ping; /* armed while an Admit is in flight */
  bool ping_out;          /* a Ping is outstanding */
};

struct simple_call {
  client_done_fn done;
  void *user;
};

static void ctr_copy_free(struct ctr_copy *k) {
  free(k->id);
  free(k->ns);
  free(k->cgroup);
  free(k->bundle);
  free(k->declared_class);
  free(k->workload_key);
  free(k->kind);
  free(k->pod_name);
  free(k->pod_namespace);
  free(k->container_name);
}

static void ctr_copy_init(struct ctr_copy *k, const struct client_container *in) {
  memset(k, 0, sizeof(*k));
#define DUP(f) k->f = xstrdup(in->f ? in->f : "");
  DUP(id)
  DUP(ns)
  DUP(cgroup)
  DUP(bundle)
  DUP(declared_class)
  DUP(workload_key)
  DUP(kind)
  DUP(pod_name)
  DUP(pod_namespace)
  DUP(container_name)
#undef DUP
  k->pid = in->pid;
  k->max_hold_ms = in->max_hold_ms;
  k->lat_target_us = in->lat_target_us;
  k->running = in->running;
  k->kind_from_runtime = in->kind_from_runtime;
}

int client_new(struct iob_loop *loop, const char *socket_path, bool fail_closed,
               struct client **out, struct iob_error **err) {
  (void)err; /* cannot fail (out of memory aborts); kept for its callers */
  struct client *c = xcalloc(1, sizeof(*c));
  c->loop = loop;
  c->fail_closed = fail_closed;
  c->timeout_ms = CLIENT_TIMEOUT_MS;
  c->path = xstrdup(socket_path ? socket_path : AGENT_DEFAULT_SOCKET);
  *out = c;
  return 0;
}

static void reregister_known(struct client *c, struct ttrpc_client *tc);
static void on_lost(void *user);

/* The connection, (re)made on demand: the agent may have restarted since
 * the last call. */
static struct ttrpc_client *conn(struct client *c, struct iob_error **err) {
  if (c->tc && !ttrpc_client_closed(c->tc))
    return c->tc;
  if (c->tc) {
    ttrpc_client_free(c->tc); /* safe inside its own callbacks */
    c->tc = NULL;
  }
  struct ttrpc_client *tc = NULL;
  /* One non-blocking try: a full backlog must not stall the caller's loop
   * (the Admit path tries again from a timer, see busy_later). */
  if (ttrpc_client_connect_timeout(c->path, 0, &tc, err) < 0)
    return NULL;
  /* Only root's agent (or our own) hears what we run and decides when it
   * starts: anything else fails open, as an absent agent does. */
  cleanup_error struct iob_error *uerr = NULL;
  if (ttrpc_client_check_server_uid(tc, &uerr) < 0) {
    ttrpc_client_free(tc);
    iob_error(err, EPERM, "agent socket '%s': %s", c->path, uerr->msg);
    return NULL;
  }
  if (ttrpc_client_attach(tc, c->loop, err) < 0) {
    ttrpc_client_free(tc);
    return NULL;
  }
  c->tc = tc;
  ttrpc_client_on_close(tc, on_lost, c);
  c->lost_ms = 0;
  if (c->watch) {
    iob_timer_cancel(c->loop, c->watch);
    c->watch = NULL;
  }
  if (c->known)
    reregister_known(c, tc);
  return tc;
}

static void unlink_req(struct admit_req *r) {
  struct client *c = r->c;
  if (r->prev)
    r->prev->next = r->next;
  else if (c->admits == r)
    c->admits = r->next;
  if (r->next)
    r->next->prev = r->prev;
  r->next = r->prev = NULL;
}

static void req_free(struct admit_req *r) {
  if (r->timer)
    iob_timer_cancel(r->c->loop, r->timer);
  ctr_copy_free(&r->ctr);
  free(r);
}

/* The copy as an client_container (strings borrowed from k). */
static struct client_container ctr_view(const struct ctr_copy *k) {
  return (struct client_container){.id = k->id,
                                   .ns = k->ns,
                                   .pid = k->pid,
                                   .cgroup = k->cgroup,
                                   .bundle = k->bundle,
                                   .declared_class = k->declared_class,
                                   .workload_key = k->workload_key,
                                   .kind = k->kind,
                                   .pod_name = k->pod_name,
                                   .pod_namespace = k->pod_namespace,
                                   .container_name = k->container_name,
                                   .max_hold_ms = k->max_hold_ms,
                                   .lat_target_us = k->lat_target_us,
                                   .running = k->running,
                                   .kind_from_runtime = k->kind_from_runtime};
}

static void on_watch(struct iob_loop *loop, void *data);

static bool connected(const struct client *c) {
  return c->tc && !ttrpc_client_closed(c->tc);
}

/* Only while disconnected with running containers to tell: a connection
 * that is up reports its loss itself (on_lost), so an idle shim does not
 * wake up at all. */
static void arm_watch(struct client *c) {
  if (c->watch_ms == 0)
    c->watch_ms = CLIENT_WATCH_MS;
  if (c->watch == NULL && c->known && !connected(c))
    c->watch = iob_loop_timer(c->loop, c->watch_ms, on_watch, c);
}

/* The agent went away (it restarts, say).  Look for it every
 * RETRY_EVERY_MS for CLIENT_RETRY_MS, like a waiting Admit does, so
 * that running containers are back in a restarted agent before it plans
 * the pending ones (it waits AGENT_SETTLE_MS, agent/lock.h, after its
 * start for them); then back off from CLIENT_WATCH_MS to
 * CLIENT_WATCH_MAX_MS, since fail open means nothing waits on it. */
static void on_lost(void *user) {
  struct client *c = user;
  if (c->lost_ms == 0)
    c->lost_ms = iob_now_ms();
  if (c->known == NULL)
    return; /* the next call reconnects */
  iob_info("agent connection at '%s' lost; looking for it again", c->path);
  if (c->watch) {
    iob_timer_cancel(c->loop, c->watch);
    c->watch = NULL;
  }
  c->watch_ms = RETRY_EVERY_MS;
  arm_watch(c);
}

static void on_watch(struct iob_loop *loop, void *data) {
  (void)loop;
  struct client *c = data;
  c->watch = NULL;
  if (connected(c))
    return;
  cleanup_error struct iob_error *err = NULL;
  uint64_t lost = c->lost_ms;
  if (conn(c, &err) != NULL) {
    iob_info("agent at '%s' is back: told it about the running containers", c->path);
    c->watch_ms = CLIENT_WATCH_MS;
    return;
  }
  if (lost && iob_now_ms() - lost < CLIENT_RETRY_MS)
    c->watch_ms = RETRY_EVERY_MS;
  else if (c->watch_ms < CLIENT_WATCH_MS)
    c->watch_ms = CLIENT_WATCH_MS;
  else
    c->watch_ms = c->watch_ms * 2 > CLIENT_WATCH_MAX_MS ? CLIENT_WATCH_MAX_MS : c->watch_ms * 2;
  arm_watch(c);
}

static void remember(struct client *c, const struct ctr_copy *k) {
  for (struct known *e = c->known; e; e = e->next)
    if (strcmp(e->ctr.id, k->id) == 0 && strcmp(e->ctr.ns, k->ns) == 0)
      return;
  struct known *e = xcalloc(1, sizeof(*e));
  struct client_container view = ctr_view(k);
  ctr_copy_init(&e->ctr, &view);
  e->ctr.running = true;
  e->next = c->known;
  c->known = e;
  arm_watch(c);
}

static void forget(struct client *c, const char *ns, const char *id) {
  for (struct known **p = &c->known; *p; p = &(*p)->next) {
    struct known *e = *p;
    if (strcmp(e->ctr.id, id ? id : "") == 0 && strcmp(e->ctr.ns, ns ? ns : "") == 0) {
      *p = e->next;
      ctr_copy_free(&e->ctr);
      free(e);
      return;
    }
  }
}

/* Run the caller's callback once; the request lives on while an RPC still
 * points at it. */
static void finish(struct admit_req *r, const struct client_admission *a) {
  if (r->finished)
    return;
  r->finished = true;
  r->c->pending--;
  unlink_req(r);
  if (r->timer) {
    iob_timer_cancel(r->c->loop, r->timer);
    r->timer = NULL;
  }
  if (a->admitted)
    remember(r->c, &r->ctr);
  r->fn(r->user, a);
  if (!r->in_flight)
    req_free(r);
}

static void finish_without_agent(struct admit_req *r, const char *why) {
  bool open = !r->c->fail_closed;
  if (open)
    iob_warn("agent at '%s' not asked about '%s': %s; starting it now (fail open)", r->c->path,
             r->ctr.id, why);
  else
    iob_err("agent at '%s' not asked about '%s': %s; not starting it (fail closed)", r->c->path,
            r->ctr.id, why);
  char reason[1024];
  snprintf(reason, sizeof(reason), "agent at '%s' not asked: %s (%s)", r->c->path, why,
           open ? "fail open" : "fail closed");
  struct client_admission a = {
      .admitted = open, .fail_open = open, .no_agent = true, .reason = reason, .cls = ""};
  finish(r, &a);
}

static void try_admit(struct admit_req *r);

static void on_retry(struct iob_loop *loop, void *data) {
  (void)loop;
  struct admit_req *r = data;
  r->timer = NULL;
  try_admit(r);
}

/* The agent is away (restarting, say): try again for a while before
 * giving up and failing open. */
static void retry_later(struct admit_req *r, const char *why) {
  uint64_t now = iob_now_ms();
  if (r->retry_until == 0) {
    r->retry_until = now + CLIENT_RETRY_MS;
    iob_info("agent connection lost while '%s' waits (%s); reconnecting", r->ctr.id, why);
  }
  uint64_t limit = r->retry_until;
  if (r->deadline_ms && r->deadline_ms < limit)
    limit = r->deadline_ms;
  if (now >= limit) {
    finish_without_agent(r, why);
    return;
  }
  r->reregister = true;
  r->timer = iob_loop_timer(r->c->loop, RETRY_EVERY_MS, on_retry, r);
}

static void on_admit_done(void *user, ProtobufCMessage *resp, struct iob_error *err) {
  struct admit_req *r = user;
  r->in_flight = false;
  if (r->finished) {
    if (resp)
      protobuf_c_message_free_unpacked(resp, NULL);
    req_free(r);
    return;
  }
  if (err) {
    char why[512];
    snprintf(why, sizeof(why), "%s", err->msg);
    if (err->code == IOB_CODE_UNAVAILABLE || err->code == IOB_CODE_CANCELED)
      retry_later(r, why);
    else if (err->code == IOB_CODE_DEADLINE_EXCEEDED)
      finish_without_agent(r, "no answer before the caller's deadline");
    else if (err->code == IOB_CODE_ABORTED) {
      /* A newer Admit for the same container took its place. */
      struct client_admission a = {.admitted = false, .reason = why, .cls = ""};
      finish(r, &a);
    } else
      finish_without_agent(r, why);
    return;
  }
  const Iobatch__Agent__V1__AdmitResponse *m = (const void *)resp;
  struct client_admission a = {.admitted = m->admitted,
                               .reason = m->reason,
                               .held_ms = m->held_ms,
                               .cls = m->class_,
                               .io_weight = m->io_weight};
  if (a.admitted)
    iob_info("agent admitted '%s' after %llu ms: %s", r->ctr.id, (unsigned long long)a.held_ms,
             a.reason);
  else
    iob_info("agent did not admit '%s': %s", r->ctr.id, a.reason);
  finish(r, &a);
  protobuf_c_message_free_unpacked(resp, NULL);
}

static void fill_register(Iobatch__Agent__V1__RegisterRequest *m, const struct ctr_copy *k) {
  struct client_container c = ctr_view(k);
  client_register_request(&c, "shim", m);
}

static void ignore_done(void *user, ProtobufCMessage *resp, struct iob_error *err) {
  (void)user;
  (void)err;
  if (resp)
    protobuf_c_message_free_unpacked(resp, NULL);
}

static void reregister_known(struct client *c, struct ttrpc_client *tc) {
  for (struct known *e = c->known; e; e = e->next) {
    Iobatch__Agent__V1__RegisterRequest reg;
    fill_register(&reg, &e->ctr);
    (void)ttrpc_client_call_async(tc, AGENT_SERVICE, "Register", &reg.base,
                                  &iobatch__agent__v1__register_response__descriptor,
                                  (int)c->timeout_ms, NULL, 0, ignore_done, NULL, NULL);
  }
}

static bool admits_in_flight(const struct client *c) {
  for (const struct admit_req *r = c->admits; r; r = r->next)
    if (r->in_flight && !r->finished)
      return true;
  return false;
}

static unsigned ping_every(const struct client *c) {
  unsigned every = c->timeout_ms / 5;
  return every ? every : 1;
}

/* The agent took longer than timeout_ms to answer a Ping: its loop does
 * not run (SIGSTOP, a hang, a debugger).  Every Admit waiting on it
 * completes without it (fail open, or closed), and the connection is
 * dropped; the containers admitted that way are told to the agent when a
 * new connection is made (reregister_known), which the watch timer tries. */
static void client_silent(struct client *c) {
  char why[256];
  snprintf(why, sizeof(why),
           "no answer to a liveness ping within %u ms (the agent is stopped or hung)",
           c->timeout_ms);
  /* One line per container (finish_without_agent) names the socket. */
  for (struct admit_req *r = c->admits, *next; r; r = next) {
    next = r->next;
    if (r->in_flight && !r->finished)
      finish_without_agent(r, why);
  }
  if (c->tc) {
    ttrpc_client_free(c->tc); /* outstanding calls complete with CANCELED */
    c->tc = NULL;
  }
  c->lost_ms = iob_now_ms();
  arm_watch(c);
}

static void on_ping_done(void *user, ProtobufCMessage *resp, struct iob_error *err) {
  struct client *c = user;
  if (resp)
    protobuf_c_message_free_unpacked(resp, NULL);
  c->ping_out = false;
  /* Any answer, an error status included (UNIMPLEMENTED from an older
   * agent), shows a running loop.  A lost connection is the Admit's to
   * handle. */
  if (err && err->code == IOB_CODE_DEADLINE_EXCEEDED)
    client_silent(c);
}

static void arm_ping(struct client *c);

static void on_ping_timer(struct iob_loop *loop, void *data) {
  (void)loop;
  struct client *c = data;
  c->ping = NULL;
  if (!connected(c) || !admits_in_flight(c))
    return;
  if (!c->ping_out) {
    /* Its own timeout is what is left of timeout_ms after the interval, so
     * silence is noticed within timeout_ms of its start. */
    unsigned t = c->timeout_ms > ping_every(c) ? c->timeout_ms - ping_every(c) : 1;
    cleanup_error struct iob_error *err = NULL;
    if (ttrpc_client_call_async(c->tc, AGENT_SERVICE, "Ping", NULL,
                                &google__protobuf__empty__descriptor, (int)t, NULL, 0, on_ping_done,
                                c, &err) == 0)
      c->ping_out = true;
  }
  arm_ping(c);
}

static void arm_ping(struct client *c) {
  if (c->ping == NULL)
    c->ping = iob_loop_timer(c->loop, ping_every(c), on_ping_timer, c);
}

/* The agent's listen backlog is full: try again until timeout_ms after the
 * first refusal (or the caller's deadline), then go on without it. */
static void busy_later(struct admit_req *r, const char *why) {
  uint64_t now = iob_now_ms();
  if (r->busy_until == 0)
    r->busy_until = now + r->c->timeout_ms;
  uint64_t limit = r->busy_until;
  if (r->deadline_ms && r->deadline_ms < limit)
    limit = r->deadline_ms;
  if (now >= limit) {
    char msg[512];
    iob_debug("last connect to the agent: %s", why);
    snprintf(msg, sizeof(msg),
             "its listen backlog stayed full for %u ms (the agent is stopped, hung or "
             "overloaded)",
             r->c->timeout_ms);
    finish_without_agent(r, msg);
    return;
  }
  r->timer = iob_loop_timer(r->c->loop, RETRY_EVERY_MS, on_retry, r);
}

static void try_admit(struct admit_req *r) {
  cleanup_error struct iob_error *err = NULL;
  struct ttrpc_client *tc = conn(r->c, &err);
  if (tc == NULL) {
    if (err->errno_ == EAGAIN)
      busy_later(r, err->msg);
    else if (r->retry_until)
      retry_later(r, err->msg);
    else
      finish_without_agent(r, err->msg);
    return;
  }
  if (r->reregister) {
    Iobatch__Agent__V1__RegisterRequest reg;
    fill_register(&reg, &r->ctr);
    /* Same connection, so the agent handles it before the Admit below;
     * its failure shows up as the Admit's. */
    (void)ttrpc_client_call_async(tc, AGENT_SERVICE, "Register", &reg.base,
                                  &iobatch__agent__v1__register_response__descriptor,
                                  (int)r->c->timeout_ms, NULL, 0, ignore_done, NULL, NULL);
  }
  Iobatch__Agent__V1__AdmitRequest m = IOBATCH__AGENT__V1__ADMIT_REQUEST__INIT;
  m.id = r->ctr.id;
  m.namespace_ = r->ctr.ns;
  m.declared_class = r->ctr.declared_class;
  m.workload_key = r->ctr.workload_key;
  m.max_hold_ms = r->ctr.max_hold_ms;
  m.latency_target_us = r->ctr.lat_target_us;
  m.kind = r->ctr.kind;
  m.kind_source = client_kind_source(r->ctr.kind, r->ctr.kind_from_runtime);
  int timeout = 0;
  if (r->deadline_ms) {
    uint64_t now = iob_now_ms();
    timeout = r->deadline_ms > now ? (int)(r->deadline_ms - now) : 1;
  }
  if (ttrpc_client_call_async(tc, AGENT_SERVICE, "Admit", &m.base,
                              &iobatch__agent__v1__admit_response__descriptor, timeout, NULL, 0,
                              on_admit_done, r, &err) < 0) {
    finish_without_agent(r, err->msg);
    return;
  }
  r->in_flight = true;
  arm_ping(r->c);
}

/* client_admit must not call back before it returns; an immediate
 * failure is reported from the loop. */
static void on_first_try(struct iob_loop *loop, void *data) {
  (void)loop;
  struct admit_req *r = data;
  r->timer = NULL;
  try_admit(r);
}

int client_admit(struct client *c, const struct client_container *ctr, int timeout_ms,
                 client_admit_fn fn, void *user, struct iob_error **err) {
  if (ctr->id == NULL || *ctr->id == '\0')
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "container id is empty");
  if (fn == NULL)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "no admit callback");
  struct admit_req *r = xcalloc(1, sizeof(*r));
  ctr_copy_init(&r->ctr, ctr);
  r->c = c;
  r->fn = fn;
  r->user = user;
  if (timeout_ms > 0)
    r->deadline_ms = iob_now_ms() + (uint64_t)timeout_ms;
  r->timer = iob_loop_timer(c->loop, 0, on_first_try, r);
  r->next = c->admits;
  if (c->admits)
    c->admits->prev = r;
  c->admits = r;
  c->pending++;
  return 0;
}

static void on_simple_done(void *user, ProtobufCMessage *resp, struct iob_error *err) {
  struct simple_call *s = user;
  if (resp)
    protobuf_c_message_free_unpacked(resp, NULL);
  if (s->done)
    s->done(s->user, err);
  free(s);
}

/* METHOD on the connection, made now if there is none; ON_DONE gets USER
 * (the caller frees it when this fails). */
static int call(struct client *c, const char *method, const ProtobufCMessage *req,
                const ProtobufCMessageDescriptor *resp_desc, ttrpc_done_fn on_done, void *user,
                struct iob_error **err) {
  struct ttrpc_client *tc = conn(c, err);
  if (tc == NULL)
    return -1;
  return ttrpc_client_call_async(tc, AGENT_SERVICE, method, req, resp_desc, (int)c->timeout_ms,
                                 NULL, 0, on_done, user, err);
}

static int simple_call(struct client *c, const char *method, const ProtobufCMessage *req,
                       const ProtobufCMessageDescriptor *resp_desc, client_done_fn done, void *user,
                       struct iob_error **err) {
  struct simple_call *s = xcalloc(1, sizeof(*s));
  s->done = done;
  s->user = user;
  if (call(c, method, req, resp_desc, on_simple_done, s, err) < 0) {
    free(s);
    return -1;
  }
  return 0;
}

int client_register(struct client *c, const struct client_container *ctr, client_done_fn done,
                    void *user, struct iob_error **err) {
  struct ctr_copy k;
  ctr_copy_init(&k, ctr);
  Iobatch__Agent__V1__RegisterRequest m;
  fill_register(&m, &k);
  int r = simple_call(c, "Register", &m.base, &iobatch__agent__v1__register_response__descriptor,
                      done, user, err);
  /* A container started without an Admit (a pod sandbox) is told again
   * to an agent that restarted, as an admitted one is; and to one that
   * was not there at all once it comes. */
  if (ctr->running)
    remember(c, &k);
  ctr_copy_free(&k);
  return r;
}

struct birth_call {
  client_registered_fn fn;
  void *user;
};

static void on_birth_done(void *user, ProtobufCMessage *resp, struct iob_error *err) {
  struct birth_call *s = user;
  bool journalled = false;
  if (resp) {
    journalled = ((const Iobatch__Agent__V1__RegisterResponse *)resp)->hook_weight_journalled;
    protobuf_c_message_free_unpacked(resp, NULL);
  }
  s->fn(s->user, journalled, err);
  free(s);
}

int client_register_birth(struct client *c, const struct client_container *ctr,
                          const struct client_birth *b, client_registered_fn fn, void *user,
                          struct iob_error **err) {
  struct ctr_copy k;
  ctr_copy_init(&k, ctr);
  Iobatch__Agent__V1__RegisterRequest m;
  Iobatch__Agent__V1__IOSample base;
  fill_register(&m, &k);
  client_birth_request(b, &base, &m);
  struct birth_call *s = xcalloc(1, sizeof(*s));
  s->fn = fn;
  s->user = user;
  int r = call(c, "Register", &m.base, &iobatch__agent__v1__register_response__descriptor,
               on_birth_done, s, err);
  if (r < 0)
    free(s);
  ctr_copy_free(&k);
  return r;
}

int client_cancel(struct client *c, const char *ns, const char *id, client_done_fn done, void *user,
                  struct iob_error **err) {
  for (struct admit_req *r = c->admits; r; r = r->next) {
    if (strcmp(r->ctr.id, id ? id : "") == 0 && strcmp(r->ctr.ns, ns ? ns : "") == 0) {
      struct client_admission a = {.admitted = false, .reason = "cancelled", .cls = ""};
      finish(r, &a);
      break;
    }
  }
  forget(c, ns, id);
  Iobatch__Agent__V1__CancelRequest m = IOBATCH__AGENT__V1__CANCEL_REQUEST__INIT;
  m.id = (char *)(id ? id : "");
  m.namespace_ = (char *)(ns ? ns : "");
  return simple_call(c, "Cancel", &m.base, &google__protobuf__empty__descriptor, done, user, err);
}

int client_exited(struct client *c, const char *ns, const char *id, uint32_t exit_status,
                  client_done_fn done, void *user, struct iob_error **err) {
  forget(c, ns, id);
  Iobatch__Agent__V1__ExitedRequest m = IOBATCH__AGENT__V1__EXITED_REQUEST__INIT;
  m.id = (char *)(id ? id : "");
  m.namespace_ = (char *)(ns ? ns : "");
  m.exit_status = exit_status;
  return simple_call(c, "Exited", &m.base, &google__protobuf__empty__descriptor, done, user, err);
}

void client_set_timeout(struct client *c, unsigned timeout_ms) {
  c->timeout_ms = timeout_ms ? timeout_ms : CLIENT_TIMEOUT_MS;
}

unsigned client_pending(const struct client *c) {
  return c->pending;
}

void client_free(struct client *c) {
  if (c == NULL)
    return;
  while (c->admits) {
    struct client_admission a = {.admitted = false, .reason = "client closed", .cls = ""};
    finish(c->admits, &a);
  }
  /* Outstanding RPCs complete (CANCELED) here and free what they own. */
  if (c->tc)
    ttrpc_client_free(c->tc);
  if (c->watch)
    iob_timer_cancel(c->loop, c->watch);
  if (c->ping)
    iob_timer_cancel(c->loop, c->ping);
  while (c->known) {
    struct known *e = c->known;
    c->known = e->next;
    ctr_copy_free(&e->ctr);
    free(e);
  }
  free(c->path);
  free(c);
}
