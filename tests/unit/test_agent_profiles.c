// SPDX-License-Identifier: Apache-2.0
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "agent/store/profiles.h"
#include "common/cleanup.h"

static char dir[64];

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof(dir), "/tmp/agentprof.XXXXXX");
  return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d))) {
    if (e->d_name[0] == '.')
      continue;
    char p[512];
    snprintf(p, sizeof(p), "%s/%s", dir, e->d_name);
    unlink(p);
  }
  if (d)
    closedir(d);
  return rmdir(dir);
}

static void write_file(const char *name, const char *text) {
  char p[512];
  snprintf(p, sizeof(p), "%s/%s", dir, name);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static int count_files(const char *prefix) {
  int n = 0;
  DIR *d = opendir(dir);
  struct dirent *e;
  while ((e = readdir(d)))
    if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
      n++;
  closedir(d);
  return n;
}

static void test_round_trip(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct agent_profiles p;
  assert_int_equal(agent_profiles_init(&p, dir, &err), 0);
  assert_int_equal(agent_profiles_load(&p, &err), 0); /* no file yet: empty */
  assert_int_equal(p.n, 0);
  struct agent_profile_update u = {
      .cls = "seq-write", .confidence = 1, .solo_s = 10, .solo_bps = 1e8, .run_finished = true};
  assert_int_equal(agent_profiles_learn(&p, "", "fio-seq", &u, &err), 0);
  u = (struct agent_profile_update){.cls = "rand-write", .confidence = 0.8};
  assert_int_equal(agent_profiles_learn(&p, "", "db \"quoted\" key", &u, &err), 0);
  /* a duration without a class: saved as class "unknown", loads back */
  u = (struct agent_profile_update){.solo_s = 3, .run_finished = true};
  assert_int_equal(agent_profiles_learn(&p, "", "no-class", &u, &err), 0);
  assert_string_equal(agent_profiles_get(&p, "", "no-class")->cls, "unknown");
  u = (struct agent_profile_update){.cls = "rand-write", .confidence = 0.8};
  /* no key: nothing learnt, not an error */
  assert_int_equal(agent_profiles_learn(&p, "", "", &u, &err), 0);
  assert_int_equal(p.n, 3);
  /* a second run is averaged in, not replacing */
  u = (struct agent_profile_update){.solo_s = 20, .run_finished = true};
  assert_int_equal(agent_profiles_learn(&p, "", "fio-seq", &u, &err), 0);
  const struct agent_profile *e = agent_profiles_get(&p, "", "fio-seq");
  assert_non_null(e);
  assert_string_equal(e->cls, "seq-write");
  assert_true(e->solo_s > 10 && e->solo_s < 20);
  assert_int_equal(e->runs, 2);
  double solo = e->solo_s;
  assert_int_equal(agent_profiles_save(&p, &err), 0);
  agent_profiles_release(&p);
  assert_int_equal(count_files("profiles.json.tmp"), 0);

  assert_int_equal(agent_profiles_init(&p, dir, &err), 0);
  assert_int_equal(agent_profiles_load(&p, &err), 0);
  assert_int_equal(p.n, 3);
  assert_string_equal(agent_profiles_get(&p, "", "no-class")->cls, "unknown");
  e = agent_profiles_get(&p, "", "fio-seq");
  assert_non_null(e);
  assert_string_equal(e->cls, "seq-write");
  assert_true(e->solo_s == solo);
  assert_true(e->solo_bps == 1e8);
  assert_int_equal(e->runs, 2);
  e = agent_profiles_get(&p, "", "db \"quoted\" key");
  assert_non_null(e);
  assert_string_equal(e->cls, "rand-write");
  assert_true(e->confidence == 0.8);
  assert_null(agent_profiles_get(&p, "", "other"));
  assert_null(agent_profiles_get(&p, "", ""));
  agent_profiles_release(&p);
}

static void check_corrupt(const char *text, const char *want_part) {
  cleanup_error struct iob_error *err = NULL;
  write_file("profiles.json", text);
  struct agent_profiles p;
  assert_int_equal(agent_profiles_init(&p, dir, &err), 0);
  assert_int_equal(agent_profiles_load(&p, &err), -1);
  assert_non_null(err);
  if (strstr(err->msg, want_part) == NULL || strstr(err->msg, "kept aside as '") == NULL)
    fail_msg("message '%s' lacks '%s'", err->msg, want_part);
  assert_int_equal(err->code, IOB_CODE_DATA_LOSS);
  /* the store is empty and usable, the bad file kept byte for byte */
  assert_int_equal(p.n, 0);
  assert_int_equal(count_files("profiles.json.bad-"), 1);
  char aside[512];
  const char *q = strstr(err->msg, "kept aside as '") + strlen("kept aside as '");
  snprintf(aside, sizeof(aside), "%.*s", (int)(strchr(q, '\'') - q), q);
  FILE *f = fopen(aside, "r");
  assert_non_null(f);
  char buf[4096] = {0};
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  assert_int_equal(n, strlen(text));
  assert_memory_equal(buf, text, n);
  unlink(aside);
  /* saving afterwards writes a fresh file */
  struct agent_profile_update u = {.cls = "idle", .confidence = 1};
  assert_int_equal(agent_profiles_learn(&p, "", "k", &u, &err), 0);
  assert_int_equal(agent_profiles_save(&p, &err), 0);
  agent_profiles_release(&p);
  assert_int_equal(agent_profiles_init(&p, dir, &err), 0);
  assert_int_equal(agent_profiles_load(&p, &err), 0);
  assert_int_equal(p.n, 1);
  agent_profiles_release(&p);
}

static void test_corrupt(void **state) {
  (void)state;
  check_corrupt("{\"version\": 1, \"profiles\": {\"a\": {\"class\": \"seq", "cannot parse '");
  check_corrupt("", "cannot parse '");
  check_corrupt("[]", "top level is not an object");
  check_corrupt("{\"version\": 2, \"profiles\": {}}", "unsupported 'version'");
  check_corrupt("{\"version\": 1, \"profiles\": []}", "'profiles' is not an object");
  check_corrupt("{\"version\": 1, \"profiles\": {\"a\": {\"class\": \"seq-write\"}}}",
                "profile 'a'");
  check_corrupt("{\"version\": 1, \"profiles\": {\"a\": {\"class\": \"../../x\", "
                "\"confidence\": 1, \"solo_s\": 1, \"solo_bps\": 1, \"runs\": 1, "
                "\"updated\": 1}}}",
                "profile 'a' has invalid values");
  check_corrupt("{\"version\": 1, \"profiles\": {\"a\": {\"class\": \"idle\", "
                "\"confidence\": 7, \"solo_s\": 1, \"solo_bps\": 1, \"runs\": 1, "
                "\"updated\": 1}}}",
                "profile 'a' has invalid values");
  check_corrupt("{\"version\": 1, \"version\": 1, \"profiles\": {}}", "duplicate");
  check_corrupt("{\"version\": 1, \"profiles\": {}, \"namespaces\": []}",
                "'namespaces' is not an object");
  check_corrupt("{\"version\": 1, \"profiles\": {}, \"namespaces\": {\"\": {}}}",
                "namespace '' is invalid");
  check_corrupt("{\"version\": 1, \"profiles\": {}, \"namespaces\": {\"a\": 1}}",
                "namespace 'a' is invalid");
  check_corrupt("{\"version\": 1, \"profiles\": {}, \"namespaces\": {\"a\": {\"k\": "
                "{\"class\": \"idle\"}}}}",
                "profile 'k'");
}

/* Profiles are kept by namespace and key: one tenant's runs never teach
 * another's profile of the same key; a file from before namespaces loads
 * as namespace "". */
static void test_namespaces(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct agent_profiles p;
  assert_int_equal(agent_profiles_init(&p, dir, &err), 0);
  struct agent_profile_update u = {.cls = "seq-write", .confidence = 0.9, .solo_s = 10};
  assert_int_equal(agent_profiles_learn(&p, "team-a", "fio", &u, &err), 0);
  u = (struct agent_profile_update){.cls = "idle", .confidence = 1, .solo_s = 1};
  assert_int_equal(agent_profiles_learn(&p, "team-b", "fio", &u, &err), 0);
  assert_string_equal(agent_profiles_get(&p, "team-a", "fio")->cls, "seq-write");
  assert_string_equal(agent_profiles_get(&p, "team-b", "fio")->cls, "idle");
  assert_null(agent_profiles_get(&p, "", "fio"));
  assert_null(agent_profiles_get(&p, "team-c", "fio"));
  assert_int_equal(agent_profiles_save(&p, &err), 0);
  agent_profiles_release(&p);
  assert_int_equal(agent_profiles_init(&p, dir, &err), 0);
  assert_int_equal(agent_profiles_load(&p, &err), 0);
  assert_int_equal(p.n, 2);
  assert_string_equal(agent_profiles_get(&p, "team-a", "fio")->cls, "seq-write");
  assert_true(agent_profiles_get(&p, "team-a", "fio")->solo_s == 10);
  assert_string_equal(agent_profiles_get(&p, "team-b", "fio")->cls, "idle");
  agent_profiles_release(&p);
  /* a file written before namespaces: every profile is namespace "" */
  write_file("profiles.json", "{\"version\": 1, \"profiles\": {\"fio\": {\"class\": "
                              "\"rand-write\", \"confidence\": 1, \"solo_s\": 4, "
                              "\"solo_bps\": 0, \"runs\": 2, \"updated\": 1}}}");
  assert_int_equal(agent_profiles_init(&p, dir, &err), 0);
  assert_int_equal(agent_profiles_load(&p, &err), 0);
  assert_int_equal(p.n, 1);
  assert_string_equal(agent_profiles_get(&p, "", "fio")->cls, "rand-write");
  assert_null(agent_profiles_get(&p, "team-a", "fio"));
  agent_profiles_release(&p);
}

/* A learned latency objective is kept per workload beside the
 * profiles, in "objectives", and loads back; malformed ones are refused. */
static void test_objectives(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct agent_profiles p;
  assert_int_equal(agent_profiles_init(&p, dir, &err), 0);
  struct agent_profile_update u = {.cls = "rand-write", .confidence = 1, .solo_s = 10};
  assert_int_equal(agent_profiles_learn(&p, "team-a", "pg", &u, &err), 0);
  assert_int_equal(agent_profiles_learn_objective(&p, "team-a", "pg", 1234.5, false, &err), 0);
  /* a workload without a profile yet gets one */
  assert_int_equal(agent_profiles_learn_objective(&p, "", "redis", 0.05, true, &err), 0);
  assert_string_equal(agent_profiles_get(&p, "", "redis")->cls, "unknown");
  /* invalid objectives are refused */
  assert_int_equal(agent_profiles_learn_objective(&p, "", "x", 0, false, &err), -1);
  iob_error_release(&err);
  assert_int_equal(agent_profiles_learn_objective(&p, "", "x", NAN, false, &err), -1);
  iob_error_release(&err);
  assert_int_equal(agent_profiles_learn_objective(&p, "", "x", 1.5, true, &err), -1);
  iob_error_release(&err);
  assert_int_equal(agent_profiles_learn_objective(&p, "", "", 10, false, &err), -1);
  iob_error_release(&err);
  assert_int_equal(agent_profiles_save(&p, &err), 0);
  agent_profiles_release(&p);
  assert_int_equal(agent_profiles_init(&p, dir, &err), 0);
  assert_int_equal(agent_profiles_load(&p, &err), 0);
  assert_int_equal(p.n, 2);
  const struct agent_profile *e = agent_profiles_get(&p, "team-a", "pg");
  assert_true(e->lat_target == 1234.5 && !e->lat_approx && e->solo_s == 10);
  e = agent_profiles_get(&p, "", "redis");
  assert_true(e->lat_target == 0.05 && e->lat_approx);
  /* learned again: replaced, not averaged */
  assert_int_equal(agent_profiles_learn_objective(&p, "team-a", "pg", 900, false, &err), 0);
  assert_true(agent_profiles_get(&p, "team-a", "pg")->lat_target == 900);
  agent_profiles_release(&p);
  /* a file without objectives (an older agent's) loads with none */
  write_file("profiles.json", "{\"version\": 1, \"profiles\": {\"pg\": {\"class\": "
                              "\"rand-write\", \"confidence\": 1, \"solo_s\": 4, "
                              "\"solo_bps\": 0, \"runs\": 2, \"updated\": 1}}}");
  assert_int_equal(agent_profiles_init(&p, dir, &err), 0);
  assert_int_equal(agent_profiles_load(&p, &err), 0);
  assert_true(agent_profiles_get(&p, "", "pg")->lat_target == 0);
  agent_profiles_release(&p);
}

static void test_objectives_corrupt(void **state) {
  (void)state;
  const char *head = "{\"version\": 1, \"profiles\": {}, \"objectives\": ";
  const struct {
    const char *objs, *msg;
  } bad[] = {
      {"{}]", "cannot parse"},
      {"{}}", "'objectives' is not an array"},
      {"[1]}", "objective 0"},
      {"[{\"namespace\": \"\", \"key\": \"k\", \"lat_target\": 5}]}", "objective 0"},
      {"[{\"namespace\": \"\", \"key\": \"k\", \"lat_target\": 5, \"approx\": false, "
       "\"x\": 1}]}",
       "objective 0"},
      {"[{\"namespace\": \"\", \"key\": \"k\", \"lat_target\": -5, \"approx\": false}]}",
       "invalid latency objective"},
      {"[{\"namespace\": \"\", \"key\": \"k\", \"lat_target\": 2, \"approx\": true}]}",
       "invalid latency objective"},
      {"[{\"namespace\": \"\", \"key\": \"\", \"lat_target\": 2, \"approx\": false}]}",
       "no workload key"},
      {"[{\"namespace\": \"\", \"key\": \"k\", \"lat_target\": \"5ms\", \"approx\": false}]}",
       "objective 0"},
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    char text[1024];
    snprintf(text, sizeof(text), "%s%s", head, bad[i].objs);
    check_corrupt(text, bad[i].msg);
  }
}

static void test_parse_limits(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct agent_profiles p = {0};
  size_t big = AGENT_PROFILES_MAX_BYTES + 1;
  cleanup_free char *buf = calloc(1, big);
  assert_int_equal(agent_profiles_parse(&p, "p.json", buf, big, &err), -1);
  assert_string_equal(err->msg, "'p.json' is too large: 8388609 bytes, at most 8388608");
  const char *ok = "{\"version\": 1, \"profiles\": {}}";
  assert_int_equal(agent_profiles_parse(&p, "p.json", ok, strlen(ok), &err), 0);
  assert_int_equal(p.n, 0);
  agent_profiles_release(&p);
}

static void test_eviction(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct agent_profiles p;
  assert_int_equal(agent_profiles_init(&p, dir, &err), 0);
  struct agent_profile_update u = {.cls = "idle", .confidence = 1};
  char key[32];
  for (int i = 0; i < AGENT_PROFILES_MAX + 10; i++) {
    snprintf(key, sizeof(key), "k%d", i);
    assert_int_equal(agent_profiles_learn(&p, "", key, &u, &err), 0);
  }
  assert_int_equal(p.n, AGENT_PROFILES_MAX);
  cleanup_free char *big = malloc(AGENT_PROFILE_KEY_MAX + 2);
  memset(big, 'x', AGENT_PROFILE_KEY_MAX + 1);
  big[AGENT_PROFILE_KEY_MAX + 1] = '\0';
  assert_int_equal(agent_profiles_learn(&p, "", big, &u, &err), -1);
  assert_non_null(strstr(err->msg, "workload key too long"));
  u.cls = "Bad Class";
  assert_int_equal(agent_profiles_learn(&p, "", "k1", &u, &err), -1);
  assert_string_equal(err->msg, "invalid class name 'Bad Class'");
  agent_profiles_release(&p);
}

static size_t in_ns(const struct agent_profiles *p, const char *ns) {
  size_t k = 0;
  for (size_t i = 0; i < p->n; i++)
    k += strcmp(p->v[i].ns, ns) == 0;
  return k;
}

/* learn KEY in NS, updated at T (the eviction order) */
static void learn_at(struct agent_profiles *p, const char *ns, const char *key, int64_t t) {
  cleanup_error struct iob_error *err = NULL;
  struct agent_profile_update u = {.cls = "seq-write", .confidence = 1};
  assert_int_equal(agent_profiles_learn(p, ns, key, &u, &err), 0);
  struct agent_profile *e = (struct agent_profile *)agent_profiles_get(p, ns, key);
  assert_non_null(e);
  e->updated = t;
}

/* A namespace's volatile keys evict only its own oldest
 * profiles; a full store evicts from the namespace that holds the most. */
static void test_eviction_per_namespace(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct agent_profiles p;
  assert_int_equal(agent_profiles_init(&p, dir, &err), 0);
  p.per_ns_max = 8;
  char key[32];
  for (int i = 0; i < 5; i++) {
    snprintf(key, sizeof(key), "a%d", i);
    learn_at(&p, "team-a", key, i); /* older than anything of noisy */
  }
  for (int i = 0; i < 100; i++) {
    snprintf(key, sizeof(key), "run-%d", i);
    learn_at(&p, "noisy", key, 1000 + i);
  }
  assert_int_equal(in_ns(&p, "team-a"), 5);
  assert_int_equal(in_ns(&p, "noisy"), 8);
  for (int i = 0; i < 100; i++) {
    snprintf(key, sizeof(key), "run-%d", i);
    assert_true((agent_profiles_get(&p, "noisy", key) != NULL) == (i >= 92));
  }
  /* relearning a kept key evicts nothing */
  learn_at(&p, "noisy", "run-99", 5000);
  assert_int_equal(in_ns(&p, "noisy"), 8);
  assert_non_null(agent_profiles_get(&p, "noisy", "run-92"));
  agent_profiles_release(&p);

  /* the whole store full, namespaces below their cap: the largest pays */
  assert_int_equal(agent_profiles_init(&p, dir, &err), 0);
  for (int i = 0; i < AGENT_PROFILES_MAX - 96; i++) {
    snprintf(key, sizeof(key), "b%d", i);
    learn_at(&p, "big", key, 100 + i);
  }
  for (int i = 0; i < 96; i++) {
    snprintf(key, sizeof(key), "s%d", i);
    learn_at(&p, "small", key, i); /* the oldest of all */
  }
  assert_int_equal(p.n, AGENT_PROFILES_MAX);
  learn_at(&p, "other", "o1", 99999);
  assert_int_equal(p.n, AGENT_PROFILES_MAX);
  assert_int_equal(in_ns(&p, "small"), 96);
  assert_int_equal(in_ns(&p, "big"), AGENT_PROFILES_MAX - 97);
  assert_null(agent_profiles_get(&p, "big", "b0")); /* big's oldest */
  assert_non_null(agent_profiles_get(&p, "other", "o1"));
  agent_profiles_release(&p);
}

/* What save writes, load reads: keys of control characters are escaped
 * (\u0001: 6 bytes each), and a key with an objective is written twice.
 * 512 such keys of 1024 bytes in each of 3 namespaces are far more than
 * the load limit; save leaves out the least recently updated profiles of
 * the namespace holding the most bytes, and the file loads. */
static void test_save_bounded(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct agent_profiles p, q;
  const char *nss[] = {"ns-a", "ns-b", "ns-c"};
  char key[AGENT_PROFILE_KEY_MAX + 1];
  assert_int_equal(agent_profiles_init(&p, dir, &err), 0);
  p.per_ns_max = AGENT_PROFILES_PER_NS_DEFAULT;
  for (int n = 0; n < 3; n++)
    for (int i = 0; i < AGENT_PROFILES_PER_NS_DEFAULT; i++) {
      memset(key, 0x01, AGENT_PROFILE_KEY_MAX);
      key[AGENT_PROFILE_KEY_MAX] = '\0';
      key[0] = (char)(1 + i % 31);
      key[1] = (char)(1 + i / 31);
      assert_int_equal(agent_profiles_learn_objective(&p, nss[n], key, 1000, false, &err), 0);
      learn_at(&p, nss[n], key, i);
    }
  assert_int_equal(p.n, 3 * AGENT_PROFILES_PER_NS_DEFAULT);
  assert_int_equal(agent_profiles_save(&p, &err), 0);
  struct stat st;
  assert_int_equal(stat(p.path, &st), 0);
  assert_true(st.st_size <= AGENT_PROFILES_MAX_BYTES);
  assert_int_equal(agent_profiles_init(&q, dir, &err), 0);
  assert_int_equal(agent_profiles_load(&q, &err), 0);
  assert_int_equal(count_files(AGENT_PROFILES_FILE ".bad"), 0);
  /* each namespace keeps its newest, about a third of what fits */
  for (int n = 0; n < 3; n++) {
    size_t k = in_ns(&q, nss[n]);
    assert_true(k > 0 && k + 1 >= q.n / 3 && k <= q.n / 3 + 1);
    int newest = AGENT_PROFILES_PER_NS_DEFAULT - 1;
    key[0] = (char)(1 + newest % 31);
    key[1] = (char)(1 + newest / 31);
    const struct agent_profile *e = agent_profiles_get(&q, nss[n], key);
    assert_non_null(e);
    assert_true(e->lat_target == 1000);
    key[0] = key[1] = 1; /* i = 0, the oldest */
    assert_null(agent_profiles_get(&q, nss[n], key));
  }
  /* what fits is saved whole */
  assert_int_equal(agent_profiles_save(&q, &err), 0);
  agent_profiles_release(&p);
  assert_int_equal(agent_profiles_init(&p, dir, &err), 0);
  assert_int_equal(agent_profiles_load(&p, &err), 0);
  assert_int_equal(p.n, q.n);
  agent_profiles_release(&p);
  agent_profiles_release(&q);
}

static void test_unwritable(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct agent_profiles p;
  assert_int_equal(agent_profiles_init(&p, dir, &err), 0);
  free(p.path);
  p.path = strdup("/nonexistent-dir/profiles.json");
  assert_int_equal(agent_profiles_save(&p, &err), -1);
  assert_string_equal(err->msg, "cannot create '/nonexistent-dir/profiles.json.tmp': No such "
                                "file or directory");
  agent_profiles_release(&p);
  assert_int_equal(agent_profiles_init(&p, "/proc/nope/x", &err), -1);
  assert_non_null(strstr(err->msg, "cannot create state directory '/proc/nope/x'"));
}

static char *read_back(const char *name) {
  char p[512], buf[256] = "";
  snprintf(p, sizeof(p), "%s/%s", dir, name);
  FILE *f = fopen(p, "r");
  assert_non_null(f);
  size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = '\0';
  return strdup(buf);
}

/* Root writes a new temporary file every time: a symlink or a hard link
 * planted at its name is replaced, never written through. */
static void test_save_never_follows(void **state) {
  (void)state;
  cleanup_error struct iob_error *err = NULL;
  struct agent_profiles p;
  write_file("victim", "keep\n");
  char victim[512], tmp[512];
  snprintf(victim, sizeof(victim), "%s/victim", dir);
  snprintf(tmp, sizeof(tmp), "%s/profiles.json.tmp", dir);
  assert_int_equal(agent_profiles_init(&p, dir, &err), 0);
  struct agent_profile_update u = {.cls = "seq-write", .confidence = 1};
  assert_int_equal(agent_profiles_learn(&p, "", "k", &u, &err), 0);
  for (int kind = 0; kind < 2; kind++) {
    assert_int_equal(kind ? link(victim, tmp) : symlink(victim, tmp), 0);
    assert_int_equal(agent_profiles_save(&p, &err), 0);
    cleanup_free char *v = read_back("victim");
    assert_string_equal(v, "keep\n");
    cleanup_free char *j = read_back("profiles.json");
    assert_non_null(strstr(j, "seq-write"));
    struct stat st;
    assert_int_equal(lstat(victim, &st), 0);
    assert_int_equal(st.st_nlink, 1);
  }
  agent_profiles_release(&p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
      cmocka_unit_test_setup_teardown(test_corrupt, setup, teardown),
      cmocka_unit_test_setup_teardown(test_namespaces, setup, teardown),
      cmocka_unit_test_setup_teardown(test_objectives, setup, teardown),
      cmocka_unit_test_setup_teardown(test_objectives_corrupt, setup, teardown),
      cmocka_unit_test_setup_teardown(test_eviction, setup, teardown),
      cmocka_unit_test_setup_teardown(test_eviction_per_namespace, setup, teardown),
      cmocka_unit_test(test_parse_limits),
      cmocka_unit_test_setup_teardown(test_save_bounded, setup, teardown),
      cmocka_unit_test_setup_teardown(test_unwritable, setup, teardown),
      cmocka_unit_test_setup_teardown(test_save_never_follows, setup, teardown),
  };
  return cmocka_run_group_tests_name("agent_profiles", tests, NULL, NULL);
}
