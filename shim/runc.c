// SPDX-License-Identifier: Apache-2.0
/* Driving runc (or crun): one global prefix, the error taken from runc's
 * log.json as go-runc does.  In the daemon runc runs beside the loop: a hook
 * that sleeps in one container's create must not stall the RPCs of the
 * others, so runc's exit comes back through the reaper.  Its stdin and
 * stdout are memfds, read once it exited, so nothing waits on a pipe. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>

#include "common/cleanup.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "shim/reaper.h"
#include "shim/runc.h"
#include "shim/shim.h"
#include "shim/spawn.h"

#define MAX_ARGS 32
#define OUT_MAX (4u << 20)
#define LOG_TAIL (64u << 10)

void shim_runc_init(struct shim_runc *r, const struct shim_options *o, const char *ns,
                    const char *bundle) {
  memset(r, 0, sizeof(*r));
  r->binary = o->binary_name ? o->binary_name : "runc";
  r->systemd_cgroup = o->systemd_cgroup;
  r->root = xasprintf("%s/%s", o->root ? o->root : SHIM_DEFAULT_RUNC_ROOT, ns);
  r->log = xasprintf("%s/log.json", bundle);
}

void shim_runc_release(struct shim_runc *r) {
  free(r->root);
  free(r->log);
  r->root = r->log = NULL;
}

char *shim_runc_last_error(const char *log, size_t len) {
  char *msg = NULL;
  const char *p = log, *end = log + len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
    json_t *j = n ? json_loadb(p, n, 0, NULL) : NULL;
    const char *lvl = json_string_value(json_object_get(j, "level"));
    const char *m = json_string_value(json_object_get(j, "msg"));
    if (lvl && m && !strcmp(lvl, "error")) {
      free(msg);
      msg = xstrdup(m);
    }
    json_decref(j);
    p += n + 1;
  }
  return msg;
}

/* The tail of log.json: the last error is near its end. */
static char *read_log_error(const char *path) {
  cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  struct stat st;
  if (fstat(fd, &st) < 0)
    return NULL;
  off_t off = st.st_size > (off_t)LOG_TAIL ? st.st_size - (off_t)LOG_TAIL : 0;
  size_t want = (size_t)(st.st_size - off);
  cleanup_free char *buf = xmalloc(want + 1);
  ssize_t n = pread(fd, buf, want, off);
  if (n <= 0)
    return NULL;
  return shim_runc_last_error(buf, (size_t)n);
}

/* Read all of fd (runc's stdout) until EOF. */
static int read_all(int fd, char **out, struct iob_error **err) {
  size_t cap = 1024, len = 0;
  char *buf = xmalloc(cap);
  for (;;) {
    if (len + 1 >= cap) {
      if (cap >= OUT_MAX) {
        free(buf);
        return iob_error_code(err, IOB_CODE_RESOURCE_EXHAUSTED, "runc output too large");
      }
      buf = xrealloc(buf, cap * 2);
      cap *= 2;
    }
    ssize_t n = read(fd, buf + len, cap - len - 1);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    len += (size_t)n;
  }
  buf[len] = '\0';
  *out = buf;
  return 0;
}

static size_t build_argv(const struct shim_runc *r, const char *const *args, const char **argv) {
  size_t n = 0;
  argv[n++] = r->binary;
  argv[n++] = "--root";
  argv[n++] = r->root;
  argv[n++] = "--log";
  argv[n++] = r->log;
  argv[n++] = "--log-format";
  argv[n++] = "json";
  if (r->systemd_cgroup)
    argv[n++] = "--systemd-cgroup";
  for (; *args && n < MAX_ARGS - 1; args++)
    argv[n++] = *args;
  argv[n] = NULL;
  return n;
}

static int fail(const char *log, const char *binary, const char *verb, int status,
                struct iob_error **err) {
  cleanup_free char *m = read_log_error(log);
  if (m)
    return iob_error_code(err, IOB_CODE_UNKNOWN, "OCI runtime %s failed: %s", verb, m);
  return iob_error_code(err, IOB_CODE_UNKNOWN, "OCI runtime %s failed: '%s' exit status %u", verb,
                        binary, shim_exit_code(status));
}

/* One runc that runs while the loop goes on. */
struct runc_call {
  shim_runc_fn fn;
  void *data;
  char *log;
  char *binary;
  char *verb;
  int out; /* memfd of runc's stdout, -1 when not captured */
};

static void call_free(struct runc_call *rc) {
  if (rc->out >= 0)
    close(rc->out);
  free(rc->log);
  free(rc->binary);
  free(rc->verb);
  free(rc);
}

static int read_memfd(int fd, char **out, struct iob_error **err) {
  if (lseek(fd, 0, SEEK_SET) < 0)
    return iob_error(err, errno, "cannot rewind runc's output");
  return read_all(fd, out, err);
}

