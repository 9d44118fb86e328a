// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/cleanup.h"
#include "common/conf.h"
#include "common/error.h"
#include "common/file.h"
#include "common/log.h"
#include "common/loop.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static void test_error_message_and_code(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(iob_error(&err, ENOENT, "cannot open '%s'", "x"), -1);
  assert_string_equal(err->msg, "cannot open 'x': No such file or directory");
  assert_int_equal(err->code, IOB_CODE_NOT_FOUND);
  iob_error_prefix(&err, "create");
  assert_string_equal(err->msg, "create: cannot open 'x': No such file or directory");
  iob_error_code(&err, IOB_CODE_UNIMPLEMENTED, "method %s", "Foo");
  assert_string_equal(err->msg, "method Foo");
  assert_int_equal(err->code, 12);
}

static int fired;
static void on_timer(struct iob_loop *l, void *data) {
  (void)l;
  fired += *(int *)data;
}
static void on_read(struct iob_loop *l, int fd, uint32_t ev, void *data) {
  (void)ev;
  char c;
  assert_int_equal(read(fd, &c, 1), 1);
  *(char *)data = c;
  iob_loop_del(l, fd); /* deleting inside its own callback must be safe */
  iob_loop_stop(l);
}

static void test_loop_timers_and_fds(void **state) {
  (void)state;
  struct iob_loop *l = NULL;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(iob_loop_new(&l, &err), 0);
  int one = 1, ten = 10;
  struct iob_timer *t = iob_loop_timer(l, 1, on_timer, &ten);
  iob_timer_cancel(l, t);
  iob_loop_timer(l, 1, on_timer, &one);
  fired = 0;
  while (fired == 0)
    assert_int_equal(iob_loop_run_once(l, 100, &err), 0);
  assert_int_equal(fired, 1);
  int p[2];
  assert_int_equal(pipe(p), 0);
  char got = 0;
  assert_int_equal(iob_loop_add(l, p[0], 1 /* EPOLLIN */, on_read, &got, &err), 0);
  assert_int_equal(write(p[1], "x", 1), 1);
  assert_int_equal(iob_loop_run(l, &err), 0);
  assert_int_equal(got, 'x');
  close(p[0]);
  close(p[1]);
  iob_loop_free(l);
}

static void test_read_file_bounded(void **state) {
  (void)state;
  char path[] = "/tmp/iobfile.XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  char data[10000];
  memset(data, 'a', sizeof(data));
  assert_int_equal(write(fd, data, sizeof(data)), (ssize_t)sizeof(data));
  close(fd);
  cleanup_error struct iob_error *err = NULL;
  cleanup_free char *buf = NULL;
  size_t len = 0;
  assert_int_equal(iob_read_file(path, sizeof(data), &buf, &len, &err), 0);
  assert_int_equal(len, sizeof(data));
  assert_int_equal(buf[len], '\0');
  char *small = NULL;
  assert_int_equal(iob_read_file(path, sizeof(data) - 1, &small, &len, &err), -1);
  assert_null(small);
  assert_int_equal(err->errno_, EFBIG);
  assert_non_null(strstr(err->msg, "larger than 9999 bytes"));
  unlink(path);
  assert_int_equal(iob_read_file(path, 10, &small, &len, &err), -1);
  assert_int_equal(err->code, IOB_CODE_NOT_FOUND);
}

/* Log a line of every level with stderr sent to a fresh file, JOURNAL_STREAM
 * set to `env` (NULL: unset), and return what was written. */
static char *log_with(const char *env, bool name_stderr) {
  char path[] = "/tmp/iob-log.XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  unlink(path);
  fflush(stderr);
  int saved = dup(STDERR_FILENO);
  assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
  struct stat st;
  assert_int_equal(fstat(fd, &st), 0);
  char named[64];
  snprintf(named, sizeof(named), "%llu:%llu", (unsigned long long)st.st_dev,
           (unsigned long long)st.st_ino);
  if (name_stderr)
    env = named;
  if (env)
    setenv("JOURNAL_STREAM", env, 1);
  else
    unsetenv("JOURNAL_STREAM");
  iob_log_init("test", 1);
  iob_debug("d %d", 1);
  iob_info("i");
  iob_warn("w \"q\"");
  iob_err("e");
  struct iob_error *err = NULL;
  iob_error_code(&err, IOB_CODE_INVALID_ARGUMENT, "bad");
  iob_error_print("prog", &err);
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  unsetenv("JOURNAL_STREAM");
  iob_log_init("test", 0);
  off_t end = lseek(fd, 0, SEEK_END);
  assert_true(end >= 0 && end < 65536);
  size_t n = (size_t)end & 0xffff;
  char *buf = calloc(1, n + 1);
  assert_non_null(buf);
  assert_int_equal(pread(fd, buf, n, 0), (ssize_t)n);
  close(fd);
  return buf;
}

