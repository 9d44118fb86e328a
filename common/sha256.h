// SPDX-License-Identifier: Apache-2.0
/* SHA-256 (FIPS 180-4), small and allocation-free.  The shim needs it for the
 * socket name containerd expects: hex(sha256(address/ns/group)). */
#ifndef IOB_SHA256_H
#define IOB_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define IOB_SHA256_SIZE 32

struct iob_sha256 {
  uint32_t h[8];
  uint64_t len; /* bytes hashed so far */
  uint8_t buf[64];
  size_t fill;
};

void iob_sha256_init(struct iob_sha256 *s);
void iob_sha256_update(struct iob_sha256 *s, const void *data, size_t n);
void iob_sha256_final(struct iob_sha256 *s, uint8_t out[IOB_SHA256_SIZE]);
/* One call: hex digest of data into hex (65 bytes with the NUL). */
void iob_sha256_hex(const void *data, size_t n, char hex[2 * IOB_SHA256_SIZE + 1]);

#endif
