// SPDX-License-Identifier: Apache-2.0
/* common/sdnotify: a datagram socket of our own stands in for systemd. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/cleanup.h"
#include "common/sdnotify.h"

/* A bound SOCK_DGRAM socket; name[0] == '@' binds the abstract name. */
static int listener(const char *name) {
  struct sockaddr_un sa = {.sun_family = AF_UNIX};
  size_t n = strlen(name);
  memcpy(sa.sun_path, name, n);
  if (name[0] == '@')
    sa.sun_path[0] = '\0';
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  assert_true(fd >= 0);
  assert_int_equal(
      bind(fd, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)), 0);
  return fd;
}

static void expect_datagram(int fd, const char *want) {
  char buf[256];
  ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
  assert_true(n >= 0);
  buf[n] = '\0';
  assert_string_equal(buf, want);
}

static void test_path_socket(void **state) {
  (void)state;
  char dir[] = "/tmp/iobsdn.XXXXXX", path[64];
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof(path), "%s/notify", dir);
  cleanup_close int fd = listener(path);
  cleanup_error struct iob_error *err = NULL;
  setenv("NOTIFY_SOCKET", path, 1);
  assert_int_equal(iob_sd_notify("READY=1\nSTATUS=listening on '/run/x.sock'", &err), 1);
  expect_datagram(fd, "READY=1\nSTATUS=listening on '/run/x.sock'");
  assert_int_equal(iob_sd_notify("STOPPING=1", &err), 1);
  expect_datagram(fd, "STOPPING=1");
  unlink(path);
  /* Nobody listening any more: an error naming the socket. */
  assert_int_equal(iob_sd_notify("READY=1", &err), -1);
  assert_non_null(strstr(err->msg, path));
  assert_int_equal(err->errno_, ENOENT);
  rmdir(dir);
  unsetenv("NOTIFY_SOCKET");
}

static void test_abstract_socket(void **state) {
  (void)state;
  char name[64];
  snprintf(name, sizeof(name), "@iobatch-test-sdnotify-%d", (int)getpid());
  cleanup_close int fd = listener(name);
  cleanup_error struct iob_error *err = NULL;
  setenv("NOTIFY_SOCKET", name, 1);
  assert_int_equal(iob_sd_notify("READY=1", &err), 1);
  expect_datagram(fd, "READY=1");
  unsetenv("NOTIFY_SOCKET");
}

static void test_unset_and_invalid(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  unsetenv("NOTIFY_SOCKET");
  assert_int_equal(iob_sd_notify("READY=1", &err), 0);
  assert_null(err);
  setenv("NOTIFY_SOCKET", "", 1);
  assert_int_equal(iob_sd_notify("READY=1", &err), 0);
  assert_null(err);
  assert_int_equal(iob_sd_notify_to("relative/path", "READY=1", &err), -1);
  assert_non_null(strstr(err->msg, "not a path"));
  iob_error_release(&err);
  assert_int_equal(iob_sd_notify_to("@", "READY=1", &err), -1);
  iob_error_release(&err);
  char long_path[200];
  memset(long_path, 'a', sizeof(long_path) - 1);
  long_path[0] = '/';
  long_path[sizeof(long_path) - 1] = '\0';
  assert_int_equal(iob_sd_notify_to(long_path, "READY=1", &err), -1);
  assert_non_null(strstr(err->msg, "too long"));
  unsetenv("NOTIFY_SOCKET");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_path_socket),
      cmocka_unit_test(test_abstract_socket),
      cmocka_unit_test(test_unset_and_invalid),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
