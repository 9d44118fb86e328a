// SPDX-License-Identifier: Apache-2.0
/* iobatch-hook: the OCI state parser and config.json reading, with hostile
 * input; hook_run against fixture trees (pure v2 with iocost, hybrid). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cg2_fixture.h"
#include "cgroupv2/cg2.h"
#include "cgroupv2/weight.h"
#include "common/cleanup.h"
#include "iobatch/agent.pb-c.h"
#include "runtime-hook/hook.h"
#include "ttrpc/ttrpc.h"

static int parse(const char *text, struct hook_state *st, struct iob_error **err) {
  return hook_state_parse(text, strlen(text), st, err);
}

static void test_state_ok(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct hook_state st;
  const char *t = "{\"ociVersion\":\"1.0.2\",\"id\":\"abc-1.x_y\",\"status\":\"creating\","
                  "\"pid\":4242,\"bundle\":\"/run/containerd/b/abc\",\"annotations\":"
                  "{\"io.iobatch.class\":\"rand-write\",\"other\":\"x\"}}";
  assert_int_equal(parse(t, &st, &err), 0);
  assert_string_equal(st.id, "abc-1.x_y");
  assert_int_equal(st.pid, 4242);
  assert_string_equal(st.bundle, "/run/containerd/b/abc");
  assert_true(st.have_annotations);
  assert_string_equal(hook_annotation(&st, IOB_ANN_CLASS), "rand-write");
  assert_null(hook_annotation(&st, IOB_ANN_WORKLOAD));
  hook_state_release(&st);
  /* no annotations: an empty object, to be filled from config.json */
  t = "{\"ociVersion\":\"1.0.2\",\"id\":\"a\",\"pid\":1,\"bundle\":\"/b\"}";
  assert_int_equal(parse(t, &st, &err), 0);
  assert_false(st.have_annotations);
  assert_null(hook_annotation(&st, IOB_ANN_CLASS));
  hook_state_release(&st);
}

static void test_state_hostile(void **state) {
  (void)state;
  static const struct {
    const char *text, *msg;
  } bad[] = {
      {"", "invalid state JSON"},
      {"{\"ociVersion\":\"1.0.2\",\"id\":\"a\",\"pid\":1,", "invalid state JSON"}, /* truncated */
      {"[1,2]", "not a JSON object"},
      {"\"str\"", "invalid state JSON"}, /* jansson refuses non-containers at top level */
      {"{\"id\":\"a\",\"pid\":1,\"bundle\":\"/b\"}", "missing 'ociVersion'"},
      {"{\"ociVersion\":1,\"id\":\"a\",\"pid\":1,\"bundle\":\"/b\"}",
       "'ociVersion' must be a string"},
      {"{\"ociVersion\":\"1\",\"pid\":1,\"bundle\":\"/b\"}", "missing 'id'"},
      {"{\"ociVersion\":\"1\",\"id\":5,\"pid\":1,\"bundle\":\"/b\"}", "'id' must be a string"},
      {"{\"ociVersion\":\"1\",\"id\":\"\",\"pid\":1,\"bundle\":\"/b\"}", "length must be 1..1024"},
      {"{\"ociVersion\":\"1\",\"id\":\"../x\",\"pid\":1,\"bundle\":\"/b\"}",
       "invalid container id '../x'"},
      {"{\"ociVersion\":\"1\",\"id\":\"..\",\"pid\":1,\"bundle\":\"/b\"}", "invalid container id"},
      {"{\"ociVersion\":\"1\",\"id\":\"a\\nb\",\"pid\":1,\"bundle\":\"/b\"}",
       "contains control characters"},
      {"{\"ociVersion\":\"1\",\"id\":\"a\\u0000b\",\"pid\":1,\"bundle\":\"/b\"}",
       "invalid state JSON"},
      {"{\"ociVersion\":\"1\",\"id\":\"a\",\"bundle\":\"/b\"}", "missing 'pid'"},
      {"{\"ociVersion\":\"1\",\"id\":\"a\",\"pid\":\"1\",\"bundle\":\"/b\"}",
       "'pid' must be an integer"},
      {"{\"ociVersion\":\"1\",\"id\":\"a\",\"pid\":0,\"bundle\":\"/b\"}",
       "'pid' must be an integer"},
      {"{\"ociVersion\":\"1\",\"id\":\"a\",\"pid\":-5,\"bundle\":\"/b\"}",
       "'pid' must be an integer"},
      {"{\"ociVersion\":\"1\",\"id\":\"a\",\"pid\":99999999999,\"bundle\":\"/b\"}",
       "'pid' must be an integer"},
      {"{\"ociVersion\":\"1\",\"id\":\"a\",\"pid\":1.5,\"bundle\":\"/b\"}",
       "'pid' must be an integer"},
      {"{\"ociVersion\":\"1\",\"id\":\"a\",\"pid\":1}", "missing 'bundle'"},
      {"{\"ociVersion\":\"1\",\"id\":\"a\",\"pid\":1,\"bundle\":\"rel/b\"}",
       "must be an absolute path"},
      {"{\"ociVersion\":\"1\",\"id\":\"a\",\"pid\":1,\"bundle\":\"/a/../etc\"}", "without '..'"},
      {"{\"ociVersion\":\"1\",\"id\":\"a\",\"pid\":1,\"bundle\":\"/a/..\"}", "without '..'"},
      {"{\"ociVersion\":\"1\",\"id\":\"a\",\"pid\":1,\"bundle\":\"/b\",\"annotations\":[]}",
       "'annotations' must be an object"},
      {"{\"ociVersion\":\"1\",\"id\":\"a\",\"pid\":1,\"bundle\":\"/b\",\"annotations\":{\"k\":1}}",
       "annotation 'k' must be a string"},
      {"{\"ociVersion\":\"1\",\"id\":\"a\",\"id\":\"b\",\"pid\":1,\"bundle\":\"/b\"}", "duplicate"},
  };
  for (size_t i = 0; i < IOB_ARRAY_SIZE(bad); i++) {
    cleanup_error struct iob_error *err = NULL;
    struct hook_state st;
    if (parse(bad[i].text, &st, &err) != -1)
      fail_msg("accepted bad state #%zu: %s", i, bad[i].text);
    if (strstr(err->msg, bad[i].msg) == NULL)
      fail_msg("state #%zu: got '%s', want '%s'", i, err->msg, bad[i].msg);
    assert_null(strchr(err->msg, '\n')); /* one line */
  }
}

