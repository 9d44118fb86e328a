// SPDX-License-Identifier: Apache-2.0
/* Every io.iobatch.* annotation, defined once: its key, what it may say,
 * what it means, who reads it, its parser and its bounds, and beside them
 * the trust table (what a declaration does from a namespace
 * trust_declared trusts and from one it does not).  The shim
 * (config.json), the hook (the OCI state), the detector's kind rule
 * (wcd/kind.c), the agent (the declared class of a Register, the trust
 * rules) and iobatchctl (`iobatchctl annotations`) all take the keys and
 * the parsers from here.
 *
 * The man pages (packaging/man/) and README.md's annotation table are
 * checked against iob_ann_defs by tests/annotations-doc.sh: every key here
 * is in both, no other io.iobatch.* key is in either, and a man page of
 * the shim or the hook names only keys that program reads.
 *
 * Built into libbatch (client/module.mk says why): plain C, no I/O. */
#ifndef IOB_CLIENT_ANNOTATIONS_H
#define IOB_CLIENT_ANNOTATIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "batcher/class.h"
#include "common/error.h"

#define IOB_ANN_PREFIX "io.iobatch."

/* The container's I/O class: batch_class_parse's names, "latency"
 * included (asks for protection). */
#define IOB_ANN_CLASS "io.iobatch.class"
/* "job", "service" or "sandbox" (wcd/kind.h: the CRI's sandbox wins). */
#define IOB_ANN_KIND "io.iobatch.kind"
/* The longest hold, milliseconds, 0 to UINT32_MAX (0: the agent's
 * max_hold). */
#define IOB_ANN_MAX_HOLD "io.iobatch.max-hold-ms"
/* The profile key, at most IOB_ANN_WORKLOAD_MAX bytes. */
#define IOB_ANN_WORKLOAD "io.iobatch.workload"
#define IOB_ANN_WORKLOAD_MAX 1024
/* A protected container's objective: the p99 of its block I/O, "5ms",
 * "500us", "0.5ms" or "1s", 1us to 60s. */
#define IOB_ANN_LATENCY_TARGET "io.iobatch.latency-target"
#define IOB_ANN_LATENCY_TARGET_MIN_US 1u
#define IOB_ANN_LATENCY_TARGET_MAX_US (60u * 1000 * 1000)

/* Who reads a key from the container's annotations. */
enum iob_ann_reader {
  IOB_ANN_BY_SHIM = 1 << 0, /* containerd-shim-iobatch-v2, from config.json */
  IOB_ANN_BY_HOOK = 1 << 1, /* iobatch-hook, from the OCI state */
};

/* A container's declarations, parsed.  An absent or empty annotation is
 * not said: NULL or 0.  Strings point into the annotation values (cls and
 * kind: a static name). */
struct iob_ann {
  const char *cls; /* batch_class_name(cls_value) */
  enum batch_class cls_value;
  const char *kind;       /* "job", "service", "sandbox" */
  uint32_t max_hold_ms;   /* 0: not said */
  uint32_t lat_target_us; /* 0: not said */
  const char *workload;
};

struct iob_ann_def {
  const char *key;
  const char *values;  /* what it may say */
  const char *meaning; /* what it means */
  unsigned readers;    /* enum iob_ann_reader */
  /* S (non-empty) into its field of OUT; INVALID_ARGUMENT naming the key. */
  int (*parse)(const char *s, struct iob_ann *out, struct iob_error **err);
};

extern const struct iob_ann_def iob_ann_defs[];
extern const size_t iob_ann_defs_len;

/* The definition of KEY, or NULL when it is none of ours. */
const struct iob_ann_def *iob_ann_def_of(const char *key);

/* The value of annotation KEY, or NULL when there is none. */
typedef const char *(*iob_ann_get_fn)(void *ctx, const char *key);

/* Every key of iob_ann_defs that READERS reads (0: all), through GET;
 * the first malformed one fails. */
int iob_ann_parse(iob_ann_get_fn get, void *ctx, unsigned readers, struct iob_ann *out,
                  struct iob_error **err);

/* One value (what the agent checks in a Register, and the fuzz target). */
int iob_ann_class_parse(const char *s, enum batch_class *out, struct iob_error **err);
int iob_ann_kind_parse(const char *s, const char **out, struct iob_error **err);
int iob_ann_latency_target_parse(const char *s, uint32_t *us, struct iob_error **err);
int iob_ann_max_hold_parse(const char *s, uint32_t *ms, struct iob_error **err);

/* The trust table: every declaration a container can make, and what the
 * agent does with it from a namespace trust_declared trusts and from one
 * it does not.  The rule: an untrusted declaration is a hint only; it
 * never lowers a hold, never raises the container's own protection and
 * never overrides a measured class.  test_agent_admission walks every row
 * and checks the rule it states on the admission state machine;
 * test_client_annotations checks that every key has a row. */
struct iob_ann_trust {
  const char *key;       /* the annotation */
  const char *values;    /* what it may say */
  const char *trusted;   /* what it does from a trusted namespace */
  const char *untrusted; /* ... and from an untrusted one */
};

extern const struct iob_ann_trust iob_ann_trust_table[];
extern const size_t iob_ann_trust_table_len;

#endif
