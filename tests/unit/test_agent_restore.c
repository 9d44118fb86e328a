// SPDX-License-Identifier: Apache-2.0
/* What the agent wrote in cgroup files, put back (agent/store/restore.c): the
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

#include "agent/store/lock.h"
#include "agent/store/restore.h"
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
  assert_int_equal(
      agent_restore_remember(&r, t.file, 8, 0, orig, "rbps=1 wbps=1 riops=77 wiops=max", 0, &err),
      0);
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
                                          "rbps=2 wbps=2 riops=77 wiops=max", 0, &err),
                   0);
  assert_int_equal(r.n, 1);
  assert_string_equal(r.v[0].value, orig);
  /* ... but what is written now is, and what was before it */
  assert_string_equal(r.v[0].written, "rbps=2 wbps=2 riops=77 wiops=max");
  assert_string_equal(r.v[0].prev, "rbps=1 wbps=1 riops=77 wiops=max");
  put(t.file, "8:0 rbps=2 wbps=2 riops=77 wiops=max\n");
  /* another directory is left alone */
  assert_int_equal(agent_restore_dir(&r, "/sys/fs/cgroup/other", AGENT_RESTORE_ALL), 0);
  assert_int_equal(r.n, 1);
  /* a weight in the same directory (a container's v2 cgroup) */
  char wfile[256];
  snprintf(wfile, sizeof(wfile), "%s/io.weight", t.cg);
  put(wfile, "");
  assert_int_equal(agent_restore_remember(&r, wfile, 8, 0, "default", "50", 0, &err), 0);
  put(wfile, "default 100\n8:0 50\n");
  /* put back: "MAJ:MIN value"; caps and weights each their own */
  assert_int_equal(agent_restore_dir(&r, t.cg, AGENT_RESTORE_CAPS), 1);
  cleanup_free char *got = slurp(t.file);
  assert_string_equal(got, "8:0 rbps=max wbps=max riops=77 wiops=max");
  cleanup_free char *w0 = slurp(wfile);
  assert_string_equal(w0, "default 100\n8:0 50\n");
  put(wfile, "8:0 50\n");
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
  put(cfile, "2\n");
  assert_int_equal(agent_restore_remember(&r, cfile, 0, 0, "1024", "2", 0, &err), 0);
  assert_int_equal(agent_restore_remember(&r, t.file, 8, 0, "rbps=max wbps=max riops=max wiops=max",
                                          "rbps=1 wbps=1 riops=max wiops=max", 0, &err),
                   0);
  put(t.file, "8:0 rbps=1 wbps=1 riops=max wiops=max\n");
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
  assert_string_equal(c0, "2\n");
  /* its own kind writes the value alone, no device */
  assert_int_equal(agent_restore_dir(&r, t.cg, AGENT_RESTORE_CPU), 1);
  cleanup_free char *c1 = slurp(cfile);
  assert_string_equal(c1, "1024");
  assert_int_equal(r.n, 0);
  agent_restore_release(&r);
  rm_rf(t.dir);
}

