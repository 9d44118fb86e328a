// SPDX-License-Identifier: Apache-2.0
/* client/annotations.c: every io.iobatch.* key, walked: a valid value, a
 * malformed one and its bounds each, through iob_ann_parse as the shim
 * and the hook call it; the trust table beside the keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "client/annotations.h"
#include "common/cleanup.h"

/* One annotation as the only one of a container. */
struct one {
  const char *key, *value;
};

static const char *get_one(void *ctx, const char *key) {
  const struct one *o = ctx;
  return strcmp(o->key, key) == 0 ? o->value : NULL;
}

/* A case: KEY = VALUE parses (ok) and gives WANT (the field, printed), or
 * fails naming the key. */
struct ann_case {
  const char *key, *value;
  bool ok;
  const char *want;
};

static char long_key[IOB_ANN_WORKLOAD_MAX + 2];

static const struct ann_case cases[] = {
    /* io.iobatch.class: every class, latency and unknown included */
    {IOB_ANN_CLASS, "seq-read", true, "seq-read"},
    {IOB_ANN_CLASS, "rand-read", true, "rand-read"},
    {IOB_ANN_CLASS, "seq-write", true, "seq-write"},
    {IOB_ANN_CLASS, "rand-write", true, "rand-write"},
    {IOB_ANN_CLASS, "mixed", true, "mixed"},
    {IOB_ANN_CLASS, "idle", true, "idle"},
    {IOB_ANN_CLASS, "unknown", true, "unknown"},
    {IOB_ANN_CLASS, "latency", true, "latency"},
    {IOB_ANN_CLASS, "Seq-Read", false, NULL},
    {IOB_ANN_CLASS, "seq-read ", false, NULL},
    {IOB_ANN_CLASS, "invalid", false, NULL},
    {IOB_ANN_CLASS, "bogus", false, NULL},
    /* io.iobatch.kind */
    {IOB_ANN_KIND, "job", true, "job"},
    {IOB_ANN_KIND, "service", true, "service"},
    {IOB_ANN_KIND, "sandbox", true, "sandbox"},
    {IOB_ANN_KIND, "Service", false, NULL},
    {IOB_ANN_KIND, "pod", false, NULL},
    /* io.iobatch.max-hold-ms: 0 to UINT32_MAX, digits only */
    {IOB_ANN_MAX_HOLD, "0", true, "0"},
    {IOB_ANN_MAX_HOLD, "1500", true, "1500"},
    {IOB_ANN_MAX_HOLD, "4294967295", true, "4294967295"},
    {IOB_ANN_MAX_HOLD, "4294967296", false, NULL},
    {IOB_ANN_MAX_HOLD, "99999999999999999999999", false, NULL},
    {IOB_ANN_MAX_HOLD, "-1", false, NULL},
    {IOB_ANN_MAX_HOLD, "+5", false, NULL},
    {IOB_ANN_MAX_HOLD, " 5", false, NULL},
    {IOB_ANN_MAX_HOLD, "5s", false, NULL},
    {IOB_ANN_MAX_HOLD, "1e3", false, NULL},
    /* io.iobatch.workload: any key up to 1024 bytes */
    {IOB_ANN_WORKLOAD, "etl-nightly", true, "etl-nightly"},
    {IOB_ANN_WORKLOAD, long_key + 1, true, "(1024 bytes)"},
    {IOB_ANN_WORKLOAD, long_key, false, NULL},
    /* io.iobatch.latency-target: 1us to 60s */
    {IOB_ANN_LATENCY_TARGET, "5ms", true, "5000"},
    {IOB_ANN_LATENCY_TARGET, "500us", true, "500"},
    {IOB_ANN_LATENCY_TARGET, "0.5ms", true, "500"},
    {IOB_ANN_LATENCY_TARGET, "1us", true, "1"},
    {IOB_ANN_LATENCY_TARGET, "60s", true, "60000000"},
    {IOB_ANN_LATENCY_TARGET, "0.5us", false, NULL},
    {IOB_ANN_LATENCY_TARGET, "0us", false, NULL},
    {IOB_ANN_LATENCY_TARGET, "60.001s", false, NULL},
    {IOB_ANN_LATENCY_TARGET, "61s", false, NULL},
    {IOB_ANN_LATENCY_TARGET, "5", false, NULL},
    {IOB_ANN_LATENCY_TARGET, "5 ms", false, NULL},
    {IOB_ANN_LATENCY_TARGET, "-5ms", false, NULL},
    {IOB_ANN_LATENCY_TARGET, "1.2.3ms", false, NULL},
    {IOB_ANN_LATENCY_TARGET, "ms", false, NULL},
    {IOB_ANN_LATENCY_TARGET, "1e3us", false, NULL},
};

