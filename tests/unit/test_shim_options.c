// SPDX-License-Identifier: Apache-2.0
/* Malformed input to the shim's parsers of files and payloads from outside:
 * <bundle>/options.json, the runtime-options TOML named by
 * runtimeoptions.v1.Options, a runc Options payload, the iobatch
 * annotations of <bundle>/config.json checked at Create, runc's
 * log.json, and the stdio URIs of a Create or Exec.  Every case must fail cleanly (an error naming the thing, no
 * crash, nothing leaked under ASan) or be ignored where the format says so. */
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

#include "client/annotations.h"
#include "common/cleanup.h"
#include "containerd/runc/options.pb-c.h"
#include "google/protobuf/any.pb-c.h"
#include "shim/admission.h"
#include "shim/options.h"
#include "shim/runc.h"
#include "shim/uri.h"
#include "wcd/kind.h"

static char bundle[] = "/tmp/iob-parse-shim.XXXXXX";

static void put(const char *name, const char *text) {
  char path[256];
  snprintf(path, sizeof(path), "%s/%s", bundle, name);
  FILE *f = fopen(path, "we");
  assert_non_null(f);
  assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
  assert_int_equal(fclose(f), 0);
}

static void drop(const char *name) {
  char path[256];
  snprintf(path, sizeof(path), "%s/%s", bundle, name);
  unlink(path);
}

static int setup(void **state) {
  (void)state;
  return mkdtemp(bundle) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  drop("options.json");
  drop("config.json");
  drop("runc.toml");
  return rmdir(bundle);
}

static void test_options_json_malformed(void **state) {
  (void)state;
  static const char *const bad[] = {
      "",                                   /* empty file */
      "{\"root\":",                         /* truncated */
      "not json",                           /* not JSON */
      "{\"root\":\"relative/dir\"}",        /* root must be absolute */
      "{\"root\":\"/run/../etc\"}",         /* no '..' */
      "{\"binary_name\":\"runc\\nx\"}",     /* newline in the binary */
      "{\"agent_socket\":\"sock\"}",        /* socket must be absolute */
      "{\"shim_cgroup\":\"/a\\u0001b\"}",   /* control character */
      "{\"shim_cgroup\":\"shims/x\"}",      /* ShimCgroup must be absolute */
      "{\"shim_cgroup\":\"/shims/../x\"}",  /* no '..' */
      "{\"io_uid\":-1}",                    /* ids are 0..2^32-1, never wrapped */
      "{\"io_gid\":4294967296}",
      "{\"io_uid\":\"1000\"}",              /* an id that is not a number */
      "{\"binary_name\":\"crun\",\"io_gid\":1.5}",
  };
  for (size_t i = 0; i < IOB_ARRAY_SIZE(bad); i++) {
    cleanup_error struct iob_error *err = NULL;
    struct shim_options o;
    put("options.json", bad[i]);
    if (shim_options_read(bundle, &o, &err) != -1)
      fail_msg("accepted options.json #%zu '%s'", i, bad[i]);
    assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
    shim_options_release(&o);
  }
  /* Wrong types are ignored field by field, never read as something else. */
  cleanup_error struct iob_error *err = NULL;
  struct shim_options o;
  /* A bad ShimCgroup is refused naming the option. */
  put("options.json", "{\"shim_cgroup\":\"shims/x\"}");
  assert_int_equal(shim_options_read(bundle, &o, &err), -1);
  assert_non_null(strstr(err->msg, "ShimCgroup 'shims/x' is not an absolute path"));
  iob_error_release(&err);
  shim_options_release(&o);
  put("options.json", "{\"shim_cgroup\":\"/a/../b\"}");
  assert_int_equal(shim_options_read(bundle, &o, &err), -1);
  assert_non_null(strstr(err->msg, "ShimCgroup '/a/../b' contains '..'"));
  iob_error_release(&err);
  shim_options_release(&o);
  put("options.json", "{\"agent_timeout_ms\":\"5\"}");
  assert_int_equal(shim_options_read(bundle, &o, &err), 0);
  assert_int_equal(o.agent_timeout_ms, 0);
  shim_options_release(&o);
  put("options.json", "{\"agent_timeout_ms\":1500}");
  assert_int_equal(shim_options_read(bundle, &o, &err), 0);
  assert_int_equal(o.agent_timeout_ms, 1500);
  shim_options_release(&o);
  put("options.json", "{\"root\":7,\"binary_name\":[\"x\"],\"systemd_cgroup\":\"yes\"}");
  assert_int_equal(shim_options_read(bundle, &o, &err), 0);
  assert_null(o.root);
  assert_null(o.binary_name);
  assert_false(o.systemd_cgroup);
  shim_options_release(&o);
  /* No file at all: the defaults. */
  drop("options.json");
  assert_int_equal(shim_options_read(bundle, &o, &err), 0);
  assert_null(o.root);
  shim_options_release(&o);
  /* The unknown TOML keys travel from start to Create through the file. */
  const char *t = "SystemdCgroups = true\nBinaryName = \"crun\"\n";
  assert_int_equal(shim_options_parse_toml(t, strlen(t), &o, &err), 0);
  assert_int_equal(shim_options_write(bundle, &o, &err), 0);
  shim_options_release(&o);
  assert_int_equal(shim_options_read(bundle, &o, &err), 0);
  assert_string_equal(o.unknown_keys, "'SystemdCgroups' (line 1)");
  assert_string_equal(o.binary_name, "crun");
  shim_options_release(&o);
}

