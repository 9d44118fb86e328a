// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the shim's parsers and bookkeeping: sha256, flags, start's
 * stdin, ids and paths, runc's log.json, stdio URIs, mount options, the
 * reaper's early-exit cache. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>

#include <cmocka.h>

#include "common/cleanup.h"
#include "common/sha256.h"
#include "containerd/runc/options.pb-c.h"
#include "containerd/runtime/bootstrap/bootstrap.pb-c.h"
#include "google/protobuf/any.pb-c.h"
#include "shim/args.h"
#include "shim/manager.h"
#include "shim/rootfs.h"
#include "shim/reaper.h"
#include "shim/runc.h"
#include "shim/spawn.h"
#include "shim/uri.h"
#include "shim/validate.h"

static void test_sha256_vectors(void **state) {
  (void)state;
  char hex[65];
  iob_sha256_hex("", 0, hex);
  assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  iob_sha256_hex("abc", 3, hex);
  assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  iob_sha256_hex(two, strlen(two), hex);
  assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  /* A million 'a' fed in odd-sized pieces crosses every block boundary. */
  struct iob_sha256 s;
  uint8_t d[32];
  char a[997];
  memset(a, 'a', sizeof(a));
  iob_sha256_init(&s);
  size_t left = 1000000;
  while (left) {
    size_t n = left < sizeof(a) ? left : sizeof(a);
    iob_sha256_update(&s, a, n);
    left -= n;
  }
  iob_sha256_final(&s, d);
  assert_int_equal(d[0], 0xcd);
  assert_int_equal(d[1], 0xc7);
  assert_int_equal(d[31], 0xd0);
}

static void test_socket_address(void **state) {
  (void)state;
  cleanup_free char *addr = NULL;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(shim_socket_address("/run/containerd/s", "/run/containerd/containerd.sock",
                                       "default", "c1", &addr, &err),
                   0);
  char hex[65];
  const char *key = "/run/containerd/containerd.sock/default/c1";
  iob_sha256_hex(key, strlen(key), hex);
  char want[200];
  snprintf(want, sizeof(want), "unix:///run/containerd/s/%s", hex);
  assert_string_equal(addr, want);
  free(addr);
  addr = NULL;
  /* filepath.Join collapses doubled slashes. */
  assert_int_equal(shim_socket_address("/run/containerd/s", "/run/containerd//containerd.sock/",
                                       "default", "c1", &addr, &err),
                   0);
  assert_string_equal(addr, want);
  free(addr);
  addr = NULL;
  char longdir[120];
  memset(longdir, 'x', sizeof(longdir) - 1);
  longdir[0] = '/';
  longdir[sizeof(longdir) - 1] = '\0';
  assert_int_equal(shim_socket_address(longdir, "/a", "ns", "g", &addr, &err), -1);
  assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
}

static void test_args(void **state) {
  (void)state;
  struct shim_args a;
  cleanup_error struct iob_error *err = NULL;
  char *v1[] = {"shim", "-namespace", "default", "-address", "/run/c.sock", "-publish-binary",
                "/usr/bin/containerd", "-id", "c1", "-debug", "start", NULL};
  assert_int_equal(shim_args_parse(&a, 11, v1, &err), 0);
  assert_string_equal(a.ns, "default");
  assert_string_equal(a.address, "/run/c.sock");
  assert_string_equal(a.id, "c1");
  assert_true(a.debug);
  assert_string_equal(a.action, "start");
  char *v2[] = {"shim", "--namespace=k8s.io", "--id", "abc", "--bundle", "/b", "-debug=false",
                "delete", NULL};
  assert_int_equal(shim_args_parse(&a, 8, v2, &err), 0);
  assert_string_equal(a.ns, "k8s.io");
  assert_string_equal(a.bundle, "/b");
  assert_false(a.debug);
  assert_string_equal(a.action, "delete");
  char *v3[] = {"shim", "-namespace", "n", "-id", "x", "-socket", "unix:///s", "-debug-socket",
                "unix:///d", NULL};
  assert_int_equal(shim_args_parse(&a, 9, v3, &err), 0);
  assert_null(a.action);
  assert_string_equal(a.socket, "unix:///s");
  char *v4[] = {"shim", "-v", NULL};
  assert_int_equal(shim_args_parse(&a, 2, v4, &err), 0);
  assert_true(a.version);
  char *bad1[] = {"shim", "-nope", NULL};
  assert_int_equal(shim_args_parse(&a, 2, bad1, &err), -1);
  char *bad2[] = {"shim", "-namespace", "n", "-id", NULL};
  assert_int_equal(shim_args_parse(&a, 4, bad2, &err), -1);
  char *bad3[] = {"shim", "-namespace", "n", "-id", "../x", "start", NULL};
  assert_int_equal(shim_args_parse(&a, 6, bad3, &err), -1);
  assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
  char *bad4[] = {"shim", "-namespace", "n", "-id", "x", "frobnicate", NULL};
  assert_int_equal(shim_args_parse(&a, 6, bad4, &err), -1);
  char *bad5[] = {"shim", "-namespace", "n", "-id", "x", "-debug=maybe", NULL};
  assert_int_equal(shim_args_parse(&a, 6, bad5, &err), -1);
}