static void test_state_huge(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct hook_state st;
  /* a huge id */
  size_t n = 5000;
  cleanup_free char *t = malloc(n + 200);
  int o = sprintf(t, "{\"ociVersion\":\"1\",\"pid\":1,\"bundle\":\"/b\",\"id\":\"");
  memset(t + o, 'a', n);
  strcpy(t + o + n, "\"}");
  assert_int_equal(parse(t, &st, &err), -1);
  assert_non_null(strstr(err->msg, "length must be 1..1024"));
  /* a huge annotation value */
  size_t big = HOOK_ANNOTATION_VALUE_MAX + 10;
  cleanup_free char *t2 = malloc(big + 200);
  o = sprintf(t2, "{\"ociVersion\":\"1\",\"id\":\"a\",\"pid\":1,\"bundle\":\"/b\","
                  "\"annotations\":{\"k\":\"");
  memset(t2 + o, 'v', big);
  strcpy(t2 + o + big, "\"}}");
  assert_int_equal(parse(t2, &st, &err), -1);
  assert_non_null(strstr(err->msg, "annotation 'k' longer than 65536 bytes"));
  /* input above the bound is refused before parsing */
  assert_int_equal(hook_state_parse(t2, HOOK_STATE_MAX + 1, &st, &err), -1);
  assert_int_equal(err->errno_, EFBIG);
}

static char *make_bundle(const char *config) {
  char *dir = strdup("/tmp/hookb.XXXXXX");
  assert_non_null(mkdtemp(dir));
  char path[256];
  snprintf(path, sizeof(path), "%s/config.json", dir);
  if (config)
    write_text(path, config);
  return dir;
}

static void rm_bundle(char *dir) {
  char path[256];
  snprintf(path, sizeof(path), "%s/config.json", dir);
  unlink(path);
  rmdir(dir);
  free(dir);
}

