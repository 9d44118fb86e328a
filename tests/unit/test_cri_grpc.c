// SPDX-License-Identifier: Apache-2.0
/* The CRI client's gRPC framing and status (cri/grpc.c) on good and
 * malformed responses, the endpoint syntax, the pod/container join
 * (cri/meta.c), and a call to a socket that never answers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/cleanup.h"
#include "cri/cri.h"
#include "cri/grpc.h"

static void hdr(struct cri_grpc_status *st, const char *n, const char *v) {
  cri_grpc_status_header(st, (const uint8_t *)n, strlen(n), (const uint8_t *)v, strlen(v));
}

static struct cri_grpc_status ok_status(void) {
  struct cri_grpc_status st = {0};
  hdr(&st, ":status", "200");
  hdr(&st, "content-type", "application/grpc");
  hdr(&st, "grpc-status", "0");
  return st;
}

/* A framed VersionResponse. */
static uint8_t *version_body(size_t *len) {
  Runtime__V1__VersionResponse v = RUNTIME__V1__VERSION_RESPONSE__INIT;
  v.runtime_name = (char *)"containerd";
  v.runtime_api_version = (char *)"v1";
  uint8_t *b;
  cri_grpc_frame(&v.base, &b, len);
  return b;
}

static int parse(const struct cri_grpc_status *st, const uint8_t *b, size_t len, size_t max,
                 struct iob_error **err) {
  ProtobufCMessage *m = NULL;
  int r = cri_grpc_response("CRI 'unix:///x' runtime.v1.RuntimeService/Version", st, b, len, max,
                            &runtime__v1__version_response__descriptor, &m, err);
  if (m)
    protobuf_c_message_free_unpacked(m, NULL);
  return r;
}

static void expect_fail(const struct cri_grpc_status *st, const uint8_t *b, size_t len, size_t max,
                        int code, const char *needle) {
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(parse(st, b, len, max, &err), -1);
  assert_non_null(err);
  if (strstr(err->msg, needle) == NULL)
    fail_msg("'%s' does not say '%s'", err->msg, needle);
  assert_non_null(strstr(err->msg, "unix:///x"));
  assert_non_null(strstr(err->msg, "RuntimeService/Version"));
  assert_int_equal(err->code, code);
}

static void test_good_response(void **state) {
  (void)state;
  size_t len;
  cleanup_free uint8_t *b = version_body(&len);
  struct cri_grpc_status st = ok_status();
  ProtobufCMessage *m = NULL;
  assert_int_equal(cri_grpc_response("x", &st, b, len, 1024,
                                     &runtime__v1__version_response__descriptor, &m, NULL),
                   0);
  Runtime__V1__VersionResponse *v = (Runtime__V1__VersionResponse *)m;
  assert_string_equal(v->runtime_name, "containerd");
  assert_string_equal(v->runtime_api_version, "v1");
  protobuf_c_message_free_unpacked(m, NULL);
  /* content-type with a suffix is still gRPC */
  hdr(&st, "content-type", "application/grpc+proto");
  assert_int_equal(parse(&st, b, len, 1024, NULL), 0);
}

static void test_malformed_frames(void **state) {
  (void)state;
  size_t len;
  cleanup_free uint8_t *b = version_body(&len);
  struct cri_grpc_status st = ok_status();
  expect_fail(&st, b, 0, 1024, IOB_CODE_INTERNAL, "no message");
  expect_fail(&st, b, 3, 1024, IOB_CODE_INTERNAL, "short message prefix");
  /* the prefix promises more than follows, and less */
  expect_fail(&st, b, len - 1, 1024, IOB_CODE_INTERNAL, "bytes follow its prefix");
  cleanup_free uint8_t *two = malloc(2 * len);
  memcpy(two, b, len);
  memcpy(two + len, b, len);
  expect_fail(&st, two, 2 * len, 1024, IOB_CODE_INTERNAL, "bytes follow its prefix");
  uint8_t huge[] = {0, 0xff, 0xff, 0xff, 0xff, 1};
  expect_fail(&st, huge, sizeof(huge), 1024, IOB_CODE_INTERNAL, "bytes follow its prefix");
  /* compressed */
  b[0] = 1;
  expect_fail(&st, b, len, 1024, IOB_CODE_INTERNAL, "compressed flag 1");
  b[0] = 0;
  /* oversized: refused before anything is decoded */
  expect_fail(&st, b, len, len - 1, IOB_CODE_RESOURCE_EXHAUSTED, "more than");
  /* bad protobuf: field 1 with wire type 7 */
  uint8_t bad[] = {0, 0, 0, 0, 2, 0x0f, 0x01};
  expect_fail(&st, bad, sizeof(bad), 1024, IOB_CODE_INTERNAL, "cannot decode");
  /* a length-delimited field longer than the message */
  uint8_t trunc[] = {0, 0, 0, 0, 3, 0x12, 0x7f, 'a'};
  expect_fail(&st, trunc, sizeof(trunc), 1024, IOB_CODE_INTERNAL, "cannot decode");
}