static size_t pack_options(uint8_t **out, const char *binary, const char *root) {
  Containerd__Runc__V1__Options o = CONTAINERD__RUNC__V1__OPTIONS__INIT;
  o.binary_name = (char *)binary;
  o.root = (char *)root;
  o.systemd_cgroup = 1;
  o.io_uid = 7;
  size_t n = containerd__runc__v1__options__get_packed_size(&o);
  *out = malloc(n + 1);
  return containerd__runc__v1__options__pack(&o, *out);
}

static size_t pack_any(uint8_t **out, const char *type, const uint8_t *v, size_t n) {
  Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT;
  any.type_url = (char *)type;
  any.value.data = (uint8_t *)v;
  any.value.len = n;
  size_t len = google__protobuf__any__get_packed_size(&any);
  *out = malloc(len + 1);
  return google__protobuf__any__pack(&any, *out);
}

static void test_bootstrap_legacy_any(void **state) {
  (void)state;
  cleanup_free uint8_t *opts = NULL, *any = NULL;
  size_t on = pack_options(&opts, "crun", "/run/x");
  size_t an = pack_any(&any, "containerd.runc.v1.Options", opts, on);
  struct shim_bootstrap b;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(shim_bootstrap_parse(any, an, "c1", "default", &b, &err), 0);
  assert_false(b.is_bootstrap);
  assert_true(b.have_options);
  assert_string_equal(b.options.binary_name, "crun");
  assert_string_equal(b.options.root, "/run/x");
  assert_true(b.options.systemd_cgroup);
  assert_int_equal(b.options.io_uid, 7);
  shim_bootstrap_release(&b);
  /* The type.googleapis.com/ form resolves by its last segment. */
  free(any);
  an = pack_any(&any, "type.googleapis.com/containerd.runc.v1.Options", opts, on);
  assert_int_equal(shim_bootstrap_parse(any, an, "c1", "default", &b, &err), 0);
  assert_true(b.have_options);
  shim_bootstrap_release(&b);
  /* Another runtime's options: ignored. */
  free(any);
  an = pack_any(&any, "io.containerd.kata.v2.Options", opts, on);
  assert_int_equal(shim_bootstrap_parse(any, an, "c1", "default", &b, &err), 0);
  assert_false(b.have_options);
  shim_bootstrap_release(&b);
  /* Empty stdin (containerd 1.6 without options). */
  assert_int_equal(shim_bootstrap_parse(NULL, 0, "c1", "default", &b, &err), 0);
  assert_false(b.is_bootstrap);
  assert_false(b.have_options);
}

