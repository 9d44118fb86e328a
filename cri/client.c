// SPDX-License-Identifier: Apache-2.0
/* The HTTP/2 side of the CRI client: one connection, one stream at a time
 * (the calls are unary and made one after the other), nghttp2 driven
 * through its memory interface (mem_send / mem_recv) on a non-blocking
 * unix socket, so that every wait is a poll() bounded by the call's
 * deadline. */
#include <errno.h>
#include <fcntl.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/loop.h"
#include "common/xalloc.h"
#include "cri/cri.h"
#include "cri/grpc.h"

struct cri_client {
  int fd;
  char *endpoint; /* "unix:///path", for messages */
  unsigned timeout_ms;
  const char *api;
  nghttp2_session *s;
  bool broken; /* a call failed midway: the connection's state is unknown */
};

/* The stream of the call in progress. */
struct call {
  const uint8_t *req;
  size_t req_len, req_off;
  int32_t stream;
  struct cri_grpc_status st;
  uint8_t *body;
  size_t len, cap;
  bool too_big, closed;
  uint32_t close_error;
};

int cri_endpoint_path(const char *spec, char *path, size_t n) {
  if (strncmp(spec, "unix://", 7) == 0)
    spec += 7;
  size_t len = strlen(spec);
  if (spec[0] != '/' || len >= sizeof(((struct sockaddr_un *)0)->sun_path) || len >= n)
    return -1;
  memcpy(path, spec, len + 1);
  return 0;
}

static int on_header(nghttp2_session *s, const nghttp2_frame *f, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *user) {
  (void)s;
  (void)flags;
  struct call *k = user;
  if (k && f->hd.stream_id == k->stream)
    cri_grpc_status_header(&k->st, name, namelen, value, valuelen);
  return 0;
}

static int on_data(nghttp2_session *s, uint8_t flags, int32_t stream, const uint8_t *data,
                   size_t len, void *user) {
  (void)flags;
  struct call *k = user;
  if (k == NULL || stream != k->stream || k->too_big)
    return 0;
  /* Checked before anything is allocated: a peer that streams without
   * end is cut off at the limit. */
  if (len > CRI_RESPONSE_MAX - k->len) {
    k->too_big = true;
    nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, stream, NGHTTP2_CANCEL);
    return 0;
  }
  if (k->len + len > k->cap) {
    size_t cap = k->cap ? k->cap : 4096;
    while (cap < k->len + len)
      cap *= 2;
    k->body = xrealloc(k->body, cap);
    k->cap = cap;
  }
  memcpy(k->body + k->len, data, len);
  k->len += len;
  return 0;
}

static int on_close(nghttp2_session *s, int32_t stream, uint32_t error_code, void *user) {
  (void)s;
  struct call *k = user;
  if (k && stream == k->stream) {
    k->closed = true;
    k->close_error = error_code;
  }
  return 0;
}

static ssize_t read_req(nghttp2_session *s, int32_t stream, uint8_t *buf, size_t len,
                        uint32_t *flags, nghttp2_data_source *src, void *user) {
  (void)s;
  (void)stream;
  (void)src;
  struct call *k = user;
  size_t n = k->req_len - k->req_off;
  if (n > len)
    n = len;
  memcpy(buf, k->req + k->req_off, n);
  k->req_off += n;
  if (k->req_off == k->req_len)
    *flags |= NGHTTP2_DATA_FLAG_EOF;
  return (ssize_t)n;
}

static int fail(struct cri_client *c, struct iob_error **err, int code, const char *method,
                const char *fmt, const char *detail) {
  c->broken = true;
  return iob_error_code(err, code, "CRI '%s' %s.RuntimeService/%s: %s%s", c->endpoint, c->api,
                        method, fmt, detail ? detail : "");
}

static int remaining(uint64_t deadline) {
  uint64_t now = iob_now_ms();
  return now >= deadline ? 0 : (int)(deadline - now);
}

static int wait_fd(struct cri_client *c, short ev, uint64_t deadline) {
  struct pollfd p = {.fd = c->fd, .events = ev};
  for (;;) {
    int t = remaining(deadline);
    if (t == 0)
      return 0;
    int r = poll(&p, 1, t);
    if (r >= 0 || errno != EINTR)
      return r;
  }
}

