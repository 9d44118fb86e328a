// SPDX-License-Identifier: Apache-2.0
/* Every configuration file the project ships parses with the parser that
 * will read it on a node, as shipped and with its commented-out examples
 * ("# key = value") uncommented, so that an example line can never teach a
 * broken setting.  Files are found by name under packaging/ (whatever the
 * packaging adds later is picked up), plus the examples kept elsewhere.
 * Run from the top of the tree, as tests/run.sh does. */
#include <fnmatch.h>
#include <ftw.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/config.h"
#include "batcher/batcher.h"
#include "common/cleanup.h"
#include "common/file.h"
#include "shim/options.h"
#include "wcd/wcd.h"

typedef int check_fn(const char *name, const char *text, size_t len, struct iob_error **err);

static int check_runtime_options(const char *name, const char *text, size_t len,
                                 struct iob_error **err) {
  struct shim_options o = {0};
  int r = shim_options_parse_toml(text, len, &o, err);
  if (r == 0 && o.unknown_keys)
    r = iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "'%s': unknown keys %s", name,
                       o.unknown_keys);
  shim_options_release(&o);
  return r;
}

static int check_agent(const char *name, const char *text, size_t len, struct iob_error **err) {
  struct agent_config c;
  agent_config_default(&c);
  int r = agent_config_parse(&c, name, text, len, err);
  agent_config_release(&c);
  return r;
}

static int check_batch(const char *name, const char *text, size_t len, struct iob_error **err) {
  struct batch_config c;
  batch_config_default(&c);
  return batch_config_parse(&c, name, text, len, err);
}

static int check_wcd(const char *name, const char *text, size_t len, struct iob_error **err) {
  struct wcd_config c;
  wcd_config_default(&c);
  return wcd_config_parse(text, len, name, &c, err);
}

/* containerd's own config: not ours to parse, but it must name our runtime
 * type and hand the shim the options file by ConfigPath. */
static int check_containerd(const char *name, const char *text, size_t len,
                            struct iob_error **err) {
  (void)len;
  if (!strstr(text, "runtime_type = \"io.containerd.iobatch.v2\"") ||
      !strstr(text, "ConfigPath = \"/etc/iobatch/runtime-options.toml\""))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "'%s' does not configure io.containerd.iobatch.v2 with its ConfigPath",
                          name);
  return 0;
}

static const struct {
  const char *glob; /* on the file name */
  check_fn *check;
} kinds[] = {
    {"runtime-options*.toml", check_runtime_options},
    {"iobatchd.conf*", check_agent},
    {"*matrix*.conf", check_batch},
    {"batcher*.conf", check_batch},
    {"wcd*.conf", check_wcd},
    {"config-v[0-9]*.toml", check_containerd},
};

/* Shipped outside packaging/. */
static const char *const extra[] = {
    "agent/iobatchd.conf.example",
    "bench/results/penalty-matrix.conf",
};

/* "# key = value" lines become "key = value"; prose in comments does not
 * match (a key is one word directly followed by '='). */
static char *uncomment(const char *text) {
  regex_t re;
  assert_int_equal(regcomp(&re, "^#[ \t]*([A-Za-z_][A-Za-z0-9_.-]*[ \t]*=[ \t]*[^ \t#].*)$",
                           REG_EXTENDED | REG_NEWLINE),
                   0);
  size_t cap = strlen(text) + 1, o = 0;
  char *out = malloc(cap);
  assert_non_null(out);
  const char *p = text;
  regmatch_t m[2];
  while (*p) {
    const char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) + 1 : strlen(p);
    cleanup_free char *line = strndup(p, nl ? n - 1 : n);
    assert_non_null(line);
    const char *src = line;
    size_t sn = strlen(line);
    if (regexec(&re, line, 2, m, 0) == 0) {
      src = line + m[1].rm_so;
      sn = (size_t)(m[1].rm_eo - m[1].rm_so);
    }
    memcpy(out + o, src, sn);
    o += sn;
    if (nl)
      out[o++] = '\n';
    p += n;
  }
  out[o] = '\0';
  regfree(&re);
  return out;
}