static size_t pack_config_path(uint8_t **out, const char *path) {
  Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT;
  any.type_url = (char *)"";
  any.value.data = (uint8_t *)path;
  any.value.len = strlen(path);
  size_t len = google__protobuf__any__get_packed_size(&any);
  *out = malloc(len + 1);
  assert_non_null(*out);
  return google__protobuf__any__pack(&any, *out);
}

static void test_config_path_malformed(void **state) {
  (void)state;
  char toml[256];
  snprintf(toml, sizeof(toml), "%s/runc.toml", bundle);
  /* The file's own errors name the file and the line. */
  static const char *const bad[] = {
      "Root = \"/run/r\n",               /* unterminated string */
      "Root\n",                          /* no '=' */
      "IoGid = 4294967296\n",            /* out of range */
      "IoUid = 12abc\n",                 /* trailing garbage */
      "SystemdCgroup = \"true\"\n",      /* a string where a bool goes */
      "[section]\nBinaryName = 'x\n",    /* unterminated literal string */
      "IobatchAgentSocket = \"a\"b\"\n", /* a quote inside */
      "BinaryName = \"runc\" crun\n",    /* text after the string */
      "BinaryName = \"runc\"\"\"\n",     /* a second string */
      "Root = \"/run/\\q\"\n",           /* an escape TOML does not have */
      "Root = \"/run/\\u00e9\"\n",       /* \\u: not supported here */
      "Root = \"/run/\\\"\n",            /* the escape eats the closing quote */
      "BinaryName = \"a\x01"
      "b\"\n",                        /* a control character */
      "BinaryName = 'a\x7f'\n",       /* DEL in a literal string */
      "BinaryName =\n",               /* no value */
      "BinaryName = # runc\n",        /* only a comment */
      " = \"runc\"\n",                /* no key */
      "\"\" = \"runc\"\n",            /* an empty quoted key */
      "SystemdCgroup = true false\n", /* two values */
      "SystemdCgroup = True\n",       /* TOML booleans are lower case */
      "IoUid = +5\n",                 /* a sign */
      "IoUid = \"5\"\n",              /* a string where a number goes */
      "IoUid = 5 6\n",                /* two numbers */
  };
  for (size_t i = 0; i < IOB_ARRAY_SIZE(bad); i++) {
    cleanup_error struct iob_error *err = NULL;
    cleanup_free uint8_t *any = NULL;
    put("runc.toml", bad[i]);
    size_t n = pack_config_path(&any, toml);
    struct shim_options o = {0};
    if (shim_options_from_config_path(any, n, &o, &err) != -1)
      fail_msg("accepted TOML #%zu '%s'", i, bad[i]);
    assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
    assert_non_null(strstr(err->msg, "runc.toml"));
    assert_non_null(strstr(err->msg, "line "));
    shim_options_release(&o);
  }
  /* A value of the wrong type names the key, in the spelling of the file. */
  static const struct {
    const char *text, *key;
  } typed[] = {
      {"# c\nBinaryName = runc\n", "line 2: 'BinaryName' needs a quoted string"},
      {"systemd_cgroup = \"yes\" # no\n", "line 1: 'SystemdCgroup' needs true or false"},
      {"IoGid = -1\n", "line 1: 'IoGid' needs a number"},
      {"IobatchFailClosed = 1\n", "line 1: 'IobatchFailClosed' needs true or false"},
  };
  for (size_t i = 0; i < IOB_ARRAY_SIZE(typed); i++) {
    cleanup_error struct iob_error *err = NULL;
    struct shim_options o = {0};
    assert_int_equal(shim_options_parse_toml(typed[i].text, strlen(typed[i].text), &o, &err), -1);
    if (strstr(err->msg, typed[i].key) == NULL)
      fail_msg("'%s': got '%s', want '%s'", typed[i].text, err->msg, typed[i].key);
    shim_options_release(&o);
  }
  /* A NUL byte would cut the file short: refused, not truncated. */
  {
    cleanup_error struct iob_error *err = NULL;
    struct shim_options o = {0};
    assert_int_equal(shim_options_parse_toml("Root = \"/a\"\0\nx\n", 13, &o, &err), -1);
    assert_non_null(strstr(err->msg, "NUL"));
    shim_options_release(&o);
  }
  /* Paths the shim refuses to open, and bytes that are no Any at all. */
  static const char *const paths[] = {"relative.toml", "/tmp/../etc/passwd", "/a\nb"};
  for (size_t i = 0; i < IOB_ARRAY_SIZE(paths); i++) {
    cleanup_error struct iob_error *err = NULL;
    cleanup_free uint8_t *any = NULL;
    size_t n = pack_config_path(&any, paths[i]);
    struct shim_options o = {0};
    if (shim_options_from_config_path(any, n, &o, &err) != -1)
      fail_msg("opened config path #%zu", i);
    assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
    shim_options_release(&o);
  }
  static const uint8_t garbage[][4] = {{0x12, 0x7f, 'a', 'b'}, {0xff, 0xff, 0xff, 0xff}};
  for (size_t i = 0; i < IOB_ARRAY_SIZE(garbage); i++) {
    cleanup_error struct iob_error *err = NULL;
    struct shim_options o = {0};
    assert_int_equal(shim_options_from_config_path(garbage[i], 4, &o, &err), -1);
    assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
    shim_options_release(&o);
  }
}