static void load(const char *config, const char *want_err, struct hook_state *st) {
  cleanup_error struct iob_error *err = NULL;
  char *b = make_bundle(config);
  char t[512];
  snprintf(t, sizeof(t), "{\"ociVersion\":\"1\",\"id\":\"a\",\"pid\":1,\"bundle\":\"%s\"}", b);
  assert_int_equal(parse(t, st, &err), 0);
  int rc = hook_state_load_bundle(st, &err);
  if (want_err) {
    assert_int_equal(rc, -1);
    if (strstr(err->msg, want_err) == NULL)
      fail_msg("config.json: got '%s', want '%s'", err->msg, want_err);
  } else {
    assert_int_equal(rc, 0);
  }
  rm_bundle(b);
}

static void test_bundle_config(void **state) {
  (void)state;
  struct hook_state st;
  load("{\"process\":{\"args\":[\"fio\",\"--bs=4k\"]},\"annotations\":{\"io.iobatch.class\":"
       "\"seq-read\",\"io.kubernetes.cri.image-name\":\"img:1\"}}",
       NULL, &st);
  assert_string_equal(hook_annotation(&st, IOB_ANN_CLASS), "seq-read");
  assert_int_equal(st.nargs, 2);
  assert_string_equal(st.args[1], "--bs=4k");
  assert_null(st.args[2]);
  hook_state_release(&st);
  load("{}", NULL, &st); /* nothing to take: fine */
  assert_int_equal(st.nargs, 0);
  hook_state_release(&st);
  load(NULL, "cannot open", &st);
  hook_state_release(&st);
  load("{\"process\":", "(line 1, column", &st);
  hook_state_release(&st);
  load("[]", "not a JSON object", &st);
  hook_state_release(&st);
  load("{\"process\":{\"args\":\"fio\"}}", "'process.args' is not an array", &st);
  hook_state_release(&st);
  load("{\"process\":{\"args\":[\"fio\",3]}}", "'process.args[1]' is not a string", &st);
  hook_state_release(&st);
  load("{\"annotations\":{\"a\":[]}}", "annotation 'a' is not a string", &st);
  hook_state_release(&st);
}

