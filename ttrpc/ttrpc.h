// SPDX-License-Identifier: Apache-2.0
/* A small C implementation of containerd's ttrpc (github.com/containerd/ttrpc):
 * framing, a server on the shared event loop with many requests in flight per
 * connection and deferred replies, and a client (blocking and async).
 * Wire facts: docs/reference/shim-v2.md section 1. */
#ifndef IOB_TTRPC_H
#define IOB_TTRPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "common/error.h"
#include "common/loop.h"

#define TTRPC_HEADER_SIZE 10
#define TTRPC_MAX_PAYLOAD (4u * 1024 * 1024)

enum ttrpc_type {
  TTRPC_TYPE_REQUEST = 1,
  TTRPC_TYPE_RESPONSE = 2,
  TTRPC_TYPE_DATA = 3,
};

/* All integers big-endian on the wire. */
struct ttrpc_header {
  uint32_t length; /* payload bytes, not counting the header */
  uint32_t stream_id;
  uint8_t type;
  uint8_t flags;
};

void ttrpc_header_encode(const struct ttrpc_header *h, uint8_t out[TTRPC_HEADER_SIZE]);
void ttrpc_header_decode(const uint8_t in[TTRPC_HEADER_SIZE], struct ttrpc_header *h);

struct ttrpc_kv {
  const char *key;
  const char *value;
};

/* ---- server ---- */

struct ttrpc_server;
struct ttrpc_call;

/* Called with the decoded request (owned by the call; valid until the call
 * is answered).  The handler answers now or later with ttrpc_call_reply /
 * ttrpc_call_fail; every call must be answered exactly once, even after its
 * connection closed (the answer is then dropped and the call freed). */
typedef void (*ttrpc_handler_fn)(struct ttrpc_call *call, const ProtobufCMessage *req, void *user);
/* Called once if the call's connection closes before it is answered. */
typedef void (*ttrpc_cancel_fn)(struct ttrpc_call *call, void *data);

int ttrpc_server_new(struct iob_loop *loop, struct ttrpc_server **out, struct iob_error **err);
/* Frees connections and listeners.  Unanswered calls are freed too; their
 * cancel callbacks run first. */
void ttrpc_server_free(struct ttrpc_server *s);

/* service is the full name ("containerd.task.v2.Task"), method the bare rpc
 * name ("Create").  req_desc decodes the payload (protobuf-c descriptor). */
int ttrpc_server_register(struct ttrpc_server *s, const char *service, const char *method,
                          const ProtobufCMessageDescriptor *req_desc, ttrpc_handler_fn fn,
                          void *user, struct iob_error **err);

/* Serve an already listening socket (e.g. fd 3 inherited from `shim start`);
 * the server owns fd afterwards. */
int ttrpc_server_serve_fd(struct ttrpc_server *s, int fd, struct iob_error **err);
/* Bind path (unlinking a stale socket nobody answers on), mode 0600, listen,
 * serve.  Returns the listening fd (owned by the server). */
int ttrpc_server_listen(struct ttrpc_server *s, const char *path, struct iob_error **err);
/* Serve one already connected socket (a socketpair end, say); the server
 * owns fd afterwards (closed on failure too).  The peer-credential check
 * applies as for accepted connections. */
int ttrpc_server_add_conn(struct ttrpc_server *s, int fd, struct iob_error **err);
/* Stop accepting (close listeners); open connections go on. */
void ttrpc_server_close_listeners(struct ttrpc_server *s);
/* By default a peer whose SO_PEERCRED uid differs from our euid, or whose
 * gid differs from our egid, is refused.  allow_uid / allow_gid add one
 * more accepted uid / gid (-1: none); both ids must pass. */
void ttrpc_server_allow_uid(struct ttrpc_server *s, int uid);
void ttrpc_server_allow_gid(struct ttrpc_server *s, int gid);
size_t ttrpc_server_connections(const struct ttrpc_server *s);