static void test_status(void **state) {
  (void)state;
  size_t len;
  cleanup_free uint8_t *b = version_body(&len);
  struct cri_grpc_status st = {0};
  hdr(&st, ":status", "200");
  hdr(&st, "content-type", "application/grpc");
  expect_fail(&st, b, len, 1024, IOB_CODE_INTERNAL, "no grpc-status");
  /* trailers-only failure: the code and the decoded message */
  hdr(&st, "grpc-status", "12");
  hdr(&st, "grpc-message", "unknown service runtime.v1.RuntimeService%0a%zz");
  expect_fail(&st, NULL, 0, 1024, IOB_CODE_UNIMPLEMENTED,
              "grpc-status 12 (UNIMPLEMENTED): unknown service runtime.v1.RuntimeService?%zz");
  hdr(&st, "grpc-status", "x1");
  expect_fail(&st, b, len, 1024, IOB_CODE_INTERNAL, "not a gRPC code");
  hdr(&st, "grpc-status", "1000");
  expect_fail(&st, b, len, 1024, IOB_CODE_INTERNAL, "not a gRPC code");
  hdr(&st, "grpc-status", "99");
  expect_fail(&st, b, len, 1024, 99, "UNKNOWN_CODE");
  st = ok_status();
  hdr(&st, ":status", "503");
  expect_fail(&st, b, len, 1024, IOB_CODE_UNAVAILABLE, "HTTP status 503");
  st = ok_status();
  hdr(&st, "content-type", "application/grpcx");
  expect_fail(&st, b, len, 1024, IOB_CODE_INTERNAL, "content-type");
  /* a long grpc-message is cut, not overflowed */
  char longm[1000];
  memset(longm, 'm', sizeof(longm) - 1);
  longm[sizeof(longm) - 1] = '\0';
  hdr(&st, "grpc-message", longm);
  assert_int_equal(strlen(st.message), CRI_GRPC_MESSAGE_MAX - 1);
}

static void test_endpoint_path(void **state) {
  (void)state;
  char p[108];
  assert_int_equal(cri_endpoint_path("unix:///run/containerd/containerd.sock", p, sizeof(p)), 0);
  assert_string_equal(p, "/run/containerd/containerd.sock");
  assert_int_equal(cri_endpoint_path("/run/crio/crio.sock", p, sizeof(p)), 0);
  assert_string_equal(p, "/run/crio/crio.sock");
  assert_int_equal(cri_endpoint_path("unix://run/x.sock", p, sizeof(p)), -1);
  assert_int_equal(cri_endpoint_path("tcp://127.0.0.1:1", p, sizeof(p)), -1);
  assert_int_equal(cri_endpoint_path("", p, sizeof(p)), -1);
  char longp[200] = "unix:///";
  memset(longp + 8, 'a', 150);
  assert_int_equal(cri_endpoint_path(longp, p, sizeof(p)), -1);
}

static Runtime__V1__PodSandbox *pod(const char *id, const char *ns, const char *name) {
  Runtime__V1__PodSandbox *p = calloc(1, sizeof(*p));
  runtime__v1__pod_sandbox__init(p);
  p->id = (char *)id;
  p->metadata = calloc(1, sizeof(*p->metadata));
  runtime__v1__pod_sandbox_metadata__init(p->metadata);
  p->metadata->namespace_ = (char *)ns;
  p->metadata->name = (char *)name;
  p->metadata->uid = (char *)"uid-1";
  return p;
}