static void test_log_journal(void **state) {
  (void)state;
  /* stderr is the journal stream: priorities, no timestamp of ours. */
  char *j = log_with(NULL, true);
  assert_string_equal(j, "<7>level=debug msg=\"d 1\" component=test\n"
                         "<6>level=info msg=\"i\" component=test\n"
                         "<4>level=warning msg=\"w \\\"q\\\"\" component=test\n"
                         "<3>level=error msg=\"e\" component=test\n"
                         "<3>prog: bad\n");
  free(j);
  /* Inherited from a parent whose stream it was, unset, or malformed: the
   * plain format (a shim's stderr is containerd's log FIFO). */
  static const char *const not_ours[] = {
      NULL,
      "",
      "1:2",
      ":",
      "12",
      "12:",
      ":34",
      "a:b",
      "-1:5",
      "1:2:3",
      " 1:2",
      "1:2 ",
      "+1:2",
      "99999999999999999999999:1",
      "18446744073709551616:1",
  };
  for (size_t i = 0; i < IOB_ARRAY_SIZE(not_ours); i++) {
    char *p = log_with(not_ours[i], false);
    if (strncmp(p, "time=\"", 6) != 0 || strstr(p, "<") != NULL ||
        strstr(p, "\nprog: bad\n") == NULL)
      fail_msg("JOURNAL_STREAM '%s': got '%s'", not_ours[i] ? not_ours[i] : "(unset)", p);
    free(p);
  }
  /* The parser on its own. */
  assert_true(iob_log_journal_stream_is("8:1234", 8, 1234));
  assert_true(iob_log_journal_stream_is("18446744073709551615:0", UINT64_MAX, 0));
  assert_false(iob_log_journal_stream_is("8:1234", 8, 1235));
  assert_false(iob_log_journal_stream_is("8:1234", 9, 1234));
  assert_false(iob_log_journal_stream_is(NULL, 0, 0));
  assert_false(iob_log_journal_stream_is("0:", 0, 0));
  assert_false(iob_log_journal_stream_is(":0", 0, 0));
}

/* A symlink or a hard link planted at PATH.tmp is replaced, never
 * written through. */
static void test_write_atomic_never_follows(void **state) {
  (void)state;
  char dir[] = "/tmp/iobatom.XXXXXX";
  assert_non_null(mkdtemp(dir));
  char victim[64], path[64], tmp[80];
  snprintf(victim, sizeof(victim), "%s/victim", dir);
  snprintf(path, sizeof(path), "%s/f.json", dir);
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  int fd = open(victim, O_CREAT | O_WRONLY, 0600);
  assert_int_equal(write(fd, "keep", 4), 4);
  close(fd);
  cleanup_error struct iob_error *err = NULL;
  for (int kind = 0; kind < 2; kind++) {
    assert_int_equal(kind ? link(victim, tmp) : symlink(victim, tmp), 0);
    assert_int_equal(iob_write_file_atomic(path, "new", 3, 0600, &err), 0);
    cleanup_free char *v = NULL, *n = NULL;
    size_t len;
    assert_int_equal(iob_read_file(victim, 100, &v, &len, &err), 0);
    assert_string_equal(v, "keep");
    assert_int_equal(iob_read_file(path, 100, &n, &len, &err), 0);
    assert_string_equal(n, "new");
  }
  unlink(victim);
  unlink(path);
  rmdir(dir);
}

static void expect_unsafe(const char *dir, const char *what) {
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(iob_dir_check_private(dir, "socket directory", &err), -1);
  if (strstr(err->msg, what) == NULL || strstr(err->msg, "socket directory '") != err->msg ||
      strstr(err->msg, "it must be a directory owned by uid") == NULL)
    fail_msg("got '%s', want '%s'", err->msg, what);
}