static size_t pack_bootstrap(uint8_t **out, const char *id, const char *ns, const uint8_t *opts,
                             size_t on) {
  Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT;
  any.type_url = "containerd.runc.v1.Options";
  any.value.data = (uint8_t *)opts;
  any.value.len = on;
  Containerd__Runtime__Bootstrap__V1__Extension ext =
      CONTAINERD__RUNTIME__BOOTSTRAP__V1__EXTENSION__INIT;
  ext.value = &any;
  Containerd__Runtime__Bootstrap__V1__Extension *exts[] = {&ext};
  Containerd__Runtime__Bootstrap__V1__BootstrapParams p =
      CONTAINERD__RUNTIME__BOOTSTRAP__V1__BOOTSTRAP_PARAMS__INIT;
  p.instance_id = (char *)id;
  p.namespace_ = (char *)ns;
  p.log_level = CONTAINERD__RUNTIME__BOOTSTRAP__V1__LOG_LEVEL__DEBUG;
  p.containerd_ttrpc_address = "/run/containerd/containerd.sock.ttrpc";
  p.socket_dir = "/run/containerd/s2";
  p.n_extensions = 1;
  p.extensions = exts;
  size_t n = containerd__runtime__bootstrap__v1__bootstrap_params__get_packed_size(&p);
  *out = malloc(n + 1);
  return containerd__runtime__bootstrap__v1__bootstrap_params__pack(&p, *out);
}

static void test_bootstrap_params(void **state) {
  (void)state;
  cleanup_free uint8_t *opts = NULL, *bp = NULL;
  size_t on = pack_options(&opts, "runc", NULL);
  size_t bn = pack_bootstrap(&bp, "c1", "default", opts, on);
  struct shim_bootstrap b;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(shim_bootstrap_parse(bp, bn, "c1", "default", &b, &err), 0);
  assert_true(b.is_bootstrap);
  assert_true(b.have_options);
  assert_string_equal(b.options.binary_name, "runc");
  assert_string_equal(b.ttrpc_address, "/run/containerd/containerd.sock.ttrpc");
  assert_string_equal(b.socket_dir, "/run/containerd/s2");
  assert_int_equal(b.log_level, -4);
  shim_bootstrap_release(&b);
  /* instance_id or namespace not ours: this is not a BootstrapParams, and
   * read as an Any it names no type we know. */
  assert_int_equal(shim_bootstrap_parse(bp, bn, "c2", "default", &b, &err), 0);
  assert_false(b.is_bootstrap);
  assert_false(b.have_options);
  shim_bootstrap_release(&b);
}

