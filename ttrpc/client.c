// SPDX-License-Identifier: Apache-2.0
/* ttrpc client: one connection, stream ids 1, 3, 5, ... (as the Go client),
 * blocking calls driven by poll() and async calls driven by the shared loop.
 * Both kinds can be outstanding at once: whichever path reads a Response
 * completes the call it belongs to. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/xalloc.h"
#include "google/rpc/status.pb-c.h"
#include "ttrpc.pb-c.h"
#include "ttrpc/frame.h"
#include "ttrpc/ttrpc.h"

#define READ_CHUNK 32768

struct pending {
  struct pending *prev, *next;
  struct ttrpc_client *c;
  uint32_t id;
  const ProtobufCMessageDescriptor *desc;
  /* async */
  ttrpc_done_fn done;
  void *user;
  struct iob_timer *timer;
  /* blocking */
  bool blocking;
  bool finished;
  ProtobufCMessage *resp;
  struct iob_error *err;
};

struct ttrpc_client {
  int fd;
  uint32_t next_id;
  struct ttrpc_reader rd;
  struct ttrpc_outq outq;
  struct iob_loop *loop;
  uint32_t events;
  /* In the order sent: answers mostly come back in that order, so the
   * search from the head is short even with thousands in flight. */
  struct pending *pending, *pending_tail;
  int busy;                     /* > 0 while our code is on the stack (callbacks may free) */
  bool closed;                  /* the connection is gone; every call fails */
  bool freeing;                 /* ttrpc_client_free was called from a callback */
  void (*on_close)(void *user); /* the peer went away (not our free) */
  void *on_close_user;
  uint8_t rx[READ_CHUNK];
  size_t rx_pos, rx_len;
};

static void client_destroy(struct ttrpc_client *c);

static void pending_link(struct ttrpc_client *c, struct pending *p) {
  p->next = NULL;
  p->prev = c->pending_tail;
  if (c->pending_tail)
    c->pending_tail->next = p;
  else
    c->pending = p;
  c->pending_tail = p;
}

static void pending_unlink(struct ttrpc_client *c, struct pending *p) {
  if (p->prev)
    p->prev->next = p->next;
  else
    c->pending = p->next;
  if (p->next)
    p->next->prev = p->prev;
  else
    c->pending_tail = p->prev;
  p->prev = p->next = NULL;
}

static struct pending *pending_find(struct ttrpc_client *c, uint32_t id) {
  for (struct pending *p = c->pending; p; p = p->next)
    if (p->id == id)
      return p;
  return NULL;
}

/* Deliver a result; takes resp and err. */
static void pending_finish(struct pending *p, ProtobufCMessage *resp, struct iob_error *err) {
  struct ttrpc_client *c = p->c;
  pending_unlink(c, p);
  if (p->timer && c->loop)
    iob_timer_cancel(c->loop, p->timer);
  p->timer = NULL;
  if (p->blocking) {
    p->resp = resp;
    p->err = err;
    p->finished = true;
    return;
  }
  p->done(p->user, resp, err);
  iob_error_release(&err);
  free(p);
}

static void pending_fail(struct pending *p, int code, const char *msg) {
  struct iob_error *err = NULL;
  iob_error_code(&err, code, "%s", msg);
  pending_finish(p, NULL, err);
}

static void client_update_events(struct ttrpc_client *c) {
  if (c->loop == NULL || c->closed)
    return;
  uint32_t want = EPOLLIN | (c->outq.head ? EPOLLOUT : 0);
  if (want != c->events && iob_loop_mod(c->loop, c->fd, want, NULL) == 0)
    c->events = want;
}

/* The connection is gone: fail every outstanding call. */
static void client_close(struct ttrpc_client *c, int code, const char *msg) {
  if (c->closed)
    return;
  c->closed = true;
  if (c->loop)
    iob_loop_del(c->loop, c->fd);
  close(c->fd);
  c->fd = -1;
  ttrpc_outq_clear(&c->outq);
  ttrpc_reader_reset(&c->rd);
  c->rx_pos = c->rx_len = 0;
  c->busy++;
  while (c->pending)
    pending_fail(c->pending, code, msg);
  if (c->on_close)
    c->on_close(c->on_close_user);
  c->busy--;
}

