// SPDX-License-Identifier: Apache-2.0
#include "agent/serve/fdlimit.h"

#include <dirent.h>
#include <errno.h>
#include <sys/resource.h>

int agent_fdlimit_raise(struct agent_fdlimit *out, struct iob_error **err) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
    return iob_error(err, errno, "cannot read RLIMIT_NOFILE");
  out->was = rl.rlim_cur;
  if (rl.rlim_cur < rl.rlim_max) {
    struct rlimit raised = {.rlim_cur = rl.rlim_max, .rlim_max = rl.rlim_max};
    if (setrlimit(RLIMIT_NOFILE, &raised) < 0)
      return iob_error(err, errno, "cannot raise RLIMIT_NOFILE from %llu to %llu",
                       (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max);
    rl = raised;
  }
  out->soft = rl.rlim_cur;
  out->hard = rl.rlim_max;
  out->short_ = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < AGENT_FDS_NEEDED;
  return 0;
}

int agent_fdlimit_count(uint64_t *n, struct iob_error **err) {
  DIR *d = opendir("/proc/self/fd");
  if (d == NULL)
    return iob_error(err, errno, "cannot open '/proc/self/fd'");
  uint64_t k = 0;
  errno = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL; errno = 0)
    if (e->d_name[0] != '.')
      k++;
  int saved = errno;
  closedir(d);
  if (saved != 0)
    return iob_error(err, saved, "cannot read '/proc/self/fd'");
  *n = k > 0 ? k - 1 : 0; /* the directory's own fd */
  return 0;
}

void agent_fdlimit_usage(uint64_t *open, uint64_t *limit) {
  struct rlimit rl;
  *open = *limit = 0;
  if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || agent_fdlimit_count(open, NULL) < 0)
    return;
  *limit = rl.rlim_cur;
}
