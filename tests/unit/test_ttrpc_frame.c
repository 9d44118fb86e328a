// SPDX-License-Identifier: Apache-2.0
/* Frame codec: header round trips, incremental reassembly, oversize
 * discard, outgoing frames, addresses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/cleanup.h"
#include "containerd/events/task.pb-c.h"
#include "ttrpc/frame.h"
#include "ttrpc/ttrpc.h"

static void test_header_round_trip(void **state) {
  (void)state;
  const struct ttrpc_header cases[] = {
      {0, 1, TTRPC_TYPE_REQUEST, 0},
      {TTRPC_MAX_PAYLOAD, 3, TTRPC_TYPE_RESPONSE, 0},
      {0xfffffffe, 0xffffffff, TTRPC_TYPE_DATA, 0x05},
      {0x01020304, 0x0a0b0c0d, 0xee, 0xff},
  };
  for (size_t i = 0; i < IOB_ARRAY_SIZE(cases); i++) {
    uint8_t b[TTRPC_HEADER_SIZE];
    struct ttrpc_header h;
    ttrpc_header_encode(&cases[i], b);
    ttrpc_header_decode(b, &h);
    assert_int_equal(h.length, cases[i].length);
    assert_int_equal(h.stream_id, cases[i].stream_id);
    assert_int_equal(h.type, cases[i].type);
    assert_int_equal(h.flags, cases[i].flags);
  }
  /* Big-endian on the wire. */
  uint8_t b[TTRPC_HEADER_SIZE];
  ttrpc_header_encode(&cases[3], b);
  const uint8_t want[] = {1, 2, 3, 4, 0x0a, 0x0b, 0x0c, 0x0d, 0xee, 0xff};
  assert_memory_equal(b, want, sizeof(want));
}

static size_t make_frame(uint8_t *out, uint32_t id, uint8_t type, const char *payload) {
  size_t n = strlen(payload);
  struct ttrpc_header h = {(uint32_t)n, id, type, 0};
  ttrpc_header_encode(&h, out);
  memcpy(out + TTRPC_HEADER_SIZE, payload, n);
  return TTRPC_HEADER_SIZE + n;
}

static void test_split_reads_one_byte_at_a_time(void **state) {
  (void)state;
  uint8_t stream[256];
  size_t len = make_frame(stream, 1, TTRPC_TYPE_REQUEST, "hello");
  len += make_frame(stream + len, 3, TTRPC_TYPE_REQUEST, "");
  len += make_frame(stream + len, 5, TTRPC_TYPE_DATA, "world!");
  struct ttrpc_reader r;
  ttrpc_reader_init(&r);
  int got = 0;
  for (size_t i = 0; i < len; i++) {
    struct ttrpc_frame f;
    size_t used = 0;
    int k = ttrpc_reader_feed(&r, stream + i, 1, &used, &f, NULL);
    assert_int_equal(used, 1);
    if (k == TTRPC_FRAME_NONE) {
      assert_true(ttrpc_reader_partial(&r));
      continue;
    }
    assert_int_equal(k, TTRPC_FRAME_OK);
    assert_false(ttrpc_reader_partial(&r));
    switch (got++) {
    case 0:
      assert_int_equal(f.h.stream_id, 1);
      assert_int_equal(f.h.length, 5);
      assert_memory_equal(f.payload, "hello", 5);
      break;
    case 1:
      assert_int_equal(f.h.stream_id, 3);
      assert_int_equal(f.h.length, 0);
      assert_null(f.payload);
      break;
    case 2:
      assert_int_equal(f.h.stream_id, 5);
      assert_int_equal(f.h.type, TTRPC_TYPE_DATA);
      assert_memory_equal(f.payload, "world!", 6);
      break;
    }
    free(f.payload);
  }
  assert_int_equal(got, 3);
  ttrpc_reader_reset(&r);
}

static void test_many_frames_in_one_buffer(void **state) {
  (void)state;
  uint8_t stream[256];
  size_t len = make_frame(stream, 7, TTRPC_TYPE_RESPONSE, "a");
  len += make_frame(stream + len, 9, TTRPC_TYPE_RESPONSE, "bc");
  struct ttrpc_reader r;
  ttrpc_reader_init(&r);
  size_t pos = 0, used;
  struct ttrpc_frame f;
  assert_int_equal(ttrpc_reader_feed(&r, stream, len, &used, &f, NULL), TTRPC_FRAME_OK);
  pos += used;
  assert_int_equal(used, TTRPC_HEADER_SIZE + 1);
  assert_int_equal(f.h.stream_id, 7);
  free(f.payload);
  assert_int_equal(ttrpc_reader_feed(&r, stream + pos, len - pos, &used, &f, NULL), TTRPC_FRAME_OK);
  assert_int_equal(f.h.stream_id, 9);
  assert_memory_equal(f.payload, "bc", 2);
  free(f.payload);
  assert_int_equal(pos + used, len);
}

