// SPDX-License-Identifier: Apache-2.0
/* Replay driver: the fuzz targets built with the normal compiler (build/,
 * build-asan/) instead of libFuzzer.  Every argument is a file or a
 * directory of files (a corpus); each file is fed once to
 * LLVMFuzzerTestOneInput.  Prints TAP: one line per corpus argument.  A
 * crash (or an ASan report) ends the process, so the runner sees it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

#define REPLAY_MAX (16 * 1024 * 1024)

static int replay_file(const char *path) {
  cleanup_error struct iob_error *err = NULL;
  cleanup_free char *buf = NULL;
  size_t len = 0;
  if (iob_read_file(path, REPLAY_MAX, &buf, &len, &err) < 0) {
    fprintf(stderr, "%s\n", err->msg);
    return -1;
  }
  /* A private copy of exactly len bytes, so ASan sees reads past the end. */
  cleanup_free uint8_t *copy = malloc(len ? len : 1);
  if (copy == NULL)
    abort();
  memcpy(copy, buf, len);
  fprintf(stderr, "# %s (%zu bytes)\n", path, len);
  LLVMFuzzerTestOneInput(copy, len);
  return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b) {
  return strcmp((*a)->d_name, (*b)->d_name);
}

/* Returns how many files ran, -1 when one could not be read. */
static int replay(const char *arg) {
  struct stat st;
  if (stat(arg, &st) < 0) {
    fprintf(stderr, "cannot stat '%s': %s\n", arg, strerror(errno));
    return -1;
  }
  if (!S_ISDIR(st.st_mode))
    return replay_file(arg) < 0 ? -1 : 1;
  struct dirent **names = NULL;
  int n = scandir(arg, &names, NULL, by_name);
  if (n < 0) {
    fprintf(stderr, "cannot list '%s': %s\n", arg, strerror(errno));
    return -1;
  }
  int ran = 0;
  for (int i = 0; i < n; i++) {
    char *path = NULL;
    if (names[i]->d_name[0] != '.' && asprintf(&path, "%s/%s", arg, names[i]->d_name) >= 0 &&
        stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
      if (replay_file(path) < 0)
        ran = -1;
      else if (ran >= 0)
        ran++;
    }
    free(path);
    free(names[i]);
  }
  free(names);
  return ran;
}

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  if (argc < 2) {
    fprintf(stderr, "usage: %s CORPUS_DIR_OR_FILE...\n", argv[0]);
    return 2;
  }
  int failed = 0;
  printf("1..%d\n", argc - 1);
  for (int i = 1; i < argc; i++) {
    int n = replay(argv[i]);
    /* An empty corpus proves nothing: count it as a failure. */
    if (n <= 0) {
      printf("not ok %d - %s: %s\n", i, argv[i], n < 0 ? "unreadable" : "no inputs");
      failed = 1;
    } else {
      printf("ok %d - %s: %d inputs\n", i, argv[i], n);
    }
    fflush(stdout);
  }
  return failed;
}
