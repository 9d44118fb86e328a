// SPDX-License-Identifier: Apache-2.0
/* The hook's file confinement (security review, finding 14): Landlock,
 * degraded by the ABI the kernel reports.  Seccomp cannot tell one path
 * from another and the hook runs as root, which owns /etc/shadow whatever
 * capabilities it drops; only an LSM can keep a parser bug from writing
 * there.
 *
 * A Landlock domain may not ptrace-read a process outside it, and
 * /proc/PID/io asks for that at every read (do_io_accounting), so the
 * domain begins after the baseline is taken (hook_sample): before it, only
 * jansson's parse of the state and the checks of its types and lengths,
 * under seccomp; the tenant's strings (annotations, config.json, process
 * args) are interpreted inside it.  landlock_restrict_self needs
 * no_new_privs, which main sets with the seccomp filter.
 *
 * Debian 12's <linux/landlock.h> stops at ABI 2, so what is used past it is
 * defined here, with the values of the kernel's include/uapi/linux/landlock.h
 * (Documentation/userspace-api/landlock.rst). */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/xalloc.h"
#include "runtime-hook/hook.h"

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1

#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SYM (1ULL << 12)               /* the last of ABI 1 */
#define LL_FS_REFER (1ULL << 13)                  /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)               /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15)              /* ABI 5 */
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL (1ULL << 1)               /* ABI 6 */

#define LL_READ (LL_FS_READ_FILE | LL_FS_READ_DIR)

/* struct landlock_ruleset_attr as of ABI 6; an older kernel takes the
 * larger struct as long as the fields it does not know are zero. */
struct ll_ruleset_attr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct ll_path_beneath_attr {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

int hook_landlock_abi(void) {
  long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
  return abi < 0 ? 0 : (int)abi;
}

/* Every file right this ABI can deny. */
static uint64_t fs_rights(int abi) {
  uint64_t r = (LL_FS_MAKE_SYM << 1) - 1;
  if (abi >= 2)
    r |= LL_FS_REFER;
  if (abi >= 3)
    r |= LL_FS_TRUNCATE;
  if (abi >= 5)
    r |= LL_FS_IOCTL_DEV;
  return r;
}

struct ll_rule {
  const char *path; /* NULL: no rule */
  uint64_t access;
};

/* The domain: HANDLED is denied except beneath the RULES.  A rule's
 * path that does not exist (a record directory not made yet, a bundle
 * gone) gives no right there, which is what its absence allows anyway. */
static int layer(int abi, uint64_t handled, uint64_t scoped, const struct ll_rule *rules, size_t n,
                 struct iob_error **err) {
  struct ll_ruleset_attr attr = {.handled_access_fs = handled, .scoped = scoped};
  size_t size = abi >= 6   ? sizeof(attr)
                : abi >= 4 ? offsetof(struct ll_ruleset_attr, scoped)
                           : offsetof(struct ll_ruleset_attr, handled_access_net);
  cleanup_close int rs = (int)syscall(__NR_landlock_create_ruleset, &attr, size, 0);
  if (rs < 0)
    return iob_error(err, errno, "cannot create a landlock ruleset (ABI %d)", abi);
  for (size_t i = 0; i < n; i++) {
    if (rules[i].path == NULL)
      continue;
    cleanup_close int fd = open(rules[i].path, O_PATH | O_CLOEXEC);
    if (fd < 0 && (errno == ENOENT || errno == ENOTDIR || errno == EACCES))
      continue;
    if (fd < 0)
      return iob_error(err, errno, "cannot open '%s' for a landlock rule", rules[i].path);
    /* A rule may name only what the layer handles (EINVAL otherwise), and
     * a file no directory rights. */
    struct ll_path_beneath_attr pb = {.allowed_access = rules[i].access & handled, .parent_fd = fd};
    if (pb.allowed_access && syscall(__NR_landlock_add_rule, rs, LL_RULE_PATH_BENEATH, &pb, 0) < 0)
      return iob_error(err, errno, "cannot add the landlock rule for '%s'", rules[i].path);
  }
  if (syscall(__NR_landlock_restrict_self, rs, 0) < 0)
    return iob_error(err, errno, "cannot enforce the landlock ruleset");
  return 0;
}

int hook_landlock_apply(const struct hook_options *opt, int abi, const char *bundle,
                        struct iob_error **err) {
  if (abi < 1)
    return 0;
  cleanup_free char *proc = xasprintf("%s/proc", opt->root ? opt->root : "");
  cleanup_free char *sys = xasprintf("%s/sys", opt->root ? opt->root : "");
  const struct ll_rule rules[] = {
      {proc, LL_READ},   /* the container's cgroup; mountinfo */
      {sys, LL_READ},    /* disks and their schedulers; v1 blkio */
      {bundle, LL_READ}, /* config.json */
      /* io.stat, io.pressure; io.weight and io.bfq.weight written */
      {opt->cg_mount, LL_READ | LL_FS_WRITE_FILE | LL_FS_TRUNCATE},
      /* <id>.json, written whole to .<id>.tmp and renamed */
      {opt->record_dir,
       LL_READ | LL_FS_WRITE_FILE | LL_FS_TRUNCATE | LL_FS_MAKE_REG | LL_FS_REMOVE_FILE},
  };
  /* The agent's socket is connected before confinement and seccomp allows
   * no other (Landlock has no right for connecting to a pathname socket);
   * what ABI 6 scopes is abstract sockets, and signals, of other domains. */
  uint64_t scoped = abi >= 6 ? LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL : 0;
  return layer(abi, fs_rights(abi), scoped, rules, IOB_ARRAY_SIZE(rules), err);
}

void hook_confinement_describe(const struct hook_options *opt, int abi, char *buf, size_t n) {
  if (abi < 1) {
    snprintf(buf, n,
             "no landlock in this kernel: seccomp alone, which lets the hook create, rename "
             "or unlink files only with a record directory, and open any it may for writing");
    return;
  }
  snprintf(buf, n,
           "landlock ABI %d: writes only beneath '%s'%s%s, reads only beneath /proc, /sys, "
           "the cgroup mount and the bundle%s",
           abi, opt->cg_mount ? opt->cg_mount : "(no cgroup2 mount)",
           opt->record_dir ? " and " : "", opt->record_dir ? opt->record_dir : "",
           abi >= 6 ? "; abstract unix sockets and signals scoped" : "");
}
