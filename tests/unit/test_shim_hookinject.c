/* Unit tests for the shim's hook injection (shim/hookinject.c): the hook is
 * added once, everything else in config.json is kept, malformed specs are
 * refused with INVALID_ARGUMENT and nothing written, the file is replaced
 * atomically with its mode. */
#include <dirent.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "common/cleanup.h"
#include "shim/hookinject.h"

#define HOOK "/opt/iobatch/bin/iobatch-hook"

static const char *spec =
    "{\"ociVersion\":\"1.0.2-dev\",\"process\":{\"args\":[\"/bin/sh\",\"-c\",\"echo \\u00e9\"],"
    "\"cwd\":\"/\",\"env\":[\"A=1\"]},\"root\":{\"path\":\"rootfs\"},"
    "\"annotations\":{\"io.iobatch.class\":\"seq-write\"},"
    "\"linux\":{\"resources\":{\"cpu\":{\"shares\":1024,\"quota\":-1}},\"uidMappings\":[]},"
    "\"hooks\":{\"prestart\":[{\"path\":\"/usr/bin/other\",\"args\":[\"other\",\"x\"]}]}}";

static json_t *load(const char *s) {
  json_error_t je;
  json_t *j = json_loads(s, 0, &je);
  assert_non_null(j);
  return j;
}

static void test_inject_keeps_everything_else(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  cleanup_free char *out = NULL;
  assert_int_equal(shim_hook_inject_json(spec, strlen(spec), HOOK, "/run/a.sock", &out, &err), 0);
  assert_non_null(out);
  json_t *before = load(spec), *after = load(out);
  /* Appended to prestart, after the spec's own prestart hook. */
  json_t *pre = json_object_get(json_object_get(after, "hooks"), "prestart");
  assert_int_equal(json_array_size(pre), 2);
  assert_null(json_object_get(json_object_get(after, "hooks"), "createRuntime"));
  json_t *want =
      load("{\"path\":\"" HOOK
           "\",\"args\":[\"iobatch-hook\",\"--socket\",\"/run/a.sock\"],\"timeout\":10}");
  assert_true(json_equal(json_array_get(pre, 1), want));
  /* Remove what was added: the rest must be exactly the original. */
  assert_int_equal(json_array_remove(pre, 1), 0);
  assert_true(json_equal(before, after));
  json_decref(want);
  json_decref(before);
  json_decref(after);
}

static void test_inject_once(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  cleanup_free char *once = NULL, *twice = NULL;
  assert_int_equal(shim_hook_inject_json(spec, strlen(spec), HOOK, NULL, &once, &err), 0);
  assert_non_null(once);
  assert_int_equal(shim_hook_inject_json(once, strlen(once), HOOK, NULL, &twice, &err), 0);
  assert_null(twice);
  /* The hook under another path, in prestart or createRuntime, counts as
   * present: it registers the container from either. */
  const char *other = "{\"hooks\":{\"prestart\":[{\"path\":\"/usr/local/bin/iobatch-hook\"}]}}";
  assert_int_equal(shim_hook_inject_json(other, strlen(other), HOOK, NULL, &twice, &err), 0);
  assert_null(twice);
  const char *cr = "{\"hooks\":{\"createRuntime\":[{\"path\":\"" HOOK "\"}]}}";
  assert_int_equal(shim_hook_inject_json(cr, strlen(cr), HOOK, NULL, &twice, &err), 0);
  assert_null(twice);
  /* Elsewhere (poststop, say) it cannot register anything: injected. */
  const char *post = "{\"hooks\":{\"poststop\":[{\"path\":\"" HOOK "\"}]}}";
  assert_int_equal(shim_hook_inject_json(post, strlen(post), HOOK, NULL, &twice, &err), 0);
  assert_string_equal(twice, "{\"hooks\":{\"poststop\":[{\"path\":\"" HOOK
                             "\"}],\"prestart\":[{\"path\":\"" HOOK
                             "\",\"args\":[\"iobatch-hook\"],\"timeout\":10}]}}");
  free(twice);
  twice = NULL;
  /* No hooks at all: the member is created; no socket: no --socket. */
  const char *bare = "{\"ociVersion\":\"1.0.2\"}";
  assert_int_equal(shim_hook_inject_json(bare, strlen(bare), HOOK, NULL, &twice, &err), 0);
  assert_string_equal(twice,
                      "{\"ociVersion\":\"1.0.2\",\"hooks\":{\"prestart\":[{\"path\":\"" HOOK
                      "\",\"args\":[\"iobatch-hook\"],\"timeout\":10}]}}");
}