static void handle_response(struct pending *p, const uint8_t *data, size_t len) {
  struct iob_error *err = NULL;
  Ttrpc__Response *r = ttrpc__response__unpack(NULL, len, data);
  if (r == NULL) {
    iob_error_code(&err, IOB_CODE_INTERNAL, "cannot decode 'ttrpc.Response'");
    pending_finish(p, NULL, err);
    return;
  }
  /* A missing status counts as OK, as in the Go client. */
  if (r->status && r->status->code != IOB_CODE_OK) {
    iob_error_code(&err, r->status->code, "%s", r->status->message ? r->status->message : "");
    ttrpc__response__free_unpacked(r, NULL);
    pending_finish(p, NULL, err);
    return;
  }
  ProtobufCMessage *resp = NULL;
  if (p->desc) {
    resp = protobuf_c_message_unpack(p->desc, NULL, r->payload.len, r->payload.data);
    if (resp == NULL)
      iob_error_code(&err, IOB_CODE_INTERNAL, "cannot decode '%s' response", p->desc->name);
  }
  ttrpc__response__free_unpacked(r, NULL);
  pending_finish(p, resp, err);
}

static void client_frame(struct ttrpc_client *c, int kind, const struct ttrpc_frame *f) {
  struct pending *p = pending_find(c, f->h.stream_id);
  if (p == NULL)
    return; /* a late answer to a call that timed out */
  if (kind == TTRPC_FRAME_OVERSIZED) {
    pending_fail(p, IOB_CODE_RESOURCE_EXHAUSTED, "response exceeds maximum message size");
    return;
  }
  if (f->h.type != TTRPC_TYPE_RESPONSE)
    return;
  handle_response(p, f->payload, f->h.length);
}

/* Read once (if nothing is left from the last read) and handle every
 * complete frame.  The bytes live in the client, not on the stack: a done
 * callback may make a blocking call on this client, which must go on with
 * the bytes after the frame being handled, not with new ones. */
static void client_read(struct ttrpc_client *c) {
  if (c->rx_pos == c->rx_len) {
    ssize_t n = read(c->fd, c->rx, sizeof(c->rx));
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
      return;
    if (n <= 0) {
      client_close(c, IOB_CODE_UNAVAILABLE, "ttrpc: closed");
      return;
    }
    c->rx_len = (size_t)n;
    c->rx_pos = 0;
  }
  while (c->rx_pos < c->rx_len && !c->closed) {
    struct ttrpc_frame f;
    size_t used = 0;
    cleanup_error struct iob_error *err = NULL;
    int kind = ttrpc_reader_feed(&c->rd, c->rx + c->rx_pos, c->rx_len - c->rx_pos, &used, &f, &err);
    c->rx_pos += used;
    if (kind < 0) {
      client_close(c, err->code, err->msg);
      return;
    }
    if (kind != TTRPC_FRAME_NONE) {
      client_frame(c, kind, &f);
      free(f.payload);
    }
  }
}

static void client_flush(struct ttrpc_client *c) {
  cleanup_error struct iob_error *err = NULL;
  if (ttrpc_outq_flush(&c->outq, c->fd, &err) < 0)
    client_close(c, IOB_CODE_UNAVAILABLE, err->msg);
}

static void on_client(struct iob_loop *loop, int fd, uint32_t events, void *data) {
  (void)loop;
  (void)fd;
  struct ttrpc_client *c = data;
  c->busy++;
  if (events & EPOLLOUT)
    client_flush(c);
  if (!c->closed && (events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
    client_read(c);
  client_update_events(c);
  c->busy--;
  if (c->freeing && c->busy == 0)
    client_destroy(c);
}

static int client_wrap(int *fd, const char *address, struct ttrpc_client **out,
                       struct iob_error **err) {
  int fl = fcntl(*fd, F_GETFL);
  if (fl < 0 || fcntl(*fd, F_SETFL, fl | O_NONBLOCK) < 0)
    return iob_error(err, errno, "cannot make connection to '%s' non-blocking", address);
  struct ttrpc_client *c = xcalloc(1, sizeof(*c));
  c->fd = steal_fd(fd);
  c->next_id = 1;
  ttrpc_reader_init(&c->rd);
  *out = c;
  return 0;
}

int ttrpc_client_connect(const char *address, struct ttrpc_client **out, struct iob_error **err) {
  struct sockaddr_un sa;
  socklen_t len;
  if (ttrpc_parse_address(address, &sa, &len, err) < 0)
    return -1;
  cleanup_close int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return iob_error(err, errno, "cannot create socket");
  int r;
  do
    r = connect(fd, (const struct sockaddr *)&sa, len);
  while (r < 0 && errno == EINTR);
  if (r < 0)
    return iob_error(err, errno, "cannot connect to '%s'", address);
  return client_wrap(&fd, address, out, err);
}

/* A blocking connect to a unix socket whose listen backlog is full sleeps
 * until the listener accepts (unix_wait_for_peer in net/unix/af_unix.c),
 * which for a stopped or hung server is forever.  A non-blocking one fails
 * at once with EAGAIN instead (never EINPROGRESS for AF_UNIX), so waiting
 * is trying again, every few ms, until the time is up. */
int ttrpc_client_connect_timeout(const char *address, int timeout_ms, struct ttrpc_client **out,
                                 struct iob_error **err) {
  struct sockaddr_un sa;
  socklen_t len;
  if (ttrpc_parse_address(address, &sa, &len, err) < 0)
    return -1;
  cleanup_close int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return iob_error(err, errno, "cannot create socket");
  uint64_t deadline = iob_now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
  for (;;) {
    if (connect(fd, (const struct sockaddr *)&sa, len) == 0)
      break;
    if (errno == EINTR)
      continue;
    if (errno != EAGAIN)
      return iob_error(err, errno, "cannot connect to '%s'", address);
    uint64_t now = iob_now_ms();
    if (now >= deadline)
      return iob_error(err, EAGAIN,
                       "cannot connect to '%s' within %d ms: its listen backlog is full "
                       "(the server is stopped, hung or overloaded)",
                       address, timeout_ms > 0 ? timeout_ms : 0);
    uint64_t nap = deadline - now < 20 ? deadline - now : 20;
    poll(NULL, 0, (int)nap);
  }
  return client_wrap(&fd, address, out, err);
}

int ttrpc_client_check_server_uid(const struct ttrpc_client *c, struct iob_error **err) {
  struct ucred cr;
  socklen_t n = sizeof(cr);
  if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cr, &n) < 0)
    return iob_error(err, errno, "cannot read the server's credentials");
  uid_t me = geteuid();
  if (cr.uid != 0 && cr.uid != me)
    return iob_error_code(err, IOB_CODE_PERMISSION_DENIED,
                          "the server listening there is not root's nor ours (uid %u, pid %d; we "
                          "are uid %u): not talking to it",
                          (unsigned)cr.uid, (int)cr.pid, (unsigned)me);
  return 0;
}