/* The freezer's files (agent/protect/freeze.c): one value per cgroup, put back
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
  put(cpu, "1");
  put(v1, "FROZEN");
  put(v2, "1");
  assert_int_equal(agent_restore_remember(&r, cpu, 0, 0, "100", "1", 0, &err), 0);
  assert_int_equal(agent_restore_remember(&r, v1, 0, 0, "THAWED", "FROZEN", 0, &err), 0);
  assert_int_equal(agent_restore_remember(&r, v2, 0, 0, "0", "1", 0, &err), 0);
  /* CPU leaves the freezer alone, and the freezer the CPU weight */
  assert_int_equal(agent_restore_dir(&r, t.cg, AGENT_RESTORE_FREEZE), 2);
  cleanup_free char *a = slurp(v1), *b = slurp(v2), *c = slurp(cpu);
  assert_string_equal(a, "THAWED");
  assert_string_equal(b, "0");
  assert_string_equal(c, "1");
  assert_int_equal(r.n, 1);
  /* a crash with a container frozen (v1 still FREEZING: what the agent
   * wrote all the same): the next agent thaws it */
  put(v1, "FREEZING");
  assert_int_equal(agent_restore_remember(&r, v1, 0, 0, "THAWED", "FROZEN", 0, &err), 0);
  struct agent_restore next;
  assert_int_equal(agent_restore_init(&next, t.dir, NULL, &err), 0);
  assert_int_equal(agent_restore_replay(&next, &err), 2);
  cleanup_free char *d = slurp(v1);
  /* (a regular file is not truncated as cgroupfs is: "THAWED" over
   * "FREEZING") */
  assert_int_equal(strncmp(d, "THAWED", 6), 0);
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
                                          "rbps=1 wbps=1 riops=max wiops=max", 0, &err),
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
  assert_int_equal(agent_restore_remember(&r, link, 8, 0, "0", "5", 0, &err), 0);
  assert_int_equal(agent_restore_dir(&r, cg2, AGENT_RESTORE_ALL), 0);
  cleanup_free char *got = slurp(target);
  assert_string_equal(got, "untouched");
  assert_int_equal(r.n, 0);
  /* files the agent never writes, and odd values, are refused */
  assert_int_equal(agent_restore_remember(&r, "/etc/passwd", 8, 0, "0", "1", 0, &err), -1);
  iob_error_release(&err);
  assert_int_equal(agent_restore_remember(&r, t.file, 8, 0, "0\nroot", "1", 0, &err), -1);
  iob_error_release(&err);
  assert_int_equal(agent_restore_remember(&r, t.file, 8, 0, "0", "1\nroot", 0, &err), -1);
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
  assert_int_equal(agent_restore_remember(&r, t.file, 8, 0, "0", "1", 0, &err), -1);
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
  snprintf(file, sizeof(file), "%s/caf\xe9", t.dir);
  assert_int_equal(mkdir(file, 0700), 0);
  snprintf(file, sizeof(file), "%s/caf\xe9/io.max", t.dir);
  struct agent_restore r;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_restore_init(&r, t.dir, NULL, &err), 0);
  assert_int_equal(agent_restore_remember(&r, file, 8, 0, "0", "1", 0, &err), -1);
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
  snprintf(
      text, sizeof(text),
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
                                          "rbps=1 wbps=1 riops=max wiops=max", 0, &err),
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

/* ---- version 2: the cgroup's inode and the value written ---- */

static unsigned long long ino_of(const char *path) {
  struct stat sb;
  assert_int_equal(stat(path, &sb), 0);
  return (unsigned long long)sb.st_ino;
}

/* A fake cgroup file is a regular file, written over in place: what was
 * put back is its start. */
static void assert_starts(const char *path, const char *want) {
  cleanup_free char *got = slurp(path);
  assert_non_null(got);
  if (strncmp(got, want, strlen(want)) != 0)
    fail_msg("'%s' holds '%s', want '%s' first", path, got, want);
}

/* Remember io.max of T for 8:0 with the agent's cap written, the file
 * holding it. */
static void capped(struct agent_restore *r, struct tmp *t) {
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_restore_remember(r, t->file, 8, 0, "rbps=max wbps=max riops=max wiops=max",
                                          "rbps=1048576 wbps=1048576 riops=max wiops=max", 0, &err),
                   0);
  put(t->file, "8:0 rbps=1048576 wbps=1048576 riops=max wiops=max\n");
}

/* The journal says version 2, the inode and the value written; it parses
 * back the same. */