static void test_dir_check_private(void **state) {
  (void)state;
  char dir[] = "/tmp/iobdir.XXXXXX";
  assert_non_null(mkdtemp(dir)); /* 0700, ours */
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(iob_dir_check_private(dir, "socket directory", &err), 0);
  assert_int_equal(chmod(dir, 0755), 0);
  expect_unsafe(dir, "is open to other users (owner uid");
  assert_int_equal(chmod(dir, 0775), 0);
  expect_unsafe(dir, "is writable by other users (owner uid");
  assert_int_equal(chmod(dir, 0710), 0);
  expect_unsafe(dir, "mode 0710");
  assert_int_equal(chmod(dir, 0700), 0);
  char link[64], file[64];
  snprintf(link, sizeof(link), "%s.lnk", dir);
  assert_int_equal(symlink(dir, link), 0);
  expect_unsafe(link, "is a symbolic link");
  unlink(link);
  snprintf(file, sizeof(file), "%s/f", dir);
  close(open(file, O_CREAT | O_WRONLY, 0600));
  expect_unsafe(file, "is not a directory");
  unlink(file);
  if (geteuid() == 0) {
    assert_int_equal(chown(dir, 65534, 0), 0);
    expect_unsafe(dir, "is owned by another user (owner uid 65534");
  }
  rmdir(dir);
  assert_int_equal(iob_dir_check_private(dir, "socket directory", &err), -1);
  assert_int_equal(err->code, IOB_CODE_NOT_FOUND);
}

static void expect_make_refused(const char *dir, const char *what) {
  cleanup_error struct iob_error *err = NULL;
  unsigned old = 1;
  struct stat before, after;
  int had = lstat(dir, &before);
  assert_int_equal(iob_dir_make_private(dir, "socket directory", &old, &err), -1);
  if (strstr(err->msg, what) == NULL || strstr(err->msg, "socket directory '") == NULL)
    fail_msg("got '%s', want '%s'", err->msg, what);
  assert_int_equal(old, 0);
  if (had == 0) { /* refused means untouched */
    assert_int_equal(lstat(dir, &after), 0);
    assert_int_equal(after.st_mode, before.st_mode);
  }
}