static void client_destroy(struct ttrpc_client *c) {
  client_close(c, IOB_CODE_CANCELED, "ttrpc: client closed");
  free(c);
}

void ttrpc_client_free(struct ttrpc_client *c) {
  if (c == NULL)
    return;
  c->on_close = NULL;
  if (c->busy > 0) {
    /* Called from a done callback: finish once we are off the stack. */
    c->freeing = true;
    client_close(c, IOB_CODE_CANCELED, "ttrpc: client closed");
    return;
  }
  client_destroy(c);
}

bool ttrpc_client_closed(const struct ttrpc_client *c) {
  return c->closed;
}

void ttrpc_client_on_close(struct ttrpc_client *c, void (*fn)(void *user), void *user) {
  c->on_close = fn;
  c->on_close_user = user;
}

int ttrpc_client_attach(struct ttrpc_client *c, struct iob_loop *loop, struct iob_error **err) {
  if (c->loop)
    return iob_error(err, EBUSY, "ttrpc client already attached");
  if (c->closed)
    return iob_error_code(err, IOB_CODE_UNAVAILABLE, "ttrpc: closed");
  uint32_t ev = EPOLLIN | (c->outq.head ? EPOLLOUT : 0);
  if (iob_loop_add(loop, c->fd, ev, on_client, c, err) < 0)
    return -1;
  c->loop = loop;
  c->events = ev;
  return 0;
}

static int queue_request(struct ttrpc_client *c, const char *service, const char *method,
                         const ProtobufCMessage *req, int timeout_ms, const struct ttrpc_kv *md,
                         size_t n_md, uint32_t *id, struct iob_error **err) {
  if (c->closed)
    return iob_error_code(err, IOB_CODE_UNAVAILABLE, "ttrpc: closed");
  /* Ids must increase (the server rejects re-use); stop before wrapping. */
  if (c->next_id >= UINT32_MAX - 2)
    return iob_error_code(err, IOB_CODE_RESOURCE_EXHAUSTED, "ttrpc: stream ids exhausted");
  Ttrpc__Request r = TTRPC__REQUEST__INIT;
  r.service = (char *)service;
  r.method = (char *)method;
  if (timeout_ms > 0)
    r.timeout_nano = (int64_t)timeout_ms * 1000000;
  cleanup_free uint8_t *payload = NULL;
  if (req) {
    size_t n = protobuf_c_message_get_packed_size(req);
    if (n > TTRPC_MAX_PAYLOAD)
      return iob_error_code(err, IOB_CODE_RESOURCE_EXHAUSTED,
                            "request '%s/%s' exceeds maximum message size", service, method);
    payload = xmalloc(n);
    protobuf_c_message_pack(req, payload);
    r.payload.data = payload;
    r.payload.len = n;
  }
  cleanup_free Ttrpc__KeyValue *kvs = NULL;
  cleanup_free Ttrpc__KeyValue **kvp = NULL;
  if (n_md > 0) {
    kvs = xcalloc(n_md, sizeof(*kvs));
    kvp = xcalloc(n_md, sizeof(*kvp));
    for (size_t i = 0; i < n_md; i++) {
      Ttrpc__KeyValue kv = TTRPC__KEY_VALUE__INIT;
      kv.key = (char *)md[i].key;
      kv.value = (char *)md[i].value;
      kvs[i] = kv;
      kvp[i] = &kvs[i];
    }
    r.n_metadata = n_md;
    r.metadata = kvp;
  }
  struct ttrpc_outbuf *b = NULL;
  if (ttrpc_outbuf_new(c->next_id, TTRPC_TYPE_REQUEST, 0, &r.base, &b, err) < 0)
    return -1;
  ttrpc_outq_push(&c->outq, b);
  *id = c->next_id;
  c->next_id += 2;
  return 0;
}