static void test_v2_journal(void **state) {
  (void)state;
  struct tmp t;
  tmp_make(&t);
  struct agent_restore r;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_restore_init(&r, t.dir, NULL, &err), 0);
  capped(&r, &t);
  assert_int_equal(r.v[0].ino, ino_of(t.cg));
  cleanup_free char *j = slurp(r.path);
  assert_non_null(strstr(j, "\"version\": 2"));
  assert_non_null(strstr(j, "\"written\": \"rbps=1048576 wbps=1048576 riops=max wiops=max\""));
  struct agent_restore back;
  assert_int_equal(agent_restore_init(&back, NULL, NULL, &err), 0);
  assert_int_equal(agent_restore_parse(&back, r.path, j, strlen(j), &err), 0);
  assert_int_equal(back.n, 1);
  assert_int_equal(back.v[0].ino, ino_of(t.cg));
  assert_string_equal(back.v[0].written, r.v[0].written);
  assert_string_equal(back.v[0].prev, "");
  assert_int_equal(back.v[0].tries, 0);
  agent_restore_release(&back);
  /* restored when both match */
  assert_int_equal(agent_restore_dir(&r, t.cg, AGENT_RESTORE_CAPS), 1);
  assert_starts(t.file, "8:0 rbps=max wbps=max riops=max wiops=max");
  agent_restore_release(&r);
  rm_rf(t.dir);
}

/* A cgroup path reused by another cgroup (a new container with the same
 * id) gets nothing written back, at stop and at replay. */
static void test_inode_mismatch(void **state) {
  (void)state;
  struct tmp t;
  tmp_make(&t);
  struct agent_restore r;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_restore_init(&r, t.dir, NULL, &err), 0);
  capped(&r, &t);
  /* the same path, another directory (made before the old one goes, so
   * that no file system can hand out the same inode) */
  char fresh[160], cmd[512];
  snprintf(fresh, sizeof(fresh), "%s/cg.new", t.dir);
  assert_int_equal(mkdir(fresh, 0700), 0);
  snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mv '%s' '%s'", t.cg, fresh, t.cg);
  assert_int_equal(system(cmd), 0);
  assert_int_not_equal(ino_of(t.cg), r.v[0].ino);
  /* its own limit, which happens to look like ours */
  put(t.file, "8:0 rbps=1048576 wbps=1048576 riops=max wiops=max\n");
  /* replay of the journal a killed agent left */
  agent_restore_release(&r);
  assert_int_equal(agent_restore_init(&r, t.dir, NULL, &err), 0);
  assert_int_equal(agent_restore_replay(&r, &err), 0);
  cleanup_free char *got = slurp(t.file);
  assert_string_equal(got, "8:0 rbps=1048576 wbps=1048576 riops=max wiops=max\n");
  assert_int_equal(r.n, 0);
  assert_int_equal(access(r.path, F_OK), -1);
  agent_restore_release(&r);
  rm_rf(t.dir);
}

/* A target recreated at the same path between two writes: the old entry
 * is nobody's and is dropped, so that the writer reads the new one's
 * value as the original. */
static void test_stale(void **state) {
  (void)state;
  struct tmp t;
  tmp_make(&t);
  struct agent_restore r;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_restore_init(&r, t.dir, NULL, &err), 0);
  capped(&r, &t);
  assert_false(agent_restore_stale(&r, t.file, 8, 0));
  assert_false(agent_restore_stale(&r, t.file, 8, 16)); /* not remembered */
  assert_int_equal(r.n, 1);
  char fresh[160], cmd[512];
  snprintf(fresh, sizeof(fresh), "%s/cg.new", t.dir);
  assert_int_equal(mkdir(fresh, 0700), 0);
  snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mv '%s' '%s'", t.cg, fresh, t.cg);
  assert_int_equal(system(cmd), 0);
  assert_true(agent_restore_stale(&r, t.file, 8, 0));
  assert_int_equal(r.n, 0);
  assert_int_equal(access(r.path, F_OK), -1);
  agent_restore_release(&r);
  rm_rf(t.dir);
}

/* A value changed since the agent wrote it (runc update, the kubelet) is
 * left alone; the value written before the last one is still the agent's
 * (a crash between the journal and the write leaves it). */