static void test_oversize_is_discarded_not_buffered(void **state) {
  (void)state;
  struct ttrpc_reader r;
  ttrpc_reader_init(&r);
  struct ttrpc_header h = {TTRPC_MAX_PAYLOAD + 1, 11, TTRPC_TYPE_REQUEST, 0};
  uint8_t hb[TTRPC_HEADER_SIZE];
  ttrpc_header_encode(&h, hb);
  struct ttrpc_frame f;
  size_t used;
  assert_int_equal(ttrpc_reader_feed(&r, hb, sizeof(hb), &used, &f, NULL), TTRPC_FRAME_NONE);
  assert_null(r.buf); /* nothing allocated for the body */
  static uint8_t chunk[65536];
  size_t left = h.length;
  int k = TTRPC_FRAME_NONE;
  while (left > 0) {
    size_t n = left < sizeof(chunk) ? left : sizeof(chunk);
    k = ttrpc_reader_feed(&r, chunk, n, &used, &f, NULL);
    assert_int_equal(used, n);
    assert_null(r.buf);
    left -= n;
    if (left > 0)
      assert_int_equal(k, TTRPC_FRAME_NONE);
  }
  assert_int_equal(k, TTRPC_FRAME_OVERSIZED);
  assert_int_equal(f.h.stream_id, 11);
  assert_null(f.payload);
  /* The stream goes on with the next frame. */
  uint8_t next[32];
  size_t len = make_frame(next, 13, TTRPC_TYPE_REQUEST, "ok");
  assert_int_equal(ttrpc_reader_feed(&r, next, len, &used, &f, NULL), TTRPC_FRAME_OK);
  assert_int_equal(f.h.stream_id, 13);
  free(f.payload);
}

static void test_huge_length_allocates_nothing(void **state) {
  (void)state;
  struct ttrpc_reader r;
  ttrpc_reader_init(&r);
  uint8_t hb[TTRPC_HEADER_SIZE] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1, 1, 0};
  struct ttrpc_frame f;
  size_t used;
  assert_int_equal(ttrpc_reader_feed(&r, hb, sizeof(hb), &used, &f, NULL), TTRPC_FRAME_NONE);
  assert_null(r.buf);
  assert_true(ttrpc_reader_partial(&r));
  ttrpc_reader_reset(&r);
}

static void test_outbuf_encodes_message(void **state) {
  (void)state;
  Containerd__Events__TaskStart m = CONTAINERD__EVENTS__TASK_START__INIT;
  m.container_id = "abc";
  m.pid = 42;
  struct ttrpc_outbuf *b = NULL;
  assert_int_equal(ttrpc_outbuf_new(5, TTRPC_TYPE_REQUEST, 0, &m.base, &b, NULL), 0);
  struct ttrpc_header h;
  ttrpc_header_decode(b->data, &h);
  assert_int_equal(h.stream_id, 5);
  assert_int_equal(h.length, b->len - TTRPC_HEADER_SIZE);
  Containerd__Events__TaskStart *d =
      containerd__events__task_start__unpack(NULL, h.length, b->data + TTRPC_HEADER_SIZE);
  assert_non_null(d);
  assert_string_equal(d->container_id, "abc");
  assert_int_equal(d->pid, 42);
  containerd__events__task_start__free_unpacked(d, NULL);
  free(b);
  /* An empty message is an empty payload. */
  assert_int_equal(ttrpc_outbuf_new(7, TTRPC_TYPE_RESPONSE, 0, NULL, &b, NULL), 0);
  assert_int_equal(b->len, TTRPC_HEADER_SIZE);
  free(b);
}

static void test_outbuf_refuses_oversize(void **state) {
  (void)state;
  size_t n = TTRPC_MAX_PAYLOAD;
  char *big = malloc(n + 1);
  assert_non_null(big);
  memset(big, 'x', n);
  big[n] = '\0';
  Containerd__Events__TaskStart m = CONTAINERD__EVENTS__TASK_START__INIT;
  m.container_id = big;
  struct ttrpc_outbuf *b = NULL;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(ttrpc_outbuf_new(1, TTRPC_TYPE_REQUEST, 0, &m.base, &b, &err), -1);
  assert_int_equal(err->code, IOB_CODE_RESOURCE_EXHAUSTED);
  assert_null(b);
  free(big);
}

static void test_addresses(void **state) {
  (void)state;
  struct sockaddr_un sa;
  socklen_t len;
  assert_int_equal(ttrpc_parse_address("unix:///run/x.sock", &sa, &len, NULL), 0);
  assert_string_equal(sa.sun_path, "/run/x.sock");
  assert_int_equal(len, offsetof(struct sockaddr_un, sun_path) + strlen("/run/x.sock") + 1);
  assert_int_equal(ttrpc_parse_address("/a", &sa, &len, NULL), 0);
  assert_string_equal(sa.sun_path, "/a");
  assert_int_equal(ttrpc_parse_address("unix://@abs", &sa, &len, NULL), 0);
  assert_int_equal(sa.sun_path[0], '\0');
  assert_memory_equal(sa.sun_path + 1, "abs", 3);
  assert_int_equal(len, offsetof(struct sockaddr_un, sun_path) + 4);
  assert_int_equal(ttrpc_parse_address("@abs", &sa, &len, NULL), 0);
  assert_int_equal(len, offsetof(struct sockaddr_un, sun_path) + 4);
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(ttrpc_parse_address("unix://", &sa, &len, &err), -1);
  char longp[200];
  memset(longp, 'a', sizeof(longp) - 1);
  longp[sizeof(longp) - 1] = '\0';
  assert_int_equal(ttrpc_parse_address(longp, &sa, &len, &err), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_header_round_trip),
      cmocka_unit_test(test_split_reads_one_byte_at_a_time),
      cmocka_unit_test(test_many_frames_in_one_buffer),
      cmocka_unit_test(test_oversize_is_discarded_not_buffered),
      cmocka_unit_test(test_huge_length_allocates_nothing),
      cmocka_unit_test(test_outbuf_encodes_message),
      cmocka_unit_test(test_outbuf_refuses_oversize),
      cmocka_unit_test(test_addresses),
  };
  return cmocka_run_group_tests_name("ttrpc_frame", tests, NULL, NULL);
}
