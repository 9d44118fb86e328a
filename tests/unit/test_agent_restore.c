// SPDX-License-Identifier: Apache-2.0
/* What the agent wrote in cgroup files, put back (agent/restore.c): the
 * first write wins, the journal is written before anything is remembered
 * and removed when nothing is left, a vanished cgroup is no error, a
 * symbolic link is never followed, a journal left by a crash is replayed,
 * and a malformed one is refused with a clear error and kept aside. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/restore.h"
#include "common/cleanup.h"
#include "common/file.h"

static char *slurp(const char *path) {
  char *buf = NULL;
  size_t len = 0;
  cleanup_error struct iob_error *err = NULL;
  if (iob_read_file(path, 1 << 20, &buf, &len, &err) < 0)
    return NULL;
  return buf;
}

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void rm_rf(const char *dir) {
  char cmd[512];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

struct tmp {
  char dir[64];
  char cg[128];   /* a fake cgroup directory */
  char file[192]; /* its io.max, empty */
};

static void tmp_make(struct tmp *t) {
  snprintf(t->dir, sizeof(t->dir), "/tmp/iob-restore-XXXXXX");
  assert_non_null(mkdtemp(t->dir));
  snprintf(t->cg, sizeof(t->cg), "%s/cg", t->dir);
  assert_int_equal(mkdir(t->cg, 0700), 0);
  snprintf(t->file, sizeof(t->file), "%s/io.max", t->cg);
  put(t->file, "");
}

static void test_remember_and_restore(void **state) {
  (void)state;
  struct tmp t;
  tmp_make(&t);
  struct agent_restore r;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_restore_init(&r, t.dir, NULL, &err), 0);
  const char *orig = "rbps=max wbps=max riops=77 wiops=max";
  assert_int_equal(agent_restore_remember(&r, t.file, 8, 0, orig, &err), 0);
  assert_true(agent_restore_has(&r, t.file, 8, 0));
  assert_false(agent_restore_has(&r, t.file, 8, 16));
  /* the journal is there before the caller writes anything */
  struct agent_restore back;
  assert_int_equal(agent_restore_init(&back, NULL, NULL, &err), 0);
  cleanup_free char *j = slurp(r.path);
  assert_non_null(j);
  assert_int_equal(agent_restore_parse(&back, r.path, j, strlen(j), &err), 0);
  assert_int_equal(back.n, 1);
  assert_string_equal(back.v[0].file, t.file);
  assert_string_equal(back.v[0].value, orig);
  agent_restore_release(&back);
  /* the first write wins: a later value is not what was there */
  assert_int_equal(agent_restore_remember(&r, t.file, 8, 0, "rbps=1 wbps=1 riops=77 wiops=max",
                                          &err),
                   0);
  assert_int_equal(r.n, 1);
  assert_string_equal(r.v[0].value, orig);
  /* another directory is left alone */
  assert_int_equal(agent_restore_dir(&r, "/sys/fs/cgroup/other", AGENT_RESTORE_ALL), 0);
  assert_int_equal(r.n, 1);
  /* a weight in the same directory (a container's v2 cgroup) */
  char wfile[256];
  snprintf(wfile, sizeof(wfile), "%s/io.weight", t.cg);
  put(wfile, "");
  assert_int_equal(agent_restore_remember(&r, wfile, 8, 0, "default", &err), 0);
  /* put back: "MAJ:MIN value"; caps and weights each their own */
  assert_int_equal(agent_restore_dir(&r, t.cg, AGENT_RESTORE_CAPS), 1);
  cleanup_free char *got = slurp(t.file);
  assert_string_equal(got, "8:0 rbps=max wbps=max riops=77 wiops=max");
  cleanup_free char *w0 = slurp(wfile);
  assert_string_equal(w0, "");
  assert_int_equal(r.n, 1);
  assert_int_equal(access(r.path, F_OK), 0);
  /* the last entry goes, and the journal with it */
  assert_int_equal(agent_restore_dir(&r, t.cg, AGENT_RESTORE_WEIGHTS), 1);
  cleanup_free char *w1 = slurp(wfile);
  assert_string_equal(w1, "8:0 default");
  assert_int_equal(r.n, 0);
  assert_int_equal(access(r.path, F_OK), -1);
  agent_restore_release(&r);
  rm_rf(t.dir);
}

/* cpu.shares / cpu.weight hold one value per cgroup: remembered with
 * device 0:0, journalled, and put back alone, apart from caps and
 * weights in the same directory. */
