// SPDX-License-Identifier: Apache-2.0
/* Helpers shared by the fuzz targets that feed parsers reading files:
 * a private temporary tree that the input is written into. */
#ifndef IOB_FUZZ_UTIL_H
#define IOB_FUZZ_UTIL_H

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A directory made once per process under $TMPDIR (or /tmp); removed at
 * exit by fuzz_tree_cleanup (only the files this process wrote). */
static char fuzz_root[1024];
static char fuzz_files[16][1200];
static size_t fuzz_n_files;

__attribute__((unused)) static void fuzz_tree_cleanup(void) {
  for (size_t i = fuzz_n_files; i-- > 0;)
    unlink(fuzz_files[i]);
  /* Directories, deepest first (made in order, so reverse works). */
  static const char *const dirs[] = {"/proc/42", "/proc/self", "/proc", "/cg", "/bundle", ""};
  for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
    char p[1200];
    snprintf(p, sizeof(p), "%s%s", fuzz_root, dirs[i]);
    rmdir(p);
  }
}

__attribute__((unused)) static const char *fuzz_tree(void) {
  if (fuzz_root[0])
    return fuzz_root;
  const char *tmp = getenv("TMPDIR");
  snprintf(fuzz_root, sizeof(fuzz_root), "%s/iob-fuzz-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (mkdtemp(fuzz_root) == NULL)
    abort();
  static const char *const dirs[] = {"/proc", "/proc/self", "/proc/42", "/cg", "/bundle"};
  for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
    char p[1200];
    snprintf(p, sizeof(p), "%s%s", fuzz_root, dirs[i]);
    if (mkdir(p, 0700) < 0)
      abort();
  }
  atexit(fuzz_tree_cleanup);
  return fuzz_root;
}

/* Write data to ROOT/rel (rel starts with '/'); aborts on failure, since a
 * fuzzer that silently feeds nothing proves nothing. */
__attribute__((unused)) static void fuzz_tree_write(const char *rel, const uint8_t *data, size_t size) {
  char p[1200];
  snprintf(p, sizeof(p), "%s%s", fuzz_tree(), rel);
  int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0)
    abort();
  for (size_t off = 0; off < size;) {
    ssize_t n = write(fd, data + off, size - off);
    if (n <= 0)
      abort();
    off += (size_t)n;
  }
  close(fd);
  size_t i = 0;
  while (i < fuzz_n_files && strcmp(fuzz_files[i], p) != 0)
    i++;
  if (i == fuzz_n_files && fuzz_n_files < sizeof(fuzz_files) / sizeof(fuzz_files[0]))
    snprintf(fuzz_files[fuzz_n_files++], sizeof(fuzz_files[0]), "%s", p);
}

#endif
