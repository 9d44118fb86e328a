#include "common/file.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "common/cleanup.h"
#include "common/xalloc.h"

int iob_read_fd(int fd, const char *name, size_t max, char **buf, size_t *len,
                struct iob_error **err) {
  size_t cap = 4096, n = 0;
  cleanup_free char *b = xmalloc(cap);
  for (;;) {
    if (n + 1 >= cap) {
      /* n <= max here, so cap stays below 2 * (max + 1). */
      cap *= 2;
      b = xrealloc(b, cap);
    }
    ssize_t r = read(fd, b + n, cap - n - 1);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      return iob_error(err, errno, "cannot read '%s'", name);
    }
    if (r == 0)
      break;
    n += (size_t)r;
    if (n > max)
      return iob_error(err, EFBIG, "cannot read '%s': larger than %zu bytes", name, max);
  }
  b[n] = '\0';
  if (len)
    *len = n;
  *buf = steal_ptr(&b);
  return 0;
}

int iob_read_file(const char *path, size_t max, char **buf, size_t *len, struct iob_error **err) {
  cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return iob_error(err, errno, "cannot open '%s'", path);
  return iob_read_fd(fd, path, max, buf, len, err);
}

static int write_all(int fd, const char *buf, size_t len) {
  while (len > 0) {
    ssize_t w = write(fd, buf, len);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0)
      return -1;
    buf += w;
    len -= (size_t)w;
  }
  return 0;
}

static int write_replace(const char *path, const char *text, size_t len, int mode, bool sync,
                         struct iob_error **err) {
  cleanup_free char *tmp = xasprintf("%s.tmp", path), *dir = xstrdup(path);
  /* A new file, never one put there: O_NOFOLLOW alone would still write
   * through a hard link planted at the temporary name (O_TRUNC included). */
  if (unlink(tmp) < 0 && errno != ENOENT)
    return iob_error(err, errno, "cannot remove '%s'", tmp);
  cleanup_close int fd =
      open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, (mode_t)mode);
  if (fd < 0)
    return iob_error(err, errno, "cannot create '%s'", tmp);
  /* fsync before rename: otherwise a crash can leave the new name pointing
   * at an empty file (ext4 with delalloc, xfs). */
  if (write_all(fd, text, len) < 0 || (sync && fsync(fd) < 0)) {
    int e = errno;
    unlink(tmp);
    return iob_error(err, e, "cannot write '%s'", tmp);
  }
  if (rename(tmp, path) < 0) {
    int e = errno;
    unlink(tmp);
    return iob_error(err, e, "cannot rename '%s' to '%s'", tmp, path);
  }
  char *slash = strrchr(dir, '/');
  if (slash == NULL || !sync)
    return 0;
  *(slash == dir ? slash + 1 : slash) = '\0';
  cleanup_close int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0 || fsync(dfd) < 0)
    return iob_error(err, errno, "cannot sync the directory of '%s'", path);
  return 0;
}

int iob_write_file_atomic(const char *path, const char *text, size_t len, int mode,
                          struct iob_error **err) {
  return write_replace(path, text, len, mode, true, err);
}

int iob_write_file_replace(const char *path, const char *text, size_t len, int mode,
                           struct iob_error **err) {
  return write_replace(path, text, len, mode, false, err);
}

int iob_dir_check_private(const char *dir, const char *what, struct iob_error **err) {
  struct stat st;
  if (lstat(dir, &st) < 0)
    return iob_error(err, errno, "cannot check %s '%s'", what, dir);
  const char *wrong = NULL;
  if (S_ISLNK(st.st_mode))
    wrong = "is a symbolic link";
  else if (!S_ISDIR(st.st_mode))
    wrong = "is not a directory";
  else if (st.st_uid != geteuid())
    wrong = "is owned by another user";
  else if (st.st_mode & 022)
    wrong = "is writable by other users";
  else if (st.st_mode & 077)
    wrong = "is open to other users";
  if (wrong == NULL)
    return 0;
  return iob_error_code(err, IOB_CODE_FAILED_PRECONDITION,
                        "%s '%s' %s (owner uid %u, mode %04o): it must be a directory owned by "
                        "uid %u with mode 0700, so that no other user can replace what is in it",
                        what, dir, wrong, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777),
                        (unsigned)geteuid());
}

int iob_dir_make_private(const char *dir, const char *what, unsigned *old_mode,
                         struct iob_error **err) {
  *old_mode = 0;
  if (mkdir(dir, 0700) == 0) {
    /* The umask may have taken bits we need, never added any. */
    if (chmod(dir, 0700) < 0)
      return iob_error(err, errno, "cannot set the mode of %s '%s' to 0700", what, dir);
    return 1;
  }
  if (errno != EEXIST)
    return iob_error(err, errno, "cannot create %s '%s'", what, dir);
  cleanup_close int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022) ||
      !(st.st_mode & 077))
    /* A symlink (ELOOP), not a directory, another owner, group or other
     * write, or already right: the check says which. */
    return iob_dir_check_private(dir, what, err);
  if (fchmod(fd, 0700) < 0)
    return iob_error(err, errno, "cannot set the mode of %s '%s' (mode %04o) to 0700", what, dir,
                     (unsigned)(st.st_mode & 07777));
  *old_mode = st.st_mode & 07777;
  return 1;
}

int iob_state_set_aside(const char *path, const char *cause, const char *then,
                        struct iob_error **err) {
  char aside[4200];
  snprintf(aside, sizeof(aside), "%s.bad-%lld", path, (long long)time(NULL));
  if (rename(path, aside) < 0)
    return iob_error(err, errno, "%s; cannot keep it aside as '%s'", cause, aside);
  return iob_error_code(err, IOB_CODE_DATA_LOSS, "%s; kept aside as '%s', %s", cause, aside, then);
}

json_t *iob_state_json(const char *name, const char *buf, size_t len, size_t max,
                       struct iob_error **err) {
  if (len > max) {
    iob_error_code(err, IOB_CODE_DATA_LOSS, "'%s' is too large: %zu bytes, at most %zu", name, len,
                   max);
    return NULL;
  }
  json_error_t je;
  json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
  if (root == NULL)
    iob_error_code(err, IOB_CODE_DATA_LOSS, "cannot parse '%s': line %d: %s", name, je.line,
                   je.text);
  return root;
}