static void test_cpu_whole_cgroup(void **state) {
  (void)state;
  struct tmp t;
  tmp_make(&t);
  struct agent_restore r;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_restore_init(&r, t.dir, NULL, &err), 0);
  char cfile[256];
  snprintf(cfile, sizeof(cfile), "%s/cpu.shares", t.cg);
  put(cfile, "");
  assert_int_equal(agent_restore_remember(&r, cfile, 0, 0, "1024", &err), 0);
  assert_int_equal(agent_restore_remember(&r, t.file, 8, 0, "rbps=max wbps=max riops=max wiops=max",
                                          &err),
                   0);
  /* the journal round-trips it */
  struct agent_restore back;
  assert_int_equal(agent_restore_init(&back, NULL, NULL, &err), 0);
  cleanup_free char *j = slurp(r.path);
  assert_non_null(j);
  assert_int_equal(agent_restore_parse(&back, r.path, j, strlen(j), &err), 0);
  assert_int_equal(back.n, 2);
  agent_restore_release(&back);
  /* weights and caps leave it alone */
  assert_int_equal(agent_restore_dir(&r, t.cg, AGENT_RESTORE_WEIGHTS), 0);
  assert_int_equal(agent_restore_dir(&r, t.cg, AGENT_RESTORE_CAPS), 1);
  cleanup_free char *c0 = slurp(cfile);
  assert_string_equal(c0, "");
  /* its own kind writes the value alone, no device */
  assert_int_equal(agent_restore_dir(&r, t.cg, AGENT_RESTORE_CPU), 1);
  cleanup_free char *c1 = slurp(cfile);
  assert_string_equal(c1, "1024");
  assert_int_equal(r.n, 0);
  agent_restore_release(&r);
  rm_rf(t.dir);
}

/* The freezer's files (agent/freeze.c): one value per cgroup, put back
 * apart from CPU weights, and a crashed agent's freeze is thawed by the
 * next one's replay. */
static void test_freeze_files(void **state) {
  (void)state;
  struct tmp t;
  tmp_make(&t);
  struct agent_restore r;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_restore_init(&r, t.dir, NULL, &err), 0);
  char v1[256], v2[256], cpu[256];
  snprintf(v1, sizeof(v1), "%s/freezer.state", t.cg);
  snprintf(v2, sizeof(v2), "%s/cgroup.freeze", t.cg);
  snprintf(cpu, sizeof(cpu), "%s/cpu.weight", t.cg);
  put(cpu, "");
  put(v1, "FROZEN");
  put(v2, "1");
  assert_int_equal(agent_restore_remember(&r, cpu, 0, 0, "100", &err), 0);
  assert_int_equal(agent_restore_remember(&r, v1, 0, 0, "THAWED", &err), 0);
  assert_int_equal(agent_restore_remember(&r, v2, 0, 0, "0", &err), 0);
  /* CPU leaves the freezer alone, and the freezer the CPU weight */
  assert_int_equal(agent_restore_dir(&r, t.cg, AGENT_RESTORE_FREEZE), 2);
  cleanup_free char *a = slurp(v1), *b = slurp(v2), *c = slurp(cpu);
  assert_string_equal(a, "THAWED");
  assert_string_equal(b, "0");
  assert_string_equal(c, "");
  assert_int_equal(r.n, 1);
  /* a crash with a container frozen: the next agent thaws it */
  put(v1, "FROZEN");
  assert_int_equal(agent_restore_remember(&r, v1, 0, 0, "THAWED", &err), 0);
  struct agent_restore next;
  assert_int_equal(agent_restore_init(&next, t.dir, NULL, &err), 0);
  assert_int_equal(agent_restore_replay(&next, &err), 2);
  cleanup_free char *d = slurp(v1);
  assert_string_equal(d, "THAWED");
  agent_restore_release(&next);
  agent_restore_release(&r);
  rm_rf(t.dir);
}

