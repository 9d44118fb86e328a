// SPDX-License-Identifier: Apache-2.0
#include "ttrpc/frame.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/xalloc.h"

static void put_be32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

static uint32_t get_be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

void ttrpc_header_encode(const struct ttrpc_header *h, uint8_t out[TTRPC_HEADER_SIZE]) {
  put_be32(out, h->length);
  put_be32(out + 4, h->stream_id);
  out[8] = h->type;
  out[9] = h->flags;
}

void ttrpc_header_decode(const uint8_t in[TTRPC_HEADER_SIZE], struct ttrpc_header *h) {
  h->length = get_be32(in);
  h->stream_id = get_be32(in + 4);
  h->type = in[8];
  h->flags = in[9];
}

void ttrpc_reader_init(struct ttrpc_reader *r) {
  memset(r, 0, sizeof(*r));
}

void ttrpc_reader_reset(struct ttrpc_reader *r) {
  free(r->buf);
  ttrpc_reader_init(r);
}

bool ttrpc_reader_partial(const struct ttrpc_reader *r) {
  return r->hdr_got > 0 || r->in_body;
}

static int finish(struct ttrpc_reader *r, struct ttrpc_frame *out) {
  int kind = r->h.length > TTRPC_MAX_PAYLOAD ? TTRPC_FRAME_OVERSIZED : TTRPC_FRAME_OK;
  out->h = r->h;
  out->payload = r->buf; /* handed to the caller */
  r->buf = NULL;
  ttrpc_reader_init(r);
  return kind;
}

int ttrpc_reader_feed(struct ttrpc_reader *r, const uint8_t *data, size_t len, size_t *used,
                      struct ttrpc_frame *out, struct iob_error **err) {
  (void)err; /* cannot fail (a frame's buffer is xmalloc'd); kept for its callers */
  size_t pos = 0;
  out->payload = NULL;
  if (!r->in_body) {
    size_t n = TTRPC_HEADER_SIZE - r->hdr_got;
    if (n > len)
      n = len;
    memcpy(r->hdr + r->hdr_got, data, n);
    r->hdr_got += n;
    pos += n;
    if (r->hdr_got < TTRPC_HEADER_SIZE) {
      *used = pos;
      return TTRPC_FRAME_NONE;
    }
    ttrpc_header_decode(r->hdr, &r->h);
    r->in_body = true;
    r->body_got = 0;
    /* The length is checked before anything is allocated: at most the
     * protocol limit, and only what the header declares. */
    if (r->h.length > 0 && r->h.length <= TTRPC_MAX_PAYLOAD) {
      r->buf = xmalloc(r->h.length);
    }
  }
  size_t want = r->h.length - r->body_got;
  size_t n = len - pos;
  if (n > want)
    n = want;
  if (r->buf)
    memcpy(r->buf + r->body_got, data + pos, n);
  r->body_got += n;
  pos += n;
  *used = pos;
  if (r->body_got < r->h.length)
    return TTRPC_FRAME_NONE;
  return finish(r, out);
}

int ttrpc_outbuf_new(uint32_t stream_id, uint8_t type, uint8_t flags, const ProtobufCMessage *msg,
                     struct ttrpc_outbuf **out, struct iob_error **err) {
  size_t plen = msg ? protobuf_c_message_get_packed_size(msg) : 0;
  if (plen > TTRPC_MAX_PAYLOAD)
    return iob_error_code(err, IOB_CODE_RESOURCE_EXHAUSTED,
                          "message length %zu exceed maximum message size of %u", plen,
                          TTRPC_MAX_PAYLOAD);
  struct ttrpc_outbuf *b = xmalloc(sizeof(*b) + TTRPC_HEADER_SIZE + plen);
  struct ttrpc_header h = {
      .length = (uint32_t)plen, .stream_id = stream_id, .type = type, .flags = flags};
  ttrpc_header_encode(&h, b->data);
  if (plen > 0)
    protobuf_c_message_pack(msg, b->data + TTRPC_HEADER_SIZE);
  b->next = NULL;
  b->len = TTRPC_HEADER_SIZE + plen;
  b->off = 0;
  *out = b;
  return 0;
}

void ttrpc_outq_push(struct ttrpc_outq *q, struct ttrpc_outbuf *b) {
  b->next = NULL;
  if (q->tail)
    q->tail->next = b;
  else
    q->head = b;
  q->tail = b;
  q->bytes += b->len;
}

int ttrpc_outq_flush(struct ttrpc_outq *q, int fd, struct iob_error **err) {
  while (q->head) {
    struct ttrpc_outbuf *b = q->head;
    /* MSG_NOSIGNAL: a peer that went away must not kill the process with
     * SIGPIPE; the error closes the connection instead. */
    ssize_t n = send(fd, b->data + b->off, b->len - b->off, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        return 0;
      return iob_error(err, errno, "cannot write ttrpc frame");
    }
    b->off += (size_t)n;
    q->bytes -= (size_t)n;
    if (b->off < b->len)
      continue;
    q->head = b->next;
    if (q->head == NULL)
      q->tail = NULL;
    free(b);
  }
  return 0;
}

void ttrpc_outq_clear(struct ttrpc_outq *q) {
  while (q->head) {
    struct ttrpc_outbuf *b = q->head;
    q->head = b->next;
    free(b);
  }
  q->tail = NULL;
  q->bytes = 0;
}

int ttrpc_parse_address(const char *address, struct sockaddr_un *sa, socklen_t *len,
                        struct iob_error **err) {
  const char *p = address;
  if (strncmp(p, "unix://", 7) == 0)
    p += 7;
  memset(sa, 0, sizeof(*sa));
  sa->sun_family = AF_UNIX;
  size_t n = strlen(p);
  if (n == 0)
    return iob_error(err, EINVAL, "invalid ttrpc address '%s'", address);
  if (n >= sizeof(sa->sun_path))
    return iob_error(err, ENAMETOOLONG, "ttrpc address '%s' is too long", address);
  memcpy(sa->sun_path, p, n);
  if (p[0] == '@') {
    /* Abstract namespace: a leading NUL, and the length counts exactly the
     * name (no terminator), as Go's net package does. */
    sa->sun_path[0] = '\0';
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
  } else {
    *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
  }
  return 0;
}
