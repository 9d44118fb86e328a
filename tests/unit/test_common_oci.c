// SPDX-License-Identifier: Apache-2.0
/* The OCI config reader (common/oci.c) on good and malformed config.json:
 * every field iobatch reads, of the wrong type, is an INVALID_ARGUMENT
 * error naming it; fields it does not read are not looked at. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/cleanup.h"
#include "common/oci.h"

static int parse(const char *text, struct iob_oci_config *cfg, struct iob_error **err) {
  return iob_oci_config_parse(text, strlen(text), "config.json", cfg, err);
}

static void test_oci_ok(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct iob_oci_config cfg;
  const char *t = "{\"ociVersion\":\"1.2.0\",\"process\":{\"args\":[\"fio\",\"--bs=4k\"],"
                  "\"env\":7},\"annotations\":{\"io.iobatch.class\":\"seq-read\",\"e\":\"\"},"
                  "\"hooks\":{\"prestart\":[{\"path\":\"/bin/true\"}],\"poststop\":[]},"
                  "\"linux\":{\"cgroupsPath\":\"/a/b\"}}";
  assert_int_equal(parse(t, &cfg, &err), 0);
  assert_int_equal(cfg.nargs, 2);
  assert_string_equal(cfg.args[0], "fio");
  assert_string_equal(cfg.args[1], "--bs=4k");
  assert_null(cfg.args[2]);
  assert_string_equal(iob_oci_annotation(&cfg, "io.iobatch.class"), "seq-read");
  assert_null(iob_oci_annotation(&cfg, "e")); /* empty is not set */
  assert_null(iob_oci_annotation(&cfg, "missing"));
  assert_int_equal(json_array_size(json_object_get(cfg.hooks, "prestart")), 1);
  iob_oci_config_release(&cfg);
  assert_null(cfg.root);
  /* Nothing iobatch reads: nothing set, not an error. */
  assert_int_equal(parse("{}", &cfg, &err), 0);
  assert_null(cfg.annotations);
  assert_null(cfg.hooks);
  assert_null(cfg.args);
  assert_int_equal(cfg.nargs, 0);
  assert_null(iob_oci_annotation(&cfg, "x"));
  iob_oci_config_release(&cfg);
  /* An empty args array is an array. */
  assert_int_equal(parse("{\"process\":{\"args\":[]}}", &cfg, &err), 0);
  assert_non_null(cfg.args);
  assert_null(cfg.args[0]);
  iob_oci_config_release(&cfg);
  /* LEN, not the NUL, ends the text. */
  const char *cut = "{\"annotations\":{}} trailing";
  assert_int_equal(iob_oci_config_parse(cut, 18, "config.json", &cfg, &err), 0);
  iob_oci_config_release(&cfg);
}

static void test_oci_malformed(void **state) {
  (void)state;
  static const struct {
    const char *text, *msg;
  } bad[] = {
      {"", "invalid 'config.json': "},
      {"{\"process\":", "invalid 'config.json': "},
      {"{\"a\":1} trailing", "invalid 'config.json': "},
      {"[]", "invalid 'config.json': not a JSON object"},
      {"{\"s\":\"\\u0000\"}", "invalid 'config.json': "}, /* NUL: C would see less */
      {"{\"annotations\":[]}", "invalid 'config.json': 'annotations' is not an object"},
      {"{\"annotations\":\"a=b\"}", "invalid 'config.json': 'annotations' is not an object"},
      {"{\"annotations\":{\"a\":\"x\",\"b\":1}}",
       "invalid 'config.json': annotation 'b' is not a string"},
      {"{\"annotations\":{\"n\":null}}", "invalid 'config.json': annotation 'n' is not a string"},
      {"{\"process\":\"sh\"}", "invalid 'config.json': 'process' is not an object"},
      {"{\"process\":{\"args\":\"fio\"}}", "invalid 'config.json': 'process.args' is not an array"},
      {"{\"process\":{\"args\":{}}}", "invalid 'config.json': 'process.args' is not an array"},
      {"{\"process\":{\"args\":[\"fio\",3]}}",
       "invalid 'config.json': 'process.args[1]' is not a string"},
      {"{\"process\":{\"args\":[null]}}",
       "invalid 'config.json': 'process.args[0]' is not a string"},
      {"{\"hooks\":[]}", "invalid 'config.json': 'hooks' is not an object"},
      {"{\"hooks\":{\"createRuntime\":{}}}",
       "invalid 'config.json': 'hooks.createRuntime' is not an array"},
      {"{\"hooks\":{\"prestart\":[],\"poststop\":null}}",
       "invalid 'config.json': 'hooks.poststop' is not an array"},
  };
  for (size_t i = 0; i < IOB_ARRAY_SIZE(bad); i++) {
    cleanup_error struct iob_error *err = NULL;
    struct iob_oci_config cfg;
    if (parse(bad[i].text, &cfg, &err) != -1)
      fail_msg("accepted #%zu: %s", i, bad[i].text);
    assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
    if (strncmp(err->msg, bad[i].msg, strlen(bad[i].msg)) != 0)
      fail_msg("#%zu: got '%s', want '%s'", i, err->msg, bad[i].msg);
    assert_null(cfg.root); /* nothing held after an error */
    assert_null(cfg.args);
  }
}

static void test_oci_size(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct iob_oci_config cfg;
  /* Over the limit: refused before it is parsed (the text is never read). */
  assert_int_equal(iob_oci_config_parse("{}", IOB_OCI_CONFIG_MAX + 1, "config.json", &cfg, &err),
                   -1);
  assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
  assert_non_null(strstr(err->msg, "larger than 16777216 bytes"));
}

static void test_oci_load(void **state) {
  (void)state;
  char dir[] = "/tmp/iob-oci.XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[64];
  snprintf(path, sizeof(path), "%s/config.json", dir);
  cleanup_error struct iob_error *err = NULL;
  struct iob_oci_config cfg;
  /* No file: the error names it. */
  assert_int_equal(iob_oci_config_load(dir, &cfg, &err), -1);
  assert_non_null(strstr(err->msg, path));
  iob_error_release(&err);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs("{\"annotations\":{\"k\":\"v\"},\"process\":{\"args\":[\"sh\"]}}", f);
  fclose(f);
  assert_int_equal(iob_oci_config_load(dir, &cfg, &err), 0);
  assert_string_equal(iob_oci_annotation(&cfg, "k"), "v");
  assert_int_equal(cfg.nargs, 1);
  iob_oci_config_release(&cfg);
  /* A bad type in a file: the error names the file and the field. */
  f = fopen(path, "w");
  assert_non_null(f);
  fputs("{\"process\":{\"args\":[1]}}", f);
  fclose(f);
  assert_int_equal(iob_oci_config_load(dir, &cfg, &err), -1);
  assert_non_null(strstr(err->msg, path));
  assert_non_null(strstr(err->msg, "'process.args[0]' is not a string"));
  iob_error_release(&err);
  /* Larger than the limit: refused from its size, before reading. */
  assert_int_equal(truncate(path, (off_t)IOB_OCI_CONFIG_MAX + 1), 0);
  assert_int_equal(iob_oci_config_load(dir, &cfg, &err), -1);
  assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
  assert_non_null(strstr(err->msg, "larger than"));
  unlink(path);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_oci_ok),
      cmocka_unit_test(test_oci_malformed),
      cmocka_unit_test(test_oci_size),
      cmocka_unit_test(test_oci_load),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