static int setup(void **state) {
  (void)state;
  memset(long_key, 'k', sizeof(long_key) - 1);
  long_key[sizeof(long_key) - 1] = '\0';
  return 0;
}

/* What KEY set in A, printed. */
static void field(const char *key, const struct iob_ann *a, char *buf, size_t n) {
  if (strcmp(key, IOB_ANN_CLASS) == 0)
    snprintf(buf, n, "%s", a->cls ? a->cls : "(null)");
  else if (strcmp(key, IOB_ANN_KIND) == 0)
    snprintf(buf, n, "%s", a->kind ? a->kind : "(null)");
  else if (strcmp(key, IOB_ANN_MAX_HOLD) == 0)
    snprintf(buf, n, "%u", a->max_hold_ms);
  else if (strcmp(key, IOB_ANN_LATENCY_TARGET) == 0)
    snprintf(buf, n, "%u", a->lat_target_us);
  else if (strcmp(key, IOB_ANN_WORKLOAD) == 0 && a->workload &&
           strlen(a->workload) == IOB_ANN_WORKLOAD_MAX)
    snprintf(buf, n, "(1024 bytes)");
  else if (strcmp(key, IOB_ANN_WORKLOAD) == 0)
    snprintf(buf, n, "%s", a->workload ? a->workload : "(null)");
  else
    fail_msg("key '%s' has no field in this test: add it", key);
}

/* Every key of iob_ann_defs, every case: the parse the shim and the hook
 * call, and the key's own parser. */
static void test_every_key(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    const struct ann_case *c = &cases[i];
    const struct iob_ann_def *d = iob_ann_def_of(c->key);
    assert_non_null(d);
    struct one o = {c->key, c->value};
    struct iob_ann a;
    cleanup_error struct iob_error *err = NULL;
    int r = iob_ann_parse(get_one, &o, 0, &a, &err);
    if (c->ok && r < 0)
      fail_msg("%s=%.40s refused: %s", c->key, c->value, err->msg);
    if (!c->ok && r == 0)
      fail_msg("%s=%.40s taken", c->key, c->value);
    if (!c->ok) {
      assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
      /* the error names the annotation */
      if (strstr(err->msg, c->key) == NULL)
        fail_msg("error for %s does not name it: %s", c->key, err->msg);
      continue;
    }
    char got[64];
    field(c->key, &a, got, sizeof(got));
    if (strcmp(got, c->want) != 0)
      fail_msg("%s=%.40s gave '%s', want '%s'", c->key, c->value, got, c->want);
  }
}

/* A key added to iob_ann_defs without cases here fails this test. */
static void test_every_key_has_cases(void **state) {
  (void)state;
  for (size_t k = 0; k < iob_ann_defs_len; k++) {
    int good = 0, bad = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
      if (strcmp(cases[i].key, iob_ann_defs[k].key) == 0)
        cases[i].ok ? good++ : bad++;
    if (good == 0 || bad == 0)
      fail_msg("'%s' needs valid and malformed cases here", iob_ann_defs[k].key);
  }
}

/* Keys: ours, unique, described; each with a trust row, and each trust
 * row about a key. */