static void test_vanished_and_symlink(void **state) {
  (void)state;
  struct tmp t;
  tmp_make(&t);
  struct agent_restore r;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_restore_init(&r, t.dir, NULL, &err), 0);
  /* a cgroup that vanished: nothing to write, no error, entry dropped */
  assert_int_equal(agent_restore_remember(&r, t.file, 8, 0, "rbps=max wbps=max riops=max wiops=max",
                                          &err),
                   0);
  assert_int_equal(unlink(t.file), 0);
  assert_int_equal(rmdir(t.cg), 0);
  assert_int_equal(agent_restore_dir(&r, NULL, AGENT_RESTORE_ALL), 0);
  assert_int_equal(r.n, 0);
  /* a symbolic link in place of the file is not followed */
  char target[192], link[192], cg2[160];
  snprintf(target, sizeof(target), "%s/target", t.dir);
  snprintf(cg2, sizeof(cg2), "%s/cg2", t.dir);
  snprintf(link, sizeof(link), "%s/blkio.throttle.write_bps_device", cg2);
  put(target, "untouched");
  assert_int_equal(mkdir(cg2, 0700), 0);
  assert_int_equal(symlink(target, link), 0);
  assert_int_equal(agent_restore_remember(&r, link, 8, 0, "0", &err), 0);
  assert_int_equal(agent_restore_dir(&r, cg2, AGENT_RESTORE_ALL), 0);
  cleanup_free char *got = slurp(target);
  assert_string_equal(got, "untouched");
  assert_int_equal(r.n, 0);
  /* files the agent never writes, and odd values, are refused */
  assert_int_equal(agent_restore_remember(&r, "/etc/passwd", 8, 0, "0", &err), -1);
  iob_error_release(&err);
  assert_int_equal(agent_restore_remember(&r, t.file, 8, 0, "0\nroot", &err), -1);
  iob_error_release(&err);
  assert_int_equal(r.n, 0);
  agent_restore_release(&r);
  rm_rf(t.dir);
}

/* Without a journal that can be written nothing is remembered: the
 * caller must not write what it could not put back after a crash. */
static void test_journal_unwritable(void **state) {
  (void)state;
  struct tmp t;
  tmp_make(&t);
  char gone[128];
  snprintf(gone, sizeof(gone), "%s/no/such/dir", t.dir);
  struct agent_restore r;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_restore_init(&r, gone, NULL, &err), 0);
  assert_int_equal(agent_restore_remember(&r, t.file, 8, 0, "0", &err), -1);
  assert_int_equal(err->errno_, ENOENT);
  assert_false(agent_restore_has(&r, t.file, 8, 0));
  assert_int_equal(r.n, 0);
  agent_restore_release(&r);
  rm_rf(t.dir);
}

/* A cgroup directory's name need not be UTF-8; a JSON string must be.
 * Such a file is refused by an error that names it (it was reported as
 * out of memory once), and nothing is remembered or journalled. */
static void test_remember_not_utf8(void **state) {
  (void)state;
  struct tmp t;
  tmp_make(&t);
  char file[256];
  snprintf(file, sizeof(file), "%s/caf\xe9/io.max", t.dir);
  struct agent_restore r;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_restore_init(&r, t.dir, NULL, &err), 0);
  assert_int_equal(agent_restore_remember(&r, file, 8, 0, "0", &err), -1);
  assert_non_null(strstr(err->msg, file));
  assert_non_null(strstr(err->msg, "UTF-8"));
  assert_int_equal(err->errno_, 0);
  assert_false(agent_restore_has(&r, file, 8, 0));
  assert_int_equal(r.n, 0);
  assert_int_equal(access(r.path, F_OK), -1);
  agent_restore_release(&r);
  rm_rf(t.dir);
}

static void test_replay(void **state) {
  (void)state;
  struct tmp t;
  tmp_make(&t);
  struct agent_restore r;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_restore_init(&r, t.dir, NULL, &err), 0);
  /* no journal: nothing to do */
  assert_int_equal(agent_restore_replay(&r, &err), 0);
  /* what a killed agent left: one file still there, one cgroup gone */
  char text[1024];
  snprintf(text, sizeof(text),
           "{\"version\": 1, \"entries\": ["
           "{\"file\": \"%s\", \"dev\": \"8:0\", \"value\": \"rbps=max wbps=max riops=max wiops=max\"},"
           "{\"file\": \"%s/gone/io.weight\", \"dev\": \"8:0\", \"value\": \"default\"}]}",
           t.file, t.dir);
  put(r.path, text);
  assert_int_equal(agent_restore_replay(&r, &err), 1);
  cleanup_free char *got = slurp(t.file);
  assert_string_equal(got, "8:0 rbps=max wbps=max riops=max wiops=max");
  assert_int_equal(r.n, 0);
  assert_int_equal(access(r.path, F_OK), -1);
  agent_restore_release(&r);
  rm_rf(t.dir);
}

/* cgroup files live in memory: a journal of another boot names values
 * that are nobody's now, and is removed unread.  The journal says its
 * boot; one of the same boot is replayed. */
