// SPDX-License-Identifier: Apache-2.0
/* The `start`, `delete` and `-info` actions containerd runs
 * (docs/reference/shim-v2.md section 3, binary contract). */
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/file.h"
#include "common/sha256.h"
#include "common/version.h"
#include "common/xalloc.h"
#include "containerd/task/v2/shim.pb-c.h"
#include "containerd/types/introspection.pb-c.h"
#include "google/protobuf/timestamp.pb-c.h"
#include "shim/manager.h"
#include "shim/rootfs.h"
#include "shim/runc.h"
#include "shim/shim.h"
#include "shim/spawn.h"

#define STDIN_MAX (1u << 20)
#define SUN_PATH_LIMIT 106

/* filepath.Join(address, ns, group): join with '/', collapse repeats. */
static char *join3(const char *a, const char *b, const char *c) {
  char *raw = xasprintf("%s/%s/%s", a, b, c);
  char *o = raw;
  for (const char *p = raw; *p; p++)
    if (!(*p == '/' && o > raw && o[-1] == '/'))
      *o++ = *p;
  if (o > raw + 1 && o[-1] == '/')
    o--;
  *o = '\0';
  return raw;
}

int shim_socket_address(const char *dir, const char *grpc_address, const char *ns,
                        const char *group, char **out, struct iob_error **err) {
  cleanup_free char *key = join3(grpc_address, ns, group);
  char hex[2 * IOB_SHA256_SIZE + 1];
  iob_sha256_hex(key, strlen(key), hex);
  *out = xasprintf("unix://%s/%s", dir, hex);
  if (strlen(*out) - 7 > SUN_PATH_LIMIT) {
    free(*out);
    *out = NULL;
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "socket path under '%s' too long", dir);
  }
  return 0;
}

static int sockaddr_of(const char *path, struct sockaddr_un *sa) {
  memset(sa, 0, sizeof(*sa));
  sa->sun_family = AF_UNIX;
  if (strlen(path) >= sizeof(sa->sun_path))
    return -1;
  strcpy(sa->sun_path, path);
  return 0;
}

/* A live shim for the same group answers on the socket. */
static bool socket_alive(const char *path) {
  struct sockaddr_un sa;
  if (sockaddr_of(path, &sa) < 0)
    return false;
  cleanup_close int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  return fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
}

static int mkdir_p(const char *dir, mode_t mode, struct iob_error **err) {
  cleanup_free char *d = xstrdup(dir);
  for (char *p = d + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = '\0';
    if (mkdir(d, 0711) < 0 && errno != EEXIST)
      return iob_error(err, errno, "cannot create '%s'", d);
    *p = '/';
  }
  if (mkdir(d, mode) < 0 && errno != EEXIST)
    return iob_error(err, errno, "cannot create '%s'", d);
  return 0;
}

static int listen_at(const char *dir, const char *path, int *out, struct iob_error **err) {
  if (mkdir_p(dir, 0700, err) < 0)
    return -1;
  struct sockaddr_un sa;
  if (sockaddr_of(path, &sa) < 0)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "socket path '%s' too long", path);
  /* Nobody answers on it (checked before): a stale socket of a dead shim. */
  unlink(path);
  cleanup_close int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return iob_error(err, errno, "cannot create socket");
  if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
    return iob_error(err, errno, "cannot bind '%s'", path);
  if (chmod(path, 0600) < 0 || listen(fd, 128) < 0) {
    int e = errno;
    unlink(path);
    return iob_error(err, e, "cannot listen on '%s'", path);
  }
  *out = steal_fd(&fd);
  return 0;
}

static int write_text(const char *dir, const char *name, const char *text, struct iob_error **err) {
  cleanup_free char *path = xasprintf("%s/%s", dir, name);
  cleanup_close int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  size_t n = strlen(text);
  if (fd < 0 || write(fd, text, n) != (ssize_t)n)
    return iob_error(err, errno ? errno : EIO, "cannot write '%s'", path);
  return 0;
}

static const char *bundle_dir(const struct shim_args *a, char *cwd, size_t n) {
  if (a->bundle && *a->bundle)
    return a->bundle;
  return getcwd(cwd, n);
}

