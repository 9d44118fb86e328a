// SPDX-License-Identifier: Apache-2.0
/* Malformed request payloads: every method of containerd's Task service
 * (what the shim serves) and of iobatchd's API decoded from broken wire
 * bytes fails to decode (the ttrpc server answers INVALID_ARGUMENT then);
 * decoded requests with bad fields are refused by the checks the handlers
 * use (shim_validate_*, shim_uri_parse, shim_mount_parse_options,
 * batch_jobfile_solve), and iobatchctl plan's job file (batch_jobfile_parse).  Register's field checks are in test_agent_admission. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "batcher/jobfile.h"
#include "batcher/batcher.h"
#include "common/cleanup.h"
#include "containerd/task/v2/shim.pb-c.h"
#include "iobatch/agent.pb-c.h"
#include "shim/rootfs.h"
#include "shim/requests.h"
#include "shim/uri.h"
#include "shim/validate.h"

/* Wire bytes no protobuf decoder may accept. */
static const struct {
  const char *what;
  uint8_t b[8];
  size_t n;
} broken[] = {
    {"length past the end", {0x0a, 0x05, 'a', 'b'}, 4},
    {"varint cut off", {0x18, 0x80, 0x80}, 3},
    {"tag cut off", {0x80}, 1},
    {"wire type 7", {0x0f, 0x00}, 2},
    {"wire type 6", {0x0e, 0x00}, 2},
    {"field number 0", {0x02, 0x00}, 2},
    {"fixed64 cut off", {0x19, 0x01, 0x02}, 3},
};

static void decode_broken(const ProtobufCMessageDescriptor *d) {
  for (size_t i = 0; i < IOB_ARRAY_SIZE(broken); i++) {
    ProtobufCMessage *m = protobuf_c_message_unpack(d, NULL, broken[i].n, broken[i].b);
    if (m != NULL) {
      protobuf_c_message_free_unpacked(m, NULL);
      fail_msg("%s: decoded a payload with %s", d->name, broken[i].what);
    }
  }
}

static void test_task_requests_broken_wire(void **state) {
  (void)state;
  const ProtobufCServiceDescriptor *svc = &containerd__task__v2__task__descriptor;
  assert_true(svc->n_methods >= 17);
  for (unsigned i = 0; i < svc->n_methods; i++)
    decode_broken(svc->methods[i].input);
  /* A rootfs mount inside a Create cut short. */
  static const uint8_t create[] = {0x0a, 0x02, 'c', '1', 0x1a, 0x06, 0x0a, 0x07, 'o', 'v'};
  assert_null(containerd__task__v2__create_task_request__unpack(NULL, sizeof(create), create));
}