static void test_runc_options_malformed(void **state) {
  (void)state;
  static const char *const type = "type.googleapis.com/containerd.runc.v1.Options";
  /* Truncated or invalid wire format. */
  static const struct {
    uint8_t b[8];
    size_t n;
  } wire[] = {
      {{0x3a, 0x10, '/'}, 3},                        /* root: length past the end */
      {{0x08}, 1},                                   /* varint missing */
      {{0x08, 0x80, 0x80}, 3},                       /* unterminated varint */
      {{0x3f, 0x00}, 2},                             /* wire type 7 */
  };
  for (size_t i = 0; i < IOB_ARRAY_SIZE(wire); i++) {
    cleanup_error struct iob_error *err = NULL;
    struct shim_options o = {0};
    bool found = true;
    if (shim_options_from_any(type, wire[i].b, wire[i].n, &o, &found, &err) != -1)
      fail_msg("decoded bad runc options #%zu", i);
    assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
    shim_options_release(&o);
  }
  /* Well-formed, but values the shim must not use. */
  static const char *const roots[] = {"run/runc", "/run/../x", "/run/\x01"};
  for (size_t i = 0; i < IOB_ARRAY_SIZE(roots); i++) {
    Containerd__Runc__V1__Options m = CONTAINERD__RUNC__V1__OPTIONS__INIT;
    m.root = (char *)roots[i];
    uint8_t buf[64];
    size_t n = containerd__runc__v1__options__pack(&m, buf);
    cleanup_error struct iob_error *err = NULL;
    struct shim_options o = {0};
    bool found = false;
    assert_int_equal(shim_options_from_any(type, buf, n, &o, &found, &err), -1);
    assert_non_null(strstr(err->msg, "root"));
    shim_options_release(&o);
  }
  /* Another type: not ours, ignored. */
  cleanup_error struct iob_error *err = NULL;
  struct shim_options o = {0};
  bool found = true;
  assert_int_equal(shim_options_from_any("x.Other", (const uint8_t *)"\xff", 1, &o, &found, &err),
                   0);
  assert_false(found);
}

/* Create's reading of config.json: common/oci.c, then the iobatch
 * annotations (shim_ctr_info_of). */