static int group_of(const char *bundle, const char *id, char **group, struct iob_error **err) {
  struct iob_oci_config cfg;
  if (iob_oci_config_load(bundle, &cfg, err) < 0)
    return -1;
  int r = shim_config_group(&cfg, id, group, err);
  iob_oci_config_release(&cfg);
  return r;
}

static int write_pid(const char *dir, pid_t pid, struct iob_error **err) {
  char path[4200];
  snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
  cleanup_close int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || dprintf(fd, "%d", (int)pid) < 0)
    return iob_error(err, errno, "cannot write '%s'", path);
  return 0;
}

/* cgroup1.Load(StaticPath) of containerd's cgroups library: the group in
 * every v1 hierarchy where it exists, and an error if it exists in none.
 * The cgroup2 half of a hybrid host is not joined, as there. */
static int join_v1(const char *cg, pid_t pid, struct iob_error **err) {
  FILE *f = setmntent("/proc/self/mounts", "re");
  if (f == NULL)
    return iob_error(err, errno, "cannot open '/proc/self/mounts'");
  struct mntent m;
  char buf[8192], dir[4200];
  int joined = 0, r = 0;
  while (*cg == '/')
    cg++;
  while (r == 0 && getmntent_r(f, &m, buf, sizeof(buf))) {
    if (strcmp(m.mnt_type, "cgroup") != 0)
      continue;
    snprintf(dir, sizeof(dir), "%s/%s", m.mnt_dir, cg);
    struct stat st;
    if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
      continue;
    r = write_pid(dir, pid, err);
    joined += r == 0;
  }
  endmntent(f);
  if (r == 0 && joined == 0)
    r = iob_error_code(err, IOB_CODE_NOT_FOUND, "it exists in no cgroup v1 hierarchy");
  return r;
}

int shim_cgroup_path_check(const char *cg, struct iob_error **err) {
  /* cgroup2.VerifyGroupPath: clean, absolute, without the mount point. */
  size_t n = strlen(cg);
  if (cg[0] != '/' || strstr(cg, "//") || strstr(cg, "/./") || (n > 1 && cg[n - 1] == '/') ||
      (n >= 2 && !strcmp(cg + n - 2, "/.")) || !strncmp(cg, "/sys/fs/cgroup", 14))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "shim_cgroup '%s' is not a clean absolute cgroup path (like "
                          "'/system.slice/shims')",
                          cg);
  return 0;
}

/* containerd's runc shim (manager_linux.go, Start) moves the new daemon into
 * ShimCgroup and fails `start` when it cannot. */
static int join_shim_cgroup(const char *cg, pid_t pid, struct iob_error **err) {
  struct statfs sf;
  int r;
  if (statfs("/sys/fs/cgroup", &sf) == 0 && sf.f_type == 0x63677270) {
    r = shim_cgroup_path_check(cg, err);
    if (r == 0) {
      char dir[4200];
      snprintf(dir, sizeof(dir), "/sys/fs/cgroup%s", cg);
      r = write_pid(dir, pid, err);
    }
  } else {
    r = join_v1(cg, pid, err);
  }
  if (r < 0)
    return iob_error_prefix(err, "cannot join shim_cgroup '%s'", cg);
  return 0;
}

/* containerd's oom_score_adj + 1, so the shim goes before containerd. */
static void adjust_oom(pid_t pid) {
  char buf[32] = "";
  cleanup_close int fd = open("/proc/self/oom_score_adj", O_RDONLY | O_CLOEXEC);
  if (fd < 0 || read(fd, buf, sizeof(buf) - 1) <= 0)
    return;
  int v = atoi(buf) + 1;
  v = v > 1000 ? 1000 : v < -1000 ? -1000 : v;
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)pid);
  cleanup_close int w = open(path, O_WRONLY | O_CLOEXEC);
  if (w >= 0)
    dprintf(w, "%d", v);
}

static void unlinkat_bundle(const char *bundle, const char *name) {
  char path[4200];
  snprintf(path, sizeof(path), "%s/%s", bundle, name);
  unlink(path);
}