/* Everything nghttp2 has to send, written before the deadline. */
static int flush(struct cri_client *c, const char *method, uint64_t deadline,
                 struct iob_error **err) {
  for (;;) {
    const uint8_t *p;
    ssize_t n = nghttp2_session_mem_send(c->s, &p);
    if (n < 0)
      return fail(c, err, IOB_CODE_INTERNAL, method, "HTTP/2: ", nghttp2_strerror((int)n));
    if (n == 0)
      return 0;
    while (n > 0) {
      ssize_t w = send(c->fd, p, (size_t)n, MSG_NOSIGNAL);
      if (w > 0) {
        p += w;
        n -= w;
        continue;
      }
      if (w < 0 && errno != EAGAIN && errno != EINTR)
        return fail(c, err, IOB_CODE_UNAVAILABLE, method, "cannot send: ", strerror(errno));
      int r = wait_fd(c, POLLOUT, deadline);
      if (r == 0)
        return fail(c, err, IOB_CODE_DEADLINE_EXCEEDED, method, "cannot send the request", NULL);
      if (r < 0)
        return fail(c, err, IOB_CODE_INTERNAL, method, "poll: ", strerror(errno));
    }
  }
}

static int receive(struct cri_client *c, const char *method, uint64_t deadline,
                   struct iob_error **err) {
  if (!nghttp2_session_want_read(c->s))
    return fail(c, err, IOB_CODE_UNAVAILABLE, method, "the connection is closing", NULL);
  int r = wait_fd(c, POLLIN, deadline);
  if (r < 0)
    return fail(c, err, IOB_CODE_INTERNAL, method, "poll: ", strerror(errno));
  if (r == 0) {
    char msg[64];
    snprintf(msg, sizeof(msg), "no answer within %u ms", c->timeout_ms);
    return fail(c, err, IOB_CODE_DEADLINE_EXCEEDED, method, msg, NULL);
  }
  uint8_t buf[16384];
  ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
  if (n == 0)
    return fail(c, err, IOB_CODE_UNAVAILABLE, method, "the server closed the connection", NULL);
  if (n < 0)
    return errno == EAGAIN || errno == EINTR
               ? 0
               : fail(c, err, IOB_CODE_UNAVAILABLE, method, "cannot receive: ", strerror(errno));
  ssize_t rv = nghttp2_session_mem_recv(c->s, buf, (size_t)n);
  if (rv < 0)
    return fail(c, err, IOB_CODE_INTERNAL, method, "HTTP/2: ", nghttp2_strerror((int)rv));
  return 0;
}

#define NV(n, v)                                                                                   \
  { (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), NGHTTP2_NV_FLAG_NONE }

static int submit(struct cri_client *c, struct call *k, const char *method,
                  struct iob_error **err) {
  char path[128], timeout[24];
  snprintf(path, sizeof(path), "/%s.RuntimeService/%s", c->api, method);
  snprintf(timeout, sizeof(timeout), "%um", c->timeout_ms);
  const nghttp2_nv hdrs[] = {
      NV(":method", "POST"),
      NV(":scheme", "http"),
      NV(":path", path),
      NV(":authority", "localhost"),
      NV("content-type", "application/grpc"),
      NV("te", "trailers"),
      NV("grpc-timeout", timeout),
      NV("user-agent", "iobatchd-cri"),
  };
  nghttp2_data_provider dp = {.read_callback = read_req};
  k->stream = nghttp2_submit_request(c->s, NULL, hdrs, sizeof(hdrs) / sizeof(hdrs[0]), &dp, k);
  if (k->stream < 0)
    return fail(c, err, IOB_CODE_INTERNAL, method, "HTTP/2: ", nghttp2_strerror(k->stream));
  return 0;
}

/* The stream ended: why, if not with a whole response. */
static int ended(struct cri_client *c, struct call *k, const char *method, struct iob_error **err) {
  char msg[80];
  if (k->too_big) {
    snprintf(msg, sizeof(msg), "response larger than %u bytes", CRI_RESPONSE_MAX);
    return fail(c, err, IOB_CODE_RESOURCE_EXHAUSTED, method, msg, NULL);
  }
  if (k->close_error != NGHTTP2_NO_ERROR && !k->st.have_status) {
    snprintf(msg, sizeof(msg), "the server reset the stream (HTTP/2 error %u)", k->close_error);
    return fail(c, err, IOB_CODE_UNAVAILABLE, method, msg, NULL);
  }
  return 0;
}

