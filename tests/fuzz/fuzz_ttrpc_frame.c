// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target: the ttrpc frame reader (bytes from any peer).  The
 * first input byte picks the chunk size, so split reads are covered; every
 * complete payload is also decoded as a ttrpc Request and Response. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "ttrpc.pb-c.h"
#include "ttrpc/frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  size_t chunk = (size_t)(data[0] % 17) + 1;
  data++;
  size--;
  struct ttrpc_reader r;
  ttrpc_reader_init(&r);
  size_t pos = 0;
  while (pos < size) {
    size_t n = size - pos < chunk ? size - pos : chunk;
    size_t off = 0;
    while (off < n) {
      struct ttrpc_frame f;
      size_t used = 0;
      cleanup_error struct iob_error *err = NULL;
      int k = ttrpc_reader_feed(&r, data + pos + off, n - off, &used, &f, &err);
      if (k < 0 || used == 0 || used > n - off)
        abort();
      off += used;
      if (k == TTRPC_FRAME_NONE)
        continue;
      if (k == TTRPC_FRAME_OVERSIZED) {
        if (f.h.length <= TTRPC_MAX_PAYLOAD || f.payload)
          abort();
        continue;
      }
      if (f.h.length > TTRPC_MAX_PAYLOAD || (f.h.length > 0) != (f.payload != NULL))
        abort();
      uint8_t hb[TTRPC_HEADER_SIZE];
      struct ttrpc_header h2;
      ttrpc_header_encode(&f.h, hb);
      ttrpc_header_decode(hb, &h2);
      if (h2.length != f.h.length || h2.stream_id != f.h.stream_id || h2.type != f.h.type ||
          h2.flags != f.h.flags)
        abort();
      Ttrpc__Request *req = ttrpc__request__unpack(NULL, f.h.length, f.payload);
      if (req)
        ttrpc__request__free_unpacked(req, NULL);
      Ttrpc__Response *resp = ttrpc__response__unpack(NULL, f.h.length, f.payload);
      if (resp)
        ttrpc__response__free_unpacked(resp, NULL);
      free(f.payload);
    }
    pos += n;
  }
  ttrpc_reader_reset(&r);
  return 0;
}
