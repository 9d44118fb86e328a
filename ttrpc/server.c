// SPDX-License-Identifier: Apache-2.0
/* ttrpc server on the shared epoll loop.  Every call is answered
 * asynchronously (a handler may keep a call for hours, as Wait does), so a
 * connection keeps a list of unanswered calls and a write queue; replies go
 * out in whatever order handlers produce them.  Protocol behaviour follows
 * containerd/ttrpc server.go and services.go. */
#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "google/rpc/status.pb-c.h"
#include "ttrpc.pb-c.h"
#include "ttrpc/frame.h"
#include "ttrpc/ttrpc.h"

/* Stop reading from a peer that does not read its replies once this much is
 * queued; reading resumes when the queue drains. */
#define OUTQ_HIGH_WATER (2u * TTRPC_MAX_PAYLOAD)
#define READ_CHUNK 65536
#define ACCEPT_RETRY_MS 100
/* Each unanswered call keeps its decoded request (up to 4 MiB); a peer that
 * opens more than this many at once gets ResourceExhausted instead of
 * growing our memory without bound.  containerd has a handful in flight. */
#define MAX_CALLS_PER_CONN 1024

struct ttrpc_method {
  struct ttrpc_method *next;
  char *service;
  char *method;
  const ProtobufCMessageDescriptor *desc;
  ttrpc_handler_fn fn;
  void *user;
};

struct ttrpc_listener {
  struct ttrpc_listener *next;
  struct ttrpc_server *s;
  int fd;
  char *path; /* set when we bound it, so that closing removes the file */
  struct iob_timer *retry;
};

struct ttrpc_conn {
  struct ttrpc_conn *prev, *next;
  struct ttrpc_server *s;
  int fd;
  int peer_pid;
  uint64_t serial; /* ttrpc_call_conn_id */
  struct ttrpc_reader rd;
  struct ttrpc_outq outq;
  uint32_t last_id;
  uint32_t events;
  struct ttrpc_call *calls;
  size_t n_calls;
  int busy;     /* > 0 while one of our callbacks is on the stack */
  bool reading; /* handlers run from inside conn_read */
  bool closed;
};

struct ttrpc_call {
  struct ttrpc_call *prev, *next; /* in conn->calls, or s->orphans */
  struct ttrpc_server *s;
  struct ttrpc_conn *conn; /* NULL once the connection has closed */
  uint32_t id;
  int peer_pid;
  uint64_t conn_serial;
  Ttrpc__Request *req;
  ProtobufCMessage *msg;
  uint64_t deadline_ms;
  ttrpc_cancel_fn cancel;
  void *cancel_data;
};

struct ttrpc_server {
  struct iob_loop *loop;
  struct ttrpc_method *methods;
  struct ttrpc_listener *listeners;
  struct ttrpc_conn *conns;
  size_t n_conns;
  uint64_t last_serial;       /* of the newest connection; never reused */
  struct ttrpc_call *orphans; /* unanswered calls of closed connections */
  int extra_uid;
  int extra_gid;
};

static void conn_close(struct ttrpc_conn *c);

/* ---- call lists ---- */

static struct ttrpc_call **call_list(struct ttrpc_call *call) {
  return call->conn ? &call->conn->calls : &call->s->orphans;
}

static void call_link(struct ttrpc_call **head, struct ttrpc_call *call) {
  call->prev = NULL;
  call->next = *head;
  if (*head)
    (*head)->prev = call;
  *head = call;
}

static void call_unlink(struct ttrpc_call **head, struct ttrpc_call *call) {
  if (call->prev)
    call->prev->next = call->next;
  else
    *head = call->next;
  if (call->next)
    call->next->prev = call->prev;
  call->prev = call->next = NULL;
}

/* Off its list (the connection's, or the orphans). */
static void call_detach(struct ttrpc_call *call) {
  if (call->conn)
    call->conn->n_calls--;
  call_unlink(call_list(call), call);
}