static int spawn_daemon(const struct shim_args *a, const char *bundle, int listener,
                        const struct shim_bootstrap *b, pid_t *pid, struct iob_error **err) {
  const char *argv[12];
  size_t n = 0;
  /* The real path as argv[0], so ps and pgrep show which shim this is. */
  char self[4096];
  ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (sl <= 0)
    return iob_error(err, errno, "cannot read '/proc/self/exe'");
  self[sl] = '\0';
  argv[n++] = self;
  argv[n++] = "-namespace";
  argv[n++] = a->ns;
  argv[n++] = "-id";
  argv[n++] = a->id;
  argv[n++] = "-address";
  argv[n++] = a->address ? a->address : "";
  if (a->debug || (b->is_bootstrap && b->log_level < 0))
    argv[n++] = "-debug";
  argv[n] = NULL;
  cleanup_free char *ttrpc = NULL;
  const char *env[2] = {NULL, NULL};
  if (b->ttrpc_address) {
    ttrpc = xasprintf("TTRPC_ADDRESS=%s", b->ttrpc_address);
    env[0] = ttrpc;
  }
  struct shim_spawn sp = {.argv = argv,
                          .fds = {-1, -1, -1},
                          .extra = {listener},
                          .n_extra = 1,
                          .cwd = bundle,
                          .setenv = env,
                          .setpgid = true,
                          .keep_thp = true};
  return shim_spawn(&sp, pid, err);
}

static int load_bootstrap(const struct shim_args *a, struct shim_bootstrap *b,
                          struct iob_error **err) {
  cleanup_free char *in = NULL;
  size_t len = 0;
  if (!isatty(0) && iob_read_fd(0, "stdin", STDIN_MAX, &in, &len, err) < 0)
    return -1;
  return shim_bootstrap_parse((const uint8_t *)in, len, a->id, a->ns, b, err);
}

int shim_manager_start(const struct shim_args *a, struct iob_error **err) {
  char cwd[4096];
  const char *bundle = bundle_dir(a, cwd, sizeof(cwd));
  if (bundle == NULL)
    return iob_error(err, errno, "cannot find the bundle");
  struct shim_bootstrap b;
  if (load_bootstrap(a, &b, err) < 0)
    return -1;
  cleanup_free char *group = NULL, *address = NULL;
  const char *dir = b.socket_dir ? b.socket_dir : SHIM_SOCKET_DIR;
  int r = group_of(bundle, a->id, &group, err);
  if (r == 0)
    r = shim_socket_address(dir, a->address ? a->address : "", a->ns, group, &address, err);
  if (r == 0 && b.have_options)
    r = shim_options_write(bundle, &b.options, err);
  if (r < 0) {
    shim_bootstrap_release(&b);
    return -1;
  }
  const char *path = address + strlen("unix://");
  if (socket_alive(path)) {
    shim_bootstrap_release(&b);
    if (write_text(bundle, "address", address, err) < 0)
      return -1;
    printf("%s", address);
    return 0;
  }
  int listener = -1;
  pid_t pid = 0;
  r = listen_at(dir, path, &listener, err);
  if (r == 0)
    r = write_text(bundle, "address", address, err);
  /* Transparent huge pages would round the shim's small heap up to 2 MiB;
   * the daemon inherits this (runc and containers do not, see spawn.c). */
  prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
  /* containerd asks for core scheduling: a new cookie the daemon (and the
   * containers it starts) inherit, as the runc shim does. */
  if (getenv("SCHED_CORE") && !strcmp(getenv("SCHED_CORE"), "1"))
    prctl(PR_SCHED_CORE, PR_SCHED_CORE_CREATE, 0, 2 /* PIDTYPE_PGID */, 0);
  if (r == 0)
    r = spawn_daemon(a, bundle, listener, &b, &pid, err);
  if (r == 0 && b.options.shim_cgroup && join_shim_cgroup(b.options.shim_cgroup, pid, err) < 0) {
    /* As the runc shim: a daemon outside its cgroup is killed, and the
     * socket and address it would have served go with it. */
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    unlinkat_bundle(bundle, "address");
    r = -1;
  }
  if (r < 0 && listener >= 0)
    unlink(path);
  if (listener >= 0)
    close(listener);
  shim_bootstrap_release(&b);
  if (r < 0)
    return -1;
  adjust_oom(pid);
  printf("%s", address);
  return 0;
}