/* hook_run on a fixture root: pure v2 with iocost on nvme0n1 and bfq on sdb. */
static void test_run_v2_fixture(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  /* a scratch copy of the fixture: the hook writes weight files */
  char root[] = "/tmp/hookfx.XXXXXX";
  assert_non_null(mkdtemp(root));
  cleanup_free char *src = fx("v2");
  char cmd[1200];
  snprintf(cmd, sizeof(cmd), "cp -a '%s/.' '%s/'", src, root);
  assert_int_equal(system(cmd), 0);
  char cgdir[512];
  snprintf(cgdir, sizeof(cgdir), "%s/sys/fs/cgroup/kubepods.slice/pod1/ctr", root);
  char wpath[600], bpath[600];
  snprintf(wpath, sizeof(wpath), "%s/io.weight", cgdir);
  snprintf(bpath, sizeof(bpath), "%s/io.bfq.weight", cgdir);
  /* regular files stand in for the cgroup files */
  write_text(wpath, "default 100\n");
  write_text(bpath, "default 100\n");
  struct hook_state st;
  const char *t = "{\"ociVersion\":\"1\",\"id\":\"c1\",\"pid\":777,\"bundle\":\"/b\","
                  "\"annotations\":{\"io.iobatch.class\":\"rand-write\","
                  "\"io.iobatch.workload\":\"db\"}}";
  assert_int_equal(parse(t, &st, &err), 0);
  struct hook_options opt = {.root = root, .socket = "/nonexistent/sock"};
  struct hook_result res;
  assert_int_equal(hook_run(&opt, &st, &res, &err), 0);
  assert_string_equal(res.b.cgroup, "/kubepods.slice/pod1/ctr");
  assert_int_equal(res.b.baseline.source, CG2_SOURCE_IOSTAT);
  assert_int_equal(res.b.baseline.io.wios, 1256);
  assert_string_equal(res.workload, "db");
  assert_int_equal(res.cls, BATCH_RAND_WRITE);
  assert_int_equal(res.b.weight_mech, CG2_MECH_IOCOST | CG2_MECH_BFQ);
  /* nothing written before the agent journalled it (else a crash between
   * would leave a weight nobody puts back); what the files hold is what
   * the agent is told to journal */
  assert_false(res.b.weight_applied);
  assert_int_equal(res.b.weight, 400);
  assert_string_equal(res.b.weight_was, "100");
  assert_string_equal(res.b.bfq_weight_was, "100");
  struct stat sb;
  assert_int_equal(stat(cgdir, &sb), 0);
  assert_int_equal(res.b.cgdir_ino, (unsigned long long)sb.st_ino);
  cleanup_free char *w0 = NULL, *b0 = NULL;
  assert_int_equal(cg2_read_file(wpath, 4096, &w0, NULL, &err), 0);
  assert_int_equal(cg2_read_file(bpath, 4096, &b0, NULL, &err), 0);
  assert_string_equal(w0, "default 100\n");
  assert_string_equal(b0, "default 100\n");
  /* no agent: an error of its own code, which the hook fails open on;
   * and no weight */
  assert_int_equal(hook_register(&opt, &st, &res, &err), -1);
  assert_int_equal(err->code, IOB_CODE_UNAVAILABLE);
  assert_non_null(strstr(err->msg, "no agent at '/nonexistent/sock'"));
  iob_error_release(&err);
  assert_int_equal(client_birth_weight_write(&res.b, &err), 0);
  assert_false(res.b.weight_applied);
  /* the agent's word: written */
  res.b.weight_journalled = 1;
  write_text(wpath, "");
  write_text(bpath, "");
  assert_int_equal(client_birth_weight_write(&res.b, &err), 0);
  assert_true(res.b.weight_applied);
  cleanup_free char *w = NULL, *b = NULL;
  assert_int_equal(cg2_read_file(wpath, 4096, &w, NULL, &err), 0);
  assert_int_equal(cg2_read_file(bpath, 4096, &b, NULL, &err), 0);
  assert_string_equal(w, "default 400");
  assert_string_equal(b, "default 127"); /* 100 + 300/11 */
  json_t *rec = hook_result_json(&st, &res);
  assert_non_null(rec);
  assert_true(json_is_true(json_object_get(json_object_get(rec, "weight"), "applied")));
  json_decref(rec);
  hook_result_release(&res);
  hook_state_release(&st);
  /* an invalid declared class is refused */
  t = "{\"ociVersion\":\"1\",\"id\":\"c1\",\"pid\":777,\"bundle\":\"/b\","
      "\"annotations\":{\"io.iobatch.class\":\"fast\"}}";
  assert_int_equal(parse(t, &st, &err), 0);
  assert_int_equal(hook_run(&opt, &st, &res, &err), -1);
  assert_non_null(strstr(err->msg, "invalid annotation 'io.iobatch.class': unknown class 'fast'"));
  hook_state_release(&st);
  /* a pid that does not exist */
  t = "{\"ociVersion\":\"1\",\"id\":\"c1\",\"pid\":31337,\"bundle\":\"/b\"}";
  assert_int_equal(parse(t, &st, &err), 0);
  assert_int_equal(hook_run(&opt, &st, &res, &err), -1);
  assert_non_null(strstr(err->msg, "cannot resolve the cgroup of pid 31337"));
  hook_state_release(&st);
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
  assert_int_equal(system(cmd), 0);
}

static void test_run_hybrid_fixture(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  cleanup_free char *root = fx("hybrid");
  struct hook_state st;
  const char *t = "{\"ociVersion\":\"1\",\"id\":\"c2\",\"pid\":4242,\"bundle\":\"/b\","
                  "\"annotations\":{\"io.iobatch.class\":\"seq-write\"}}";
  assert_int_equal(parse(t, &st, &err), 0);
  struct hook_options opt = {.root = root, .socket = "/nonexistent/sock"};
  struct hook_result res;
  /* v2 cgroup /ctr1 exists in the unified tree but has no cgroup.procs in
   * the fixture: the procfs sampler reports that */
  assert_int_equal(hook_run(&opt, &st, &res, &err), -1);
  assert_non_null(strstr(err->msg, "unified/ctr1/cgroup.procs"));
  hook_state_release(&st);
}

/* A stand-in agent in a child process: a real ttrpc server answering
 * Register, which reports what it got on a pipe. */