static void test_inject_malformed(void **state) {
  (void)state;
  static const struct {
    const char *json, *msg;
  } bad[] = {
      {"", "invalid 'config.json': "},
      {"{\"ociVersion\":", "invalid 'config.json': "},
      {"[1,2]", "invalid 'config.json': not a JSON object"},
      {"{\"hooks\":[]}", "invalid 'config.json': 'hooks' is not an object"},
      {"{\"hooks\":{\"createRuntime\":{}}}",
       "invalid 'config.json': 'hooks.createRuntime' is not an array"},
      {"{\"hooks\":{\"prestart\":\"/bin/true\"}}",
       "invalid 'config.json': 'hooks.prestart' is not an array"},
      {"{\"hooks\":{\"prestart\":[{\"path\":\"" HOOK "\"}],\"poststop\":null}}",
       "invalid 'config.json': 'hooks.poststop' is not an array"},
      {"{\"a\":1} trailing", "invalid 'config.json': "},
  };
  for (size_t i = 0; i < IOB_ARRAY_SIZE(bad); i++) {
    cleanup_error struct iob_error *err = NULL;
    char *out = NULL;
    assert_int_equal(
        shim_hook_inject_json(bad[i].json, strlen(bad[i].json), HOOK, NULL, &out, &err), -1);
    assert_null(out);
    assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
    assert_memory_equal(err->msg, bad[i].msg, strlen(bad[i].msg));
  }
  /* A socket path JSON cannot carry is an error, not a hook without it. */
  cleanup_error struct iob_error *err = NULL;
  char *out = NULL;
  assert_int_equal(shim_hook_inject_json(spec, strlen(spec), HOOK, "/run/\xff.sock", &out, &err),
                   -1);
  assert_null(out);
  assert_non_null(strstr(err->msg, "not UTF-8"));
}

static char *bundle_with(const char *config, mode_t mode) {
  char *dir = strdup("/tmp/iobhk.XXXXXX");
  assert_non_null(mkdtemp(dir));
  cleanup_free char *path = NULL;
  assert_true(asprintf(&path, "%s/config.json", dir) > 0);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, config, strlen(config)), (ssize_t)strlen(config));
  fchmod(fd, mode);
  close(fd);
  return dir;
}

static char *read_config(const char *dir) {
  cleanup_free char *path = NULL;
  assert_true(asprintf(&path, "%s/config.json", dir) > 0);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  char *buf = calloc(1, 1 << 16);
  assert_non_null(buf);
  assert_true(fread(buf, 1, (1 << 16) - 1, f) > 0);
  fclose(f);
  return buf;
}

static int count_entries(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));)
    n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

static void remove_bundle(char *dir) {
  cleanup_free char *cmd = NULL;
  assert_true(asprintf(&cmd, "rm -rf '%s'", dir) > 0);
  assert_int_equal(system(cmd), 0);
  free(dir);
}

/* As Create does it: config.json read once, the hook added to it. */
static int inject(const char *dir, struct iob_error **err) {
  struct iob_oci_config cfg;
  if (iob_oci_config_load(dir, &cfg, err) < 0)
    return -1;
  int r = shim_hook_inject(dir, &cfg, err);
  iob_oci_config_release(&cfg);
  return r;
}

static void test_inject_file(void **state) {
  (void)state;
  setenv("IOBATCH_HOOK", "/bin/true", 1);
  unsetenv("IOBATCH_AGENT_SOCKET");
  char *dir = bundle_with(spec, 0640);
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(inject(dir, &err), 0);
  cleanup_free char *got = read_config(dir);
  assert_non_null(strstr(got, "\"prestart\":[{\"path\":\"/usr/bin/other\",\"args\":[\"other\",\"x\"]},"
                              "{\"path\":\"/bin/true\",\"args\":[\"iobatch-hook\"],\"timeout\":10}]"));
  assert_int_equal(count_entries(dir), 1); /* no temporary file left */
  cleanup_free char *path = NULL;
  assert_true(asprintf(&path, "%s/config.json", dir) > 0);
  struct stat sb;
  assert_int_equal(stat(path, &sb), 0);
  assert_int_equal(sb.st_mode & 07777, 0640);
  /* Second Create of the same bundle: unchanged. */
  assert_int_equal(inject(dir, &err), 0);
  cleanup_free char *again = read_config(dir);
  assert_string_equal(got, again);
  remove_bundle(dir);
  unsetenv("IOBATCH_HOOK");
}