int ttrpc_client_call(struct ttrpc_client *c, const char *service, const char *method,
                      const ProtobufCMessage *req, const ProtobufCMessageDescriptor *resp_desc,
                      ProtobufCMessage **resp, int timeout_ms, const struct ttrpc_kv *md,
                      size_t n_md, struct iob_error **err) {
  struct pending p = {.c = c, .desc = resp_desc, .blocking = true};
  if (resp)
    *resp = NULL;
  if (queue_request(c, service, method, req, timeout_ms, md, n_md, &p.id, err) < 0)
    return -1;
  pending_link(c, &p);
  uint64_t deadline = timeout_ms > 0 ? iob_now_ms() + (uint64_t)timeout_ms : 0;
  c->busy++;
  while (!p.finished) {
    int wait = -1;
    if (deadline) {
      uint64_t now = iob_now_ms();
      if (now >= deadline) {
        pending_unlink(c, &p);
        iob_error_code(&p.err, IOB_CODE_DEADLINE_EXCEEDED,
                       "ttrpc call '%s/%s' timed out after %d ms", service, method, timeout_ms);
        break;
      }
      wait = (int)(deadline - now);
    }
    if (c->rx_pos < c->rx_len) {
      client_read(c); /* bytes already read (nested in a done callback) */
      continue;
    }
    struct pollfd pfd = {.fd = c->fd, .events = POLLIN | (c->outq.head ? POLLOUT : 0)};
    int n = poll(&pfd, 1, wait);
    if (n < 0 && errno != EINTR) {
      client_close(c, IOB_CODE_UNAVAILABLE, "ttrpc: poll failed");
      continue;
    }
    if (n <= 0)
      continue;
    if (pfd.revents & POLLOUT)
      client_flush(c);
    if (!c->closed && (pfd.revents & (POLLIN | POLLHUP | POLLERR)))
      client_read(c);
  }
  c->busy--;
  client_update_events(c);
  bool destroy = c->freeing && c->busy == 0;
  if (destroy)
    client_destroy(c);
  if (p.err) {
    if (err) {
      iob_error_release(err);
      *err = p.err;
    } else {
      iob_error_release(&p.err);
    }
    if (p.resp)
      protobuf_c_message_free_unpacked(p.resp, NULL);
    return -1;
  }
  if (resp)
    *resp = p.resp;
  else if (p.resp)
    protobuf_c_message_free_unpacked(p.resp, NULL);
  return 0;
}

static void on_async_timeout(struct iob_loop *loop, void *data) {
  (void)loop;
  struct pending *p = data;
  p->timer = NULL;
  struct ttrpc_client *c = p->c;
  c->busy++;
  pending_fail(p, IOB_CODE_DEADLINE_EXCEEDED, "ttrpc: call timed out");
  c->busy--;
  if (c->freeing && c->busy == 0)
    client_destroy(c);
}

int ttrpc_client_call_async(struct ttrpc_client *c, const char *service, const char *method,
                            const ProtobufCMessage *req,
                            const ProtobufCMessageDescriptor *resp_desc, int timeout_ms,
                            const struct ttrpc_kv *md, size_t n_md, ttrpc_done_fn done, void *user,
                            struct iob_error **err) {
  if (c->loop == NULL)
    return iob_error(err, EINVAL, "ttrpc client is not attached to a loop");
  struct pending *p = xcalloc(1, sizeof(*p));
  if (queue_request(c, service, method, req, timeout_ms, md, n_md, &p->id, err) < 0) {
    free(p);
    return -1;
  }
  p->c = c;
  p->desc = resp_desc;
  p->done = done;
  p->user = user;
  /* A failed timer allocation leaves the call without a local deadline;
   * the server still got timeout_nano. */
  if (timeout_ms > 0)
    p->timer = iob_loop_timer(c->loop, (uint64_t)timeout_ms, on_async_timeout, p);
  pending_link(c, p);
  /* Written from the loop (EPOLLOUT), never here: done must not run before
   * this function has returned. */
  client_update_events(c);
  return 0;
}
