// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <fcntl.h>
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
 * /sys and the bundle, write cgroup files, talk to the agent over the
 * socket it connected before (no socket, no connect: seccomp cannot see a
 * connect's address, and Landlock has no right for pathname sockets),
 * allocate, log, exit.  Which files is Landlock's (landlock.c); creating,
 * renaming and removing them is the record's only (record_allowed). */
static const char *const allowed[] = {
    "read",
    "write",
    "writev",
    "pread64",
    "lseek",
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

/* --record-dir: .<id>.tmp is created, renamed over <id>.json, or removed
 * when it could not be written whole (hook_record_write). */
static const char *const record_allowed[] = {
    "rename", "renameat", "renameat2", "unlink", "unlinkat",
};

/* What the hook keeps: CAP_DAC_READ_SEARCH for cgroup and /proc files of
 * other uids (user-namespaced containers), CAP_SYS_PTRACE for /proc/PID/io
 * of processes that are not its own (HOOK_CAPS_KEPT_HEX).  Not
 * CAP_DAC_OVERRIDE: the only files it writes are io.weight and
 * io.bfq.weight, which stay root's in a delegated cgroup (they are not in
 * /sys/kernel/cgroup/delegate), and its record, in a directory of whoever
 * runs it. */
static const int kept[] = {CAP_DAC_READ_SEARCH, CAP_SYS_PTRACE};

int hook_caps_drop(struct iob_error **err) {
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

static int allow_names(scmp_filter_ctx ctx, const char *const *names, size_t n,
                       struct iob_error **err) {
  for (size_t i = 0; i < n; i++) {
    int nr = seccomp_syscall_resolve_name(names[i]);
    if (nr == __NR_SCMP_ERROR)
      continue; /* not on this architecture (e.g. "open" on arm64) */
    int rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
    if (rc < 0)
      return iob_error(err, -rc, "cannot allow syscall '%s' in seccomp", names[i]);
  }
  return 0;
}

static int allow_rules(const struct hook_options *opt, scmp_filter_ctx ctx,
                       struct iob_error **err) {
  if (allow_names(ctx, allowed, IOB_ARRAY_SIZE(allowed), err) < 0)
    return -1;
  if (opt->record_dir && allow_names(ctx, record_allowed, IOB_ARRAY_SIZE(record_allowed), err) < 0)
    return -1;
  /* openat: without a record directory, never O_CREAT, so where Landlock
   * is missing no new file appears at least. */
  int rc = opt->record_dir ? seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 0)
                           : seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1,
                                              SCMP_A2(SCMP_CMP_MASKED_EQ, O_CREAT, 0));
  if (rc < 0)
    return iob_error(err, -rc, "cannot allow syscall 'openat' in seccomp");
  /* The second Landlock layer (hook_landlock_reads) comes once the state
   * is read; these can only narrow what is allowed.  By number: an older
   * libseccomp may not know their names. */
  static const int ll[] = {__NR_landlock_create_ruleset, __NR_landlock_add_rule,
                           __NR_landlock_restrict_self};
  for (size_t i = 0; i < IOB_ARRAY_SIZE(ll); i++) {
    rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, ll[i], 0);
    if (rc < 0)
      return iob_error(err, -rc, "cannot allow the landlock syscalls in seccomp");
  }
  return 0;
}

int hook_seccomp_install(const struct hook_options *opt, struct iob_error **err) {
  /* KILL_PROCESS, not KILL_THREAD: a killed thread in a single-threaded
   * process would leave no trace but a hang. */
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
  if (ctx == NULL)
    return iob_error_code(err, IOB_CODE_INTERNAL,
                          "cannot set up seccomp: seccomp_init(SCMP_ACT_KILL_PROCESS) failed");
  int rc = allow_rules(opt, ctx, err);
  if (rc == 0) {
    rc = seccomp_load(ctx);
    if (rc < 0)
      iob_error(err, -rc, "cannot load the seccomp filter");
  }
  seccomp_release(ctx);
  return rc < 0 ? -1 : 0;
}
