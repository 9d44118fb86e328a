// SPDX-License-Identifier: Apache-2.0
/* "key = value" files, in the manner of systemd's conf-parser: each format
 * has a table of keys (name, parser, offset of the field, bounds) and this
 * splits a line and finds its key; the caller keeps its own line loop and
 * messages (each format's are part of its tests).  A parser writes the
 * field only for a valid value. */
#ifndef IOB_CONF_H
#define IOB_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct iob_conf_key;

/* Parse val into field (the key's offset in the caller's struct); ctx is
 * what the caller passed to iob_conf_set.  Returns 0 or -1. */
typedef int (*iob_conf_parser_fn)(const struct iob_conf_key *k, const char *val, void *field,
                                  void *ctx);

struct iob_conf_key {
  const char *name;
  iob_conf_parser_fn parse;
  size_t off;
  double lo, hi;      /* the valid range, for parsers that take one */
  const char *expect; /* what a valid value is, for messages */
};

/* Trim a leading '\r' as well as blanks (iobatchd.conf does; others keep
 * it, which then makes an unknown key). */
#define IOB_CONF_TRIM_CR 1u

/* Strip a '#' comment and blanks from line (in place).  Returns 0 for a
 * blank line, 1 with *key and *val (trimmed, either may be empty) for
 * "key = value", -1 without '=' (*key: the trimmed line). */
int iob_conf_split(char *line, unsigned flags, char **key, char **val);

/* The index of name in keys[0..n), or -1. */
int iob_conf_find(const struct iob_conf_key *keys, size_t n, const char *name);

/* k->parse on the field of obj at k->off. */
int iob_conf_set(const struct iob_conf_key *k, const char *val, void *obj, void *ctx);

/* Parsers for iob_conf_key.parse: a finite double in [lo, hi] (no leading
 * blank); a uint64_t of decimal digits in [lo, hi]; the same with a K, M or
 * G suffix (powers of 1024). */
int iob_conf_double(const struct iob_conf_key *k, const char *val, void *field, void *ctx);
int iob_conf_u64(const struct iob_conf_key *k, const char *val, void *field, void *ctx);
int iob_conf_bytes(const struct iob_conf_key *k, const char *val, void *field, void *ctx);

#endif
