// SPDX-License-Identifier: Apache-2.0
/* Server and client: raw protocol behaviour over a socketpair, our client
 * against our server (blocking with the server in a thread, async on one
 * loop), deferred and reordered replies, errors, peer credentials. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/cleanup.h"
#include "containerd/events/task.pb-c.h"
#include "google/rpc/status.pb-c.h"
#include "ttrpc.pb-c.h"
#include "ttrpc/frame.h"
#include "ttrpc/ttrpc.h"

#define SVC "iobatch.test.v1.Test"

/* ---- the test service ---- */

struct fixture {
  struct iob_loop *loop;
  struct ttrpc_server *srv;
  int fd; /* raw client end of a socketpair */
  struct ttrpc_reader rd;
  size_t chunk; /* read size of the raw peer: 1 byte by default (split reads) */
  uint8_t in[65536];
  size_t in_len, in_pos;
  struct ttrpc_call *deferred[8];
  int n_deferred;
  int cancels;
  uint64_t last_deadline;
  struct ttrpc_call *kept[1100]; /* Keep: no cancel callback */
  int n_kept;
  uint64_t last_conn; /* ttrpc_call_conn_id of the last Echo */
};

/* Echo: reply with the request, container_id replaced by the namespace
 * metadata when there is one. */
static void h_echo(struct ttrpc_call *call, const ProtobufCMessage *req, void *user) {
  struct fixture *fx = user;
  const Containerd__Events__TaskStart *in = (const Containerd__Events__TaskStart *)req;
  Containerd__Events__TaskStart out = CONTAINERD__EVENTS__TASK_START__INIT;
  const char *ns = ttrpc_call_metadata(call, "containerd-namespace-ttrpc");
  out.container_id = (char *)(ns ? ns : in->container_id);
  out.pid = in->pid;
  if (fx) {
    fx->last_deadline = ttrpc_call_deadline_ms(call);
    fx->last_conn = ttrpc_call_conn_id(call);
  }
  ttrpc_call_reply(call, &out.base);
}

static void h_fail(struct ttrpc_call *call, const ProtobufCMessage *req, void *user) {
  (void)req;
  (void)user;
  cleanup_error struct iob_error *err = NULL;
  iob_error_code(&err, IOB_CODE_NOT_FOUND, "container not created");
  ttrpc_call_fail_error(call, &err);
}

static void on_cancel(struct ttrpc_call *call, void *data) {
  struct fixture *fx = data;
  fx->cancels++;
  for (int i = 0; i < fx->n_deferred; i++) {
    if (fx->deferred[i] == call) {
      fx->deferred[i] = fx->deferred[--fx->n_deferred];
      break;
    }
  }
  assert_false(ttrpc_call_connected(call));
  /* Answering a call of a closed connection just frees it. */
  ttrpc_call_fail(call, IOB_CODE_CANCELED, "cancelled");
}

/* Defer: keep calls; when two are held, answer them newest first. */
static void h_defer(struct ttrpc_call *call, const ProtobufCMessage *req, void *user) {
  (void)req;
  struct fixture *fx = user;
  ttrpc_call_on_cancel(call, on_cancel, fx);
  fx->deferred[fx->n_deferred++] = call;
  if (fx->n_deferred < 2)
    return;
  while (fx->n_deferred > 0) {
    struct ttrpc_call *c = fx->deferred[--fx->n_deferred];
    Containerd__Events__TaskStart out = CONTAINERD__EVENTS__TASK_START__INIT;
    out.pid = (uint32_t)fx->n_deferred;
    ttrpc_call_reply(c, &out.base);
  }
}

/* Hold: never answered until the connection closes. */
static void h_hold(struct ttrpc_call *call, const ProtobufCMessage *req, void *user) {
  (void)req;
  struct fixture *fx = user;
  ttrpc_call_on_cancel(call, on_cancel, fx);
  fx->deferred[fx->n_deferred++] = call;
}

/* Keep: held without a cancel callback; outlives its connection. */
static void h_keep(struct ttrpc_call *call, const ProtobufCMessage *req, void *user) {
  (void)req;
  struct fixture *fx = user;
  fx->kept[fx->n_kept++] = call;
}

static void register_all(struct ttrpc_server *srv, struct fixture *fx) {
  const ProtobufCMessageDescriptor *d = &containerd__events__task_start__descriptor;
  assert_int_equal(ttrpc_server_register(srv, SVC, "Echo", d, h_echo, fx, NULL), 0);
  assert_int_equal(ttrpc_server_register(srv, SVC, "Fail", d, h_fail, fx, NULL), 0);
  assert_int_equal(ttrpc_server_register(srv, SVC, "Defer", d, h_defer, fx, NULL), 0);
  assert_int_equal(ttrpc_server_register(srv, SVC, "Hold", d, h_hold, fx, NULL), 0);
  assert_int_equal(ttrpc_server_register(srv, SVC, "Keep", NULL, h_keep, fx, NULL), 0);
  assert_int_equal(ttrpc_server_register(srv, SVC, "Echo", d, h_echo, fx, NULL), -1);
}