static void test_defs_and_trust_table(void **state) {
  (void)state;
  assert_true(iob_ann_defs_len >= 5);
  for (size_t k = 0; k < iob_ann_defs_len; k++) {
    const struct iob_ann_def *d = &iob_ann_defs[k];
    assert_int_equal(strncmp(d->key, IOB_ANN_PREFIX, strlen(IOB_ANN_PREFIX)), 0);
    assert_true(*d->values && *d->meaning && d->readers && d->parse);
    assert_ptr_equal(iob_ann_def_of(d->key), d);
    bool row = false;
    for (size_t r = 0; r < iob_ann_trust_table_len; r++)
      row |= strcmp(iob_ann_trust_table[r].key, d->key) == 0;
    if (!row)
      fail_msg("'%s' has no row in iob_ann_trust_table", d->key);
  }
  for (size_t r = 0; r < iob_ann_trust_table_len; r++)
    if (iob_ann_def_of(iob_ann_trust_table[r].key) == NULL)
      fail_msg("trust row for '%s', which is no key", iob_ann_trust_table[r].key);
  assert_null(iob_ann_def_of("io.iobatch.max-hold"));
  assert_null(iob_ann_def_of(NULL));
}

/* Absent and empty are "not said"; a reader parses only its keys. */
static void test_absent_empty_readers(void **state) {
  (void)state;
  struct iob_ann a;
  cleanup_error struct iob_error *err = NULL;
  for (size_t k = 0; k < iob_ann_defs_len; k++) {
    struct one o = {iob_ann_defs[k].key, ""};
    assert_int_equal(iob_ann_parse(get_one, &o, 0, &a, &err), 0);
    assert_null(a.cls);
    assert_int_equal(a.cls_value, BATCH_UNKNOWN);
    assert_null(a.kind);
    assert_null(a.workload);
    assert_int_equal(a.max_hold_ms, 0);
    assert_int_equal(a.lat_target_us, 0);
  }
  /* the hook does not read max-hold-ms: a malformed one is not its
   * business, the shim's is */
  struct one hold = {IOB_ANN_MAX_HOLD, "soon"};
  assert_int_equal(iob_ann_parse(get_one, &hold, IOB_ANN_BY_HOOK, &a, &err), 0);
  assert_int_equal(iob_ann_parse(get_one, &hold, IOB_ANN_BY_SHIM, &a, &err), -1);
  assert_non_null(strstr(err->msg, IOB_ANN_MAX_HOLD));
}

/* Several at once, the first malformed one named. */
static const char *get_many(void *ctx, const char *key) {
  const struct one *o = ctx;
  for (; o->key; o++)
    if (strcmp(o->key, key) == 0)
      return o->value;
  return NULL;
}

static void test_many(void **state) {
  (void)state;
  struct one all[] = {{IOB_ANN_CLASS, "latency"},       {IOB_ANN_KIND, "service"},
                      {IOB_ANN_MAX_HOLD, "2000"},       {IOB_ANN_WORKLOAD, "db"},
                      {IOB_ANN_LATENCY_TARGET, "2ms"},  {"io.iobatch.other", "x"},
                      {"io.kubernetes.cri.image-name", "img"}, {NULL, NULL}};
  struct iob_ann a;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(iob_ann_parse(get_many, all, 0, &a, &err), 0);
  assert_int_equal(a.cls_value, BATCH_LATENCY);
  assert_string_equal(a.kind, "service");
  assert_int_equal(a.max_hold_ms, 2000);
  assert_string_equal(a.workload, "db");
  assert_int_equal(a.lat_target_us, 2000);
  all[1].value = "daemon";
  assert_int_equal(iob_ann_parse(get_many, all, 0, &a, &err), -1);
  assert_string_equal(err->msg, "invalid annotation 'io.iobatch.kind': unknown kind 'daemon' "
                                "(expected job, service or sandbox)");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_every_key, setup),
      cmocka_unit_test(test_every_key_has_cases),
      cmocka_unit_test(test_defs_and_trust_table),
      cmocka_unit_test(test_absent_empty_readers),
      cmocka_unit_test(test_many),
  };
  return cmocka_run_group_tests_name("client_annotations", tests, NULL, NULL);
}