static void test_replay_other_boot(void **state) {
  (void)state;
  struct tmp t;
  tmp_make(&t);
  char idfile[128], text[1024];
  snprintf(idfile, sizeof(idfile), "%s/boot_id", t.dir);
  put(idfile, "0f6a3c2e-1111-4222-8333-944455556666\n");
  struct agent_restore r;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_restore_init(&r, t.dir, idfile, &err), 0);
  assert_string_equal(r.boot_id, "0f6a3c2e-1111-4222-8333-944455556666");
  /* what this agent writes says this boot */
  assert_int_equal(agent_restore_remember(&r, t.file, 8, 0, "rbps=max wbps=max riops=max wiops=max",
                                          &err),
                   0);
  cleanup_free char *j = slurp(r.path);
  assert_non_null(strstr(j, "\"boot_id\": \"0f6a3c2e-1111-4222-8333-944455556666\""));
  agent_restore_release(&r);
  /* another boot's: removed, nothing written */
  assert_int_equal(agent_restore_init(&r, t.dir, idfile, &err), 0);
  snprintf(text, sizeof(text),
           "{\"version\": 1, \"boot_id\": \"aaaaaaaa-0000-4000-8000-000000000000\", \"entries\": ["
           "{\"file\": \"%s\", \"dev\": \"8:0\", \"value\": \"rbps=1 wbps=1 riops=1 wiops=1\"}]}",
           t.file);
  put(r.path, text);
  assert_int_equal(agent_restore_replay(&r, &err), 0);
  cleanup_free char *got = slurp(t.file);
  assert_string_equal(got, "");
  assert_int_equal(access(r.path, F_OK), -1);
  assert_int_equal(r.n, 0);
  assert_string_equal(r.boot_id, "0f6a3c2e-1111-4222-8333-944455556666");
  /* this boot's: replayed */
  snprintf(text, sizeof(text),
           "{\"version\": 1, \"boot_id\": \"0f6a3c2e-1111-4222-8333-944455556666\", \"entries\": ["
           "{\"file\": \"%s\", \"dev\": \"8:0\", \"value\": \"rbps=1 wbps=1 riops=1 wiops=1\"}]}",
           t.file);
  put(r.path, text);
  assert_int_equal(agent_restore_replay(&r, &err), 1);
  cleanup_free char *got2 = slurp(t.file);
  assert_string_equal(got2, "8:0 rbps=1 wbps=1 riops=1 wiops=1");
  agent_restore_release(&r);
  rm_rf(t.dir);
}

static void test_replay_malformed_kept(void **state) {
  (void)state;
  struct tmp t;
  tmp_make(&t);
  struct agent_restore r;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_restore_init(&r, t.dir, NULL, &err), 0);
  char text[1024];
  snprintf(text, sizeof(text),
           "{\"version\": 1, \"entries\": [{\"file\": \"%s\", \"dev\": \"8:0\", \"value\": \"0\"}",
           t.file);
  put(r.path, text);
  assert_int_equal(agent_restore_replay(&r, &err), -1);
  assert_non_null(strstr(err->msg, "cannot parse"));
  assert_non_null(strstr(err->msg, "kept aside as"));
  assert_int_equal(r.n, 0);
  /* nothing written, nothing lost: the text is in restore.json.bad-<time> */
  cleanup_free char *got = slurp(t.file);
  assert_string_equal(got, "");
  assert_int_equal(access(r.path, F_OK), -1);
  char cmd[256];
  snprintf(cmd, sizeof(cmd), "cat %s/restore.json.bad-* 2>/dev/null", t.dir);
  FILE *p = popen(cmd, "r");
  char back[1024] = "";
  size_t n = fread(back, 1, sizeof(back) - 1, p);
  back[n] = '\0';
  pclose(p);
  assert_string_equal(back, text);
  agent_restore_release(&r);
  rm_rf(t.dir);
}

static void expect_bad(const char *text, const char *msg) {
  struct agent_restore r;
  cleanup_error struct iob_error *err = NULL;
  agent_restore_init(&r, NULL, NULL, &err);
  if (agent_restore_parse(&r, "j.json", text, strlen(text), &err) == 0)
    fail_msg("accepted: %s", text);
  if (strstr(err->msg, msg) == NULL)
    fail_msg("'%s': got '%s', want '%s'", text, err->msg, msg);
  assert_int_equal(err->code, IOB_CODE_DATA_LOSS);
  assert_int_equal(r.n, 0);
  agent_restore_release(&r);
}