static void test_value_changed(void **state) {
  (void)state;
  struct tmp t;
  tmp_make(&t);
  struct agent_restore r;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_restore_init(&r, t.dir, NULL, &err), 0);
  capped(&r, &t);
  put(t.file, "8:0 rbps=max wbps=5000000 riops=max wiops=max\n");
  assert_int_equal(agent_restore_dir(&r, NULL, AGENT_RESTORE_ALL), 0);
  cleanup_free char *got = slurp(t.file);
  assert_string_equal(got, "8:0 rbps=max wbps=5000000 riops=max wiops=max\n");
  assert_int_equal(r.n, 0);
  /* the previous value written */
  capped(&r, &t);
  assert_int_equal(agent_restore_remember(&r, t.file, 8, 0, "rbps=max wbps=max riops=max wiops=max",
                                          "rbps=2097152 wbps=2097152 riops=max wiops=max", 0, &err),
                   0);
  /* (the file still holds the first: the write did not happen) */
  assert_int_equal(agent_restore_dir(&r, NULL, AGENT_RESTORE_ALL), 1);
  assert_starts(t.file, "8:0 rbps=max wbps=max riops=max wiops=max");
  /* a line the kernel does not print is the default */
  capped(&r, &t);
  put(t.file, "");
  assert_int_equal(agent_restore_dir(&r, NULL, AGENT_RESTORE_ALL), 0);
  assert_int_equal(r.n, 0);
  agent_restore_release(&r);
  rm_rf(t.dir);
}

/* A put-back that failed for a passing reason is kept (in the journal
 * too), tried again, and given up after AGENT_RESTORE_TRIES. */
static void test_retry(void **state) {
  (void)state;
  struct tmp t;
  tmp_make(&t);
  struct agent_restore r;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_restore_init(&r, t.dir, NULL, &err), 0);
  capped(&r, &t);
  /* a directory where the file was: reading it fails with EISDIR */
  assert_int_equal(unlink(t.file), 0);
  assert_int_equal(mkdir(t.file, 0700), 0);
  assert_int_equal(agent_restore_dir(&r, t.cg, AGENT_RESTORE_CAPS), 0);
  assert_int_equal(r.n, 1);
  assert_int_equal(r.v[0].tries, 1);
  cleanup_free char *j = slurp(r.path);
  assert_non_null(strstr(j, "\"tries\": 1"));
  /* a restart keeps it: the next agent tries again */
  agent_restore_release(&r);
  assert_int_equal(agent_restore_init(&r, t.dir, NULL, &err), 0);
  assert_int_equal(agent_restore_replay(&r, &err), 0);
  assert_int_equal(r.n, 1);
  assert_int_equal(r.v[0].tries, 2);
  /* mended: the retry puts it back */
  assert_int_equal(rmdir(t.file), 0);
  put(t.file, "8:0 rbps=1048576 wbps=1048576 riops=max wiops=max\n");
  assert_int_equal(agent_restore_retry(&r), 1);
  assert_starts(t.file, "8:0 rbps=max wbps=max riops=max wiops=max");
  assert_int_equal(r.n, 0);
  assert_int_equal(access(r.path, F_OK), -1);
  /* never mended: given up after AGENT_RESTORE_TRIES, not before */
  capped(&r, &t);
  assert_int_equal(unlink(t.file), 0);
  assert_int_equal(mkdir(t.file, 0700), 0);
  assert_int_equal(agent_restore_retry(&r), 0); /* nothing failed yet: not tried */
  assert_int_equal(agent_restore_dir(&r, NULL, AGENT_RESTORE_ALL), 0);
  for (int i = 1; i < AGENT_RESTORE_TRIES; i++) {
    assert_int_equal(r.n, 1);
    assert_int_equal(agent_restore_retry(&r), 0);
  }
  assert_int_equal(r.n, 0);
  assert_int_equal(access(r.path, F_OK), -1);
  agent_restore_release(&r);
  rm_rf(t.dir);
}

/* A version-1 journal left by an older agent is replayed once as that
 * agent did (no inode, no written value to check), and what is journalled
 * from then on is version 2. */
