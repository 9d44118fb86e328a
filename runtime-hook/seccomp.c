// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <linux/capability.h>
#include <seccomp.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

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

/* What the hook keeps: CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH for cgroup
 * and /proc files of other uids (user-namespaced containers), CAP_SYS_PTRACE
 * for /proc/PID/io of processes that are not its own (HOOK_CAPS_KEPT_HEX). */
static const int kept[] = {CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_SYS_PTRACE};

static int caps_drop(struct iob_error **err) {
  uint64_t keep = 0;
  for (size_t i = 0; i < IOB_ARRAY_SIZE(kept); i++)
    keep |= 1ULL << kept[i];
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
    return iob_error(err, errno, "cannot clear the ambient capabilities");
  /* The bounding set: every capability the kernel knows (PR_CAPBSET_READ
   * fails past the last), less the kept ones.  Without CAP_SETPCAP (a
   * rootless hook) nothing can be dropped there, nor gained either. */
  for (int c = 0; c < 64; c++) {
    int in = prctl(PR_CAPBSET_READ, c, 0, 0, 0);
    if (in < 0)
      break;
    if (in == 1 && !(keep & (1ULL << c)) && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 &&
        errno != EPERM)
      return iob_error(err, errno, "cannot drop capability %d from the bounding set", c);
  }
  struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct data[2];
  if (syscall(SYS_capget, &hdr, data) < 0)
    return iob_error(err, errno, "cannot read the capabilities");
  for (int w = 0; w < 2; w++) {
    uint32_t k = (uint32_t)(keep >> (32 * w));
    data[w].permitted &= k;
    data[w].effective &= k;
    data[w].inheritable = 0;
  }
  if (syscall(SYS_capset, &hdr, data) < 0)
    return iob_error(err, errno, "cannot drop capabilities");
  return 0;
}

int hook_seccomp_install(struct iob_error **err) {
  if (caps_drop(err) < 0)
    return -1;
  /* KILL_PROCESS, not KILL_THREAD: a killed thread in a single-threaded
   * process would leave no trace but a hang. */
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
  if (ctx == NULL)
    return iob_error_code(err, IOB_CODE_INTERNAL,
                          "cannot set up seccomp: seccomp_init(SCMP_ACT_KILL_PROCESS) failed");
  /* Sockets: unix ones only (the agent's; sd_notify is not the hook's). */
  int rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
                            SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)AF_UNIX));
  if (rc < 0) {
    iob_error(err, -rc, "cannot allow unix sockets in seccomp");
    goto out;
  }
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