int cri_client_call(struct cri_client *c, const char *method, const ProtobufCMessage *req,
                    const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **out,
                    struct iob_error **err) {
  *out = NULL;
  if (c->broken)
    return iob_error_code(
        err, IOB_CODE_UNAVAILABLE,
        "CRI '%s' %s.RuntimeService/%s: an earlier call on this connection failed", c->endpoint,
        c->api, method);
  cleanup_free uint8_t *framed = NULL;
  struct call k = {0};
  cri_grpc_frame(req, &framed, &k.req_len);
  k.req = framed;
  uint64_t deadline = iob_now_ms() + c->timeout_ms;
  nghttp2_session_set_user_data(c->s, &k);
  int r = submit(c, &k, method, err);
  while (r == 0 && !k.closed) {
    r = flush(c, method, deadline, err);
    if (r == 0 && !k.closed)
      r = receive(c, method, deadline, err);
  }
  if (r == 0)
    r = flush(c, method, deadline, err); /* WINDOW_UPDATEs, SETTINGS acks */
  nghttp2_session_set_user_data(c->s, NULL);
  if (r == 0)
    r = ended(c, &k, method, err);
  if (r == 0) {
    char what[256];
    snprintf(what, sizeof(what), "CRI '%s' %s.RuntimeService/%s", c->endpoint, c->api, method);
    r = cri_grpc_response(what, &k.st, k.body, k.len, CRI_RESPONSE_MAX, resp_desc, out, err);
  }
  free(k.body);
  return r;
}

static int new_session(struct cri_client *c, struct iob_error **err) {
  nghttp2_session_callbacks *cb;
  if (nghttp2_session_callbacks_new(&cb) != 0)
    iob_oom();
  nghttp2_session_callbacks_set_on_header_callback(cb, on_header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, on_data);
  nghttp2_session_callbacks_set_on_stream_close_callback(cb, on_close);
  int r = nghttp2_session_client_new(&c->s, cb, NULL);
  nghttp2_session_callbacks_del(cb);
  if (r != 0)
    return iob_error_code(err, IOB_CODE_INTERNAL, "CRI '%s': nghttp2: %s", c->endpoint,
                          nghttp2_strerror(r));
  /* No push; a stream window large enough for a listing in a few round
   * trips. */
  const nghttp2_settings_entry s[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
                                      {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1u << 20}};
  r = nghttp2_submit_settings(c->s, NGHTTP2_FLAG_NONE, s, 2);
  if (r == 0)
    r = nghttp2_session_set_local_window_size(c->s, NGHTTP2_FLAG_NONE, 0, 4u << 20);
  if (r != 0)
    return iob_error_code(err, IOB_CODE_INTERNAL, "CRI '%s': nghttp2: %s", c->endpoint,
                          nghttp2_strerror(r));
  return 0;
}

int cri_client_open(const char *endpoint, unsigned timeout_ms, struct cri_client **out,
                    struct iob_error **err) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  if (cri_endpoint_path(endpoint, sa.sun_path, sizeof(sa.sun_path)) < 0)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "CRI endpoint '%s': expected unix:///PATH", endpoint);
  struct cri_client *c = xcalloc(1, sizeof(*c));
  c->endpoint = xasprintf("unix://%s", sa.sun_path);
  c->timeout_ms = timeout_ms ? timeout_ms : 1;
  c->api = "runtime.v1";
  c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (c->fd < 0) {
    int e = errno;
    cri_client_free(c);
    return iob_error(err, e, "CRI '%s': socket", endpoint);
  }
  /* A unix socket connects at once or not at all (EAGAIN: its backlog is
   * full, a server that does not accept). */
  if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
    int e = errno;
    int r = iob_error(err, e, "CRI '%s': cannot connect", c->endpoint);
    cri_client_free(c);
    return r;
  }
  if (new_session(c, err) < 0) {
    cri_client_free(c);
    return -1;
  }
  *out = c;
  return 0;
}

void cri_client_free(struct cri_client *c) {
  if (c == NULL)
    return;
  if (c->s)
    nghttp2_session_del(c->s);
  if (c->fd >= 0)
    close(c->fd);
  free(c->endpoint);
  free(c);
}

const char *cri_client_api(const struct cri_client *c) {
  return c->api;
}

int cri_client_version(struct cri_client *c, Runtime__V1__VersionResponse **out,
                       struct iob_error **err) {
  Runtime__V1__VersionRequest req = RUNTIME__V1__VERSION_REQUEST__INIT;
  req.version = (char *)"v1";
  ProtobufCMessage *m = NULL;
  struct iob_error *e1 = NULL;
  c->api = "runtime.v1";
  if (cri_client_call(c, "Version", &req.base, &runtime__v1__version_response__descriptor, &m,
                      &e1) == 0) {
    *out = (Runtime__V1__VersionResponse *)m;
    return 0;
  }
  if (e1->code != IOB_CODE_UNIMPLEMENTED) {
    if (err)
      *err = e1;
    else
      iob_error_release(&e1);
    return -1;
  }
  iob_error_release(&e1);
  c->api = "runtime.v1alpha2";
  req.version = (char *)"0.1.0";
  if (cri_client_call(c, "Version", &req.base, &runtime__v1__version_response__descriptor, &m,
                      err) < 0)
    return -1;
  *out = (Runtime__V1__VersionResponse *)m;
  return 0;
}
