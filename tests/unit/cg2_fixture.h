// SPDX-License-Identifier: Apache-2.0
/* Shared by the cg2/wcd/hook unit tests: where the fixture trees are, and a
 * scratch directory.  Tests run from the repo root (make check); when they
 * do not, the fixtures are found relative to the test binary
 * (B/tests/unit/NAME -> ../../../tests/fixtures/cg2). */
#ifndef IOB_TEST_CG2_FIXTURE_H
#define IOB_TEST_CG2_FIXTURE_H

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char fixture_dir[PATH_MAX];

static const char *fixtures(void) {
  if (fixture_dir[0])
    return fixture_dir;
  const char *env = getenv("IOB_FIXTURES");
  struct stat st;
  if (env) {
    snprintf(fixture_dir, sizeof(fixture_dir), "%s", env);
  } else if (stat("tests/fixtures/cg2", &st) == 0) {
    snprintf(fixture_dir, sizeof(fixture_dir), "tests/fixtures/cg2");
  } else {
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n < 0)
      abort();
    exe[n] = '\0';
    snprintf(fixture_dir, sizeof(fixture_dir), "%s/../../../tests/fixtures/cg2", dirname(exe));
  }
  return fixture_dir;
}

/* fixture path: fx("v2/sys/fs/cgroup") */
static inline char *fx(const char *rel) {
  char *p = NULL;
  if (asprintf(&p, "%s/%s", fixtures(), rel) < 0)
    abort();
  return p;
}

static inline void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (f == NULL)
    abort();
  fputs(text, f);
  fclose(f);
}

/* ROOT/REL = TEXT, creating the directories on the way. */
static inline void put_text(const char *root, const char *rel, const char *text) {
  char path[1024];
  snprintf(path, sizeof(path), "%s%s", root, rel);
  for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')) != NULL; p++) {
    *p = '\0';
    mkdir(path, 0700);
    *p = '/';
  }
  write_text(path, text);
}

#endif
