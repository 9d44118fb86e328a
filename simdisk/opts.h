// SPDX-License-Identifier: Apache-2.0
/* The command line of simdisk (simdisk.c), parsed apart from FUSE so that
 * the unit test can feed it malformed input. */
#ifndef SD_OPTS_H
#define SD_OPTS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"

enum sd_model_kind { SD_MODEL_PASS, SD_MODEL_HDD, SD_MODEL_SSD };

struct sd_opts {
  enum sd_model_kind model;
  uint64_t size;    /* bytes, a multiple of 1 MiB */
  bool write_cache; /* hdd only */
  double scale;     /* every model duration times this */
  bool foreground;
  const char *stats; /* file written with counters at exit, or NULL */
  const char *trace; /* file with a line per completed request, or NULL */
  const char *mountpoint;
};

#define SD_SIZE_MIN (64ull << 20)
#define SD_SIZE_MAX (64ull << 30)
#define SD_SIZE_DEFAULT (4ull << 30)
#define SD_SCALE_MAX 100.0

/* Fill *o from argv.  Returns 1 for --help (usage printed), 0, or -1 with
 * *err saying which argument is wrong. */
int sd_opts_parse(int argc, char **argv, struct sd_opts *o, struct iob_error **err);

/* A size with an optional K, M, G or T suffix (powers of 1024). */
int sd_parse_size(const char *s, uint64_t *out, struct iob_error **err);

const char *sd_model_name(enum sd_model_kind k);

#endif
