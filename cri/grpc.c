// SPDX-License-Identifier: Apache-2.0
#include "cri/grpc.h"

#include <string.h>

#include "common/xalloc.h"

static const char *const code_names[] = {
    "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
    "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
    "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
    "DATA_LOSS", "UNAUTHENTICATED"};

const char *cri_grpc_code_name(int code) {
  if (code < 0 || (size_t)code >= sizeof(code_names) / sizeof(code_names[0]))
    return "UNKNOWN_CODE";
  return code_names[code];
}

static bool is(const uint8_t *name, size_t n, const char *want) {
  return n == strlen(want) && memcmp(name, want, n) == 0;
}

static int hexval(uint8_t c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/* grpc-message is percent-encoded; a malformed escape is kept as it is
 * (PROTOCOL-HTTP2.md: decode what can be decoded).  Control bytes are
 * shown as '?': the text goes to a log line. */
static void decode_message(char *dst, size_t cap, const uint8_t *v, size_t n) {
  size_t o = 0;
  for (size_t i = 0; i < n && o + 1 < cap; i++) {
    uint8_t c = v[i];
    if (c == '%' && i + 2 < n && hexval(v[i + 1]) >= 0 && hexval(v[i + 2]) >= 0) {
      c = (uint8_t)(hexval(v[i + 1]) * 16 + hexval(v[i + 2]));
      i += 2;
    }
    dst[o++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
  }
  dst[o] = '\0';
}

static int parse_small_uint(const uint8_t *v, size_t n) {
  if (n == 0 || n > 3)
    return -1;
  int x = 0;
  for (size_t i = 0; i < n; i++) {
    if (v[i] < '0' || v[i] > '9')
      return -1;
    x = x * 10 + (v[i] - '0');
  }
  return x;
}

void cri_grpc_status_header(struct cri_grpc_status *st, const uint8_t *name, size_t namelen,
                            const uint8_t *value, size_t valuelen) {
  if (is(name, namelen, ":status")) {
    int s = parse_small_uint(value, valuelen);
    st->http_status = s < 0 ? -1 : s;
  } else if (is(name, namelen, "content-type")) {
    static const char ct[] = "application/grpc";
    size_t n = sizeof(ct) - 1;
    st->grpc_content_type = valuelen >= n && memcmp(value, ct, n) == 0 &&
                            (valuelen == n || value[n] == '+' || value[n] == ';');
  } else if (is(name, namelen, "grpc-status")) {
    int s = parse_small_uint(value, valuelen);
    st->have_status = true;
    st->bad_status = s < 0;
    st->status = s < 0 ? IOB_CODE_UNKNOWN : s;
  } else if (is(name, namelen, "grpc-message")) {
    decode_message(st->message, sizeof(st->message), value, valuelen);
  }
}

void cri_grpc_frame(const ProtobufCMessage *m, uint8_t **out, size_t *len) {
  size_t n = protobuf_c_message_get_packed_size(m);
  uint8_t *buf = xmalloc(n + CRI_GRPC_PREFIX);
  buf[0] = 0;
  buf[1] = (uint8_t)(n >> 24);
  buf[2] = (uint8_t)(n >> 16);
  buf[3] = (uint8_t)(n >> 8);
  buf[4] = (uint8_t)n;
  protobuf_c_message_pack(m, buf + CRI_GRPC_PREFIX);
  *out = buf;
  *len = n + CRI_GRPC_PREFIX;
}

static int check_status(const char *what, const struct cri_grpc_status *st,
                        struct iob_error **err) {
  if (st->http_status != 200)
    return iob_error_code(err, IOB_CODE_UNAVAILABLE, "%s: HTTP status %d, not 200", what,
                          st->http_status);
  if (!st->have_status)
    return iob_error_code(err, IOB_CODE_INTERNAL, "%s: the response has no grpc-status", what);
  if (st->bad_status)
    return iob_error_code(err, IOB_CODE_INTERNAL, "%s: grpc-status is not a gRPC code", what);
  if (st->status != IOB_CODE_OK)
    return iob_error_code(err, st->status, "%s: grpc-status %d (%s)%s%s", what, st->status,
                          cri_grpc_code_name(st->status), st->message[0] ? ": " : "", st->message);
  if (!st->grpc_content_type)
    return iob_error_code(err, IOB_CODE_INTERNAL, "%s: content-type is not application/grpc", what);
  return 0;
}

int cri_grpc_response(const char *what, const struct cri_grpc_status *st, const uint8_t *body,
                      size_t len, size_t max, const ProtobufCMessageDescriptor *desc,
                      ProtobufCMessage **out, struct iob_error **err) {
  *out = NULL;
  if (check_status(what, st, err) < 0)
    return -1;
  if (len > max)
    return iob_error_code(err, IOB_CODE_RESOURCE_EXHAUSTED,
                          "%s: response of %zu bytes, more than %zu", what, len, max);
  if (len < CRI_GRPC_PREFIX)
    return iob_error_code(err, IOB_CODE_INTERNAL, "%s: %s", what,
                          len == 0 ? "no message in the response" : "short message prefix");
  /* We never offer grpc-accept-encoding, so a compressed message is the
   * server's mistake, and one we cannot read. */
  if (body[0] != 0)
    return iob_error_code(err, IOB_CODE_INTERNAL, "%s: compressed flag %u set, never asked for",
                          what, body[0]);
  size_t n = (size_t)body[1] << 24 | (size_t)body[2] << 16 | (size_t)body[3] << 8 | body[4];
  if (n != len - CRI_GRPC_PREFIX)
    return iob_error_code(err, IOB_CODE_INTERNAL,
                          "%s: message length %zu, but %zu bytes follow its prefix (a unary call "
                          "answers one message)",
                          what, n, len - CRI_GRPC_PREFIX);
  *out = protobuf_c_message_unpack(desc, NULL, n, body + CRI_GRPC_PREFIX);
  if (*out == NULL)
    return iob_error_code(err, IOB_CODE_INTERNAL, "%s: cannot decode the %s in the response", what,
                          desc->name);
  return 0;
}