#define ENT(file, dev, value)                                                                      \
  "{\"version\": 1, \"entries\": [{\"file\": \"" file "\", \"dev\": \"" dev "\", \"value\": \"" value \
  "\"}]}"

static void test_malformed(void **state) {
  (void)state;
  expect_bad("", "cannot parse 'j.json'");
  expect_bad("{\"version\": 1, \"entries\": [", "cannot parse 'j.json'");
  expect_bad("[]", "top level is not an object");
  expect_bad("{\"version\": 2, \"entries\": []}", "unsupported 'version'");
  expect_bad("{\"entries\": []}", "unsupported 'version'");
  expect_bad("{\"version\": 1, \"entries\": {}}", "'entries' is not an array");
  expect_bad("{\"version\": 1, \"boot_id\": 7, \"entries\": []}", "invalid 'boot_id'");
  expect_bad("{\"version\": 1, \"boot_id\": \"../x\", \"entries\": []}", "invalid 'boot_id'");
  expect_bad("{\"version\": 1, \"entries\": [{\"file\": \"/sys/fs/cgroup/a/io.max\"}]}", "entry 0");
  expect_bad("{\"version\": 1, \"entries\": [{\"file\": \"/sys/fs/cgroup/a/io.max\", \"dev\": "
             "\"8:0\", \"value\": \"0\", \"x\": 1}]}",
             "entry 0");
  expect_bad(ENT("sys/fs/cgroup/a/io.max", "8:0", "0"), "not a cgroup file the agent writes");
  expect_bad(ENT("/sys/fs/cgroup/../../etc/io.max", "8:0", "0"),
             "not a cgroup file the agent writes");
  expect_bad(ENT("/etc/passwd", "8:0", "0"), "not a cgroup file the agent writes");
  expect_bad(ENT("/sys/fs/cgroup/a/cgroup.procs", "8:0", "0"), "not a cgroup file the agent writes");
  expect_bad(ENT("/sys/fs/cgroup/a/io.max", "8", "0"), "invalid device");
  expect_bad(ENT("/sys/fs/cgroup/a/io.max", "8:x", "0"), "invalid device");
  expect_bad(ENT("/sys/fs/cgroup/a/io.max", "8:0", ""), "invalid value");
  expect_bad(ENT("/sys/fs/cgroup/a/io.max", "8:0", "1\\n8:16 1"), "invalid value");
  expect_bad(ENT("/sys/fs/cgroup/a/io.max", "8:0", "$(reboot)"), "invalid value");
  expect_bad("{\"version\": 1, \"entries\": ["
             "{\"file\": \"/sys/fs/cgroup/a/io.max\", \"dev\": \"8:0\", \"value\": \"0\"},"
             "{\"file\": \"/sys/fs/cgroup/a/io.max\", \"dev\": \"8:0\", \"value\": \"1\"}]}",
             "twice");
  char big[AGENT_RESTORE_MAX_BYTES + 2];
  memset(big, ' ', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  expect_bad(big, "too large");
  /* and what the agent writes is accepted */
  struct agent_restore r;
  cleanup_error struct iob_error *err = NULL;
  agent_restore_init(&r, NULL, NULL, &err);
  const char *ok = "{\"version\": 1, \"entries\": ["
                   "{\"file\": \"/sys/fs/cgroup/a/io.weight\", \"dev\": \"8:0\", \"value\": "
                   "\"default\"},"
                   "{\"file\": \"/sys/fs/cgroup/blkio/k/blkio.throttle.read_iops_device\", "
                   "\"dev\": \"259:0\", \"value\": \"77777\"}]}";
  assert_int_equal(agent_restore_parse(&r, "j.json", ok, strlen(ok), &err), 0);
  assert_int_equal(r.n, 2);
  assert_int_equal(r.v[1].major, 259);
  agent_restore_release(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_remember_and_restore),
      cmocka_unit_test(test_cpu_whole_cgroup),
      cmocka_unit_test(test_freeze_files),
      cmocka_unit_test(test_vanished_and_symlink),
      cmocka_unit_test(test_journal_unwritable),
      cmocka_unit_test(test_remember_not_utf8),
      cmocka_unit_test(test_replay),
      cmocka_unit_test(test_replay_other_boot),
      cmocka_unit_test(test_replay_malformed_kept),
      cmocka_unit_test(test_malformed),
  };
  return cmocka_run_group_tests_name("agent_restore", tests, NULL, NULL);
}