static int admission_check(struct iob_error **err) {
  struct iob_oci_config cfg;
  if (iob_oci_config_load(bundle, &cfg, err) < 0)
    return -1;
  struct shim_ctr_info in;
  int r = shim_ctr_info_of(&cfg, &in, err);
  if (r == 0)
    shim_ctr_info_release(&in);
  iob_oci_config_release(&cfg);
  return r;
}

/* io.iobatch.latency-target in microseconds. */
static void test_latency_target_values(void **state) {
  (void)state;
  static const struct {
    const char *v;
    uint32_t us;
  } good[] = {{"5ms", 5000}, {"500us", 500}, {"0.5ms", 500}, {"1s", 1000000},
              {"1us", 1}, {"60s", 60000000}, {"2.25ms", 2250}, {"007ms", 7000}};
  for (size_t i = 0; i < IOB_ARRAY_SIZE(good); i++) {
    cleanup_error struct iob_error *err = NULL;
    uint32_t us = 0;
    if (iob_ann_latency_target_parse(good[i].v, &us, &err) < 0)
      fail_msg("'%s' refused: %s", good[i].v, err->msg);
    assert_int_equal(us, good[i].us);
  }
  cleanup_error struct iob_error *err = NULL;
  uint32_t us = 7;
  assert_int_equal(iob_ann_latency_target_parse("5 ms", &us, &err), -1);
  assert_int_equal(us, 7); /* left alone */
  assert_string_equal(err->msg, "invalid annotation 'io.iobatch.latency-target': '5 ms' is not a "
                                "latency from 1us to 60s (e.g. 5ms, 500us)");
}

static void test_admission_annotations_malformed(void **state) {
  (void)state;
  static const char *const bad[] = {
      "",
      "[]",
      "{\"annotations\":",
      "{\"annotations\":{\"io.iobatch.max-hold-ms\":\"abc\"}}",
      "{\"annotations\":{\"io.iobatch.max-hold-ms\":\"-1\"}}",
      "{\"annotations\":{\"io.iobatch.max-hold-ms\":\" 5\"}}",
      "{\"annotations\":{\"io.iobatch.max-hold-ms\":\"5ms\"}}",
      "{\"annotations\":{\"io.iobatch.max-hold-ms\":\"4294967296\"}}",
      "{\"annotations\":{\"io.iobatch.max-hold-ms\":\"99999999999999999999999\"}}",
      "{\"annotations\":{\"io.iobatch.latency-target\":\"5\"}}", /* no unit */
      "{\"annotations\":{\"io.iobatch.latency-target\":\"5 ms\"}}",
      "{\"annotations\":{\"io.iobatch.latency-target\":\"-5ms\"}}",
      "{\"annotations\":{\"io.iobatch.latency-target\":\"5e3us\"}}",
      "{\"annotations\":{\"io.iobatch.latency-target\":\"1.2.3ms\"}}",
      "{\"annotations\":{\"io.iobatch.latency-target\":\"0us\"}}",
      "{\"annotations\":{\"io.iobatch.latency-target\":\"0.5us\"}}",
      "{\"annotations\":{\"io.iobatch.latency-target\":\"61s\"}}",
      "{\"annotations\":{\"io.iobatch.latency-target\":\"ms\"}}",
      "{\"annotations\":{\"io.iobatch.latency-target\":\".ms\"}}",
      "{\"annotations\":{\"io.iobatch.latency-target\":\"5MS\"}}",
      "{\"annotations\":{\"io.iobatch.latency-target\":\"99999999999999999999999999999999ms\"}}",
      "{\"annotations\":{\"io.iobatch.class\":\"seq_write\"}}", /* the agent would refuse it */
      "{\"annotations\":{\"io.iobatch.class\":\"SEQ-WRITE\"}}",
      "{\"annotations\":{\"io.iobatch.kind\":\"pod\"}}",
      "{\"annotations\":{\"io.iobatch.kind\":\"Sandbox\"}}",
      "{\"annotations\":{\"io.iobatch.kind\":\"job \"}}",
      "{\"annotations\":{\"io.iobatch.kind\":\"sandbox\\u0000\"}}",
      /* explicit and wrong: the CRI's word does not rescue it */
      "{\"annotations\":{\"io.iobatch.kind\":\"x\",\"io.kubernetes.cri.container-type\":"
      "\"sandbox\"}}",
      /* Fields of the wrong type: refused as the hook refuses them (and
       * runc, which types every field), naming the field. */
      "{\"annotations\":[]}",
      "{\"annotations\":{\"io.iobatch.max-hold-ms\":5000}}",
      "{\"process\":{\"args\":[1,null,\"fio\"]},\"annotations\":{}}",
      "{\"process\":{\"args\":\"fio\"}}",
      "{\"process\":[]}",
      "{\"annotations\":{\"io.iobatch.kind\":7}}",
      "{\"annotations\":{\"io.kubernetes.cri.sandbox-name\":[\"a\"]}}",
      "{\"hooks\":{\"prestart\":{}}}",
  };
  for (size_t i = 0; i < IOB_ARRAY_SIZE(bad); i++) {
    cleanup_error struct iob_error *err = NULL;
    put("config.json", bad[i]);
    if (admission_check(&err) != -1)
      fail_msg("accepted config.json #%zu '%s'", i, bad[i]);
    assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
  }
  /* Annotations not set, or set to nothing. */
  static const char *const odd[] = {
      "{}",
      "{\"annotations\":{\"io.iobatch.max-hold-ms\":\"\"}}",
      "{\"annotations\":{\"io.iobatch.latency-target\":\"\"}}",
      "{\"annotations\":{\"io.iobatch.kind\":\"\"}}",
      "{\"annotations\":{\"io.kubernetes.cri.container-type\":\"podsandbox\"}}",
      "{\"process\":{\"args\":[]},\"annotations\":{}}",
  };
  for (size_t i = 0; i < IOB_ARRAY_SIZE(odd); i++) {
    cleanup_error struct iob_error *err = NULL;
    put("config.json", odd[i]);
    if (admission_check(&err) != 0)
      fail_msg("refused config.json #%zu '%s': %s", i, odd[i], err->msg);
  }
  cleanup_error struct iob_error *err = NULL;
  drop("config.json");
  assert_int_equal(admission_check(&err), -1);
  assert_non_null(strstr(err->msg, "config.json"));
}