static void call_destroy(struct ttrpc_call *call) {
  if (call->msg)
    protobuf_c_message_free_unpacked(call->msg, NULL);
  protobuf_c_message_free_unpacked(&call->req->base, NULL);
  free(call);
}

static void call_free(struct ttrpc_call *call) {
  call_detach(call);
  call_destroy(call);
}

/* ---- writing ---- */

static void conn_update_events(struct ttrpc_conn *c) {
  if (c->closed)
    return;
  uint32_t want = 0;
  if (c->outq.bytes < OUTQ_HIGH_WATER)
    want |= EPOLLIN;
  if (c->outq.head)
    want |= EPOLLOUT;
  if (want == c->events)
    return;
  cleanup_error struct iob_error *err = NULL;
  if (iob_loop_mod(c->s->loop, c->fd, want, &err) < 0) {
    iob_warn("ttrpc: %s", err->msg);
    conn_close(c);
    return;
  }
  c->events = want;
}

static void conn_flush(struct ttrpc_conn *c) {
  cleanup_error struct iob_error *err = NULL;
  if (ttrpc_outq_flush(&c->outq, c->fd, &err) < 0) {
    iob_debug("ttrpc: %s", err->msg);
    conn_close(c);
    return;
  }
  conn_update_events(c);
}

static void conn_send(struct ttrpc_conn *c, struct ttrpc_outbuf *b) {
  if (c->closed) {
    free(b);
    return;
  }
  bool was_empty = c->outq.head == NULL;
  ttrpc_outq_push(&c->outq, b);
  /* Write at once when nothing is queued; otherwise EPOLLOUT is already
   * armed and order is kept by the queue. */
  if (was_empty)
    conn_flush(c);
}

/* Queue a Response on stream id.  code 0 still carries a status, as the Go
 * server always sends one. */
static void conn_respond(struct ttrpc_conn *c, uint32_t id, int code, const char *msg,
                         const ProtobufCMessage *resp) {
  Google__Rpc__Status st = GOOGLE__RPC__STATUS__INIT;
  Ttrpc__Response r = TTRPC__RESPONSE__INIT;
  cleanup_free uint8_t *payload = NULL;
  cleanup_error struct iob_error *err = NULL;
  st.code = code;
  st.message = (char *)(msg ? msg : "");
  r.status = &st;
  if (code == IOB_CODE_OK && resp) {
    size_t n = protobuf_c_message_get_packed_size(resp);
    if (n > TTRPC_MAX_PAYLOAD) {
      conn_respond(c, id, IOB_CODE_RESOURCE_EXHAUSTED, "response exceeds maximum message size",
                   NULL);
      return;
    }
    payload = xmalloc(n ? n : 1);
    protobuf_c_message_pack(resp, payload);
    r.payload.data = payload;
    r.payload.len = n;
  }
  struct ttrpc_outbuf *b = NULL;
  if (ttrpc_outbuf_new(id, TTRPC_TYPE_RESPONSE, 0, &r.base, &b, &err) < 0) {
    if (code != IOB_CODE_OK || resp == NULL) {
      iob_warn("ttrpc: cannot send response: %s", err->msg);
      conn_close(c);
      return;
    }
    conn_respond(c, id, err->code, err->msg, NULL);
    return;
  }
  conn_send(c, b);
}

__attribute__((format(printf, 4, 5))) static void conn_status(struct ttrpc_conn *c, uint32_t id,
                                                              int code, const char *fmt, ...) {
  cleanup_free char *msg = NULL;
  va_list ap;
  va_start(ap, fmt);
  if (vasprintf(&msg, fmt, ap) < 0)
    msg = NULL;
  va_end(ap);
  conn_respond(c, id, code, msg, NULL);
}

/* ---- calls ---- */

static void call_answer(struct ttrpc_call *call, int code, const char *msg,
                        const ProtobufCMessage *resp) {
  struct ttrpc_conn *c = call->conn;
  /* Off the lists first (a failed write closes the connection, which must
   * not cancel this call), freed last (resp may point into the request). */
  call_detach(call);
  if (c) {
    c->busy++;
    conn_respond(c, call->id, code, msg, resp);
    c->busy--;
    if (c->closed && c->busy == 0)
      free(c);
  }
  call_destroy(call);
}

