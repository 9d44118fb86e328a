// SPDX-License-Identifier: Apache-2.0
/* Internal to ttrpc/ (and its tests and fuzzers): the incremental frame
 * reader, frame building and address parsing shared by server and client. */
#ifndef IOB_TTRPC_FRAME_H
#define IOB_TTRPC_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "ttrpc/ttrpc.h"

/* ttrpc's own stream flags (channel.go); unary calls use none of them. */
#define TTRPC_FLAG_REMOTE_CLOSED 0x01
#define TTRPC_FLAG_REMOTE_OPEN 0x02
#define TTRPC_FLAG_NO_DATA 0x04

/* Reassembles frames from arbitrary chunks of a byte stream.  The payload
 * buffer is allocated only once the header is complete and the declared
 * length is within TTRPC_MAX_PAYLOAD; an oversized body is counted off and
 * dropped as it arrives, never buffered. */
struct ttrpc_reader {
  uint8_t hdr[TTRPC_HEADER_SIZE];
  size_t hdr_got;
  struct ttrpc_header h;
  uint8_t *buf;    /* h.length bytes once the header is in (if not oversized) */
  size_t body_got; /* payload bytes received (or discarded) so far */
  bool in_body;
};

enum ttrpc_frame_kind {
  TTRPC_FRAME_NONE = 0,  /* need more bytes */
  TTRPC_FRAME_OK,        /* header + payload (payload owned by the caller) */
  TTRPC_FRAME_OVERSIZED, /* header only; the body has been discarded */
};

struct ttrpc_frame {
  struct ttrpc_header h;
  uint8_t *payload; /* malloc'ed, h.length bytes; NULL when h.length == 0 */
};

void ttrpc_reader_init(struct ttrpc_reader *r);
void ttrpc_reader_reset(struct ttrpc_reader *r);
/* True when a frame has been started but not finished (EOF here is a
 * truncated frame). */
bool ttrpc_reader_partial(const struct ttrpc_reader *r);
/* Consume bytes from data[0..len) until one frame event is complete (or the
 * bytes run out).  *used says how many bytes were taken.  Returns the kind
 * of event (it cannot fail: out of memory aborts, common/xalloc.h). */
int ttrpc_reader_feed(struct ttrpc_reader *r, const uint8_t *data, size_t len, size_t *used,
                      struct ttrpc_frame *out, struct iob_error **err);

/* One outgoing frame: header and payload in one allocation, so that a queue
 * of them can be written with partial writes and no copying. */
struct ttrpc_outbuf {
  struct ttrpc_outbuf *next;
  size_t len;
  size_t off;
  uint8_t data[];
};

/* Pack msg (NULL: empty payload) behind a header.  Fails with
 * ResourceExhausted when the payload would exceed TTRPC_MAX_PAYLOAD. */
int ttrpc_outbuf_new(uint32_t stream_id, uint8_t type, uint8_t flags, const ProtobufCMessage *msg,
                     struct ttrpc_outbuf **out, struct iob_error **err);

/* A queue of outbufs written to a non-blocking socket. */
struct ttrpc_outq {
  struct ttrpc_outbuf *head, *tail;
  size_t bytes;
};
void ttrpc_outq_push(struct ttrpc_outq *q, struct ttrpc_outbuf *b);
/* Write as much as the socket takes.  Returns 0 (maybe with data left), or
 * < 0 when the connection is broken. */
int ttrpc_outq_flush(struct ttrpc_outq *q, int fd, struct iob_error **err);
void ttrpc_outq_clear(struct ttrpc_outq *q);

/* "unix:///p", "/p", "unix://@name", "@name" -> sockaddr_un. */
int ttrpc_parse_address(const char *address, struct sockaddr_un *sa, socklen_t *len,
                        struct iob_error **err);

#endif