static struct shim_ctr_info parse_ok(const char *json) {
  struct shim_ctr_info in;
  cleanup_error struct iob_error *err = NULL;
  if (shim_ctr_info_parse(json, strlen(json), &in, &err) < 0)
    fail_msg("refused '%s': %s", json, err->msg);
  return in;
}

#define assert_str_or_null(want, got)                                                              \
  do {                                                                                             \
    if ((want) == NULL)                                                                            \
      assert_null(got);                                                                            \
    else {                                                                                         \
      assert_non_null(got);                                                                        \
      assert_string_equal(want, got);                                                              \
    }                                                                                              \
  } while (0)

/* Kind and CRI names as containerd's CRI plugin, CRI-O and a user set
 * them (the keys are listed in wcd/kind.c). */
static void test_ctr_info_kind(void **state) {
  (void)state;
  static const struct {
    const char *json;
    const char *kind, *pod, *pod_ns, *ctr;
  } cases[] = {
      /* containerd CRI: the sandbox has no container-name */
      {"{\"annotations\":{\"io.kubernetes.cri.container-type\":\"sandbox\","
       "\"io.kubernetes.cri.sandbox-name\":\"web-0\",\"io.kubernetes.cri.sandbox-namespace\":"
       "\"prod\"}}",
       "sandbox", "web-0", "prod", NULL},
      {"{\"annotations\":{\"io.kubernetes.cri.container-type\":\"container\","
       "\"io.kubernetes.cri.sandbox-name\":\"web-0\",\"io.kubernetes.cri.sandbox-namespace\":"
       "\"prod\",\"io.kubernetes.cri.container-name\":\"nginx\"}}",
       NULL, "web-0", "prod", "nginx"},
      /* CRI-O: its type key, the kubelet's labels as annotations */
      {"{\"annotations\":{\"io.kubernetes.cri-o.ContainerType\":\"sandbox\","
       "\"io.kubernetes.pod.name\":\"db-1\",\"io.kubernetes.pod.namespace\":\"kube-system\","
       "\"io.kubernetes.container.name\":\"POD\"}}",
       "sandbox", "db-1", "kube-system", "POD"},
      {"{\"annotations\":{\"io.kubernetes.cri-o.ContainerType\":\"container\","
       "\"io.kubernetes.pod.name\":\"db-1\",\"io.kubernetes.container.name\":\"pg\"}}",
       NULL, "db-1", NULL, "pg"},
      /* CRI-O never sets containerd's keys, and it copies a pod's own
       * annotations into the sandbox's config.json: one there is the
       * tenant's, and CRI-O's own keys are read instead */
      {"{\"annotations\":{\"io.kubernetes.cri-o.ContainerType\":\"sandbox\","
       "\"io.kubernetes.cri.sandbox-namespace\":\"kube-system\","
       "\"io.kubernetes.cri.sandbox-name\":\"fake\",\"io.kubernetes.cri-o.Namespace\":"
       "\"team-a\",\"io.kubernetes.pod.name\":\"db-1\",\"io.kubernetes.pod.namespace\":"
       "\"team-a\"}}",
       "sandbox", "db-1", "team-a", NULL},
      {"{\"annotations\":{\"io.kubernetes.cri-o.ContainerType\":\"container\","
       "\"io.kubernetes.cri.sandbox-namespace\":\"kube-system\","
       "\"io.kubernetes.cri.container-name\":\"x\",\"io.kubernetes.pod.namespace\":"
       "\"team-a\",\"io.kubernetes.container.name\":\"pg\"}}",
       NULL, NULL, "team-a", "pg"},
      /* CRI-O's sandbox namespace key, when the kubelet's label is not there */
      {"{\"annotations\":{\"io.kubernetes.cri-o.ContainerType\":\"sandbox\","
       "\"io.kubernetes.cri-o.Namespace\":\"team-b\"}}",
       "sandbox", NULL, "team-b", NULL},
      /* containerd's keys win over the kubelet's labels */
      {"{\"annotations\":{\"io.kubernetes.cri.sandbox-name\":\"a\",\"io.kubernetes.pod.name\":"
       "\"b\"}}",
       NULL, "a", NULL, NULL},
      /* explicit kind */
      {"{\"annotations\":{\"io.iobatch.kind\":\"service\"}}", "service", NULL, NULL, NULL},
      /* but the CRI's sandbox wins: pod annotations reach the sandbox too */
      {"{\"annotations\":{\"io.iobatch.kind\":\"job\",\"io.kubernetes.cri.container-type\":"
       "\"sandbox\"}}",
       "sandbox", NULL, NULL, NULL},
      {"{\"annotations\":{\"io.iobatch.kind\":\"service\",\"io.kubernetes.cri-o.ContainerType\":"
       "\"sandbox\"}}",
       "sandbox", NULL, NULL, NULL},
      {"{\"annotations\":{\"io.iobatch.kind\":\"service\",\"io.kubernetes.cri.container-type\":"
       "\"container\"}}",
       "service", NULL, NULL, NULL},
      {"{\"annotations\":{\"io.iobatch.kind\":\"sandbox\"}}", "sandbox", NULL, NULL, NULL},
      /* values the CRI keys may not hold: no kind, no name (not an error) */
      {"{\"annotations\":{\"io.kubernetes.cri.container-type\":\"SANDBOX\"}}", NULL, NULL, NULL,
       NULL},
      {"{\"annotations\":{\"io.kubernetes.cri.sandbox-name\":\"a\\nb\",\"io.kubernetes.pod.name\":"
       "\"c\"}}",
       NULL, "c", NULL, NULL},
      {"{\"annotations\":{\"io.kubernetes.cri.sandbox-name\":\"\",\"io.kubernetes.cri.container-"
       "name\":"
       "\"x\\u007f\"}}",
       NULL, NULL, NULL, NULL},
      {"{}", NULL, NULL, NULL, NULL},
  };
  for (size_t i = 0; i < IOB_ARRAY_SIZE(cases); i++) {
    struct shim_ctr_info in = parse_ok(cases[i].json);
    assert_str_or_null(cases[i].kind, in.kind);
    /* from the runtime exactly when the CRI said sandbox */
    bool cri_sandbox =
        strstr(cases[i].json, "Type\":\"sandbox") || strstr(cases[i].json, "type\":\"sandbox");
    if (in.kind_from_runtime != cri_sandbox)
      fail_msg("case %zu: kind_from_runtime %d", i, (int)in.kind_from_runtime);
    assert_str_or_null(cases[i].pod, in.pod_name);
    assert_str_or_null(cases[i].pod_ns, in.pod_namespace);
    assert_str_or_null(cases[i].ctr, in.container_name);
    shim_ctr_info_release(&in);
  }
  /* Names: 253 bytes is a Kubernetes name, 254 is not one. */
  char name[300], json[400];
  memset(name, 'a', sizeof(name));
  for (size_t n = 253; n <= 254; n++) {
    snprintf(json, sizeof(json), "{\"annotations\":{\"io.kubernetes.cri.sandbox-name\":\"%.*s\"}}",
             (int)n, name);
    struct shim_ctr_info in = parse_ok(json);
    if (n == 253)
      assert_int_equal(strlen(in.pod_name), 253);
    else
      assert_null(in.pod_name);
    shim_ctr_info_release(&in);
  }
  /* The error names the annotation and the value. */
  cleanup_error struct iob_error *err = NULL;
  struct shim_ctr_info in;
  const char *bad = "{\"annotations\":{\"io.iobatch.kind\":\"daemon\"}}";
  assert_int_equal(shim_ctr_info_parse(bad, strlen(bad), &in, &err), -1);
  assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
  assert_non_null(strstr(err->msg, "'io.iobatch.kind'"));
  assert_non_null(strstr(err->msg, "'daemon'"));
  /* A length shorter than the text is honoured. */
  const char *cut = "{\"annotations\":{}} trailing";
  iob_error_release(&err);
  assert_int_equal(shim_ctr_info_parse(cut, 18, &in, &err), 0);
  shim_ctr_info_release(&in);
}