static void on_runc_exit(pid_t pid, int status, struct shim_time at, void *data) {
  struct runc_call *rc = data;
  (void)pid;
  (void)at;
  cleanup_error struct iob_error *err = NULL;
  cleanup_free char *out = NULL;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail(rc->log, rc->binary, rc->verb, status, &err);
  else if (rc->out >= 0)
    read_memfd(rc->out, &out, &err);
  if (rc->fn)
    rc->fn(rc->data, &out, &err);
  else if (err)
    iob_debug("%s", err->msg);
  call_free(rc);
}

/* A memfd holding in, at offset 0: runc's stdin. */
static int memfd_with(const char *in, size_t len, struct iob_error **err) {
  cleanup_close int fd = memfd_create("runc-stdin", MFD_CLOEXEC);
  if (fd < 0)
    return iob_error(err, errno, "cannot create runc's stdin");
  if (write(fd, in, len) != (ssize_t)len || lseek(fd, 0, SEEK_SET) < 0)
    return iob_error(err, errno ? errno : EIO, "cannot write runc's stdin");
  return steal_fd(&fd);
}

/* pgid not NULL: runc leads a process group of its own, *pgid. */
static int start_call(const struct shim_runc *r, const char *const *args, const int fds[3],
                      const char *in, size_t in_len, bool capture, shim_runc_fn fn, void *data,
                      pid_t *pgid, struct iob_error **err) {
  const char *argv[MAX_ARGS];
  build_argv(r, args, argv);
  struct shim_spawn sp = {
      .argv = argv, .fds = {fds[0], fds[1], fds[2]}, .pdeathsig = true, .setpgid = pgid != NULL};
  cleanup_close int in_fd = -1;
  if (in && (in_fd = memfd_with(in, in_len, err)) < 0)
    return -1;
  if (in)
    sp.fds[0] = in_fd;
  struct runc_call *rc = xcalloc(1, sizeof(*rc));
  *rc = (struct runc_call){fn, data, xstrdup(r->log), xstrdup(r->binary), xstrdup(args[0]), -1};
  if (capture) {
    rc->out = memfd_create("runc-stdout", MFD_CLOEXEC);
    if (rc->out < 0) {
      iob_error(err, errno, "cannot create runc's stdout");
      call_free(rc);
      return -1;
    }
    sp.fds[1] = rc->out;
  }
  pid_t pid;
  if (shim_spawn(&sp, &pid, err) < 0) {
    call_free(rc);
    return -1;
  }
  if (shim_reaper_watch_child(pid, on_runc_exit, rc, err) < 0) {
    kill(pid, SIGKILL);
    call_free(rc);
    return -1;
  }
  if (pgid)
    *pgid = pid;
  return 0;
}

int shim_runc_start(const struct shim_runc *r, const char *const *args, const int fds[3],
                    const char *in, size_t in_len, bool capture, shim_runc_fn fn, void *data,
                    struct iob_error **err) {
  return start_call(r, args, fds, in, in_len, capture, fn, data, NULL, err);
}

int shim_runc_start_killable(const struct shim_runc *r, const char *const *args, const int fds[3],
                             shim_runc_fn fn, void *data, pid_t *pgid, struct iob_error **err) {
  return start_call(r, args, fds, NULL, 0, false, fn, data, pgid, err);
}

int shim_runc_run(const struct shim_runc *r, const char *const *args, const int fds[3],
                  const char *in, size_t in_len, char **out, struct iob_error **err) {
  const char *argv[MAX_ARGS];
  build_argv(r, args, argv);
  struct shim_spawn sp = {.argv = argv, .fds = {fds[0], fds[1], fds[2]}, .pdeathsig = true};
  cleanup_close int in_r = -1, in_w = -1, out_r = -1, out_w = -1;
  if (in) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
      return iob_error(err, errno, "cannot create pipe");
    in_r = p[0];
    in_w = p[1];
    sp.fds[0] = in_r;
  }
  if (out) {
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
      return iob_error(err, errno, "cannot create pipe");
    out_r = p[0];
    out_w = p[1];
    sp.fds[1] = out_w;
  }
  pid_t pid;
  if (shim_spawn(&sp, &pid, err) < 0)
    return -1;
  iob_closep(&in_r);
  in_r = -1;
  iob_closep(&out_w);
  out_w = -1;
  /* Small payloads (resources JSON): the pipe buffer holds them. */
  if (in && in_len && write(in_w, in, in_len) != (ssize_t)in_len)
    iob_error(NULL, errno, "short write");
  iob_closep(&in_w);
  in_w = -1;
  cleanup_free char *captured = NULL;
  cleanup_error struct iob_error *rerr = NULL;
  if (out)
    read_all(out_r, &captured, &rerr);
  int status;
  if (shim_spawn_wait(pid, &status, err) < 0)
    return -1;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return fail(r->log, r->binary, args[0], status, err);
  if (rerr) {
    *err = steal_ptr(&rerr);
    return -1;
  }
  if (out)
    *out = steal_ptr(&captured);
  return 0;
}
