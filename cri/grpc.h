// SPDX-License-Identifier: Apache-2.0
/* gRPC's message framing and status, as a client reads them (no I/O here:
 * cri/client.c moves the bytes with nghttp2).  The wire rules are those of
 * grpc's doc/PROTOCOL-HTTP2.md: every message is prefixed by one byte
 * "compressed" flag and a 4-byte big-endian length; the status comes in
 * the trailers (or, for a call that fails at once, the only HEADERS) as
 * grpc-status (a decimal google.rpc.Code) and grpc-message
 * (percent-encoded UTF-8). */
#ifndef IOB_CRI_GRPC_H
#define IOB_CRI_GRPC_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

#define CRI_GRPC_PREFIX 5
/* The largest grpc-message kept (longer ones are cut). */
#define CRI_GRPC_MESSAGE_MAX 256

/* What the response's header blocks said. */
struct cri_grpc_status {
  int http_status;                    /* :status, 0 none */
  bool grpc_content_type;             /* content-type application/grpc[+proto|;...] */
  bool have_status;                   /* grpc-status seen */
  int status;                         /* its value (enum iob_code) */
  bool bad_status;                    /* grpc-status not a small decimal number */
  char message[CRI_GRPC_MESSAGE_MAX]; /* grpc-message, decoded */
};

/* The name of a gRPC code ("UNIMPLEMENTED"), "UNKNOWN_CODE" beyond 16. */
const char *cri_grpc_code_name(int code);

/* One header of a response (name lower case as HTTP/2 requires); others
 * than those above are ignored. */
void cri_grpc_status_header(struct cri_grpc_status *st, const uint8_t *name, size_t namelen,
                            const uint8_t *value, size_t valuelen);

/* A request: M packed behind the 5-byte prefix, uncompressed.  *out is
 * malloc'ed. */
void cri_grpc_frame(const ProtobufCMessage *m, uint8_t **out, size_t *len);

/* The whole of a response: the status said OK, and BODY (every DATA byte
 * of the stream, at most MAX) is exactly one uncompressed message of type
 * DESC.  Fills *out (free with protobuf_c_message_free_unpacked) or an
 * error naming WHAT (e.g. "CRI 'unix:///run/x.sock'
 * runtime.v1.RuntimeService/Version"). */
int cri_grpc_response(const char *what, const struct cri_grpc_status *st, const uint8_t *body,
                      size_t len, size_t max, const ProtobufCMessageDescriptor *desc,
                      ProtobufCMessage **out, struct iob_error **err);

#endif