void ttrpc_call_reply(struct ttrpc_call *call, const ProtobufCMessage *resp) {
  call_answer(call, IOB_CODE_OK, NULL, resp);
}

void ttrpc_call_fail(struct ttrpc_call *call, int code, const char *fmt, ...) {
  cleanup_free char *msg = NULL;
  va_list ap;
  va_start(ap, fmt);
  if (vasprintf(&msg, fmt, ap) < 0)
    msg = NULL;
  va_end(ap);
  /* A failure must never go out as OK: the client would decode an empty
   * payload as success. */
  if (code <= IOB_CODE_OK || code > IOB_CODE_UNAUTHENTICATED)
    code = IOB_CODE_UNKNOWN;
  call_answer(call, code, msg ? msg : "", NULL);
}

void ttrpc_call_fail_error(struct ttrpc_call *call, struct iob_error **err) {
  int code = IOB_CODE_UNKNOWN;
  const char *msg = "unknown error";
  if (err && *err) {
    code = (*err)->code;
    msg = (*err)->msg;
  }
  ttrpc_call_fail(call, code, "%s", msg);
  iob_error_release(err);
}

const char *ttrpc_call_service(const struct ttrpc_call *call) {
  return call->req->service;
}

const char *ttrpc_call_method(const struct ttrpc_call *call) {
  return call->req->method;
}

const char *ttrpc_call_metadata(const struct ttrpc_call *call, const char *key) {
  for (size_t i = 0; i < call->req->n_metadata; i++) {
    const Ttrpc__KeyValue *kv = call->req->metadata[i];
    if (kv->key && strcasecmp(kv->key, key) == 0)
      return kv->value;
  }
  return NULL;
}

uint64_t ttrpc_call_deadline_ms(const struct ttrpc_call *call) {
  return call->deadline_ms;
}

int ttrpc_call_peer_pid(const struct ttrpc_call *call) {
  return call->peer_pid;
}

uint64_t ttrpc_call_conn_id(const struct ttrpc_call *call) {
  return call->conn_serial;
}

bool ttrpc_server_conn_open(const struct ttrpc_server *s, uint64_t id) {
  for (const struct ttrpc_conn *c = s->conns; c; c = c->next) {
    if (c->serial != id)
      continue;
    /* A peer that has exited may not be read to its end yet (its EOF
     * waits in the same epoll batch as the next caller's request): the
     * socket says so already. */
    struct pollfd p = {.fd = c->fd, .events = POLLRDHUP};
    return !(poll(&p, 1, 0) == 1 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)));
  }
  return false;
}

bool ttrpc_call_connected(const struct ttrpc_call *call) {
  return call->conn != NULL;
}

void ttrpc_call_on_cancel(struct ttrpc_call *call, ttrpc_cancel_fn fn, void *data) {
  call->cancel = fn;
  call->cancel_data = data;
}

/* ---- dispatch ---- */

static const struct ttrpc_method *find_method(struct ttrpc_server *s, const char *service,
                                              const char *method, bool *service_known) {
  *service_known = false;
  for (const struct ttrpc_method *m = s->methods; m; m = m->next) {
    if (strcmp(m->service, service) != 0)
      continue;
    *service_known = true;
    if (strcmp(m->method, method) == 0)
      return m;
  }
  return NULL;
}

