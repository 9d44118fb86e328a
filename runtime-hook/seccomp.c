#include <errno.h>
#include <seccomp.h>

#include "common/cleanup.h"
#include "runtime-hook/hook.h"

/* What the hook does after confinement: read stdin and files under /proc,
 * /sys and the bundle, write cgroup files and its record, talk to the agent
 * over a unix socket, allocate, log, exit. */
static const char *const allowed[] = {
    "read",
    "write",
    "writev",
    "pread64",
    "lseek",
    "openat",
    "open",
    "close",
    "fstat",
    "newfstatat",
    "statx",
    "stat",
    "lstat",
    "access",
    "faccessat",
    "faccessat2",
    "readlink",
    "readlinkat",
    "getdents64",
    "fcntl",
    "rename",
    "renameat",
    "renameat2",
    "unlink",
    "unlinkat",
    "brk",
    "mmap",
    "munmap",
    "mremap",
    "madvise",
    "mprotect",
    "futex",
    "getrandom",
    "clock_gettime",
    "gettimeofday",
    "getpid",
    "gettid",
    "rt_sigreturn",
    "rt_sigprocmask",
    "rt_sigaction",
    "socket",
    "connect",
    "getsockopt", /* SO_PEERCRED: is the agent root's (ttrpc_client_check_server_uid) */
    "geteuid",
    "sendmsg",
    "sendto",
    "recvmsg",
    "recvfrom",
    "poll",
    "ppoll",
    "exit",
    "exit_group",
#if defined(__SANITIZE_ADDRESS__)
    /* ASan/LSan at exit: the leak check stops the world from a clone()d
     * tracer thread and reads /proc/self/{maps,task}. */
    "clone",
    "clone3",
    "ptrace",
    "wait4",
    "waitid",
    "prctl",
    "sched_yield",
    "sigaltstack",
    "getdents",
    "getppid",
    "sched_getaffinity",
    "tgkill",
    "kill",
    "set_robust_list",
    "rseq",
    "getrlimit",
    "prlimit64",
    "setrlimit",
    "pipe2",
    "dup",
    "dup2",
    "dup3",
    "ioctl",
    "uname",
    "nanosleep",
    "clock_nanosleep",
    "getuid",
    "mkdir",
    "mkdirat",
    "process_vm_readv",
#endif
};

int hook_seccomp_install(struct iob_error **err) {
  /* KILL_PROCESS, not KILL_THREAD: a killed thread in a single-threaded
   * process would leave no trace but a hang. */
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
  if (ctx == NULL)
    return iob_error_code(err, IOB_CODE_INTERNAL,
                          "cannot set up seccomp: seccomp_init(SCMP_ACT_KILL_PROCESS) failed");
  int rc = 0;
  for (size_t i = 0; i < IOB_ARRAY_SIZE(allowed); i++) {
    int nr = seccomp_syscall_resolve_name(allowed[i]);
    if (nr == __NR_SCMP_ERROR)
      continue; /* not on this architecture (e.g. "open" on arm64) */
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
    if (rc < 0) {
      iob_error(err, -rc, "cannot allow syscall '%s' in seccomp", allowed[i]);
      goto out;
    }
  }
  rc = seccomp_load(ctx);
  if (rc < 0)
    iob_error(err, -rc, "cannot load the seccomp filter");
out:
  seccomp_release(ctx);
  return rc < 0 ? -1 : 0;
}
