// SPDX-License-Identifier: Apache-2.0
/* The state directory's lock and the live mark (agent/store/lock.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/store/lock.h"
#include "common/cleanup.h"
#include "common/log.h"
#include "common/xalloc.h"

/* The pid the holder wrote ("1234\n"), 0 when it is not there yet (it
 * locks before it writes) or not a pid. */
static long holder_pid(int fd) {
  char buf[32];
  ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  if (n <= 0)
    return 0;
  buf[n] = '\0';
  char *end;
  errno = 0;
  long pid = strtol(buf, &end, 10);
  if (errno || end == buf || (*end != '\n' && *end != '\0') || pid <= 0)
    return 0;
  return pid;
}

int agent_lock_state_dir(const char *state_dir, int *fd_out, struct iob_error **err) {
  if (mkdir(state_dir, 0700) < 0 && errno != EEXIST)
    return iob_error(err, errno, "cannot create state directory '%s'", state_dir);
  cleanup_free char *path = xasprintf("%s/%s", state_dir, AGENT_LOCK_FILE);
  cleanup_close int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    return iob_error(err, errno, "cannot open lock file '%s'", path);
  if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
    int e = errno;
    if (e != EWOULDBLOCK)
      return iob_error(err, e, "cannot lock '%s'", path);
    long pid = holder_pid(fd);
    char who[48] = "another iobatchd";
    if (pid > 0)
      snprintf(who, sizeof(who), "another iobatchd (pid %ld)", pid);
    return iob_error_code(err, IOB_CODE_ALREADY_EXISTS,
                          "state directory '%s' is in use: %s holds '%s' (one agent per state "
                          "directory)",
                          state_dir, who, path);
  }
  char pid[32];
  int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
  if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)n, 0) != n)
    return iob_error(err, errno, "cannot write our pid into '%s'", path);
  *fd_out = steal_fd(&fd);
  return 0;
}

bool agent_lock_mark_live(const char *mark) {
  if (access(mark, F_OK) == 0) {
    iob_info("'%s' is there: the last agent stopped with containers or did not stop cleanly; "
             "planning nothing for %d ms while shims register them again",
             mark, AGENT_SETTLE_MS);
    return true;
  }
  cleanup_close int fd = open(mark, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    iob_warn("cannot create '%s': %s (a restart will not wait for re-registrations)", mark,
             strerror(errno));
  return false;
}

void agent_lock_unmark_live(const char *mark) {
  if (unlink(mark) < 0 && errno != ENOENT)
    iob_warn("cannot remove '%s': %s", mark, strerror(errno));
}