static void test_bootstrap_malformed(void **state) {
  (void)state;
  struct shim_bootstrap b;
  cleanup_error struct iob_error *err = NULL;
  const uint8_t junk[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
  assert_int_equal(shim_bootstrap_parse(junk, sizeof(junk), "c1", "n", &b, &err), -1);
  assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
  /* An Any of Options whose value is not Options. */
  cleanup_free uint8_t *any = NULL;
  size_t an = pack_any(&any, "containerd.runc.v1.Options", junk, sizeof(junk));
  assert_int_equal(shim_bootstrap_parse(any, an, "c1", "n", &b, &err), -1);
  /* Options with a relative root are refused. */
  cleanup_free uint8_t *opts = NULL, *any2 = NULL;
  size_t on = pack_options(&opts, "runc", "relative/root");
  an = pack_any(&any2, "containerd.runc.v1.Options", opts, on);
  assert_int_equal(shim_bootstrap_parse(any2, an, "c1", "n", &b, &err), -1);
}

static void test_validate(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(shim_validate_id("id", "abc", &err), 0);
  assert_int_equal(shim_validate_id("id", "a.b_c-9", &err), 0);
  assert_int_equal(shim_validate_id("id", "", &err), -1);
  assert_int_equal(shim_validate_id("id", "-a", &err), -1);
  assert_int_equal(shim_validate_id("id", ".a", &err), -1);
  assert_int_equal(shim_validate_id("id", "a/b", &err), -1);
  assert_int_equal(shim_validate_id("id", "a b", &err), -1);
  assert_int_equal(shim_validate_id("id", "a..b", &err), -1);
  assert_int_equal(shim_validate_id("id", "a-", &err), -1);
  assert_int_equal(shim_validate_id("id", "k8s.io", &err), 0);
  char longid[80];
  memset(longid, 'a', sizeof(longid) - 1);
  longid[79] = '\0';
  assert_int_equal(shim_validate_id("id", longid, &err), -1);
  longid[76] = '\0';
  assert_int_equal(shim_validate_id("id", longid, &err), 0);
  assert_int_equal(shim_validate_path("bundle", "/run/x/y", true, &err), 0);
  assert_int_equal(shim_validate_path("bundle", "run/x", true, &err), -1);
  assert_int_equal(shim_validate_path("bundle", "/run/../etc", true, &err), -1);
  assert_int_equal(shim_validate_path("bundle", "/run/..x/y", true, &err), 0);
  assert_int_equal(shim_validate_path("bundle", "/run/x\n", true, &err), -1);
  assert_int_equal(shim_validate_path("bundle", "", true, &err), -1);
}

static void test_shim_cgroup_path(void **state) {
  (void)state;
  assert_int_equal(shim_cgroup_path_check("/system.slice/shims", NULL), 0);
  assert_int_equal(shim_cgroup_path_check("/", NULL), 0);
  const char *bad[] = {"shims", "", "/a//b", "/a/./b", "/a/", "/a/.", "/sys/fs/cgroup/a"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    cleanup_error struct iob_error *err = NULL;
    assert_int_equal(shim_cgroup_path_check(bad[i], &err), -1);
    assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
    assert_non_null(strstr(err->msg, "shim_cgroup"));
  }
}

static void test_runc_last_error(void **state) {
  (void)state;
  const char *log = "{\"level\":\"info\",\"msg\":\"starting\"}\n"
                    "{\"level\":\"error\",\"msg\":\"first\"}\n"
                    "not json at all\n"
                    "{\"level\":\"error\",\"msg\":\"container_linux.go: exec failed\",\"time\":\"x\"}\n"
                    "{\"level\":\"warning\",\"msg\":\"later\"}";
  cleanup_free char *m = shim_runc_last_error(log, strlen(log));
  assert_non_null(m);
  assert_string_equal(m, "container_linux.go: exec failed");
  cleanup_free char *none = shim_runc_last_error("{\"level\":\"info\",\"msg\":\"x\"}\n", 27);
  assert_null(none);
  cleanup_free char *empty = shim_runc_last_error("", 0);
  assert_null(empty);
}

static void test_uri(void **state) {
  (void)state;
  struct shim_uri u;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(shim_uri_parse("/run/containerd/fifo/1-stdout", &u, &err), 0);
  assert_int_equal(u.kind, SHIM_URI_FIFO);
  assert_string_equal(u.path, "/run/containerd/fifo/1-stdout");
  shim_uri_release(&u);
  assert_int_equal(shim_uri_parse("file:///var/log/c%201.log", &u, &err), 0);
  assert_int_equal(u.kind, SHIM_URI_FILE);
  assert_string_equal(u.path, "/var/log/c 1.log");
  shim_uri_release(&u);
  assert_int_equal(shim_uri_parse("binary:///usr/bin/logger?id=abc&x=1+2&flag", &u, &err), 0);
  assert_int_equal(u.kind, SHIM_URI_BINARY);
  assert_string_equal(u.path, "/usr/bin/logger");
  assert_string_equal(u.args[0], "id");
  assert_string_equal(u.args[1], "abc");
  assert_string_equal(u.args[2], "x");
  assert_string_equal(u.args[3], "1 2");
  assert_string_equal(u.args[4], "flag");
  assert_null(u.args[5]);
  shim_uri_release(&u);
  assert_int_equal(shim_uri_parse("binary-v2:///l", &u, &err), 0);
  shim_uri_release(&u);
  assert_int_equal(shim_uri_parse("http://x/y", &u, &err), -1);
  assert_int_equal(shim_uri_parse("file://", &u, &err), -1);
  assert_int_equal(shim_uri_parse("file:///a/../b", &u, &err), -1);
  assert_int_equal(shim_uri_parse("file:///a%00b", &u, &err), -1);
}

static void test_mount_options(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  unsigned long flags, prop;
  char *data = NULL;
  const char *o1[] = {"ro", "nosuid", "lowerdir=/a:/b", "upperdir=/u", "workdir=/w", "rprivate"};
  assert_int_equal(shim_mount_parse_options(o1, 6, &flags, &prop, &data, &err), 0);
  assert_true(flags & MS_RDONLY);
  assert_true(flags & MS_NOSUID);
  assert_int_equal(prop, MS_PRIVATE | MS_REC);
  assert_string_equal(data, "lowerdir=/a:/b,upperdir=/u,workdir=/w");
  free(data);
  const char *o2[] = {"rbind", "ro", "rw"};
  assert_int_equal(shim_mount_parse_options(o2, 3, &flags, &prop, &data, &err), 0);
  assert_int_equal(flags, MS_BIND | MS_REC);
  assert_null(data);
  static char big[5000];
  memset(big, 'x', sizeof(big) - 1);
  const char *o3[] = {big};
  assert_int_equal(shim_mount_parse_options(o3, 1, &flags, &prop, &data, &err), -1);
  assert_null(data);
}

static int config_group(const char *json, char **g, struct iob_error **err) {
  struct iob_oci_config cfg;
  if (iob_oci_config_parse(json, strlen(json), "config.json", &cfg, err) < 0)
    return -1;
  int r = shim_config_group(&cfg, "c1", g, err);
  iob_oci_config_release(&cfg);
  return r;
}

static void test_config_group(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  char *g = NULL;
  const char *c1 = "{\"ociVersion\":\"1.0.2\",\"annotations\":{\"io.kubernetes.cri.sandbox-id\":\"pod1\"}}";
  assert_int_equal(config_group(c1, &g, &err), 0);
  assert_string_equal(g, "pod1");
  free(g);
  const char *c2 = "{\"annotations\":{\"io.kubernetes.cri.sandbox-id\":\"pod1\","
                   "\"io.containerd.runc.v2.group\":\"grp\"}}";
  assert_int_equal(config_group(c2, &g, &err), 0);
  assert_string_equal(g, "grp");
  free(g);
  const char *c3 = "{\"process\":{}}";
  assert_int_equal(config_group(c3, &g, &err), 0);
  assert_string_equal(g, "c1");
  free(g);
  const char *c4 = "{\"annotations\":{\"io.containerd.runc.v2.group\":\"../etc\"}}";
  assert_int_equal(config_group(c4, &g, &err), -1);
  iob_error_release(&err);
  assert_int_equal(config_group("{", &g, &err), -1);
}

static void test_options_toml(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct shim_options o = {0};
  const char *t = "# runc options\n[plugins.x]\nBinaryName = \"crun\"\n root = \"/run/r\" \n"
                  "SystemdCgroup = true # trailing\nIoUid = 1000\nCriuPath = \"/x\"\n";
  assert_int_equal(shim_options_parse_toml(t, strlen(t), &o, &err), 0);
  assert_string_equal(o.binary_name, "crun");
  assert_string_equal(o.root, "/run/r");
  assert_true(o.systemd_cgroup);
  assert_int_equal(o.io_uid, 1000);
  assert_int_equal(o.agent_timeout_ms, 0);
  assert_null(o.unknown_keys); /* CriuPath: the runc shim's, not a typo */
  shim_options_release(&o);
  /* Comments after a quoted value, '#' inside strings, literal strings,
   * escapes, quoted keys; unknown keys are collected with their lines. */
  const char *t2 = "BinaryName = \"crun\"   # or \"runc\"\n"
                   "Root = '/run/c#1' # literal\n"
                   "\"ShimCgroup\" = \"/a\\\\b\\\"c\\td\"\n"
                   "SystemdCgroups = true # a typo\n"
                   "IoGid = 7# tight\n"
                   "iobatch_agent_socket=\"/run/x#y.sock\"#c\n"
                   "Foo = [1, 2]\n";
  assert_int_equal(shim_options_parse_toml(t2, strlen(t2), &o, &err), 0);
  assert_string_equal(o.binary_name, "crun");
  assert_string_equal(o.root, "/run/c#1");
  assert_string_equal(o.shim_cgroup, "/a\\b\"c\td");
  assert_false(o.systemd_cgroup);
  assert_int_equal(o.io_gid, 7);
  assert_string_equal(o.agent_socket, "/run/x#y.sock");
  assert_string_equal(o.unknown_keys, "'SystemdCgroups' (line 4), 'Foo' (line 7)");
  shim_options_release(&o);
  const char *t3 = "IobatchAgentTimeoutMs = 750\nIobatchFailClosed = true\n";
  assert_int_equal(shim_options_parse_toml(t3, strlen(t3), &o, &err), 0);
  assert_int_equal(o.agent_timeout_ms, 750);
  assert_true(o.fail_closed);
  shim_options_release(&o);
  const char *bad[] = {"IobatchAgentTimeoutMs = -5\n", "IobatchAgentTimeoutMs = \"5\"\n","BinaryName = crun\n", "SystemdCgroup = yes\n", "IoUid = -1\n",
                       "just words\n", "Root = \"a\"b\"\n"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    assert_int_equal(shim_options_parse_toml(bad[i], strlen(bad[i]), &o, &err), -1);
    assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
    shim_options_release(&o);
  }
  /* runtimeoptions.v1.Options naming a missing file: a clear error. */
  cleanup_free uint8_t *any = NULL;
  size_t an = pack_any(&any, "ignored", (const uint8_t *)"/nonexistent/x.toml", 19);
  bool found;
  assert_int_equal(shim_options_from_any("runtimeoptions.v1.Options", any, an, &o, &found, &err), -1);
  assert_int_equal(err->code, IOB_CODE_NOT_FOUND);
  shim_options_release(&o);
}

static int reaped_pid, reaped_status, reaped_calls;
static void on_reap(pid_t pid, int status, struct shim_time at, void *data) {
  (void)at;
  reaped_pid = pid;
  reaped_status = status;
  reaped_calls += *(int *)data;
}

static void test_reaper_cache(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  int one = 1;
  shim_reaper_reset();
  reaped_calls = 0;
  /* Waiter first: the exit goes to it. */
  assert_int_equal(shim_reaper_watch(100, on_reap, &one, &err), 0);
  shim_reaper_dispatch(100, 3 << 8, shim_time_now());
  assert_int_equal(reaped_pid, 100);
  assert_int_equal(reaped_calls, 1);
  assert_int_equal(shim_exit_code(reaped_status), 3);
  /* Exit first (the early-exit cache): delivered when the waiter comes. */
  shim_reaper_dispatch(200, 9, shim_time_now()); /* killed by SIGKILL */
  assert_int_equal(reaped_calls, 1);
  assert_int_equal(shim_reaper_watch(200, on_reap, &one, &err), 0);
  assert_int_equal(reaped_calls, 2);
  assert_int_equal(shim_exit_code(reaped_status), 137);
  /* Delivered once only. */
  shim_reaper_dispatch(200, 0, shim_time_now());
  assert_int_equal(reaped_calls, 2);
  /* An unwatched pid's exit does not reach the old callback. */
  assert_int_equal(shim_reaper_watch(300, on_reap, &one, &err), 0);
  shim_reaper_unwatch(300);
  shim_reaper_dispatch(300, 0, shim_time_now());
  assert_int_equal(reaped_calls, 2);
  /* The cache is bounded: flood it, the oldest go. */
  for (int i = 0; i < 1000; i++)
    shim_reaper_dispatch(1000 + i, 0, shim_time_now());
  assert_int_equal(shim_reaper_watch(1000, on_reap, &one, &err), 0);
  assert_int_equal(reaped_calls, 2);
  assert_int_equal(shim_reaper_watch(1999, on_reap, &one, &err), 0);
  assert_int_equal(reaped_calls, 3);
  shim_reaper_reset();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_sha256_vectors),  cmocka_unit_test(test_socket_address),
      cmocka_unit_test(test_args),            cmocka_unit_test(test_bootstrap_legacy_any),
      cmocka_unit_test(test_bootstrap_params), cmocka_unit_test(test_bootstrap_malformed),
      cmocka_unit_test(test_validate),        cmocka_unit_test(test_runc_last_error),
      cmocka_unit_test(test_uri),             cmocka_unit_test(test_mount_options),
      cmocka_unit_test(test_config_group),    cmocka_unit_test(test_reaper_cache),
      cmocka_unit_test(test_options_toml),    cmocka_unit_test(test_shim_cgroup_path),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