static void test_runc_log_malformed(void **state) {
  (void)state;
  static const char *const none[] = {
      "\n\n\n",
      "{\"level\":\"error\"}\n",                  /* no msg */
      "{\"level\":\"error\",\"msg\":7}\n",        /* msg not a string */
      "{\"level\":1,\"msg\":\"x\"}\n",            /* level not a string */
      "[\"level\",\"error\"]\n",                  /* not an object */
      "{\"level\":\"error\",\"msg\":\"trunc",      /* cut off */
      "{\"level\":\"ERROR\",\"msg\":\"x\"}",      /* levels are lower case */
  };
  for (size_t i = 0; i < IOB_ARRAY_SIZE(none); i++) {
    cleanup_free char *m = shim_runc_last_error(none[i], strlen(none[i]));
    if (m != NULL)
      fail_msg("log #%zu gave '%s'", i, m);
  }
  /* A NUL inside a line and a length shorter than the text. */
  static const char nul[] = "{\"level\":\"error\",\"msg\":\"a\"}\n{\"level\":\0\"error\"}\n";
  cleanup_free char *m = shim_runc_last_error(nul, sizeof(nul) - 1);
  assert_non_null(m);
  assert_string_equal(m, "a");
  const char *cut = "{\"level\":\"error\",\"msg\":\"abc\"}";
  cleanup_free char *c = shim_runc_last_error(cut, strlen(cut) - 2);
  assert_null(c);
}

