// SPDX-License-Identifier: Apache-2.0
/* The one way the shim starts a child: vfork + execve.  vfork keeps the
 * shim's small footprint from being copied for every runc call. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/xalloc.h"
#include "shim/spawn.h"

extern char **environ;

uint32_t shim_exit_code(int status) {
  if (WIFSIGNALED(status))
    return 128 + (uint32_t)WTERMSIG(status);
  return (uint32_t)WEXITSTATUS(status);
}

/* PATH lookup in the parent: the vfork child must only make system calls. */
static char *resolve(const char *name) {
  if (strchr(name, '/'))
    return xstrdup(name);
  const char *path = getenv("PATH");
  if (path == NULL || *path == '\0')
    path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  while (*path) {
    const char *end = strchrnul(path, ':');
    char *cand = xasprintf("%.*s/%s", (int)(end - path), path, name);
    if (access(cand, X_OK) == 0)
      return cand;
    free(cand);
    path = *end ? end + 1 : end;
  }
  return NULL;
}

static bool overridden(const char *entry, const char *const *set) {
  const char *eq = strchr(entry, '=');
  size_t n = eq ? (size_t)(eq - entry) : strlen(entry);
  /* runc would tell systemd about the container instead of the shim. */
  if (n == 13 && !strncmp(entry, "NOTIFY_SOCKET", 13))
    return true;
  for (; set && *set; set++)
    if (!strncmp(*set, entry, n) && (*set)[n] == '=')
      return true;
  return false;
}

static char **make_env(const char *const *set) {
  size_t n = 0, m = 0;
  for (char **e = environ; e && *e; e++)
    n++;
  for (const char *const *s = set; s && *s; s++)
    m++;
  char **env = xcalloc(n + m + 1, sizeof(char *));
  size_t o = 0;
  for (char **e = environ; e && *e; e++)
    if (!overridden(*e, set))
      env[o++] = *e;
  for (const char *const *s = set; s && *s; s++)
    env[o++] = (char *)*s;
  return env;
}

/* Move every fd the child needs above 10 (close-on-exec), so that dup2 into
 * 0..5 never overwrites a source that is still needed. */
static int stage_fds(const struct shim_spawn *sp, int out[6], int devnull) {
  for (int i = 0; i < 6; i++)
    out[i] = -1;
  for (int i = 0; i < 3; i++) {
    int src = sp->fds[i] >= 0 ? sp->fds[i] : devnull;
    out[i] = fcntl(src, F_DUPFD_CLOEXEC, 10);
    if (out[i] < 0)
      return -1;
  }
  for (int i = 0; i < sp->n_extra && i < 3; i++) {
    out[3 + i] = fcntl(sp->extra[i], F_DUPFD_CLOEXEC, 10);
    if (out[3 + i] < 0)
      return -1;
  }
  return 0;
}

static void close_staged(int fds[6]) {
  for (int i = 0; i < 6; i++)
    if (fds[i] >= 0)
      close(fds[i]);
}

static void __attribute__((noreturn)) child(const struct shim_spawn *sp, const char *exe,
                                            char **env, int staged[6], volatile int *child_errno) {
  sigset_t all;
  sigemptyset(&all);
  sigprocmask(SIG_SETMASK, &all, NULL);
  signal(SIGPIPE, SIG_DFL);
  if (sp->pdeathsig)
    prctl(PR_SET_PDEATHSIG, SIGKILL);
  /* `start` turns THP off for the shim's own small heap; runc and the
   * containers it makes must not inherit that. */
  if (!sp->keep_thp)
    prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0);
  if (sp->setpgid)
    setpgid(0, 0);
  for (int i = 0; i < 6; i++)
    if (staged[i] >= 0 && dup2(staged[i], i) < 0)
      goto fail;
  if (sp->cwd && chdir(sp->cwd) < 0)
    goto fail;
  execve(exe, (char *const *)sp->argv, env);
fail:
  *child_errno = errno;
  _exit(127);
}

int shim_spawn(const struct shim_spawn *sp, pid_t *pid, struct iob_error **err) {
  cleanup_free char *exe = resolve(sp->argv[0]);
  if (exe == NULL)
    return iob_error(err, ENOENT, "cannot find '%s' in PATH", sp->argv[0]);
  cleanup_close int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0)
    return iob_error(err, errno, "cannot open '/dev/null'");
  int staged[6];
  if (stage_fds(sp, staged, devnull) < 0) {
    int e = errno;
    close_staged(staged);
    return iob_error(err, e, "cannot prepare fds for '%s'", sp->argv[0]);
  }
  cleanup_free char **env = make_env(sp->setenv);
  volatile int child_errno = 0;
  pid_t p = vfork();
  if (p == 0)
    child(sp, exe, env, staged, &child_errno);
  int e = errno;
  close_staged(staged);
  if (p < 0)
    return iob_error(err, e, "cannot start '%s'", sp->argv[0]);
  if (child_errno != 0) {
    int st;
    waitpid(p, &st, 0);
    return iob_error(err, child_errno, "cannot execute '%s'", exe);
  }
  *pid = p;
  return 0;
}

int shim_spawn_wait(pid_t pid, int *status, struct iob_error **err) {
  for (;;) {
    pid_t r = waitpid(pid, status, 0);
    if (r == pid)
      return 0;
    if (r < 0 && errno != EINTR)
      return iob_error(err, errno, "cannot wait for pid %d", (int)pid);
  }
}