static void fake_register(struct ttrpc_call *call, const ProtobufCMessage *msg, void *user) {
  const Iobatch__Agent__V1__RegisterRequest *r = (const void *)msg;
  int *fds = user;
  char line[512];
  int n = snprintf(line, sizeof(line), "%s %s %s %s %u %s w=%u was=%s/%s ino=%llu\n", r->id,
                   r->namespace_, r->source, r->cgroup, r->pid, r->declared_class, r->hook_weight,
                   r->hook_weight_was, r->hook_bfq_weight_was, (unsigned long long)r->cgroup_inode);
  if (write(fds[0], line, (size_t)n) != n)
    abort();
  if (fds[1]) {
    ttrpc_call_fail(call, IOB_CODE_INTERNAL, "agent is broken");
    return;
  }
  Iobatch__Agent__V1__RegisterResponse resp = IOBATCH__AGENT__V1__REGISTER_RESPONSE__INIT;
  resp.class_ = "seq-write";
  resp.hook_weight_journalled = strcmp(r->namespace_, "trusted") == 0;
  ttrpc_call_reply(call, &resp.base);
}

static pid_t fake_agent(const char *path, int report_fd, int fail) {
  int ready[2];
  assert_int_equal(pipe(ready), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    struct iob_loop *loop = NULL;
    struct ttrpc_server *srv = NULL;
    struct iob_error *e = NULL;
    int fds[2] = {report_fd, fail};
    if (iob_loop_new(&loop, &e) < 0 || ttrpc_server_new(loop, &srv, &e) < 0 ||
        ttrpc_server_register(srv, "iobatch.agent.v1.Agent", "Register",
                              &iobatch__agent__v1__register_request__descriptor, fake_register, fds,
                              &e) < 0 ||
        ttrpc_server_listen(srv, path, &e) < 0)
      _exit(3);
    if (write(ready[1], "r", 1) != 1)
      _exit(3);
    for (int i = 0; i < 200; i++)
      iob_loop_run_once(loop, 20, &e);
    _exit(0);
  }
  char b;
  close(ready[1]);
  assert_int_equal(read(ready[0], &b, 1), 1);
  close(ready[0]);
  return pid;
}

static void test_register_with_agent(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  char dir[] = "/tmp/hookreg.XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[108];
  snprintf(path, sizeof(path), "%s/agent.sock", dir);
  struct hook_state st = {
      .id = "c1", .pid = 77, .bundle = "/run/containerd/io.containerd.runtime.v2.task/k8s.io/c1"};
  struct hook_result res = {
      .b = {.cgroup = "/x", .weight = 400, .weight_mech = CG2_MECH_IOCOST, .weight_was = "100",
            .cgdir_ino = 42},
      .declared = 1,
      .cls = BATCH_RAND_WRITE};
  struct hook_options opt = {.socket = path};
  /* no socket: unavailable (hook_invoke fails open on it) */
  assert_int_equal(hook_register(&opt, &st, &res, &err), -1);
  assert_int_equal(err->code, IOB_CODE_UNAVAILABLE);
  iob_error_release(&err);
  int rep[2];
  assert_int_equal(pipe(rep), 0);
  /* a listening agent gets the container, the namespace from the bundle */
  pid_t pid = fake_agent(path, rep[1], 0);
  assert_int_equal(hook_register(&opt, &st, &res, &err), 0);
  char line[512] = "";
  assert_true(read(rep[0], line, sizeof(line) - 1) > 0);
  assert_string_equal(line, "c1 k8s.io hook /x 77 rand-write w=400 was=100/ ino=42\n");
  /* an agent that does not journal it (k8s.io is not trusted here): the
   * hook does not write it */
  assert_false(res.b.weight_journalled);
  /* one that does */
  opt.ns = "trusted";
  assert_int_equal(hook_register(&opt, &st, &res, &err), 0);
  memset(line, 0, sizeof(line));
  assert_true(read(rep[0], line, sizeof(line) - 1) > 0);
  assert_true(res.b.weight_journalled);
  opt.ns = NULL;
  int status;
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  /* an explicit --namespace wins; an agent answering an error: fail open */
  opt.ns = "iobtest";
  unlink(path);
  pid = fake_agent(path, rep[1], 1);
  assert_int_equal(hook_register(&opt, &st, &res, &err), -1);
  assert_int_equal(err->code, IOB_CODE_UNAVAILABLE);
  assert_non_null(strstr(err->msg, "did not register 'c1': agent is broken"));
  iob_error_release(&err);
  memset(line, 0, sizeof(line));
  assert_true(read(rep[0], line, sizeof(line) - 1) > 0);
  assert_string_equal(line, "c1 iobtest hook /x 77 rand-write w=400 was=100/ ino=42\n");
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  /* the agent died, its socket file stays: unavailable */
  assert_int_equal(hook_register(&opt, &st, &res, &err), -1);
  assert_int_equal(err->code, IOB_CODE_UNAVAILABLE);
  iob_error_release(&err);
  /* a path that cannot be a unix socket address is a configuration error */
  char longp[200];
  memset(longp, 'x', sizeof(longp) - 1);
  longp[0] = '/';
  longp[sizeof(longp) - 1] = '\0';
  opt.socket = longp;
  assert_int_equal(hook_register(&opt, &st, &res, &err), -1);
  assert_non_null(strstr(err->msg, "invalid agent socket"));
  assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
  close(rep[0]);
  close(rep[1]);
  unlink(path);
  rmdir(dir);
}