static void test_stdio_uri_malformed(void **state) {
  (void)state;
  static const char *const bad[] = {
      "relative/stdout",        /* a plain path must be absolute, as fifo:// */
      "/run/a/../b",            /* and must not climb out */
      "/run/a\nb",             /* no control characters */
      "fifo:///a/%zz",          /* bad escapes: Go's url.Parse refuses them */
      "file:///a/%4",
      "file:///a/%",
      "binary:///l?k=%g1",
      "binary:///l?%",
  };
  for (size_t i = 0; i < IOB_ARRAY_SIZE(bad); i++) {
    struct shim_uri u;
    cleanup_error struct iob_error *err = NULL;
    if (shim_uri_parse(bad[i], &u, &err) == 0) {
      shim_uri_release(&u);
      fail_msg("'%s' was accepted", bad[i]);
    }
    assert_non_null(err);
    assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
  }
  /* The good neighbours of those still parse. */
  struct shim_uri u;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(shim_uri_parse("file:///a/%41%2f", &u, &err), 0);
  assert_string_equal(u.path, "/a/A/");
  shim_uri_release(&u);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_options_json_malformed),
      cmocka_unit_test(test_ctr_info_kind),
      cmocka_unit_test(test_config_path_malformed),
      cmocka_unit_test(test_runc_options_malformed),
      cmocka_unit_test(test_admission_annotations_malformed),
      cmocka_unit_test(test_latency_target_values),
      cmocka_unit_test(test_runc_log_malformed),
      cmocka_unit_test(test_stdio_uri_malformed),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