static uint32_t read_init_pid(const char *bundle) {
  char path[4200], buf[32] = "";
  snprintf(path, sizeof(path), "%s/init.pid", bundle);
  cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || read(fd, buf, sizeof(buf) - 1) <= 0)
    return 0;
  long v = strtol(buf, NULL, 10);
  return v > 0 ? (uint32_t)v : 0;
}

/* No state directory of id under runc's root: it was deleted (any other
 * answer says "ask runc").  id is a plain name: shim_args_parse took it
 * through shim_validate_id. */
static bool runc_forgot(const struct shim_runc *r, const char *id) {
  cleanup_free char *dir = xasprintf("%s/%s", r->root, id);
  struct stat st;
  return stat(dir, &st) < 0 && errno == ENOENT;
}

int shim_manager_delete(const struct shim_args *a, struct iob_error **err) {
  char cwd[4096];
  const char *bundle = bundle_dir(a, cwd, sizeof(cwd));
  if (bundle == NULL)
    return iob_error(err, errno, "cannot find the bundle");
  struct shim_options o;
  struct shim_runc runc;
  if (shim_options_read(bundle, &o, err) < 0)
    return -1;
  shim_runc_init(&runc, &o, a->ns, bundle);
  const char *args[] = {"delete", "--force", a->id, NULL};
  const int fds[3] = {-1, -1, 2};
  cleanup_error struct iob_error *derr = NULL;
  /* containerd runs this after every shim's exit, also after a Delete
   * that removed the container: runc (and crun) keep a container's state
   * in <root>/<id>, and without it there is nothing to delete, so no
   * runc is run (one exec less on every container's way out).  A
   * container runc no longer knows is what delete is for: warn only. */
  if (!runc_forgot(&runc, a->id) && shim_runc_run(&runc, args, fds, NULL, 0, NULL, &derr) < 0)
    fprintf(stderr, "warning: %s\n", derr->msg);
  shim_runc_release(&runc);
  shim_options_release(&o);
  char rootfs[4200];
  snprintf(rootfs, sizeof(rootfs), "%s/rootfs", bundle);
  shim_unmount_all(rootfs);
  struct shim_time now = shim_time_now();
  Google__Protobuf__Timestamp ts = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
  ts.seconds = now.sec;
  ts.nanos = now.nsec;
  Containerd__Task__V2__DeleteResponse resp = CONTAINERD__TASK__V2__DELETE_RESPONSE__INIT;
  resp.pid = read_init_pid(bundle);
  resp.exit_status = 128 + 9;
  resp.exited_at = &ts;
  uint8_t buf[64];
  size_t n = containerd__task__v2__delete_response__pack(&resp, buf);
  if (fwrite(buf, 1, n, stdout) != n)
    return iob_error(err, EIO, "cannot write the delete response");
  return 0;
}

int shim_manager_info(struct iob_error **err) {
  struct shim_bootstrap b;
  if (load_bootstrap(&(struct shim_args){0}, &b, err) < 0)
    return -1;
  shim_bootstrap_release(&b);
  Containerd__Types__RuntimeVersion v = CONTAINERD__TYPES__RUNTIME_VERSION__INIT;
  v.version = (char *)iob_version;
  v.revision = (char *)iob_git_rev;
  Containerd__Types__RuntimeInfo info = CONTAINERD__TYPES__RUNTIME_INFO__INIT;
  info.name = SHIM_RUNTIME_NAME;
  info.version = &v;
  size_t n = containerd__types__runtime_info__get_packed_size(&info);
  cleanup_free uint8_t *buf = xmalloc(n + 1);
  containerd__types__runtime_info__pack(&info, buf);
  if (fwrite(buf, 1, n, stdout) != n)
    return iob_error(err, EIO, "cannot write runtime info");
  return 0;
}