static void test_task_request_fields_refused(void **state) {
  (void)state;
  /* What a well-formed Create may still carry. */
  static const char *const ids[] = {"", "-x", "a..b", "a/b", "a b", "x.",
                                    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"};
  for (size_t i = 0; i < IOB_ARRAY_SIZE(ids); i++) {
    cleanup_error struct iob_error *err = NULL;
    if (shim_validate_id("id", ids[i], &err) != -1)
      fail_msg("id #%zu '%s' accepted", i, ids[i]);
    assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
  }
  static const char *const bundles[] = {"", "rel/b", "/run/../etc", "/run/b\n", "/run/b\x7f/.."};
  for (size_t i = 0; i < IOB_ARRAY_SIZE(bundles); i++) {
    cleanup_error struct iob_error *err = NULL;
    if (shim_validate_path("bundle", bundles[i], true, &err) != -1)
      fail_msg("bundle #%zu accepted", i);
  }
  static const char *const uris[] = {"ftp://host/x", "binary://", "file://", "file:///var/../etc/x",
                                     "://", "fifo://host"};
  for (size_t i = 0; i < IOB_ARRAY_SIZE(uris); i++) {
    cleanup_error struct iob_error *err = NULL;
    struct shim_uri u;
    if (shim_uri_parse(uris[i], &u, &err) == 0) {
      shim_uri_release(&u);
      fail_msg("stdio '%s' accepted", uris[i]);
    }
  }
  /* Decoded from the wire: a Create whose fields are all wrong. */
  Containerd__Types__Mount mnt = CONTAINERD__TYPES__MOUNT__INIT;
  char *opts[] = {(char *)"ro", (char *)"no-such-option"};
  mnt.type = (char *)"bind";
  mnt.source = (char *)"/x";
  mnt.options = opts;
  mnt.n_options = 2;
  Containerd__Types__Mount *mp = &mnt;
  Containerd__Task__V2__CreateTaskRequest r = CONTAINERD__TASK__V2__CREATE_TASK_REQUEST__INIT;
  r.id = (char *)"../c1";
  r.bundle = (char *)"b";
  r.rootfs = &mp;
  r.n_rootfs = 1;
  r.stdout = (char *)"ftp://x";
  size_t n = containerd__task__v2__create_task_request__get_packed_size(&r);
  cleanup_free uint8_t *buf = malloc(n);
  assert_non_null(buf);
  containerd__task__v2__create_task_request__pack(&r, buf);
  Containerd__Task__V2__CreateTaskRequest *d =
      containerd__task__v2__create_task_request__unpack(NULL, n, buf);
  assert_non_null(d);
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(shim_validate_id("id", d->id, &err), -1);
  iob_error_release(&err);
  assert_int_equal(shim_validate_path("bundle", d->bundle, true, &err), -1);
  iob_error_release(&err);
  struct shim_uri u;
  assert_int_equal(shim_uri_parse(d->stdout, &u, &err), -1);
  iob_error_release(&err);
  unsigned long flags = 0, prop = 0;
  char *data = NULL;
  int rc = shim_mount_parse_options((const char *const *)d->rootfs[0]->options,
                                    d->rootfs[0]->n_options, &flags, &prop, &data, &err);
  /* Unknown options go to the filesystem as data, as mount(8) does. */
  if (rc == 0) {
    assert_non_null(data);
    assert_non_null(strstr(data, "no-such-option"));
    free(data);
  }
  containerd__task__v2__create_task_request__free_unpacked(d, NULL);
}

/* The checks every Task handler runs first (shim/requests.c), on the
 * requests the shim would get: each refusal names what is wrong. */
static void test_task_request_checks(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  Containerd__Types__Mount mnt = CONTAINERD__TYPES__MOUNT__INIT;
  mnt.type = (char *)"overlay";
  mnt.source = (char *)"overlay";
  Containerd__Types__Mount *mp = &mnt;
  Containerd__Task__V2__CreateTaskRequest c = CONTAINERD__TASK__V2__CREATE_TASK_REQUEST__INIT;
  c.id = (char *)"c1";
  c.bundle = (char *)"/run/b/c1";
  c.rootfs = &mp;
  c.n_rootfs = 1;
  struct shim_create cr;
  struct shim_mount *mounts = NULL;
  assert_int_equal(shim_req_create(&c, &cr, &mounts, &err), 0);
  assert_string_equal(cr.bundle, "/run/b/c1");
  assert_int_equal(cr.n_mounts, 1);
  assert_string_equal(cr.mounts[0].type, "overlay");
  free(mounts);
  assert_int_equal(shim_req_check(&c.base, &err), 0);
  c.checkpoint = (char *)"/ckpt";
  assert_int_equal(shim_req_check(&c.base, &err), -1);
  assert_int_equal(err->code, IOB_CODE_UNIMPLEMENTED);
  iob_error_release(&err);
  c.checkpoint = (char *)"";
  mnt.type = (char *)"";
  assert_int_equal(shim_req_check(&c.base, &err), -1);
  assert_non_null(strstr(err->msg, "invalid rootfs mount"));
  iob_error_release(&err);
  mnt.type = (char *)"overlay";
  c.n_rootfs = 17;
  assert_int_equal(shim_req_check(&c.base, &err), -1);
  assert_non_null(strstr(err->msg, "too many rootfs mounts"));
  iob_error_release(&err);
  c.n_rootfs = 1;
  char longpath[5000];
  memset(longpath, 'a', sizeof(longpath) - 1);
  longpath[sizeof(longpath) - 1] = '\0';
  c.stdout = longpath;
  assert_int_equal(shim_req_check(&c.base, &err), -1);
  assert_non_null(strstr(err->msg, "stdio path too long"));
  iob_error_release(&err);

  Google__Protobuf__Any spec = GOOGLE__PROTOBUF__ANY__INIT;
  Containerd__Task__V2__ExecProcessRequest e = CONTAINERD__TASK__V2__EXEC_PROCESS_REQUEST__INIT;
  e.id = (char *)"c1";
  e.exec_id = (char *)"e1";
  assert_int_equal(shim_req_check(&e.base, &err), -1);
  assert_non_null(strstr(err->msg, "missing or oversized process spec"));
  iob_error_release(&err);
  e.spec = &spec;
  static const char *const specs[] = {"[1]", "{\"args\":", "\"x\""};
  for (size_t i = 0; i < IOB_ARRAY_SIZE(specs); i++) {
    spec.value.data = (uint8_t *)specs[i];
    spec.value.len = strlen(specs[i]);
    assert_int_equal(shim_req_check(&e.base, &err), -1);
    assert_non_null(strstr(err->msg, "invalid process spec"));
    iob_error_release(&err);
  }
  spec.value.data = (uint8_t *)"{\"args\":[\"sh\"]}";
  spec.value.len = strlen((const char *)spec.value.data);
  assert_int_equal(shim_req_check(&e.base, &err), 0);
  e.exec_id = (char *)"";
  assert_int_equal(shim_req_check(&e.base, &err), -1); /* an exec needs its id */
  iob_error_release(&err);

  Containerd__Task__V2__UpdateTaskRequest u = CONTAINERD__TASK__V2__UPDATE_TASK_REQUEST__INIT;
  u.id = (char *)"c1";
  u.resources = &spec;
  assert_int_equal(shim_req_check(&u.base, &err), 0);
  spec.value.data = (uint8_t *)"7";
  spec.value.len = 1;
  assert_int_equal(shim_req_check(&u.base, &err), -1);
  assert_non_null(strstr(err->msg, "invalid resources"));
  iob_error_release(&err);

  Containerd__Task__V2__KillRequest k = CONTAINERD__TASK__V2__KILL_REQUEST__INIT;
  k.id = (char *)"c1";
  k.exec_id = (char *)"../e";
  assert_int_equal(shim_req_check(&k.base, &err), -1);
  assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
  iob_error_release(&err);
  Containerd__Task__V2__ShutdownRequest sd = CONTAINERD__TASK__V2__SHUTDOWN_REQUEST__INIT;
  assert_int_equal(shim_req_check(&sd.base, &err), 0);
}

static void test_agent_requests_broken_wire(void **state) {
  (void)state;
  const ProtobufCMessageDescriptor *const reqs[] = {
      &iobatch__agent__v1__register_request__descriptor,
      &iobatch__agent__v1__admit_request__descriptor,
      &iobatch__agent__v1__cancel_request__descriptor,
      &iobatch__agent__v1__exited_request__descriptor,
      &iobatch__agent__v1__status_request__descriptor,
      &iobatch__agent__v1__plan_request__descriptor,
      /* and the replies libagentclient and iobatchctl decode */
      &iobatch__agent__v1__register_response__descriptor,
      &iobatch__agent__v1__admit_response__descriptor,
      &iobatch__agent__v1__status_response__descriptor,
      &iobatch__agent__v1__plan_response__descriptor,
  };
  for (size_t i = 0; i < IOB_ARRAY_SIZE(reqs); i++)
    decode_broken(reqs[i]);
  /* Register with its baseline sample cut short. */
  static const uint8_t reg[] = {0x0a, 0x01, 'c', 0x4a, 0x04, 0x08, 0x01, 0x10};
  assert_null(iobatch__agent__v1__register_request__unpack(NULL, sizeof(reg), reg));
}

static void test_plan_request_refused(void **state) {
  (void)state;
  struct batch_config cfg;
  batch_config_default(&cfg);
  struct batch_jobfile_job jobs[2] = {{0}, {0}};
  struct batch_jobfile_job *a = &jobs[0], *b = &jobs[1];
  static const struct {
    const char *na, *ca, *nb, *cb, *want;
  } bad[] = {
      {"a", "seq-write", "", "seq-read", "has no name"},
      {"a", "seq-write", "a", "seq-read", "given twice"},
      {"a", "seq-write", "b", "fast", "unknown class"},
      {"a", NULL, "b", "seq-read", "unknown class"},
  };
  for (size_t i = 0; i < IOB_ARRAY_SIZE(bad); i++) {
    a->name = (char *)bad[i].na;
    a->cls = (char *)bad[i].ca;
    b->name = (char *)bad[i].nb;
    b->cls = (char *)bad[i].cb;
    b->solo_s = i == 0 ? NAN : -1;
    cleanup_error struct iob_error *err = NULL;
    struct batch_jobfile_plan r;
    if (batch_jobfile_solve(&cfg, jobs, 2, &r, &err) != -1) {
      batch_jobfile_plan_release(&r);
      fail_msg("plan #%zu accepted", i);
    }
    assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
    assert_non_null(strstr(err->msg, bad[i].want));
  }
  cleanup_error struct iob_error *err = NULL;
  struct batch_jobfile_plan r;
  assert_int_equal(batch_jobfile_solve(&cfg, jobs, 0, &r, &err), -1);
}

/* `iobatchctl plan`'s job file (text or JSON), the same jobs as a Plan. */
static void test_plan_jobs_file_malformed(void **state) {
  (void)state;
  static const struct {
    const char *text, *want;
  } bad[] = {
      {"a seq-write\nb\n", "line 2"},
      {"a seq-write 1 2\n", "expected 'name class"},
      {"a seq-write 1x\n", "invalid solo seconds"},
      {"a seq-write -1\n", "invalid solo seconds"},
      {"a seq-write nan\n", "invalid solo seconds"},
      {"a seq-write inf\n", "invalid solo seconds"},
      {"a fast\n", "unknown class"},
      {"[{\"name\":\"a\"}]", "job 1"},
      {"[{\"name\":\"a\",\"class\":\"seq-write\",\"x\":1}]", "job 1"},
      {"[{\"name\":\"a\",\"class\":\"seq-write\",\"solo_seconds\":-3}]", "invalid solo"},
      {"[{\"name\":1,\"class\":\"seq-write\"}]", "job 1"},
      {"{\"jobs\":{}}", "expected an array"},
      {"[1]", "job 1"},
      {"[{\"name\":\"a\",\"class\":\"seq-write\"}", "cannot parse"},
      {"{\"jobs\":[],\"jobs\":[]}", "cannot parse"},
  };
  for (size_t i = 0; i < IOB_ARRAY_SIZE(bad); i++) {
    cleanup_error struct iob_error *err = NULL;
    struct batch_jobfile j;
    if (batch_jobfile_parse("jobs", bad[i].text, strlen(bad[i].text), &j, &err) != -1) {
      batch_jobfile_release(&j);
      fail_msg("accepted job file #%zu '%s'", i, bad[i].text);
    }
    assert_int_equal(err->code, IOB_CODE_INVALID_ARGUMENT);
    if (strstr(err->msg, bad[i].want) == NULL)
      fail_msg("job file #%zu: '%s' does not say '%s'", i, err->msg, bad[i].want);
    assert_null(j.v);
    assert_int_equal(j.n, 0);
  }
  cleanup_error struct iob_error *err = NULL;
  struct batch_jobfile j;
  static const char nul[] = "a seq-write\0b seq-read\n";
  assert_int_equal(batch_jobfile_parse("jobs", nul, sizeof(nul) - 1, &j, &err), -1);
  assert_non_null(strstr(err->msg, "NUL"));
  iob_error_release(&err);
  /* A name longer than BATCH_JOBFILE_NAME_MAX, more jobs than BATCH_JOBFILE_MAX_JOBS,
   * a file larger than BATCH_JOBFILE_SIZE_MAX. */
  char longname[BATCH_JOBFILE_NAME_MAX + 32];
  memset(longname, 'n', BATCH_JOBFILE_NAME_MAX + 1);
  strcpy(longname + BATCH_JOBFILE_NAME_MAX + 1, " seq-write\n");
  assert_int_equal(batch_jobfile_parse("jobs", longname, strlen(longname), &j, &err), -1);
  assert_non_null(strstr(err->msg, "too long"));
  iob_error_release(&err);
  size_t cap = (BATCH_JOBFILE_MAX_JOBS + 1) * 20;
  cleanup_free char *many = malloc(cap);
  assert_non_null(many);
  size_t len = 0;
  for (int k = 0; k <= BATCH_JOBFILE_MAX_JOBS; k++)
    len += (size_t)snprintf(many + len, cap - len, "j%d idle\n", k);
  assert_int_equal(batch_jobfile_parse("jobs", many, len, &j, &err), -1);
  assert_non_null(strstr(err->msg, "too many jobs"));
  iob_error_release(&err);
  cleanup_free char *big = malloc(BATCH_JOBFILE_SIZE_MAX + 2);
  assert_non_null(big);
  memset(big, '#', BATCH_JOBFILE_SIZE_MAX + 1);
  assert_int_equal(batch_jobfile_parse("jobs", big, BATCH_JOBFILE_SIZE_MAX + 1, &j, &err), -1);
  assert_non_null(strstr(err->msg, "too large"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_task_requests_broken_wire),
      cmocka_unit_test(test_task_request_fields_refused),
      cmocka_unit_test(test_task_request_checks),
      cmocka_unit_test(test_agent_requests_broken_wire),
      cmocka_unit_test(test_plan_request_refused),
      cmocka_unit_test(test_plan_jobs_file_malformed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