static void test_meta_join(void **state) {
  (void)state;
  Runtime__V1__PodSandbox *pods[] = {pod("p2", "db", "pg-0"), pod("p1", "batch", "etl")};
  Runtime__V1__PodSandbox__LabelsEntry l1 = RUNTIME__V1__POD_SANDBOX__LABELS_ENTRY__INIT,
                                       l2 = RUNTIME__V1__POD_SANDBOX__LABELS_ENTRY__INIT;
  l1.key = (char *)"tier";
  l1.value = (char *)"db";
  l2.key = (char *)"app";
  l2.value = (char *)"pg";
  Runtime__V1__PodSandbox__LabelsEntry *ls[] = {&l1, &l2};
  pods[0]->labels = ls;
  pods[0]->n_labels = 2;
  Runtime__V1__ListPodSandboxResponse pr = RUNTIME__V1__LIST_POD_SANDBOX_RESPONSE__INIT;
  pr.items = pods;
  pr.n_items = 2;
  Runtime__V1__ContainerMetadata md = RUNTIME__V1__CONTAINER_METADATA__INIT;
  md.name = (char *)"postgres";
  Runtime__V1__Container c1 = RUNTIME__V1__CONTAINER__INIT, c2 = RUNTIME__V1__CONTAINER__INIT;
  c1.id = (char *)"c1";
  c1.pod_sandbox_id = (char *)"p2";
  c1.metadata = &md;
  c2.id = (char *)"c2";
  c2.pod_sandbox_id = (char *)"gone"; /* its pod was removed in between */
  Runtime__V1__Container *cs[] = {&c1, &c2};
  Runtime__V1__ListContainersResponse cr = RUNTIME__V1__LIST_CONTAINERS_RESPONSE__INIT;
  cr.containers = cs;
  cr.n_containers = 2;
  struct cri_meta_list l = {0};
  cri_meta_list_build(&pr, &cr, NULL, &l);
  assert_int_equal(l.n, 3);
  const struct cri_meta *m = cri_meta_find(&l, "c1");
  assert_non_null(m);
  assert_string_equal(m->pod_namespace, "db");
  assert_string_equal(m->pod_name, "pg-0");
  assert_string_equal(m->pod_uid, "uid-1");
  assert_string_equal(m->container_name, "postgres");
  assert_int_equal(m->n_labels, 2);
  assert_string_equal(m->labels[0], "app=pg");
  assert_string_equal(m->labels[1], "tier=db");
  m = cri_meta_find(&l, "p1");
  assert_non_null(m);
  assert_null(m->container_name);
  assert_string_equal(m->pod_name, "etl");
  assert_null(cri_meta_find(&l, "c2"));
  cri_meta_list_release(&l);
  for (size_t i = 0; i < 2; i++) {
    free(pods[i]->metadata);
    free(pods[i]);
  }
}

/* A server that accepts (the backlog does) and never answers: the call
 * ends at its timeout, naming the endpoint and the method. */
static void test_timeout(void **state) {
  (void)state;
  char dir[] = "/tmp/test-cri-XXXXXX";
  assert_non_null(mkdtemp(dir));
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/s.sock", dir);
  int l = socket(AF_UNIX, SOCK_STREAM, 0);
  assert_true(l >= 0);
  assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
  assert_int_equal(listen(l, 4), 0);
  struct cri_client *c = NULL;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(cri_client_open(sa.sun_path, 50, &c, &err), 0);
  Runtime__V1__VersionResponse *v = NULL;
  assert_int_equal(cri_client_version(c, &v, &err), -1);
  assert_int_equal(err->code, IOB_CODE_DEADLINE_EXCEEDED);
  char want[200];
  snprintf(want, sizeof(want), "CRI 'unix://%s' runtime.v1.RuntimeService/Version: no answer",
           sa.sun_path);
  if (strstr(err->msg, want) == NULL)
    fail_msg("'%s' does not say '%s'", err->msg, want);
  cri_client_free(c);
  /* a socket nobody listens on any more */
  close(l);
  iob_error_release(&err);
  assert_int_equal(cri_client_open(sa.sun_path, 50, &c, &err), -1);
  assert_non_null(strstr(err->msg, "cannot connect"));
  unlink(sa.sun_path);
  rmdir(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_good_response), cmocka_unit_test(test_malformed_frames),
      cmocka_unit_test(test_status),        cmocka_unit_test(test_endpoint_path),
      cmocka_unit_test(test_meta_join),     cmocka_unit_test(test_timeout),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