static void test_inject_file_malformed(void **state) {
  (void)state;
  setenv("IOBATCH_HOOK", "/bin/true", 1);
  const char *broken = "{\"ociVersion\": \"1.0.2\", \"process\": ";
  char *dir = bundle_with(broken, 0644);
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(inject(dir, &err), -1);
  assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
  assert_non_null(strstr(err->msg, "/config.json': "));
  cleanup_free char *got = read_config(dir);
  assert_string_equal(got, broken); /* nothing written */
  assert_int_equal(count_entries(dir), 1);
  remove_bundle(dir);
  unsetenv("IOBATCH_HOOK");
}

static void write_file(const char *dir, const char *name, const char *text) {
  cleanup_free char *path = NULL;
  assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  assert_int_equal(fputs(text, f) >= 0, 1);
  fclose(f);
}

/* IobatchAgentSocket of the runtime options (options.json) wins over
 * $IOBATCH_AGENT_SOCKET: the hook asks the agent the shim asks. */
static void test_inject_socket_from_options(void **state) {
  (void)state;
  setenv("IOBATCH_HOOK", "/bin/true", 1);
  setenv("IOBATCH_AGENT_SOCKET", "/run/env.sock", 1);
  char *dir = bundle_with(spec, 0644);
  write_file(dir, "options.json", "{\"agent_socket\":\"/run/opt.sock\"}");
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(inject(dir, &err), 0);
  cleanup_free char *got = read_config(dir);
  assert_non_null(
      strstr(got, "{\"path\":\"/bin/true\",\"args\":[\"iobatch-hook\",\"--socket\",\"/run/opt.sock\"],"
                  "\"timeout\":10}"));
  remove_bundle(dir);
  /* Without it, the environment's. */
  dir = bundle_with(spec, 0644);
  write_file(dir, "options.json", "{\"root\":\"/run/r\"}");
  assert_int_equal(inject(dir, &err), 0);
  cleanup_free char *env = read_config(dir);
  assert_non_null(strstr(env, "\"--socket\",\"/run/env.sock\"],\"timeout\":10}"));
  remove_bundle(dir);
  /* A broken options.json is refused, config.json untouched. */
  dir = bundle_with(spec, 0644);
  write_file(dir, "options.json", "{\"agent_socket\":");
  assert_int_equal(inject(dir, &err), -1);
  assert_non_null(strstr(err->msg, "options.json"));
  cleanup_free char *same = read_config(dir);
  assert_string_equal(same, spec);
  remove_bundle(dir);
  unsetenv("IOBATCH_AGENT_SOCKET");
  unsetenv("IOBATCH_HOOK");
}

static void test_inject_bad_env(void **state) {
  (void)state;
  char *dir = bundle_with(spec, 0644);
  cleanup_error struct iob_error *err = NULL;
  setenv("IOBATCH_HOOK", "/nonexistent/iobatch-hook", 1);
  assert_int_equal(inject(dir, &err), -1);
  assert_int_equal(err->code, IOB_CODE_FAILED_PRECONDITION);
  assert_string_equal(err->msg, "IOBATCH_HOOK '/nonexistent/iobatch-hook' is not an absolute path "
                                "to an executable");
  cleanup_free char *got = read_config(dir);
  assert_string_equal(got, spec);
  remove_bundle(dir);
  unsetenv("IOBATCH_HOOK");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_inject_keeps_everything_else),
      cmocka_unit_test(test_inject_once),
      cmocka_unit_test(test_inject_malformed),
      cmocka_unit_test(test_inject_file),
      cmocka_unit_test(test_inject_file_malformed),
      cmocka_unit_test(test_inject_socket_from_options),
      cmocka_unit_test(test_inject_bad_env),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