static void handle_request(struct ttrpc_conn *c, uint32_t id, const uint8_t *p, size_t len) {
  if (id <= c->last_id) {
    conn_status(c, id, IOB_CODE_INVALID_ARGUMENT, "StreamID cannot be re-used and must increment");
    return;
  }
  c->last_id = id;
  Ttrpc__Request *req = ttrpc__request__unpack(NULL, len, p);
  if (req == NULL) {
    conn_status(c, id, IOB_CODE_INVALID_ARGUMENT,
                "unmarshal request error: cannot decode 'ttrpc.Request'");
    return;
  }
  bool service_known;
  const struct ttrpc_method *m = find_method(c->s, req->service, req->method, &service_known);
  if (m == NULL) {
    /* Exactly the messages of containerd/ttrpc services.go. */
    if (service_known)
      conn_status(c, id, IOB_CODE_UNIMPLEMENTED, "method %s", req->method);
    else
      conn_status(c, id, IOB_CODE_UNIMPLEMENTED, "service %s", req->service);
    ttrpc__request__free_unpacked(req, NULL);
    return;
  }
  if (c->n_calls >= MAX_CALLS_PER_CONN) {
    conn_status(c, id, IOB_CODE_RESOURCE_EXHAUSTED, "too many calls in flight (%d)",
                MAX_CALLS_PER_CONN);
    ttrpc__request__free_unpacked(req, NULL);
    return;
  }
  ProtobufCMessage *msg = NULL;
  if (m->desc) {
    msg = protobuf_c_message_unpack(m->desc, NULL, req->payload.len, req->payload.data);
    if (msg == NULL) {
      conn_status(c, id, IOB_CODE_INTERNAL,
                  "ttrpc: error unmarshalling payload: cannot decode '%s'", m->desc->name);
      ttrpc__request__free_unpacked(req, NULL);
      return;
    }
  }
  struct ttrpc_call *call = xcalloc(1, sizeof(*call));
  call->s = c->s;
  call->conn = c;
  call->id = id;
  call->peer_pid = c->peer_pid;
  call->conn_serial = c->serial;
  call->req = req;
  call->msg = msg;
  if (req->timeout_nano > 0)
    call->deadline_ms = iob_now_ms() + ((uint64_t)req->timeout_nano + 999999) / 1000000;
  call_link(&c->calls, call);
  c->n_calls++;
  m->fn(call, msg, m->user);
}

static void handle_frame(struct ttrpc_conn *c, int kind, const struct ttrpc_frame *f) {
  uint32_t id = f->h.stream_id;
  if (kind == TTRPC_FRAME_OVERSIZED) {
    conn_status(c, id, IOB_CODE_RESOURCE_EXHAUSTED,
                "message length %u exceed maximum message size of %u", f->h.length,
                TTRPC_MAX_PAYLOAD);
    return;
  }
  if (id % 2 != 1) {
    conn_status(c, id, IOB_CODE_INVALID_ARGUMENT,
                "StreamID must be odd for client initiated streams");
    return;
  }
  switch (f->h.type) {
  case TTRPC_TYPE_REQUEST:
    handle_request(c, id, f->payload, f->h.length);
    break;
  case TTRPC_TYPE_DATA:
    /* Only unary methods are served, so no stream is ever open for data. */
    conn_status(c, id, IOB_CODE_INVALID_ARGUMENT, "StreamID is no longer active");
    break;
  default:
    /* Unknown types are ignored for forward compatibility (server.go). */
    break;
  }
}

static void conn_consume(struct ttrpc_conn *c, const uint8_t *data, size_t n) {
  size_t pos = 0;
  while (pos < n && !c->closed) {
    struct ttrpc_frame f;
    size_t used = 0;
    cleanup_error struct iob_error *err = NULL;
    int kind = ttrpc_reader_feed(&c->rd, data + pos, n - pos, &used, &f, &err);
    pos += used;
    if (kind < 0) {
      iob_warn("ttrpc: %s", err->msg);
      conn_close(c);
      return;
    }
    if (kind == TTRPC_FRAME_NONE)
      continue;
    handle_frame(c, kind, &f);
    free(f.payload);
  }
}