static void test_v1_replayed_then_v2(void **state) {
  (void)state;
  struct tmp t;
  tmp_make(&t);
  struct agent_restore r;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_restore_init(&r, t.dir, NULL, &err), 0);
  char text[1024], bad[192];
  snprintf(bad, sizeof(bad), "%s/bad", t.dir);
  assert_int_equal(mkdir(bad, 0700), 0);
  snprintf(text, sizeof(text), "%s/io.max", bad);
  assert_int_equal(mkdir(text, 0700), 0); /* its write fails (EISDIR) */
  snprintf(
      text, sizeof(text),
      "{\"version\": 1, \"entries\": ["
      "{\"file\": \"%s\", \"dev\": \"8:0\", \"value\": \"rbps=max wbps=max riops=7 wiops=max\"},"
      "{\"file\": \"%s/io.max\", \"dev\": \"8:0\", \"value\": \"rbps=max wbps=max riops=max "
      "wiops=max\"}]}",
      t.file, bad);
  put(t.file, "8:0 rbps=1 wbps=1 riops=7 wiops=max\n");
  put(r.path, text);
  assert_int_equal(agent_restore_replay(&r, &err), 1);
  assert_starts(t.file, "8:0 rbps=max wbps=max riops=7 wiops=max");
  /* replayed once: the failed one is not kept (it has no inode to check) */
  assert_int_equal(r.n, 0);
  assert_int_equal(access(r.path, F_OK), -1);
  capped(&r, &t);
  cleanup_free char *j = slurp(r.path);
  assert_non_null(strstr(j, "\"version\": 2"));
  agent_restore_release(&r);
  rm_rf(t.dir);
}

/* The hook's first weight: the "default W" line (device 0:0), put back as
 * "default V", apart from the agent's per-device weights. */
static void test_default_line(void **state) {
  (void)state;
  struct tmp t;
  tmp_make(&t);
  struct agent_restore r;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_restore_init(&r, t.dir, NULL, &err), 0);
  char wfile[256];
  snprintf(wfile, sizeof(wfile), "%s/io.weight", t.cg);
  assert_int_equal(agent_restore_remember(&r, wfile, 0, 0, "100", "50", 0, &err), 0);
  assert_int_equal(agent_restore_remember(&r, wfile, 8, 0, "default", "400", 0, &err), 0);
  put(wfile, "default 50\n8:0 400\n");
  assert_int_equal(agent_restore_dir(&r, t.cg, AGENT_RESTORE_WEIGHTS), 1);
  assert_starts(wfile, "8:0 default");
  put(wfile, "default 50\n");
  assert_int_equal(agent_restore_dir(&r, t.cg, AGENT_RESTORE_HOOK_WEIGHT), 1);
  cleanup_free char *w1 = slurp(wfile);
  assert_string_equal(w1, "default 100");
  assert_int_equal(r.n, 0);
  agent_restore_release(&r);
  rm_rf(t.dir);
}

static void expect_bad(const char *text, const char *msg);

static void test_v2_malformed(void **state) {
  (void)state;
#define V2(rest)                                                                                   \
  "{\"version\": 2, \"entries\": [{\"file\": \"/sys/fs/cgroup/a/io.max\", \"dev\": \"8:0\", "      \
  "\"value\": \"0\"" rest "}]}"
  expect_bad(V2(""), "entry 0");                     /* no ino, no written */
  expect_bad(V2(", \"ino\": 5"), "entry 0");         /* no written */
  expect_bad(V2(", \"written\": \"1\""), "entry 0"); /* no ino */
  expect_bad(V2(", \"ino\": 0, \"written\": \"1\""), "invalid 'ino'");
  expect_bad(V2(", \"ino\": -3, \"written\": \"1\""), "invalid 'ino'");
  expect_bad(V2(", \"ino\": \"5\", \"written\": \"1\""), "entry 0");
  expect_bad(V2(", \"ino\": 5, \"written\": \"\""), "invalid written value");
  expect_bad(V2(", \"ino\": 5, \"written\": \"1\\n8:16 1\""), "invalid written value");
  expect_bad(V2(", \"ino\": 5, \"written\": \"1\", \"prev\": \"$(x)\""), "invalid written value");
  expect_bad(V2(", \"ino\": 5, \"written\": \"1\", \"tries\": -1"), "invalid 'tries'");
  expect_bad(V2(", \"ino\": 5, \"written\": \"1\", \"tries\": 5"), "invalid 'tries'");
  expect_bad(V2(", \"ino\": 5, \"written\": \"1\", \"x\": 1"), "entry 0");
  /* v1 fields only in a v1 journal, v2 fields only in a v2 one */
  expect_bad("{\"version\": 1, \"entries\": [{\"file\": \"/sys/fs/cgroup/a/io.max\", \"dev\": "
             "\"8:0\", \"value\": \"0\", \"ino\": 5, \"written\": \"1\"}]}",
             "entry 0");
  struct agent_restore r;
  cleanup_error struct iob_error *err = NULL;
  agent_restore_init(&r, NULL, NULL, &err);
  const char *ok =
      V2(", \"ino\": 18446744073709, \"written\": \"1\", \"prev\": \"2\", \"tries\": 4");
  assert_int_equal(agent_restore_parse(&r, "j.json", ok, strlen(ok), &err), 0);
  assert_int_equal(r.n, 1);
  assert_int_equal(r.v[0].ino, 18446744073709ull);
  assert_string_equal(r.v[0].prev, "2");
  assert_int_equal(r.v[0].tries, 4);
  agent_restore_release(&r);
#undef V2
}