/* hook_invoke: which failures exit 1 (an invalid state) and which fail
 * open (everything of ours). */
static int invoke(const struct hook_options *opt, const char *text, const char *want) {
  cleanup_error struct iob_error *err = NULL;
  int rc = hook_invoke(opt, text, strlen(text), &err);
  if (rc != 0 && want && strstr(err->msg, want) == NULL)
    fail_msg("hook_invoke: got '%s', want '%s'", err->msg, want);
  if (rc != 0)
    assert_null(strchr(err->msg, '\n')); /* one line */
  return rc;
}

static char *state_text(const char *id, int pid, const char *bundle, const char *ann) {
  char *t = NULL;
  assert_true(asprintf(&t,
                       "{\"ociVersion\":\"1.0.2\",\"id\":\"%s\",\"status\":\"created\","
                       "\"pid\":%d,\"bundle\":\"%s\"%s%s}",
                       id, pid, bundle, ann ? ",\"annotations\":" : "", ann ? ann : "") > 0);
  return t;
}

static void test_invoke_fail_open(void **state) {
  (void)state;
  cleanup_free char *v2 = fx("v2");
  struct hook_options opt = {.root = v2, .socket = "/nonexistent/sock"};
  /* invalid state: the runtime's error */
  assert_int_equal(invoke(&opt, "{\"id\":", "invalid state JSON"), -1);
  assert_int_equal(
      invoke(&opt, "{\"ociVersion\":\"1\",\"id\":\"a\",\"bundle\":\"/b\"}", "missing 'pid'"), -1);
  /* everything works but the agent is not there: fail open */
  cleanup_free char *ok = state_text("c1", 777, "/b", "{\"io.iobatch.workload\":\"db\"}");
  assert_int_equal(invoke(&opt, ok, "container 'c1': no agent at '/nonexistent/sock'"), 1);
  /* an annotation over 64 KiB in the state: a limit, not an invalid state */
  size_t big = HOOK_ANNOTATION_VALUE_MAX + 1;
  cleanup_free char *val = malloc(big + 16);
  strcpy(val, "{\"k\":\"");
  memset(val + 6, 'v', big);
  strcpy(val + 6 + big, "\"}");
  cleanup_free char *huge = state_text("c1", 777, "/b", val);
  assert_int_equal(invoke(&opt, huge, "longer than 65536 bytes"), 1);
  /* ... and in config.json */
  cleanup_free char *cfg = NULL;
  assert_true(asprintf(&cfg, "{\"annotations\":%s}", val) > 0);
  char *b = make_bundle(cfg);
  cleanup_free char *t = state_text("c1", 777, b, NULL);
  assert_int_equal(invoke(&opt, t, "longer than 65536 bytes"), 1);
  rm_bundle(b);
  /* more than 4096 process.args */
  size_t n = HOOK_ARGS_MAX + 1;
  cleanup_free char *args = malloc(n * 4 + 64);
  char *p = args + sprintf(args, "{\"process\":{\"args\":[");
  for (size_t i = 0; i < n; i++)
    p += sprintf(p, "%s\"x\"", i ? "," : "");
  strcpy(p, "]}}");
  b = make_bundle(args);
  free(t);
  t = state_text("c1", 777, b, NULL);
  assert_int_equal(invoke(&opt, t, "at most 4096 strings"), 1);
  rm_bundle(b);
  /* no cgroup2 mount */
  char root[] = "/tmp/hooknomnt.XXXXXX";
  assert_non_null(mkdtemp(root));
  char path[256];
  snprintf(path, sizeof(path), "%s/proc/self", root);
  char cmd[512];
  snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
  assert_int_equal(system(cmd), 0);
  snprintf(path, sizeof(path), "%s/proc/self/mountinfo", root);
  write_text(path, "22 1 0:21 / /proc rw,nosuid - proc proc rw\n");
  struct hook_options nomnt = {.root = root, .socket = "/nonexistent/sock"};
  assert_int_equal(invoke(&nomnt, ok, "no cgroup2 mount"), 1);
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
  assert_int_equal(system(cmd), 0);
  /* sampling fails (the hybrid fixture's v2 cgroup has no cgroup.procs) */
  cleanup_free char *hy = fx("hybrid");
  struct hook_options hopt = {.root = hy, .socket = "/nonexistent/sock"};
  cleanup_free char *h = state_text("c2", 4242, "/b", "{\"io.iobatch.workload\":\"w\"}");
  assert_int_equal(invoke(&hopt, h, "cgroup.procs"), 1);
  /* poststop (status stopped, no pid): the agent is told; not there: fail open */
  assert_int_equal(invoke(&opt,
                          "{\"ociVersion\":\"1\",\"id\":\"c1\",\"status\":\"stopped\","
                          "\"bundle\":\"/b\"}",
                          "no agent at"),
                   1);
  assert_int_equal(invoke(&opt,
                          "{\"ociVersion\":\"1\",\"id\":\"c1\",\"status\":\"stopped\","
                          "\"pid\":0,\"bundle\":\"/b\"}",
                          "no agent at"),
                   1);
  /* a pid of 0 is only for a stopped container */
  assert_int_equal(invoke(&opt,
                          "{\"ociVersion\":\"1\",\"id\":\"c1\",\"status\":\"created\","
                          "\"pid\":0,\"bundle\":\"/b\"}",
                          "'pid' must be an integer"),
                   -1);
  assert_int_equal(invoke(&opt,
                          "{\"ociVersion\":\"1\",\"id\":\"c1\",\"status\":7,"
                          "\"pid\":1,\"bundle\":\"/b\"}",
                          "'status' must be a string"),
                   -1);
}