static void conn_read(struct ttrpc_conn *c) {
  uint8_t buf[READ_CHUNK];
  ssize_t n = read(c->fd, buf, sizeof(buf));
  if (n < 0) {
    if (errno == EAGAIN || errno == EINTR)
      return;
    iob_debug("ttrpc: read from connection: %s", strerror(errno));
    conn_close(c);
    return;
  }
  if (n == 0) {
    /* EOF, possibly in the middle of a frame: the client went away (Go
     * stops serving the connection too). */
    conn_close(c);
    return;
  }
  conn_consume(c, buf, (size_t)n);
}

static void on_conn(struct iob_loop *loop, int fd, uint32_t events, void *data) {
  (void)loop;
  (void)fd;
  struct ttrpc_conn *c = data;
  c->busy++;
  if (events & EPOLLOUT)
    conn_flush(c);
  /* A handler that runs the loop itself must not make us read again while
   * the bytes of the outer read are only half handled (the stream would
   * be reordered); level-triggered epoll reports the data again later. */
  if (!c->closed && !c->reading && (events & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
    c->reading = true;
    conn_read(c);
    c->reading = false;
  }
  if (!c->closed)
    conn_update_events(c);
  c->busy--;
  if (c->closed && c->busy == 0)
    free(c);
}

/* Close the socket and hand its unanswered calls to the orphan list; their
 * cancel callbacks run now (each at most once).  The struct itself is freed
 * when no callback of ours is using it any more. */
static void conn_close(struct ttrpc_conn *c) {
  if (c->closed)
    return;
  struct ttrpc_server *s = c->s;
  c->closed = true;
  iob_loop_del(s->loop, c->fd);
  close(c->fd);
  c->fd = -1;
  ttrpc_outq_clear(&c->outq);
  ttrpc_reader_reset(&c->rd);
  if (c->prev)
    c->prev->next = c->next;
  else
    s->conns = c->next;
  if (c->next)
    c->next->prev = c->prev;
  s->n_conns--;
  c->busy++;
  while (c->calls) {
    struct ttrpc_call *call = c->calls;
    call_unlink(&c->calls, call);
    c->n_calls--;
    call->conn = NULL;
    call_link(&s->orphans, call);
    ttrpc_cancel_fn fn = call->cancel;
    call->cancel = NULL;
    if (fn)
      fn(call, call->cancel_data); /* may answer (and free) the call */
  }
  c->busy--;
  if (c->busy == 0)
    free(c);
}

/* Both ids: a peer of our uid but another group (a setgid helper, say)
 * is not us either. */
static bool peer_allowed(struct ttrpc_server *s, const struct ucred *cr) {
  bool uid_ok = cr->uid == geteuid() || (s->extra_uid >= 0 && cr->uid == (uid_t)s->extra_uid);
  bool gid_ok = cr->gid == getegid() || (s->extra_gid >= 0 && cr->gid == (gid_t)s->extra_gid);
  return uid_ok && gid_ok;
}

/* Takes ownership of fd. */
static int conn_new(struct ttrpc_server *s, int fd, struct iob_error **err) {
  cleanup_close int cfd = fd;
  struct ucred cr;
  socklen_t crlen = sizeof(cr);
  if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) < 0)
    return iob_error(err, errno, "cannot read peer credentials of ttrpc connection");
  if (!peer_allowed(s, &cr))
    return iob_error_code(err, IOB_CODE_PERMISSION_DENIED,
                          "refusing ttrpc connection from uid %u gid %u (pid %d): not our uid "
                          "%u and gid %u",
                          (unsigned)cr.uid, (unsigned)cr.gid, (int)cr.pid, (unsigned)geteuid(),
                          (unsigned)getegid());
  int fl = fcntl(cfd, F_GETFL);
  if (fl < 0 || fcntl(cfd, F_SETFL, fl | O_NONBLOCK) < 0)
    return iob_error(err, errno, "cannot make ttrpc connection non-blocking");
  if (fcntl(cfd, F_SETFD, FD_CLOEXEC) < 0)
    return iob_error(err, errno, "cannot set close-on-exec on ttrpc connection");
  struct ttrpc_conn *c = xcalloc(1, sizeof(*c));
  c->s = s;
  c->fd = cfd;
  c->peer_pid = cr.pid;
  c->serial = ++s->last_serial;
  c->events = EPOLLIN;
  ttrpc_reader_init(&c->rd);
  if (iob_loop_add(s->loop, cfd, EPOLLIN, on_conn, c, err) < 0) {
    free(c);
    return -1;
  }
  steal_fd(&cfd);
  c->next = s->conns;
  if (s->conns)
    s->conns->prev = c;
  s->conns = c;
  s->n_conns++;
  return 0;
}