static int setup(void **state) {
  struct fixture *fx = calloc(1, sizeof(*fx));
  assert_int_equal(iob_loop_new(&fx->loop, NULL), 0);
  assert_int_equal(ttrpc_server_new(fx->loop, &fx->srv, NULL), 0);
  register_all(fx->srv, fx);
  int sv[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
  assert_int_equal(ttrpc_server_add_conn(fx->srv, sv[0], NULL), 0);
  fx->fd = sv[1];
  ttrpc_reader_init(&fx->rd);
  fx->chunk = 1;
  *state = fx;
  return 0;
}

static int teardown(void **state) {
  struct fixture *fx = *state;
  if (fx->fd >= 0)
    close(fx->fd);
  ttrpc_reader_reset(&fx->rd);
  ttrpc_server_free(fx->srv);
  iob_loop_free(fx->loop);
  free(fx);
  return 0;
}

/* ---- raw peer helpers ---- */

static void pump(struct fixture *fx, int ms) {
  assert_int_equal(iob_loop_run_once(fx->loop, ms, NULL), 0);
}

static void raw_write(struct fixture *fx, const void *data, size_t len) {
  const uint8_t *p = data;
  while (len > 0) {
    ssize_t n = write(fx->fd, p, len);
    if (n < 0) {
      assert_true(errno == EAGAIN);
      pump(fx, 10); /* let the server drain the socket */
      continue;
    }
    p += n;
    len -= (size_t)n;
  }
}

static void raw_frame(struct fixture *fx, uint32_t id, uint8_t type, const void *p, size_t n) {
  uint8_t h[TTRPC_HEADER_SIZE];
  struct ttrpc_header hd = {(uint32_t)n, id, type, 0};
  ttrpc_header_encode(&hd, h);
  raw_write(fx, h, sizeof(h));
  if (n)
    raw_write(fx, p, n);
}

static void raw_request(struct fixture *fx, uint32_t id, const char *svc, const char *method,
                        const ProtobufCMessage *payload) {
  Ttrpc__Request r = TTRPC__REQUEST__INIT;
  r.service = (char *)svc;
  r.method = (char *)method;
  uint8_t pbuf[256];
  if (payload) {
    assert_true(protobuf_c_message_get_packed_size(payload) <= sizeof(pbuf));
    r.payload.len = protobuf_c_message_pack(payload, pbuf);
    r.payload.data = pbuf;
  }
  struct ttrpc_outbuf *b = NULL;
  assert_int_equal(ttrpc_outbuf_new(id, TTRPC_TYPE_REQUEST, 0, &r.base, &b, NULL), 0);
  raw_write(fx, b->data, b->len);
  free(b);
}

/* Next Response from the server (running its loop meanwhile), or NULL on
 * EOF.  *id gets the stream id. */
static Ttrpc__Response *raw_response(struct fixture *fx, uint32_t *id) {
  uint64_t until = iob_now_ms() + 5000;
  for (;;) {
    if (fx->in_pos == fx->in_len) {
      ssize_t n = read(fx->fd, fx->in, fx->chunk);
      if (n == 0)
        return NULL;
      if (n < 0) {
        assert_true(errno == EAGAIN);
        assert_true(iob_now_ms() < until);
        pump(fx, 10);
        continue;
      }
      fx->in_len = (size_t)n;
      fx->in_pos = 0;
    }
    struct ttrpc_frame f;
    size_t used;
    int k =
        ttrpc_reader_feed(&fx->rd, fx->in + fx->in_pos, fx->in_len - fx->in_pos, &used, &f, NULL);
    fx->in_pos += used;
    if (k == TTRPC_FRAME_NONE)
      continue;
    assert_int_equal(k, TTRPC_FRAME_OK);
    assert_int_equal(f.h.type, TTRPC_TYPE_RESPONSE);
    assert_int_equal(f.h.flags, 0);
    *id = f.h.stream_id;
    Ttrpc__Response *r = ttrpc__response__unpack(NULL, f.h.length, f.payload);
    free(f.payload);
    assert_non_null(r);
    return r;
  }
}

static void expect_status(struct fixture *fx, uint32_t want_id, int code, const char *msg) {
  uint32_t id = 0;
  Ttrpc__Response *r = raw_response(fx, &id);
  assert_non_null(r);
  assert_int_equal(id, want_id);
  assert_non_null(r->status);
  assert_int_equal(r->status->code, code);
  if (msg)
    assert_string_equal(r->status->message, msg);
  ttrpc__response__free_unpacked(r, NULL);
}

static Containerd__Events__TaskStart *expect_ok(struct fixture *fx, uint32_t want_id) {
  uint32_t id = 0;
  Ttrpc__Response *r = raw_response(fx, &id);
  assert_non_null(r);
  assert_int_equal(id, want_id);
  assert_non_null(r->status); /* the Go server always sends one */
  assert_int_equal(r->status->code, 0);
  Containerd__Events__TaskStart *m =
      containerd__events__task_start__unpack(NULL, r->payload.len, r->payload.data);
  assert_non_null(m);
  ttrpc__response__free_unpacked(r, NULL);
  return m;
}

static void echo(struct fixture *fx, uint32_t id, uint32_t pid) {
  Containerd__Events__TaskStart m = CONTAINERD__EVENTS__TASK_START__INIT;
  m.container_id = "c1";
  m.pid = pid;
  raw_request(fx, id, SVC, "Echo", &m.base);
  Containerd__Events__TaskStart *got = expect_ok(fx, id);
  assert_int_equal(got->pid, pid);
  assert_string_equal(got->container_id, "c1");
  containerd__events__task_start__free_unpacked(got, NULL);
}

/* ---- raw protocol tests ---- */

static void test_echo_split_reads(void **state) {
  struct fixture *fx = *state;
  /* Request written one byte at a time, with the loop running between. */
  Containerd__Events__TaskStart m = CONTAINERD__EVENTS__TASK_START__INIT;
  m.container_id = "split";
  m.pid = 7;
  Ttrpc__Request r = TTRPC__REQUEST__INIT;
  r.service = SVC;
  r.method = "Echo";
  uint8_t pbuf[64];
  r.payload.len = protobuf_c_message_pack(&m.base, pbuf);
  r.payload.data = pbuf;
  struct ttrpc_outbuf *b = NULL;
  assert_int_equal(ttrpc_outbuf_new(1, TTRPC_TYPE_REQUEST, 0, &r.base, &b, NULL), 0);
  for (size_t i = 0; i < b->len; i++) {
    raw_write(fx, b->data + i, 1);
    pump(fx, 0);
  }
  free(b);
  Containerd__Events__TaskStart *got = expect_ok(fx, 1);
  assert_string_equal(got->container_id, "split");
  assert_int_equal(got->pid, 7);
  containerd__events__task_start__free_unpacked(got, NULL);
  echo(fx, 3, 8);
}

/* A connection's id names it while it is open, and a peer that has gone
 * closes it at once, before the loop has read the end of its stream: a
 * caller that exits and another that connects right after (a hook, then
 * its shim) must not find the first one still holding what it made. */
static void test_conn_id_open_until_peer_closes(void **state) {
  struct fixture *fx = *state;
  echo(fx, 1, 7);
  uint64_t id = fx->last_conn;
  assert_true(id != 0);
  assert_true(ttrpc_server_conn_open(fx->srv, id));
  assert_false(ttrpc_server_conn_open(fx->srv, id + 1));
  close(fx->fd);
  fx->fd = -1;
  assert_false(ttrpc_server_conn_open(fx->srv, id));
  pump(fx, 10);
  assert_false(ttrpc_server_conn_open(fx->srv, id));
}

static void test_deferred_replies_reverse_order(void **state) {
  struct fixture *fx = *state;
  raw_request(fx, 1, SVC, "Defer", NULL);
  raw_request(fx, 3, SVC, "Defer", NULL);
  /* Answered newest first. */
  Containerd__Events__TaskStart *a = expect_ok(fx, 3);
  Containerd__Events__TaskStart *b = expect_ok(fx, 1);
  assert_int_equal(a->pid, 1);
  assert_int_equal(b->pid, 0);
  containerd__events__task_start__free_unpacked(a, NULL);
  containerd__events__task_start__free_unpacked(b, NULL);
  /* A held call does not block others on the same connection. */
  raw_request(fx, 5, SVC, "Hold", NULL);
  echo(fx, 7, 70);
  echo(fx, 9, 90);
  assert_int_equal(fx->n_deferred, 1);
  assert_int_equal(fx->cancels, 0);
  close(fx->fd);
  fx->fd = -1;
  while (ttrpc_server_connections(fx->srv) > 0)
    pump(fx, 10);
  assert_int_equal(fx->cancels, 1);
  assert_int_equal(fx->n_deferred, 0);
}

static void test_unknown_service_and_method(void **state) {
  struct fixture *fx = *state;
  raw_request(fx, 1, "foo.Bar", "Echo", NULL);
  expect_status(fx, 1, IOB_CODE_UNIMPLEMENTED, "service foo.Bar");
  raw_request(fx, 3, SVC, "Nope", NULL);
  expect_status(fx, 3, IOB_CODE_UNIMPLEMENTED, "method Nope");
  echo(fx, 5, 5);
}

static void test_garbage(void **state) {
  struct fixture *fx = *state;
  /* A Request that does not decode. */
  const uint8_t junk[] = {0x0a, 0x7f, 'x'};
  raw_frame(fx, 1, TTRPC_TYPE_REQUEST, junk, sizeof(junk));
  expect_status(fx, 1, IOB_CODE_INVALID_ARGUMENT, NULL);
  /* A known method whose payload does not decode: 13. */
  Ttrpc__Request r = TTRPC__REQUEST__INIT;
  r.service = SVC;
  r.method = "Echo";
  r.payload.data = (uint8_t *)junk;
  r.payload.len = sizeof(junk);
  struct ttrpc_outbuf *b = NULL;
  assert_int_equal(ttrpc_outbuf_new(3, TTRPC_TYPE_REQUEST, 0, &r.base, &b, NULL), 0);
  raw_write(fx, b->data, b->len);
  free(b);
  expect_status(fx, 3, IOB_CODE_INTERNAL, NULL);
  echo(fx, 5, 5);
}

static void test_stream_id_rules(void **state) {
  struct fixture *fx = *state;
  raw_request(fx, 2, SVC, "Echo", NULL);
  expect_status(fx, 2, IOB_CODE_INVALID_ARGUMENT,
                "StreamID must be odd for client initiated streams");
  echo(fx, 5, 1);
  raw_request(fx, 5, SVC, "Echo", NULL);
  expect_status(fx, 5, IOB_CODE_INVALID_ARGUMENT, "StreamID cannot be re-used and must increment");
  raw_request(fx, 3, SVC, "Echo", NULL);
  expect_status(fx, 3, IOB_CODE_INVALID_ARGUMENT, "StreamID cannot be re-used and must increment");
  /* Data for a stream that is not open. */
  raw_frame(fx, 7, TTRPC_TYPE_DATA, "x", 1);
  expect_status(fx, 7, IOB_CODE_INVALID_ARGUMENT, "StreamID is no longer active");
  /* Unknown frame types are ignored: the next answer is for 9. */
  raw_frame(fx, 9, 0x7e, "zz", 2);
  raw_frame(fx, 11, TTRPC_TYPE_RESPONSE, NULL, 0);
  echo(fx, 13, 2);
}

static void test_oversize_frame(void **state) {
  struct fixture *fx = *state;
  uint32_t len = TTRPC_MAX_PAYLOAD + 100;
  struct ttrpc_header h = {len, 1, TTRPC_TYPE_REQUEST, 0};
  uint8_t hb[TTRPC_HEADER_SIZE];
  ttrpc_header_encode(&h, hb);
  raw_write(fx, hb, sizeof(hb));
  uint8_t *body = calloc(1, len);
  raw_write(fx, body, len);
  free(body);
  expect_status(fx, 1, IOB_CODE_RESOURCE_EXHAUSTED, NULL);
  /* The connection still works. */
  echo(fx, 3, 33);
  assert_int_equal(ttrpc_server_connections(fx->srv), 1);
}

static void test_truncated_header(void **state) {
  struct fixture *fx = *state;
  raw_write(fx, "\0\0\0", 3);
  pump(fx, 10);
  close(fx->fd);
  fx->fd = -1;
  while (ttrpc_server_connections(fx->srv) > 0)
    pump(fx, 10);
}

static void test_truncated_body(void **state) {
  struct fixture *fx = *state;
  struct ttrpc_header h = {1000, 1, TTRPC_TYPE_REQUEST, 0};
  uint8_t hb[TTRPC_HEADER_SIZE + 10];
  ttrpc_header_encode(&h, hb);
  raw_write(fx, hb, sizeof(hb));
  pump(fx, 10);
  close(fx->fd);
  fx->fd = -1;
  while (ttrpc_server_connections(fx->srv) > 0)
    pump(fx, 10);
}

static void test_metadata_and_deadline(void **state) {
  struct fixture *fx = *state;
  Containerd__Events__TaskStart m = CONTAINERD__EVENTS__TASK_START__INIT;
  m.container_id = "x";
  Ttrpc__Request r = TTRPC__REQUEST__INIT;
  r.service = SVC;
  r.method = "Echo";
  uint8_t pbuf[64];
  r.payload.len = protobuf_c_message_pack(&m.base, pbuf);
  r.payload.data = pbuf;
  r.timeout_nano = 2500000000LL;
  Ttrpc__KeyValue kv1 = TTRPC__KEY_VALUE__INIT, kv2 = TTRPC__KEY_VALUE__INIT;
  kv1.key = "Other";
  kv1.value = "o";
  kv2.key = "Containerd-Namespace-TTRPC";
  kv2.value = "ns1";
  Ttrpc__KeyValue *kvs[] = {&kv1, &kv2};
  r.metadata = kvs;
  r.n_metadata = 2;
  struct ttrpc_outbuf *b = NULL;
  assert_int_equal(ttrpc_outbuf_new(1, TTRPC_TYPE_REQUEST, 0, &r.base, &b, NULL), 0);
  uint64_t before = iob_now_ms();
  raw_write(fx, b->data, b->len);
  free(b);
  Containerd__Events__TaskStart *got = expect_ok(fx, 1);
  assert_string_equal(got->container_id, "ns1");
  containerd__events__task_start__free_unpacked(got, NULL);
  assert_true(fx->last_deadline >= before + 2500);
  assert_true(fx->last_deadline <= iob_now_ms() + 2500);
  echo(fx, 3, 1);
  assert_int_equal(fx->last_deadline, 0);
}

/* Replies bigger than the socket buffer to a peer that is not reading:
 * they queue (EPOLLOUT) and all arrive, in order, once it reads. */
static void test_write_queue(void **state) {
  struct fixture *fx = *state;
  size_t n = 512 * 1024;
  char *big = malloc(n + 1);
  memset(big, 'b', n);
  big[n] = '\0';
  Containerd__Events__TaskStart m = CONTAINERD__EVENTS__TASK_START__INIT;
  m.container_id = big;
  Ttrpc__Request r = TTRPC__REQUEST__INIT;
  r.service = SVC;
  r.method = "Echo";
  uint8_t *pbuf = malloc(n + 64);
  r.payload.len = protobuf_c_message_pack(&m.base, pbuf);
  r.payload.data = pbuf;
  const uint32_t count = 12;
  for (uint32_t i = 0; i < count; i++) {
    struct ttrpc_outbuf *b = NULL;
    assert_int_equal(ttrpc_outbuf_new(2 * i + 1, TTRPC_TYPE_REQUEST, 0, &r.base, &b, NULL), 0);
    raw_write(fx, b->data, b->len);
    free(b);
  }
  for (int i = 0; i < 20; i++)
    pump(fx, 1);
  fx->chunk = sizeof(fx->in);
  for (uint32_t i = 0; i < count; i++) {
    uint32_t id = 0;
    Ttrpc__Response *resp = raw_response(fx, &id);
    assert_non_null(resp);
    assert_int_equal(id, 2 * i + 1);
    assert_int_equal(resp->status->code, 0);
    assert_true(resp->payload.len > n);
    ttrpc__response__free_unpacked(resp, NULL);
  }
  free(pbuf);
  free(big);
}

/* A peer that sends and never reads: once 8 MiB of replies are queued the
 * server stops reading from it (its writes then stall), and everything
 * still arrives, in order, once it reads. */
static void test_backpressure(void **state) {
  struct fixture *fx = *state;
  size_t n = 512 * 1024;
  char *big = malloc(n + 1);
  memset(big, 'p', n);
  big[n] = '\0';
  Containerd__Events__TaskStart m = CONTAINERD__EVENTS__TASK_START__INIT;
  m.container_id = big;
  Ttrpc__Request r = TTRPC__REQUEST__INIT;
  r.service = SVC;
  r.method = "Echo";
  uint8_t *pbuf = malloc(n + 64);
  r.payload.len = protobuf_c_message_pack(&m.base, pbuf);
  r.payload.data = pbuf;
  const uint32_t count = 40;
  uint32_t sent = 0, received = 0;
  int stalls = 0;
  fx->chunk = sizeof(fx->in);
  struct ttrpc_outbuf *b = NULL;
  while (received < count) {
    if (b == NULL && sent < count)
      assert_int_equal(ttrpc_outbuf_new(2 * sent + 1, TTRPC_TYPE_REQUEST, 0, &r.base, &b, NULL), 0);
    int idle = 0;
    while (b && idle < 50) {
      ssize_t k = write(fx->fd, b->data + b->off, b->len - b->off);
      if (k > 0) {
        idle = 0;
        b->off += (size_t)k;
        if (b->off == b->len) {
          free(b);
          b = NULL;
          sent++;
        }
      } else {
        idle++;
        pump(fx, 0);
      }
    }
    if (b == NULL && sent < count)
      continue;
    /* Stalled (or all sent): the server is not reading; drain a reply. */
    stalls += b != NULL;
    uint32_t id = 0;
    Ttrpc__Response *resp = raw_response(fx, &id);
    assert_non_null(resp);
    assert_int_equal(id, 2 * received + 1);
    assert_int_equal(resp->status->code, 0);
    ttrpc__response__free_unpacked(resp, NULL);
    received++;
  }
  assert_true(stalls > 0);
  printf("# backpressure: %d stalls while sending %u x 512 KiB\n", stalls, count);
  free(pbuf);
  free(big);
}

static void test_call_outlives_connection(void **state) {
  struct fixture *fx = *state;
  Ttrpc__Request r = TTRPC__REQUEST__INIT;
  r.service = SVC;
  r.method = "Keep";
  Ttrpc__KeyValue kv = TTRPC__KEY_VALUE__INIT;
  kv.key = "k";
  kv.value = "v";
  Ttrpc__KeyValue *kvs[] = {&kv};
  r.metadata = kvs;
  r.n_metadata = 1;
  for (uint32_t id = 1; id <= 3; id += 2) {
    struct ttrpc_outbuf *b = NULL;
    assert_int_equal(ttrpc_outbuf_new(id, TTRPC_TYPE_REQUEST, 0, &r.base, &b, NULL), 0);
    raw_write(fx, b->data, b->len);
    free(b);
  }
  while (fx->n_kept < 2)
    pump(fx, 10);
  assert_true(ttrpc_call_connected(fx->kept[0]));
  assert_int_equal(ttrpc_call_peer_pid(fx->kept[0]), getpid());
  close(fx->fd);
  fx->fd = -1;
  while (ttrpc_server_connections(fx->srv) > 0)
    pump(fx, 10);
  /* Still valid after the close; answering frees it. */
  struct ttrpc_call *c = fx->kept[0];
  assert_false(ttrpc_call_connected(c));
  assert_string_equal(ttrpc_call_service(c), SVC);
  assert_string_equal(ttrpc_call_method(c), "Keep");
  assert_string_equal(ttrpc_call_metadata(c, "K"), "v");
  assert_null(ttrpc_call_metadata(c, "x"));
  ttrpc_call_reply(c, NULL);
  /* kept[1] is left unanswered: ttrpc_server_free (teardown) frees it. */
}

static void test_too_many_calls(void **state) {
  struct fixture *fx = *state;
  uint32_t id = 1;
  for (int i = 0; i < 1024; i++, id += 2)
    raw_request(fx, id, SVC, "Keep", NULL);
  raw_request(fx, id, SVC, "Keep", NULL);
  expect_status(fx, id, IOB_CODE_RESOURCE_EXHAUSTED, "too many calls in flight (1024)");
  assert_int_equal(fx->n_kept, 1024);
  /* Answering one makes room again. */
  ttrpc_call_reply(fx->kept[--fx->n_kept], NULL);
  uint32_t got;
  Ttrpc__Response *resp = raw_response(fx, &got);
  assert_int_equal(got, 2 * 1023 + 1);
  ttrpc__response__free_unpacked(resp, NULL);
  echo(fx, id + 2, 1);
  while (fx->n_kept > 0)
    ttrpc_call_fail(fx->kept[--fx->n_kept], IOB_CODE_ABORTED, "done");
}

static void on_echo(void *user, ProtobufCMessage *resp, struct iob_error *err) {
  *(int *)user = err ? 2 : 1;
  if (resp)
    protobuf_c_message_free_unpacked(resp, NULL);
}

static void on_count(void *user, ProtobufCMessage *resp, struct iob_error *err) {
  assert_null(err);
  (*(int *)user)++;
  protobuf_c_message_free_unpacked(resp, NULL);
}

static void test_serve_inherited_fd(void **state) {
  struct fixture *fx = *state;
  /* What `shim start` hands its daemon as fd 3: a bound, listening socket. */
  int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un sa;
  socklen_t len;
  char addr[64];
  snprintf(addr, sizeof(addr), "@iob-ttrpc-fd-%d", (int)getpid());
  assert_int_equal(ttrpc_parse_address(addr, &sa, &len, NULL), 0);
  assert_int_equal(bind(lfd, (struct sockaddr *)&sa, len), 0);
  assert_int_equal(listen(lfd, 16), 0);
  assert_int_equal(ttrpc_server_serve_fd(fx->srv, lfd, NULL), 0);
  struct ttrpc_client *c = NULL;
  assert_int_equal(ttrpc_client_connect(addr, &c, NULL), 0);
  assert_int_equal(ttrpc_client_attach(c, fx->loop, NULL), 0);
  int done = 0;
  assert_int_equal(ttrpc_client_call_async(c, SVC, "Echo", NULL,
                                           &containerd__events__task_start__descriptor, 1000, NULL,
                                           0, on_echo, &done, NULL),
                   0);
  while (!done)
    pump(fx, 10);
  assert_int_equal(done, 1);
  assert_int_equal(ttrpc_server_connections(fx->srv), 2);
  ttrpc_client_free(c);
}

/* ---- our client against our server ---- */

struct thread_server {
  struct iob_loop *loop;
  struct ttrpc_server *srv;
  struct fixture fx;
  int stop[2];
  pthread_t th;
  char path[108];
};

static void on_stop(struct iob_loop *loop, int fd, uint32_t events, void *data) {
  (void)fd;
  (void)events;
  (void)data;
  iob_loop_stop(loop);
}

static void *server_main(void *arg) {
  struct thread_server *ts = arg;
  iob_loop_run(ts->loop, NULL);
  return NULL;
}

static void thread_server_start(struct thread_server *ts) {
  memset(ts, 0, sizeof(*ts));
  assert_int_equal(iob_loop_new(&ts->loop, NULL), 0);
  assert_int_equal(ttrpc_server_new(ts->loop, &ts->srv, NULL), 0);
  ts->fx.loop = ts->loop;
  register_all(ts->srv, &ts->fx);
  snprintf(ts->path, sizeof(ts->path), "/tmp/ttrpc-test-%d.sock", (int)getpid());
  assert_true(ttrpc_server_listen(ts->srv, ts->path, NULL) >= 0);
  struct stat st;
  assert_int_equal(stat(ts->path, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);
  assert_int_equal(pipe2(ts->stop, O_CLOEXEC), 0);
  assert_int_equal(iob_loop_add(ts->loop, ts->stop[0], 1, on_stop, NULL, NULL), 0);
  assert_int_equal(pthread_create(&ts->th, NULL, server_main, ts), 0);
}

static void thread_server_stop(struct thread_server *ts) {
  assert_int_equal(write(ts->stop[1], "x", 1), 1);
  pthread_join(ts->th, NULL);
  ttrpc_server_free(ts->srv);
  iob_loop_free(ts->loop);
  close(ts->stop[0]);
  close(ts->stop[1]);
  assert_int_equal(access(ts->path, F_OK), -1); /* removed with the listener */
}

static void test_client_blocking(void **state) {
  (void)state;
  struct thread_server ts;
  thread_server_start(&ts);
  char addr[128];
  snprintf(addr, sizeof(addr), "unix://%s", ts.path);
  struct ttrpc_client *c = NULL;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(ttrpc_client_connect(addr, &c, &err), 0);
  Containerd__Events__TaskStart m = CONTAINERD__EVENTS__TASK_START__INIT;
  m.container_id = "blk";
  m.pid = 99;
  const struct ttrpc_kv md[] = {{"containerd-namespace-ttrpc", "nsb"}};
  ProtobufCMessage *resp = NULL;
  assert_int_equal(ttrpc_client_call(c, SVC, "Echo", &m.base,
                                     &containerd__events__task_start__descriptor, &resp, 1000, md,
                                     1, &err),
                   0);
  Containerd__Events__TaskStart *got = (Containerd__Events__TaskStart *)resp;
  assert_string_equal(got->container_id, "nsb");
  assert_int_equal(got->pid, 99);
  protobuf_c_message_free_unpacked(resp, NULL);
  /* Remote status -> iob_error with that code and message. */
  assert_int_equal(ttrpc_client_call(c, SVC, "Fail", &m.base, NULL, NULL, 1000, NULL, 0, &err), -1);
  assert_int_equal(err->code, IOB_CODE_NOT_FOUND);
  assert_string_equal(err->msg, "container not created");
  assert_int_equal(ttrpc_client_call(c, SVC, "Missing", NULL, NULL, NULL, 1000, NULL, 0, &err), -1);
  assert_int_equal(err->code, IOB_CODE_UNIMPLEMENTED);
  assert_string_equal(err->msg, "method Missing");
  /* Timeout: the server holds the call. */
  uint64_t t0 = iob_now_ms();
  assert_int_equal(ttrpc_client_call(c, SVC, "Hold", NULL, NULL, NULL, 150, NULL, 0, &err), -1);
  assert_int_equal(err->code, IOB_CODE_DEADLINE_EXCEEDED);
  uint64_t dt = iob_now_ms() - t0;
  assert_true(dt >= 150 && dt < 1000);
  /* The connection is still usable after a timeout. */
  resp = NULL;
  assert_int_equal(ttrpc_client_call(c, SVC, "Echo", &m.base,
                                     &containerd__events__task_start__descriptor, &resp, 1000, NULL,
                                     0, &err),
                   0);
  protobuf_c_message_free_unpacked(resp, NULL);
  assert_false(ttrpc_client_closed(c));
  ttrpc_client_free(c);
  /* A second listener on a live path is refused. */
  struct iob_loop *l2 = NULL;
  struct ttrpc_server *s2 = NULL;
  assert_int_equal(iob_loop_new(&l2, NULL), 0);
  assert_int_equal(ttrpc_server_new(l2, &s2, NULL), 0);
  assert_int_equal(ttrpc_server_listen(s2, ts.path, &err), -1);
  ttrpc_server_free(s2);
  iob_loop_free(l2);
  thread_server_stop(&ts);
  /* The held call was cancelled when the client closed (or at free). */
  assert_int_equal(ts.fx.cancels, 1);
}

struct nested {
  struct ttrpc_client *c;
  int done;
  int nested_rc;
  uint32_t nested_pid;
};

static void on_nested_done(void *user, ProtobufCMessage *resp, struct iob_error *err) {
  struct nested *n = user;
  assert_null(err);
  protobuf_c_message_free_unpacked(resp, NULL);
  if (n->done++ > 0)
    return;
  /* A blocking call from inside a done callback, while other answers may
   * sit unread in the client's buffer. */
  Containerd__Events__TaskStart m = CONTAINERD__EVENTS__TASK_START__INIT;
  m.pid = 77;
  ProtobufCMessage *r = NULL;
  cleanup_error struct iob_error *e = NULL;
  n->nested_rc =
      ttrpc_client_call(n->c, SVC, "Echo", &m.base, &containerd__events__task_start__descriptor, &r,
                        2000, NULL, 0, &e);
  if (r) {
    n->nested_pid = ((Containerd__Events__TaskStart *)r)->pid;
    protobuf_c_message_free_unpacked(r, NULL);
  }
}

static void test_client_blocking_inside_callback(void **state) {
  (void)state;
  struct thread_server ts;
  thread_server_start(&ts);
  struct iob_loop *loop = NULL;
  assert_int_equal(iob_loop_new(&loop, NULL), 0);
  struct nested n = {0};
  assert_int_equal(ttrpc_client_connect(ts.path, &n.c, NULL), 0);
  assert_int_equal(ttrpc_client_attach(n.c, loop, NULL), 0);
  /* 30 KB answers, so that one read ends in the middle of a frame. */
  static char big[30001];
  memset(big, 'n', sizeof(big) - 1);
  Containerd__Events__TaskStart m = CONTAINERD__EVENTS__TASK_START__INIT;
  m.container_id = big;
  for (int i = 0; i < 4; i++)
    assert_int_equal(ttrpc_client_call_async(n.c, SVC, "Echo", &m.base,
                                             &containerd__events__task_start__descriptor, 2000,
                                             NULL, 0, on_nested_done, &n, NULL),
                     0);
  /* Send, then let all four answers arrive before reading any, so that
   * one read takes them all. */
  assert_int_equal(iob_loop_run_once(loop, 50, NULL), 0);
  usleep(200 * 1000);
  uint64_t until = iob_now_ms() + 3000;
  while (n.done < 4 && iob_now_ms() < until)
    assert_int_equal(iob_loop_run_once(loop, 50, NULL), 0);
  assert_int_equal(n.done, 4);
  assert_int_equal(n.nested_rc, 0);
  assert_int_equal(n.nested_pid, 77);
  ttrpc_client_free(n.c);
  iob_loop_free(loop);
  thread_server_stop(&ts);
}

static void test_listen_replaces_stale_socket(void **state) {
  (void)state;
  char path[108];
  snprintf(path, sizeof(path), "/tmp/ttrpc-stale-%d.sock", (int)getpid());
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un sa;
  socklen_t len;
  assert_int_equal(ttrpc_parse_address(path, &sa, &len, NULL), 0);
  unlink(path);
  assert_int_equal(bind(fd, (struct sockaddr *)&sa, len), 0);
  close(fd); /* a socket file nobody listens on */
  struct iob_loop *l = NULL;
  struct ttrpc_server *s = NULL;
  assert_int_equal(iob_loop_new(&l, NULL), 0);
  assert_int_equal(ttrpc_server_new(l, &s, NULL), 0);
  int lfd = ttrpc_server_listen(s, path, NULL);
  assert_true(lfd >= 0);
  /* fd-inherited listeners: serve_fd refuses a non-listening fd. */
  int sv[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(ttrpc_server_serve_fd(s, sv[0], &err), -1);
  close(sv[0]);
  close(sv[1]);
  ttrpc_server_close_listeners(s);
  assert_int_equal(access(path, F_OK), -1);
  ttrpc_server_free(s);
  iob_loop_free(l);
}

struct async_result {
  int n;
  int order[4];
  int codes[4];
  uint32_t pids[4];
};

struct async_ctx {
  struct async_result *res;
  int tag;
};

static void on_done(void *user, ProtobufCMessage *resp, struct iob_error *err) {
  struct async_ctx *ctx = user;
  struct async_result *r = ctx->res;
  r->order[r->n] = ctx->tag;
  r->codes[r->n] = err ? err->code : 0;
  r->pids[r->n] = resp ? ((Containerd__Events__TaskStart *)resp)->pid : 1000;
  r->n++;
  if (resp)
    protobuf_c_message_free_unpacked(resp, NULL);
}

static void test_client_async_same_loop(void **state) {
  struct fixture *fx = *state;
  /* Server and client on one loop; the server listens on an abstract
   * address. */
  char addr[64];
  snprintf(addr, sizeof(addr), "unix://@iob-ttrpc-test-%d", (int)getpid());
  assert_true(ttrpc_server_listen(fx->srv, addr, NULL) >= 0);
  struct ttrpc_client *c = NULL;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(ttrpc_client_connect(addr, &c, &err), 0);
  assert_int_equal(
      ttrpc_client_call_async(c, SVC, "Echo", NULL, NULL, 100, NULL, 0, on_done, NULL, &err),
      -1); /* not attached yet */
  assert_int_equal(ttrpc_client_attach(c, fx->loop, &err), 0);
  struct async_result res = {0};
  struct async_ctx a = {&res, 1}, b = {&res, 2}, t = {&res, 3};
  const ProtobufCMessageDescriptor *d = &containerd__events__task_start__descriptor;
  assert_int_equal(ttrpc_client_call_async(c, SVC, "Defer", NULL, d, 0, NULL, 0, on_done, &a, &err),
                   0);
  assert_int_equal(ttrpc_client_call_async(c, SVC, "Defer", NULL, d, 0, NULL, 0, on_done, &b, &err),
                   0);
  assert_int_equal(
      ttrpc_client_call_async(c, SVC, "Hold", NULL, d, 100, NULL, 0, on_done, &t, &err), 0);
  assert_int_equal(res.n, 0); /* never completes inside call_async */
  uint64_t until = iob_now_ms() + 3000;
  while (res.n < 3 && iob_now_ms() < until)
    pump(fx, 50);
  assert_int_equal(res.n, 3);
  /* Reverse order of the deferred replies, then the timeout. */
  assert_int_equal(res.order[0], 2);
  assert_int_equal(res.codes[0], 0);
  assert_int_equal(res.pids[0], 1);
  assert_int_equal(res.order[1], 1);
  assert_int_equal(res.pids[1], 0);
  assert_int_equal(res.order[2], 3);
  assert_int_equal(res.codes[2], IOB_CODE_DEADLINE_EXCEEDED);
  /* A closed connection fails the outstanding calls. */
  struct async_result res2 = {0};
  struct async_ctx h = {&res2, 4};
  assert_int_equal(ttrpc_client_call_async(c, SVC, "Hold", NULL, d, 0, NULL, 0, on_done, &h, &err),
                   0);
  for (int i = 0; i < 5; i++)
    pump(fx, 10);
  assert_int_equal(fx->n_deferred, 2); /* the timed-out Hold and this one */
  ttrpc_server_free(fx->srv);          /* closes the server side */
  fx->srv = NULL;
  ttrpc_server_new(fx->loop, &fx->srv, NULL);
  until = iob_now_ms() + 3000;
  while (res2.n < 1 && iob_now_ms() < until)
    pump(fx, 50);
  assert_int_equal(res2.n, 1);
  assert_int_equal(res2.codes[0], IOB_CODE_UNAVAILABLE);
  assert_true(ttrpc_client_closed(c));
  assert_int_equal(ttrpc_client_call_async(c, SVC, "Echo", NULL, d, 0, NULL, 0, on_done, &h, &err),
                   -1);
  ttrpc_client_free(c);
}

/* Not a pass/fail test: prints round-trip numbers for the report. */
static void test_measure(void **state) {
  (void)state;
  struct thread_server ts;
  thread_server_start(&ts);
  struct ttrpc_client *c = NULL;
  assert_int_equal(ttrpc_client_connect(ts.path, &c, NULL), 0);
  Containerd__Events__TaskStart m = CONTAINERD__EVENTS__TASK_START__INIT;
  m.container_id = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
  const int n = 20000;
  uint64_t t0 = iob_now_ms();
  for (int i = 0; i < n; i++) {
    ProtobufCMessage *resp = NULL;
    assert_int_equal(ttrpc_client_call(c, SVC, "Echo", &m.base,
                                       &containerd__events__task_start__descriptor, &resp, 1000,
                                       NULL, 0, NULL),
                     0);
    protobuf_c_message_free_unpacked(resp, NULL);
  }
  uint64_t dt = iob_now_ms() - t0;
  printf("# blocking unary Echo over a unix socket: %d calls in %llu ms (%.1f us/call)\n", n,
         (unsigned long long)dt, dt * 1000.0 / n);
  ttrpc_client_free(c);
  thread_server_stop(&ts);

  /* Async, all in flight at once, client and server on one loop. */
  struct iob_loop *loop = NULL;
  struct ttrpc_server *srv = NULL;
  assert_int_equal(iob_loop_new(&loop, NULL), 0);
  assert_int_equal(ttrpc_server_new(loop, &srv, NULL), 0);
  assert_int_equal(ttrpc_server_register(srv, SVC, "Echo",
                                         &containerd__events__task_start__descriptor, h_echo, NULL,
                                         NULL),
                   0);
  char addr[64];
  snprintf(addr, sizeof(addr), "@iob-ttrpc-measure-%d", (int)getpid());
  assert_true(ttrpc_server_listen(srv, addr, NULL) >= 0);
  assert_int_equal(ttrpc_client_connect(addr, &c, NULL), 0);
  assert_int_equal(ttrpc_client_attach(c, loop, NULL), 0);
  int done = 0;
  t0 = iob_now_ms();
  for (int i = 0; i < n; i++)
    assert_int_equal(ttrpc_client_call_async(c, SVC, "Echo", &m.base,
                                             &containerd__events__task_start__descriptor, 0, NULL,
                                             0, on_count, &done, NULL),
                     0);
  while (done < n)
    assert_int_equal(iob_loop_run_once(loop, 1000, NULL), 0);
  dt = iob_now_ms() - t0;
  printf("# async pipelined Echo, one loop: %d calls in %llu ms (%.1f us/call)\n", n,
         (unsigned long long)dt, dt * 1000.0 / n);
  ttrpc_client_free(c);
  ttrpc_server_free(srv);
  iob_loop_free(loop);
}

/* ---- peer credentials ---- */

static int child_call(const char *addr, int gid, int uid) {
  if (setgid((gid_t)gid) < 0 || setuid((uid_t)uid) < 0)
    return 2;
  struct ttrpc_client *c = NULL;
  struct iob_error *err = NULL;
  if (ttrpc_client_connect(addr, &c, &err) < 0)
    return 3;
  Containerd__Events__TaskStart m = CONTAINERD__EVENTS__TASK_START__INIT;
  m.pid = 5;
  int rc = ttrpc_client_call(c, SVC, "Echo", &m.base, NULL, NULL, 2000, NULL, 0, &err);
  int code = rc == 0 ? 0 : err->code;
  iob_error_release(&err);
  ttrpc_client_free(c);
  return code == 0 ? 0 : code == IOB_CODE_UNAVAILABLE ? 10 : 11;
}

static int run_child(struct fixture *fx, const char *addr, int gid, int uid) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0)
    _exit(child_call(addr, gid, uid));
  int st = 0;
  for (;;) {
    pump(fx, 10);
    pid_t r = waitpid(pid, &st, WNOHANG);
    if (r == pid)
      break;
  }
  assert_true(WIFEXITED(st));
  return WEXITSTATUS(st);
}

static void test_peer_credentials(void **state) {
  struct fixture *fx = *state;
  if (geteuid() != 0)
    skip(); /* needs to switch uid */
  char addr[64];
  snprintf(addr, sizeof(addr), "@iob-ttrpc-cred-%d", (int)getpid());
  assert_true(ttrpc_server_listen(fx->srv, addr, NULL) >= 0);
  size_t before = ttrpc_server_connections(fx->srv);
  /* Another uid: the server closes the connection, the call fails. */
  assert_int_equal(run_child(fx, addr, 65534, 65534), 10);
  assert_int_equal(ttrpc_server_connections(fx->srv), before);
  /* Our uid, another gid: refused too. */
  assert_int_equal(run_child(fx, addr, 65534, 0), 10);
  /* The uid allowed explicitly, its gid not: still refused. */
  ttrpc_server_allow_uid(fx->srv, 65534);
  assert_int_equal(run_child(fx, addr, 65534, 65534), 10);
  /* Both allowed: served. */
  ttrpc_server_allow_gid(fx->srv, 65534);
  assert_int_equal(run_child(fx, addr, 65534, 65534), 0);
  assert_int_equal(run_child(fx, addr, 65534, 0), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_echo_split_reads, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conn_id_open_until_peer_closes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_deferred_replies_reverse_order, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unknown_service_and_method, setup, teardown),
      cmocka_unit_test_setup_teardown(test_garbage, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stream_id_rules, setup, teardown),
      cmocka_unit_test_setup_teardown(test_oversize_frame, setup, teardown),
      cmocka_unit_test_setup_teardown(test_truncated_header, setup, teardown),
      cmocka_unit_test_setup_teardown(test_truncated_body, setup, teardown),
      cmocka_unit_test_setup_teardown(test_metadata_and_deadline, setup, teardown),
      cmocka_unit_test_setup_teardown(test_write_queue, setup, teardown),
      cmocka_unit_test_setup_teardown(test_backpressure, setup, teardown),
      cmocka_unit_test_setup_teardown(test_call_outlives_connection, setup, teardown),
      cmocka_unit_test_setup_teardown(test_too_many_calls, setup, teardown),
      cmocka_unit_test_setup_teardown(test_serve_inherited_fd, setup, teardown),
      cmocka_unit_test(test_client_blocking),
      cmocka_unit_test(test_client_blocking_inside_callback),
      cmocka_unit_test(test_listen_replaces_stale_socket),
      cmocka_unit_test_setup_teardown(test_client_async_same_loop, setup, teardown),
      cmocka_unit_test_setup_teardown(test_peer_credentials, setup, teardown),
      cmocka_unit_test(test_measure),
  };
  return cmocka_run_group_tests_name("ttrpc_server", tests, NULL, NULL);
}