/* The agent silent: its backlog full (connect would block for ever) or a
 * listener that never answers (SIGSTOPped): bounded by timeout_ms. */
static void test_invoke_silent_agent(void **state) {
  (void)state;
  cleanup_free char *v2 = fx("v2");
  char dir[] = "/tmp/hooksil.XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[108];
  snprintf(path, sizeof(path), "%s/agent.sock", dir);
  int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
  assert_int_equal(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
  assert_int_equal(listen(lfd, 0), 0);
  struct hook_options opt = {.root = v2, .socket = path, .timeout_ms = 200};
  cleanup_free char *ok = state_text("c1", 777, "/b", "{\"io.iobatch.workload\":\"db\"}");
  /* connected through the backlog, no answer */
  assert_int_equal(invoke(&opt, ok, "did not register 'c1': ttrpc call"), 1);
  /* fill the backlog: the next connect would block */
  int extra[8], nx = 0;
  for (; nx < 8; nx++) {
    extra[nx] = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (connect(extra[nx], (struct sockaddr *)&sa, sizeof(sa)) < 0) {
      close(extra[nx]);
      break;
    }
  }
  assert_int_equal(invoke(&opt, ok, "its listen backlog is full"), 1);
  opt.fail_closed = 1; /* the outcome is main's to decide; the same here */
  assert_int_equal(invoke(&opt, ok, "its listen backlog is full"), 1);
  for (int i = 0; i < nx; i++)
    close(extra[i]);
  close(lfd);
  unlink(path);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_state_ok),
      cmocka_unit_test(test_state_hostile),
      cmocka_unit_test(test_state_huge),
      cmocka_unit_test(test_bundle_config),
      cmocka_unit_test(test_run_v2_fixture),
      cmocka_unit_test(test_run_hybrid_fixture),
      cmocka_unit_test(test_register_with_agent),
      cmocka_unit_test(test_invoke_fail_open),
      cmocka_unit_test(test_invoke_silent_agent),
  };
  return cmocka_run_group_tests_name("hook_state", tests, NULL, NULL);
}
