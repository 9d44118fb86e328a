// SPDX-License-Identifier: Apache-2.0
#include "cgroupv2/cg2.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/file.h"
#include "common/xalloc.h"

char *cg2_file_in(const char *root, const char *mount, const char *cg, const char *name) {
  if (strcmp(cg, "/") == 0)
    return NULL;
  char *f = xasprintf("%s%s%s/%s", root ? root : "", mount, cg, name);
  if (access(f, F_OK) == 0)
    return f;
  free(f);
  return NULL;
}

char *cg2_join(const char *root, const char *path) {
  return xasprintf("%s%s", root ? root : "", path);
}

int cg2_parse_u64(const char *s, size_t len, uint64_t *out) {
  uint64_t v = 0;
  if (len == 0 || len > 20)
    return -1;
  for (size_t i = 0; i < len; i++) {
    if (s[i] < '0' || s[i] > '9')
      return -1;
    unsigned d = (unsigned)(s[i] - '0');
    if (v > (UINT64_MAX - d) / 10)
      return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

int cg2_read_file(const char *path, size_t max, char **buf, size_t *len, struct iob_error **err) {
  return iob_read_file(path, max, buf, len, err);
}

int cg2_write_file(const char *path, const char *buf, struct iob_error **err) {
  /* No O_CREAT: a missing cgroup file means the controller is not there, and
   * creating a regular file in its place would hide that. */
  cleanup_close int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return iob_error(err, errno, "cannot open '%s' for writing", path);
  size_t len = strlen(buf);
  ssize_t w;
  do
    w = write(fd, buf, len);
  while (w < 0 && errno == EINTR);
  if (w < 0)
    return iob_error(err, errno, "cannot write '%s' to '%s'", buf, path);
  if ((size_t)w != len)
    return iob_error(err, EIO, "short write of '%s' to '%s'", buf, path);
  return 0;
}

int cg2_parse_devno(const char *s, size_t len, unsigned *maj, unsigned *min) {
  const char *colon = memchr(s, ':', len);
  uint64_t a, b;
  if (colon == NULL || cg2_parse_u64(s, (size_t)(colon - s), &a) < 0 ||
      cg2_parse_u64(colon + 1, len - (size_t)(colon - s) - 1, &b) < 0 || a > UINT32_MAX ||
      b > UINT32_MAX)
    return -1;
  *maj = (unsigned)a;
  *min = (unsigned)b;
  return 0;
}
