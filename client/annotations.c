// SPDX-License-Identifier: Apache-2.0
/* The io.iobatch.* annotations and their trust table (client/annotations.h). */
#include "client/annotations.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "batcher/kind.h"

int iob_ann_class_parse(const char *s, enum batch_class *out, struct iob_error **err) {
  if (batch_class_parse(s, out) < 0)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "invalid annotation '%s': unknown class '%.64s' (expected seq-read, "
                          "rand-read, seq-write, rand-write, mixed, idle, unknown or latency)",
                          IOB_ANN_CLASS, s);
  return 0;
}

int iob_ann_kind_parse(const char *s, const char **out, struct iob_error **err) {
  enum batch_kind k;
  if (batch_kind_parse(s, &k) == 0) {
    *out = batch_kind_name(k);
    return 0;
  }
  return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                        "invalid annotation '%s': unknown kind '%.64s' (expected job, "
                        "service or sandbox)",
                        IOB_ANN_KIND, s);
}

int iob_ann_max_hold_parse(const char *s, uint32_t *ms, struct iob_error **err) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (*s < '0' || *s > '9' || *end || errno || v > UINT32_MAX)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "invalid annotation '%s': '%.64s' is not a number of milliseconds "
                          "(0 to %u)",
                          IOB_ANN_MAX_HOLD, s, UINT32_MAX);
  *ms = (uint32_t)v;
  return 0;
}

int iob_ann_latency_target_parse(const char *s, uint32_t *us, struct iob_error **err) {
  /* digits, at most one '.', then a unit; nothing else (no sign, no
   * exponent, no spaces) */
  size_t n = 0, dots = 0, digits = 0;
  for (; s[n] && (s[n] == '.' || (s[n] >= '0' && s[n] <= '9')); n++) {
    dots += s[n] == '.';
    digits += s[n] != '.';
  }
  const char *unit = s + n;
  double mult = !strcmp(unit, "us") ? 1 : !strcmp(unit, "ms") ? 1e3 : !strcmp(unit, "s") ? 1e6 : 0;
  char num[32];
  double v = 0;
  if (digits > 0 && dots <= 1 && n < sizeof(num) && mult > 0) {
    memcpy(num, s, n);
    num[n] = '\0';
    v = strtod(num, NULL) * mult;
  }
  if (!(v >= IOB_ANN_LATENCY_TARGET_MIN_US && v <= IOB_ANN_LATENCY_TARGET_MAX_US))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "invalid annotation '%s': '%.64s' is not a latency from 1us to 60s "
                          "(e.g. 5ms, 500us)",
                          IOB_ANN_LATENCY_TARGET, s);
  *us = (uint32_t)(v + 0.5);
  return 0;
}

static int parse_class(const char *s, struct iob_ann *out, struct iob_error **err) {
  if (iob_ann_class_parse(s, &out->cls_value, err) < 0)
    return -1;
  out->cls = batch_class_name(out->cls_value);
  return 0;
}

static int parse_kind(const char *s, struct iob_ann *out, struct iob_error **err) {
  return iob_ann_kind_parse(s, &out->kind, err);
}

static int parse_max_hold(const char *s, struct iob_ann *out, struct iob_error **err) {
  return iob_ann_max_hold_parse(s, &out->max_hold_ms, err);
}

static int parse_workload(const char *s, struct iob_ann *out, struct iob_error **err) {
  if (strnlen(s, IOB_ANN_WORKLOAD_MAX + 1) > IOB_ANN_WORKLOAD_MAX)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "invalid annotation '%s': '%.32s...' is longer than %d bytes",
                          IOB_ANN_WORKLOAD, s, IOB_ANN_WORKLOAD_MAX);
  out->workload = s;
  return 0;
}

static int parse_latency_target(const char *s, struct iob_ann *out, struct iob_error **err) {
  return iob_ann_latency_target_parse(s, &out->lat_target_us, err);
}

#define BOTH (IOB_ANN_BY_SHIM | IOB_ANN_BY_HOOK)