/* Call accessors. */
const char *ttrpc_call_service(const struct ttrpc_call *call);
const char *ttrpc_call_method(const struct ttrpc_call *call);
/* First metadata value for key (case-insensitive), or NULL. */
const char *ttrpc_call_metadata(const struct ttrpc_call *call, const char *key);
/* Absolute CLOCK_MONOTONIC deadline in ms from timeout_nano, 0 if none. */
uint64_t ttrpc_call_deadline_ms(const struct ttrpc_call *call);
/* Peer credentials of the connection the call came on. */
int ttrpc_call_peer_pid(const struct ttrpc_call *call);
/* The connection a call came on, by a number the server never gives to
 * another connection (a pointer could be reused after a close), and
 * whether that connection is still open: for a server that lets only
 * the caller that made a thing speak for it while that caller is there. */
uint64_t ttrpc_call_conn_id(const struct ttrpc_call *call);
bool ttrpc_server_conn_open(const struct ttrpc_server *s, uint64_t id);
bool ttrpc_call_connected(const struct ttrpc_call *call);
void ttrpc_call_on_cancel(struct ttrpc_call *call, ttrpc_cancel_fn fn, void *data);

/* Answer with status OK and resp as payload (NULL: empty payload).  Frees the
 * call. */
void ttrpc_call_reply(struct ttrpc_call *call, const ProtobufCMessage *resp);
/* Answer with a status code (enum iob_code) and message.  Frees the call. */
void ttrpc_call_fail(struct ttrpc_call *call, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Answer with (*err)->code and (*err)->msg, release *err.  Frees the call. */
void ttrpc_call_fail_error(struct ttrpc_call *call, struct iob_error **err);

/* ---- client ---- */

struct ttrpc_client;

/* address: a path, "unix://PATH", or "unix://@name"/"@name" (abstract).
 * Blocking connect. */
int ttrpc_client_connect(const char *address, struct ttrpc_client **out, struct iob_error **err);
/* Connect without blocking for longer than timeout_ms (0: one try): a
 * listener whose backlog stays full fails with errno EAGAIN. */
int ttrpc_client_connect_timeout(const char *address, int timeout_ms, struct ttrpc_client **out,
                                 struct iob_error **err);
void ttrpc_client_free(struct ttrpc_client *c);
/* Whether the server that listens is root's or ours: the listener's uid
 * (SO_PEERCRED: the credentials it had when it called listen) must be 0 or
 * our euid.  A socket someone else put in the server's place (a directory
 * they can write, a path they guessed first) is refused:
 * IOB_CODE_PERMISSION_DENIED naming the uid and pid. */
int ttrpc_client_check_server_uid(const struct ttrpc_client *c, struct iob_error **err);

/* Blocking unary call.  On a non-OK status returns -1 with (*err)->code set
 * to the remote code and the remote message.  *resp is decoded with
 * resp_desc and must be freed with protobuf_c_message_free_unpacked. */
int ttrpc_client_call(struct ttrpc_client *c, const char *service, const char *method,
                      const ProtobufCMessage *req, const ProtobufCMessageDescriptor *resp_desc,
                      ProtobufCMessage **resp, int timeout_ms, const struct ttrpc_kv *md,
                      size_t n_md, struct iob_error **err);

/* Async calls on an event loop: attach once, then call; done runs on the
 * loop with resp (owned by the callee: free it) or err (released after done
 * returns).  A closed connection fails every outstanding call. */
typedef void (*ttrpc_done_fn)(void *user, ProtobufCMessage *resp, struct iob_error *err);
int ttrpc_client_attach(struct ttrpc_client *c, struct iob_loop *loop, struct iob_error **err);
int ttrpc_client_call_async(struct ttrpc_client *c, const char *service, const char *method,
                            const ProtobufCMessage *req,
                            const ProtobufCMessageDescriptor *resp_desc, int timeout_ms,
                            const struct ttrpc_kv *md, size_t n_md, ttrpc_done_fn done, void *user,
                            struct iob_error **err);
bool ttrpc_client_closed(const struct ttrpc_client *c);
/* fn runs (on the loop, once, after the outstanding calls failed) when an
 * attached connection is lost; not when the client is freed. */
void ttrpc_client_on_close(struct ttrpc_client *c, void (*fn)(void *user), void *user);

#endif