static int checked, uncommented_lines;
static char failures[8192];

static void note_failure(const char *fmt, ...) {
  size_t o = strlen(failures);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(failures + o, sizeof(failures) - o, fmt, ap);
  va_end(ap);
}

static void check_file(const char *path, check_fn *check) {
  cleanup_error struct iob_error *err = NULL;
  cleanup_free char *text = NULL;
  size_t len = 0;
  if (iob_read_file(path, 1 << 20, &text, &len, &err) < 0) {
    note_failure("\n  %s", err->msg);
    return;
  }
  checked++;
  if (check(path, text, len, &err) < 0) {
    note_failure("\n  '%s' as shipped: %s", path, err->msg);
    return;
  }
  cleanup_free char *open = uncomment(text);
  if (strcmp(open, text) != 0)
    uncommented_lines++;
  if (check(path, open, strlen(open), &err) < 0)
    note_failure("\n  '%s' with its examples uncommented: %s", path, err->msg);
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *f) {
  (void)st;
  if (type != FTW_F)
    return 0;
  const char *base = path + f->base;
  for (size_t i = 0; i < IOB_ARRAY_SIZE(kinds); i++)
    if (fnmatch(kinds[i].glob, base, 0) == 0) {
      check_file(path, kinds[i].check);
      return 0;
    }
  print_message("# not a config file we parse: %s\n", path);
  return 0;
}

static void test_shipped_configs(void **state) {
  (void)state;
  assert_int_equal(nftw("packaging", visit, 16, FTW_PHYS), 0);
  for (size_t i = 0; i < IOB_ARRAY_SIZE(extra); i++) {
    const char *base = strrchr(extra[i], '/') + 1;
    size_t k = 0;
    while (k < IOB_ARRAY_SIZE(kinds) && fnmatch(kinds[k].glob, base, 0) != 0)
      k++;
    assert_true(k < IOB_ARRAY_SIZE(kinds));
    check_file(extra[i], kinds[k].check);
  }
  if (failures[0])
    fail_msg("shipped config files that do not parse:%s", failures);
  /* The runtime options, the agent's example, containerd's two configs and
   * the measured matrix at least (the conf.d drop-in is gone: packaging/
   * containerd/containerd-config writes the handler, tests/integration/
   * packaging/containerd-config.sh checks it); and the uncommenting did something. */
  assert_true(checked >= 5);
  assert_true(uncommented_lines >= 2);
}

/* The checker itself: a broken file of each kind is caught, as shipped and
 * when only a commented-out example is wrong. */
static void test_checker_fails(void **state) {
  (void)state;
  static const struct {
    check_fn *check;
    const char *text;
  } bad[] = {
      {check_runtime_options, "BinaryName = runc\n"},
      {check_runtime_options, "SystemdCgroups = true\n"},
      {check_runtime_options, "# SystemdCgroups = true\n"},
      {check_runtime_options, "# Root = /run/x\n"},
      {check_agent, "# batch_window = soon\n"},
      {check_batch, "# policy = fastest\n"},
      {check_wcd, "nonsense = 1\n"},
      {check_containerd, "[plugins]\n"},
  };
  for (size_t i = 0; i < IOB_ARRAY_SIZE(bad); i++) {
    cleanup_error struct iob_error *err = NULL;
    cleanup_free char *open = uncomment(bad[i].text);
    if (bad[i].check("t", open, strlen(open), &err) == 0)
      fail_msg("#%zu accepted: %s", i, bad[i].text);
  }
  cleanup_free char *prose = uncomment("# a b = c is prose\n#   # x = 1\n# k = v # c\n#k=\n");
  assert_string_equal(prose, "# a b = c is prose\n#   # x = 1\nk = v # c\n#k=\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_shipped_configs),
      cmocka_unit_test(test_checker_fails),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