/* The I/O priority entries: blk-ioprio's file is a whole-cgroup value;
 * a task-list entry is device 0:0 with classes in common/ioprio.h's
 * words, or the journal is refused (a damaged one must not make the
 * agent set classes it never saw). */
static void test_ioprio_malformed(void **state) {
  (void)state;
#define TASKS(dev, value, written)                                                                 \
  "{\"version\": 2, \"entries\": [{\"file\": \"/sys/fs/cgroup/a/cgroup.threads\", \"dev\": \"" dev \
  "\", \"value\": \"" value "\", \"ino\": 5, \"written\": \"" written "\"}]}"
  expect_bad(TASKS("8:0", "none", "idle"), "invalid I/O priority entry");
  expect_bad(TASKS("0:0", "bogus", "idle"), "invalid I/O priority entry");
  expect_bad(TASKS("0:0", "none", "be8"), "invalid I/O priority entry");
  expect_bad(TASKS("0:0", "none", "rt"), "invalid I/O priority entry");
  expect_bad(TASKS("0:0", "12", "idle"), "invalid I/O priority entry");
  expect_bad("{\"version\": 2, \"entries\": [{\"file\": \"/sys/fs/cgroup/a/cgroup.procs\", "
             "\"dev\": \"0:0\", \"value\": \"none\", \"ino\": 5, \"written\": \"idle\"}]}",
             "not a cgroup file the agent writes");
  struct agent_restore r;
  cleanup_error struct iob_error *err = NULL;
  agent_restore_init(&r, NULL, NULL, &err);
  const char *ok = TASKS("0:0", "be4", "idle");
  assert_int_equal(agent_restore_parse(&r, "j.json", ok, strlen(ok), &err), 0);
  assert_int_equal(r.n, 1);
  const char *file =
      "{\"version\": 2, \"entries\": [{\"file\": \"/sys/fs/cgroup/a/io.prio.class\", "
      "\"dev\": \"0:0\", \"value\": \"no-change\", \"ino\": 5, \"written\": "
      "\"idle\"}]}";
  assert_int_equal(agent_restore_parse(&r, "j.json", file, strlen(file), &err), 0);
  assert_string_equal(r.v[0].value, "no-change");
  /* remembered by the agent: the same rules */
  struct agent_restore_entry e = {.file = (char *)"/sys/fs/cgroup/a/tasks", .ino = 5};
  snprintf(e.value, sizeof(e.value), "none");
  snprintf(e.written, sizeof(e.written), "idle2");
  assert_int_equal(agent_restore_remember_n(&r, &e, 1, &err), -1);
  agent_restore_release(&r);
#undef TASKS
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
  "{\"version\": 1, \"entries\": [{\"file\": \"" file "\", \"dev\": \"" dev                        \
  "\", \"value\": \"" value "\"}]}"

static void test_malformed(void **state) {
  (void)state;
  expect_bad("", "cannot parse 'j.json'");
  expect_bad("{\"version\": 1, \"entries\": [", "cannot parse 'j.json'");
  expect_bad("[]", "top level is not an object");
  expect_bad("{\"version\": 3, \"entries\": []}", "unsupported 'version'");
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
  expect_bad(ENT("/sys/fs/cgroup/a/cgroup.procs", "8:0", "0"),
             "not a cgroup file the agent writes");
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

/* A journal whose cgroup.freeze entry cannot be put back: a directory
 * where the file is (reading it fails with EISDIR, a passing failure). */
static void frozen_unwritable(struct agent_restore *r, struct tmp *t, char *freeze, size_t size) {
  cleanup_error struct iob_error *err = NULL;
  snprintf(freeze, size, "%s/cgroup.freeze", t->cg);
  put(freeze, "1");
  assert_int_equal(agent_restore_remember(r, freeze, 0, 0, "0", "1", 0, &err), 0);
  assert_int_equal(unlink(freeze), 0);
  assert_int_equal(mkdir(freeze, 0700), 0);
}

/* A thaw is never given up: past AGENT_RESTORE_TRIES it is tried on
 * fewer windows, kept in the journal (which a restart still reads), and
 * done once the file takes it. */
static void test_thaw_never_given_up(void **state) {
  (void)state;
  struct tmp t;
  tmp_make(&t);
  struct agent_restore r;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_restore_init(&r, t.dir, NULL, &err), 0);
  char freeze[256];
  frozen_unwritable(&r, &t, freeze, sizeof(freeze));
  assert_int_equal(agent_restore_dir(&r, NULL, AGENT_RESTORE_ALL), 0);
  for (int i = 0; i < 40 * AGENT_RESTORE_TRIES; i++) {
    assert_int_equal(agent_restore_retry(&r), 0);
    assert_int_equal(r.n, 1);
  }
  /* fewer tries than windows: the backoff */
  assert_true(r.v[0].tries > AGENT_RESTORE_TRIES);
  assert_true(r.v[0].tries < 40 * AGENT_RESTORE_TRIES);
  assert_int_equal(access(r.path, F_OK), 0);
  /* a restart reads it back and tries again */
  agent_restore_release(&r);
  assert_int_equal(agent_restore_init(&r, t.dir, NULL, &err), 0);
  assert_int_equal(agent_restore_replay(&r, &err), 0);
  assert_int_equal(r.n, 1);
  assert_true(r.v[0].tries > AGENT_RESTORE_TRIES);
  /* mended: thawed within the longest wait */
  assert_int_equal(rmdir(freeze), 0);
  put(freeze, "1");
  size_t done = 0;
  for (int i = 0; i <= AGENT_RESTORE_BACKOFF_MAX && done == 0; i++)
    done = agent_restore_retry(&r);
  assert_int_equal(done, 1);
  assert_starts(freeze, "0");
  assert_int_equal(r.n, 0);
  assert_int_equal(access(r.path, F_OK), -1);
  agent_restore_release(&r);
  rm_rf(t.dir);
}

/* iobatchd --restore-only: an agent that did not stop left a cap, a CPU
 * weight and a freeze; all are put back and the journal goes.  What cannot
 * be put back stays journalled (nothing given up, a cap past
 * AGENT_RESTORE_TRIES too) and is counted. */
static void test_restore_only(void **state) {
  (void)state;
  struct tmp t;
  tmp_make(&t);
  struct agent_restore r;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_restore_init(&r, t.dir, NULL, &err), 0);
  char cpu[256], freeze[256];
  snprintf(cpu, sizeof(cpu), "%s/cpu.weight", t.cg);
  snprintf(freeze, sizeof(freeze), "%s/cgroup.freeze", t.cg);
  capped(&r, &t);
  put(cpu, "1");
  put(freeze, "1");
  assert_int_equal(agent_restore_remember(&r, cpu, 0, 0, "100", "1", 0, &err), 0);
  assert_int_equal(agent_restore_remember(&r, freeze, 0, 0, "0", "1", 0, &err), 0);
  /* the agent dies: nothing put back, the journal stays */
  agent_restore_release(&r);
  size_t restored = 99;
  assert_int_equal(agent_restore_only(t.dir, NULL, 2, 1, &restored, &err), 0);
  assert_null(err);
  assert_int_equal(restored, 3);
  assert_starts(t.file, "8:0 rbps=max wbps=max riops=max wiops=max");
  assert_starts(cpu, "100");
  assert_starts(freeze, "0");
  char journal[256];
  snprintf(journal, sizeof(journal), "%s/restore.json", t.dir);
  assert_int_equal(access(journal, F_OK), -1);
  /* nothing to do: no journal, or no state directory at all */
  assert_int_equal(agent_restore_only(t.dir, NULL, 2, 1, &restored, &err), 0);
  assert_int_equal(restored, 0);
  char none[256];
  snprintf(none, sizeof(none), "%s/none", t.dir);
  assert_int_equal(agent_restore_only(none, NULL, 2, 1, &restored, &err), 0);
  assert_int_equal(access(none, F_OK), -1);

  /* a freeze and a cap that cannot be put back: kept, however many passes */
  assert_int_equal(agent_restore_init(&r, t.dir, NULL, &err), 0);
  capped(&r, &t);
  assert_int_equal(unlink(t.file), 0);
  assert_int_equal(mkdir(t.file, 0700), 0);
  frozen_unwritable(&r, &t, freeze, sizeof(freeze));
  agent_restore_release(&r);
  assert_int_equal(agent_restore_only(t.dir, NULL, AGENT_RESTORE_TRIES + 2, 1, &restored, &err), 2);
  assert_int_equal(restored, 0);
  assert_int_equal(access(journal, F_OK), 0);
  /* run again (a second uninstall) once they can be: done */
  assert_int_equal(rmdir(t.file), 0);
  put(t.file, "8:0 rbps=1048576 wbps=1048576 riops=max wiops=max\n");
  assert_int_equal(rmdir(freeze), 0);
  put(freeze, "1");
  assert_int_equal(agent_restore_only(t.dir, NULL, 2, 1, &restored, &err), 0);
  assert_int_equal(restored, 2);
  assert_starts(freeze, "0");
  assert_int_equal(access(journal, F_OK), -1);
  rm_rf(t.dir);
}