const struct iob_ann_def iob_ann_defs[] = {
    {IOB_ANN_CLASS, "seq-read, rand-read, seq-write, rand-write, mixed, idle, unknown, latency",
     "the container's I/O class; latency asks for protection", BOTH, parse_class},
    {IOB_ANN_KIND, "job, service, sandbox",
     "job: planned, may be held; service: open-ended, never held; sandbox: never planned", BOTH,
     parse_kind},
    {IOB_ANN_MAX_HOLD, "milliseconds, 0 to 4294967295",
     "the longest the agent may hold the container (0: the agent's max_hold)", IOB_ANN_BY_SHIM,
     parse_max_hold},
    {IOB_ANN_WORKLOAD, "a key, at most 1024 bytes",
     "the key the agent learns the workload's profile under (else the image name, else the "
     "command line)",
     BOTH, parse_workload},
    {IOB_ANN_LATENCY_TARGET, "5ms, 500us, 0.5ms, 1s: 1us to 60s",
     "a protected container's objective: the p99 of its block I/O (else learned)", BOTH,
     parse_latency_target},
};

const size_t iob_ann_defs_len = sizeof(iob_ann_defs) / sizeof(iob_ann_defs[0]);

const struct iob_ann_def *iob_ann_def_of(const char *key) {
  for (size_t i = 0; key && i < iob_ann_defs_len; i++)
    if (strcmp(iob_ann_defs[i].key, key) == 0)
      return &iob_ann_defs[i];
  return NULL;
}

int iob_ann_parse(iob_ann_get_fn get, void *ctx, unsigned readers, struct iob_ann *out,
                  struct iob_error **err) {
  memset(out, 0, sizeof(*out));
  out->cls_value = BATCH_UNKNOWN;
  for (size_t i = 0; i < iob_ann_defs_len; i++) {
    const struct iob_ann_def *d = &iob_ann_defs[i];
    if (readers && !(d->readers & readers))
      continue;
    const char *v = get(ctx, d->key);
    if (v && *v && d->parse(v, out, err) < 0)
      return -1;
  }
  return 0;
}

const struct iob_ann_trust iob_ann_trust_table[] = {
    {IOB_ANN_CLASS, "seq-read, rand-read, seq-write, rand-write, mixed, idle, unknown",
     "the class: never measured over, planned and learned as said; the hook writes its first "
     "io.weight, journalled by the agent first",
     "a hint, shown by status: planned only as a writing class (seq-write, rand-write, "
     "mixed); idle, a reader or unknown is planned as unknown (a probe) and is a protection "
     "target; the first measurement or a profile replaces it; never learned; no io.weight from "
     "the hook"},
    {IOB_ANN_CLASS, "latency",
     "protected at once: batch containers are capped and held for it; planned as a service",
     "never protected by it: a job, protected only as any container is (protect = "
     "detected and its I/O looks latency-sensitive), and only while it does"},
    {IOB_ANN_KIND, "job, service, sandbox",
     "the kind: a service is never held and takes no batch slot, a sandbox is never planned",
     "job stands; service and sandbox are ignored: a job, held and planned (logged once)"},
    {IOB_ANN_MAX_HOLD, "milliseconds",
     "its deadline, but at least 1 s (AGENT_MIN_HOLD_MS) and the batch window, unless "
     "max_hold is shorter",
     "ignored (logged once): its deadline is the agent's max_hold"},
    {IOB_ANN_WORKLOAD, "a key (at most 1024 bytes of UTF-8)",
     "the profile key, within the container's own namespace",
     "the same: a tenant names only its own namespace's profiles, at most "
     "profiles_per_namespace of them, evicted oldest first"},
    {IOB_ANN_LATENCY_TARGET, "microseconds",
     "the container's latency objective while it is protected (agent/protect.h)",
     "ignored (logged once): its objective is learned"},
};

const size_t iob_ann_trust_table_len = sizeof(iob_ann_trust_table) / sizeof(iob_ann_trust_table[0]);