static void test_dir_make_private(void **state) {
  (void)state;
  char base[] = "/tmp/iobmk.XXXXXX";
  assert_non_null(mkdtemp(base));
  char dir[64], link[64], file[64];
  snprintf(dir, sizeof(dir), "%s/run", base);
  cleanup_error struct iob_error *err = NULL;
  unsigned old = 1;
  struct stat st;
  /* Missing: made 0700 whatever the umask. */
  mode_t um = umask(0);
  assert_int_equal(iob_dir_make_private(dir, "socket directory", &old, &err), 1);
  umask(um);
  assert_int_equal(old, 0);
  assert_int_equal(lstat(dir, &st), 0);
  assert_int_equal(st.st_mode & 07777, 0700);
  /* Already right: nothing to do. */
  old = 1;
  assert_int_equal(iob_dir_make_private(dir, "socket directory", &old, &err), 0);
  assert_int_equal(old, 0);
  /* Readable or searchable by others, not writable: repaired. */
  static const unsigned fixable[] = {0755, 0750, 0711, 0705, 0701};
  for (size_t i = 0; i < sizeof(fixable) / sizeof(fixable[0]); i++) {
    assert_int_equal(chmod(dir, fixable[i]), 0);
    assert_int_equal(iob_dir_make_private(dir, "socket directory", &old, &err), 1);
    assert_int_equal(old, fixable[i]);
    assert_int_equal(lstat(dir, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0700);
  }
  /* Writable by group or others: refused, left as it is. */
  static const unsigned open_modes[] = {0775, 0757, 0770, 0722, 0777, 01777};
  for (size_t i = 0; i < sizeof(open_modes) / sizeof(open_modes[0]); i++) {
    assert_int_equal(chmod(dir, open_modes[i]), 0);
    expect_make_refused(dir, "is writable by other users (owner uid");
  }
  assert_int_equal(chmod(dir, 0755), 0);
  /* A symlink to a fixable directory: refused, the target untouched. */
  snprintf(link, sizeof(link), "%s/lnk", base);
  assert_int_equal(symlink(dir, link), 0);
  expect_make_refused(link, "is a symbolic link");
  assert_int_equal(lstat(dir, &st), 0);
  assert_int_equal(st.st_mode & 07777, 0755);
  unlink(link);
  /* A dangling symlink: not created through. */
  snprintf(file, sizeof(file), "%s/gone", base);
  assert_int_equal(symlink(file, link), 0);
  expect_make_refused(link, "is a symbolic link");
  assert_int_equal(lstat(file, &st), -1);
  unlink(link);
  /* A file. */
  close(open(file, O_CREAT | O_WRONLY, 0644));
  expect_make_refused(file, "is not a directory");
  unlink(file);
  /* Another owner, even with a fixable mode. */
  if (geteuid() == 0) {
    assert_int_equal(chown(dir, 65534, 0), 0);
    expect_make_refused(dir, "is owned by another user (owner uid 65534");
    assert_int_equal(chown(dir, 0, 0), 0);
  }
  /* No parent: the error names the directory. */
  snprintf(file, sizeof(file), "%s/no/such", base);
  expect_make_refused(file, "cannot create socket directory '");
  rmdir(dir);
  rmdir(base);
}

/* common/conf.h: the line split, the key table and its value parsers. */
struct conf_t {
  double d;
  uint64_t n, b;
};

static void test_conf_table(void **state) {
  (void)state;
  static const struct iob_conf_key keys[] = {
      {"d", iob_conf_double, offsetof(struct conf_t, d), 0, 1, NULL},
      {"n", iob_conf_u64, offsetof(struct conf_t, n), 1, 100, NULL},
      {"b", iob_conf_bytes, offsetof(struct conf_t, b), 512, 1 << 20, NULL},
  };
  char line[64];
  char *k = NULL, *v = NULL;
  strcpy(line, "  # only a comment");
  assert_int_equal(iob_conf_split(line, 0, &k, &v), 0);
  strcpy(line, "\tno equals sign \r");
  assert_int_equal(iob_conf_split(line, 0, &k, &v), -1);
  assert_string_equal(k, "no equals sign");
  strcpy(line, " d =\t0.25 # why\r");
  assert_int_equal(iob_conf_split(line, 0, &k, &v), 1);
  assert_string_equal(k, "d");
  assert_string_equal(v, "0.25");
  strcpy(line, "\rd=1");
  assert_int_equal(iob_conf_split(line, 0, &k, &v), 1);
  assert_string_equal(k, "\rd");
  strcpy(line, "\rd=\r1");
  assert_int_equal(iob_conf_split(line, IOB_CONF_TRIM_CR, &k, &v), 1);
  assert_string_equal(k, "d");
  assert_string_equal(v, "1");
  assert_int_equal(iob_conf_find(keys, 3, "b"), 2);
  assert_int_equal(iob_conf_find(keys, 3, "x"), -1);
  struct conf_t c = {0};
  assert_int_equal(iob_conf_set(&keys[0], "0.25", &c, NULL), 0);
  assert_true(c.d == 0.25);
  assert_int_equal(iob_conf_set(&keys[0], "1.5", &c, NULL), -1);
  assert_int_equal(iob_conf_set(&keys[0], "nan", &c, NULL), -1);
  assert_int_equal(iob_conf_set(&keys[0], " 0.5", &c, NULL), -1);
  assert_true(c.d == 0.25); /* untouched by a refused value */
  assert_int_equal(iob_conf_set(&keys[1], "42", &c, NULL), 0);
  assert_int_equal(c.n, 42);
  assert_int_equal(iob_conf_set(&keys[1], "0", &c, NULL), -1);
  assert_int_equal(iob_conf_set(&keys[1], "4x", &c, NULL), -1);
  assert_int_equal(iob_conf_set(&keys[1], "99999999999999999999999", &c, NULL), -1);
  assert_int_equal(iob_conf_set(&keys[2], "16k", &c, NULL), 0);
  assert_int_equal(c.b, 16 * 1024);
  assert_int_equal(iob_conf_set(&keys[2], "1M", &c, NULL), 0);
  assert_int_equal(c.b, 1024 * 1024);
  assert_int_equal(iob_conf_set(&keys[2], "2M", &c, NULL), -1);
  assert_int_equal(iob_conf_set(&keys[2], "K", &c, NULL), -1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_conf_table),
      cmocka_unit_test(test_error_message_and_code),
      cmocka_unit_test(test_log_journal),
      cmocka_unit_test(test_loop_timers_and_fds),
      cmocka_unit_test(test_read_file_bounded),
      cmocka_unit_test(test_dir_check_private),
      cmocka_unit_test(test_dir_make_private),
      cmocka_unit_test(test_write_atomic_never_follows),
  };
  return cmocka_run_group_tests_name("common", tests, NULL, NULL);
}