/* Not while an agent runs on the directory: its journal is its own. */
static void test_restore_only_agent_running(void **state) {
  (void)state;
  struct tmp t;
  tmp_make(&t);
  struct agent_restore r;
  cleanup_error struct iob_error *err = NULL;
  assert_int_equal(agent_restore_init(&r, t.dir, NULL, &err), 0);
  capped(&r, &t);
  cleanup_close int lock = -1;
  assert_int_equal(agent_lock_state_dir(t.dir, &lock, &err), 0);
  size_t restored = 0;
  assert_int_equal(agent_restore_only(t.dir, NULL, 2, 1, &restored, &err), -1);
  assert_non_null(err);
  assert_non_null(strstr(err->msg, "iobatchd"));
  assert_starts(t.file, "8:0 rbps=1048576");
  assert_int_equal(access(r.path, F_OK), 0);
  agent_restore_release(&r);
  rm_rf(t.dir);
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
      cmocka_unit_test(test_v2_journal),
      cmocka_unit_test(test_inode_mismatch),
      cmocka_unit_test(test_stale),
      cmocka_unit_test(test_value_changed),
      cmocka_unit_test(test_retry),
      cmocka_unit_test(test_v1_replayed_then_v2),
      cmocka_unit_test(test_default_line),
      cmocka_unit_test(test_v2_malformed),
      cmocka_unit_test(test_thaw_never_given_up),
      cmocka_unit_test(test_restore_only),
      cmocka_unit_test(test_restore_only_agent_running),
      cmocka_unit_test(test_ioprio_malformed),
  };
  return cmocka_run_group_tests_name("agent_restore", tests, NULL, NULL);
}