int ttrpc_server_add_conn(struct ttrpc_server *s, int fd, struct iob_error **err) {
  return conn_new(s, fd, err);
}

/* ---- listeners ---- */

static void on_listener(struct iob_loop *loop, int fd, uint32_t events, void *data);

static void accept_retry(struct iob_loop *loop, void *data) {
  struct ttrpc_listener *l = data;
  l->retry = NULL;
  cleanup_error struct iob_error *err = NULL;
  if (iob_loop_mod(loop, l->fd, EPOLLIN, &err) < 0)
    iob_warn("ttrpc: %s", err->msg);
}

static void on_listener(struct iob_loop *loop, int fd, uint32_t events, void *data) {
  (void)events;
  struct ttrpc_listener *l = data;
  /* Bounded, so that a flood of connections does not starve the others. */
  for (int i = 0; i < 64; i++) {
    int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (cfd < 0) {
      if (errno == EINTR || errno == ECONNABORTED)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        return;
      /* Out of fds (EMFILE...): the pending connection stays in the
       * backlog and level-triggered epoll would spin, so pause accepting
       * for a moment instead, as Go's accept loop backs off. */
      iob_warn("ttrpc: accept: %s", strerror(errno));
      if (l->retry == NULL && iob_loop_mod(loop, fd, 0, NULL) == 0)
        l->retry = iob_loop_timer(loop, ACCEPT_RETRY_MS, accept_retry, l);
      return;
    }
    cleanup_error struct iob_error *err = NULL;
    if (conn_new(l->s, cfd, &err) < 0)
      iob_warn("ttrpc: %s", err->msg);
  }
}

static int add_listener(struct ttrpc_server *s, int fd, const char *path, struct iob_error **err) {
  struct ttrpc_listener *l = xcalloc(1, sizeof(*l));
  if (path)
    l->path = xstrdup(path);
  l->s = s;
  l->fd = fd;
  if (iob_loop_add(s->loop, fd, EPOLLIN, on_listener, l, err) < 0) {
    free(l->path);
    free(l);
    return -1;
  }
  l->next = s->listeners;
  s->listeners = l;
  return 0;
}

int ttrpc_server_serve_fd(struct ttrpc_server *s, int fd, struct iob_error **err) {
  int acc = 0;
  socklen_t len = sizeof(acc);
  if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &len) < 0)
    return iob_error(err, errno, "cannot serve fd %d", fd);
  if (!acc)
    return iob_error(err, EINVAL, "cannot serve fd %d: not a listening socket", fd);
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
    return iob_error(err, errno, "cannot make fd %d non-blocking", fd);
  if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
    return iob_error(err, errno, "cannot set close-on-exec on fd %d", fd);
  return add_listener(s, fd, NULL, err);
}

/* A socket file left by a dead server refuses connections; a live one
 * accepts (or is busy: EAGAIN on a full backlog). */
static int socket_in_use(const struct sockaddr_un *sa, socklen_t len) {
  cleanup_close int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return 0;
  if (connect(fd, (const struct sockaddr *)sa, len) == 0)
    return 1;
  return errno == EAGAIN || errno == EINPROGRESS;
}

int ttrpc_server_listen(struct ttrpc_server *s, const char *path, struct iob_error **err) {
  struct sockaddr_un sa;
  socklen_t len;
  if (ttrpc_parse_address(path, &sa, &len, err) < 0)
    return -1;
  bool abstract = sa.sun_path[0] == '\0';
  if (!abstract) {
    struct stat st;
    if (lstat(sa.sun_path, &st) == 0) {
      if (!S_ISSOCK(st.st_mode))
        return iob_error(err, EEXIST, "cannot listen on '%s': not a socket", sa.sun_path);
      if (socket_in_use(&sa, len))
        return iob_error(err, EADDRINUSE, "cannot listen on '%s'", sa.sun_path);
      if (unlink(sa.sun_path) < 0 && errno != ENOENT)
        return iob_error(err, errno, "cannot remove stale socket '%s'", sa.sun_path);
    }
  }
  cleanup_close int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return iob_error(err, errno, "cannot create socket for '%s'", path);
  /* The socket must never be reachable with looser permissions, and no
   * chmod by path after bind (it would follow a symlink put there in
   * between).  unix_bind() (net/unix/af_unix.c) creates the node with the
   * socket inode's mode less the umask, so fchmod before bind plus a
   * umask of 0177 give 0600 from the start. */
  if (fchmod(fd, 0600) < 0)
    return iob_error(err, errno, "cannot set the mode of the socket for '%s'", path);
  mode_t old = umask(0177);
  int r = bind(fd, (const struct sockaddr *)&sa, len);
  int e = errno;
  umask(old);
  if (r < 0)
    return iob_error(err, e, "cannot bind '%s'", path);
  if (listen(fd, SOMAXCONN) < 0)
    return iob_error(err, errno, "cannot listen on '%s'", path);
  if (add_listener(s, fd, abstract ? NULL : sa.sun_path, err) < 0) {
    if (!abstract)
      unlink(sa.sun_path);
    return -1;
  }
  return steal_fd(&fd);
}

void ttrpc_server_close_listeners(struct ttrpc_server *s) {
  while (s->listeners) {
    struct ttrpc_listener *l = s->listeners;
    s->listeners = l->next;
    if (l->retry)
      iob_timer_cancel(s->loop, l->retry);
    iob_loop_del(s->loop, l->fd);
    close(l->fd);
    if (l->path)
      unlink(l->path);
    free(l->path);
    free(l);
  }
}

/* ---- server ---- */

int ttrpc_server_new(struct iob_loop *loop, struct ttrpc_server **out, struct iob_error **err) {
  (void)err; /* cannot fail (out of memory aborts); kept for its callers */
  struct ttrpc_server *s = xcalloc(1, sizeof(*s));
  s->loop = loop;
  s->extra_uid = -1;
  s->extra_gid = -1;
  *out = s;
  return 0;
}

void ttrpc_server_free(struct ttrpc_server *s) {
  if (s == NULL)
    return;
  ttrpc_server_close_listeners(s);
  while (s->conns)
    conn_close(s->conns);
  while (s->orphans)
    call_free(s->orphans);
  while (s->methods) {
    struct ttrpc_method *m = s->methods;
    s->methods = m->next;
    free(m->service);
    free(m->method);
    free(m);
  }
  free(s);
}

int ttrpc_server_register(struct ttrpc_server *s, const char *service, const char *method,
                          const ProtobufCMessageDescriptor *req_desc, ttrpc_handler_fn fn,
                          void *user, struct iob_error **err) {
  bool known;
  if (find_method(s, service, method, &known))
    return iob_error(err, EEXIST, "method '%s/%s' already registered", service, method);
  struct ttrpc_method *m = xcalloc(1, sizeof(*m));
  m->service = xstrdup(service);
  m->method = xstrdup(method);
  m->desc = req_desc;
  m->fn = fn;
  m->user = user;
  m->next = s->methods;
  s->methods = m;
  return 0;
}

void ttrpc_server_allow_uid(struct ttrpc_server *s, int uid) {
  s->extra_uid = uid;
}

void ttrpc_server_allow_gid(struct ttrpc_server *s, int gid) {
  s->extra_gid = gid;
}

size_t ttrpc_server_connections(const struct ttrpc_server *s) {
  return s->n_conns;
}
