/* Container and process lifecycle: Create, Start, Kill, Delete, Exec, Pause,
 * Update, Pids through runc; exits from the reaper, published in the order
 * containerd requires (an init's exit only after all its execs'). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "common/cleanup.h"
#include "common/log.h"
#include "containerd/events/task.pb-c.h"
#include "google/protobuf/timestamp.pb-c.h"
#include "shim/process.h"

#define CONSOLE_TIMEOUT_MS 30000
#define PIDFILE_MAX 64

static char *xstrdup(const char *s) {
  char *r = strdup(s ? s : "");
  if (r == NULL)
    abort();
  return r;
}

struct shim_container *shim_container_find(struct shim_service *s, const char *id) {
  for (struct shim_container *c = s->containers; c; c = c->next)
    if (!strcmp(c->id, id))
      return c;
  return NULL;
}

int shim_process_find(struct shim_service *s, const char *id, const char *exec_id,
                      struct shim_container **cp, struct shim_process **pp,
                      struct iob_error **err) {
  struct shim_container *c = id ? shim_container_find(s, id) : NULL;
  if (c == NULL)
    return iob_error_code(err, IOB_CODE_NOT_FOUND, "container not created");
  *cp = c;
  if (exec_id == NULL || *exec_id == '\0') {
    *pp = &c->init;
    return 0;
  }
  for (struct shim_process *p = c->execs; p; p = p->next) {
    if (!strcmp(p->exec_id, exec_id)) {
      *pp = p;
      return 0;
    }
  }
  return iob_error_code(err, IOB_CODE_NOT_FOUND, "process '%s' does not exist", exec_id);
}

static Google__Protobuf__Timestamp ts_of(struct shim_time t) {
  Google__Protobuf__Timestamp ts = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
  ts.seconds = t.sec;
  ts.nanos = t.nsec;
  return ts;
}

static void publish_exit(struct shim_process *p) {
  Containerd__Events__TaskExit e = CONTAINERD__EVENTS__TASK_EXIT__INIT;
  Google__Protobuf__Timestamp ts = ts_of(p->exited_at);
  e.container_id = p->c->id;
  e.id = p->exec_id ? p->exec_id : p->c->id;
  e.pid = (uint32_t)p->pid;
  e.exit_status = p->exit_status;
  e.exited_at = &ts;
  shim_events_publish("/tasks/exit", &e.base);
}

static void complete_exit(struct shim_process *p) {
  p->exit_pending = false;
  p->exited = true;
  p->status = SHIM_STATUS_STOPPED;
  publish_exit(p);
  shim_process_wake(p);
  if (p == &p->c->init)
    shim_admission_exited(p->c->svc->ns, p->c->id, p->exit_status);
}

static bool execs_running(const struct shim_container *c) {
  for (const struct shim_process *e = c->execs; e; e = e->next)
    if (e->pid > 0 && !e->exited)
      return true;
  return false;
}

static void on_exit_reaped(pid_t pid, int status, struct shim_time at, void *data) {
  struct shim_process *p = data;
  (void)pid;
  p->exit_status = shim_exit_code(status);
  p->exited_at = at;
  struct shim_container *c = p->c;
  if (p == &c->init && execs_running(c)) {
    p->exit_pending = true;
    /* In a private pid namespace the kernel already killed the execs; in
     * the host's (or a shared) one they would outlive init and hold its
     * exit back, so end them as the runc shim does. */
    const char *args[] = {"kill", "--all", c->id, "9", NULL};
    const int fds[3] = {-1, -1, -1};
    cleanup_error struct iob_error *kerr = NULL;
    if (shim_runc_run(&c->runc, args, fds, NULL, 0, NULL, &kerr) < 0)
      iob_debug("kill --all '%s': %s", c->id, kerr->msg);
    return;
  }
  complete_exit(p);
  if (p != &c->init && c->init.exit_pending && !execs_running(c))
    complete_exit(&c->init);
}

static int read_pidfile(const char *path, pid_t *pid, struct iob_error **err) {
  cleanup_close int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return iob_error(err, errno, "cannot open '%s'", path);
  char buf[PIDFILE_MAX];
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  if (n <= 0)
    return iob_error_code(err, IOB_CODE_INTERNAL, "cannot read '%s'", path);
  buf[n] = '\0';
  char *end;
  long v = strtol(buf, &end, 10);
  if (v <= 0 || v > 0x3fffffff)
    return iob_error_code(err, IOB_CODE_INTERNAL, "invalid pid in '%s'", path);
  *pid = (pid_t)v;
  return 0;
}

static void process_release(struct shim_process *p) {
  if (p->pid > 0 && !p->exited && !p->exit_pending)
    shim_reaper_unwatch(p->pid);
  /* Waits on a process deleted before it ran are answered, not leaked. */
  shim_process_wake(p);
  shim_io_free(p->io);
  p->io = NULL;
  free(p->exec_id);
  free(p->in);
  free(p->out);
  free(p->err);
  free(p->spec);
}

static void container_free(struct shim_container *c) {
  while (c->execs) {
    struct shim_process *e = c->execs;
    c->execs = e->next;
    process_release(e);
    free(e);
  }
  process_release(&c->init);
  shim_oom_free(c->oom);
  shim_runc_release(&c->runc);
  shim_options_release(&c->opts);
  free(c->id);
  free(c->bundle);
  free(c);
}

static void stdio_copy(struct shim_process *p, const struct shim_stdio *s) {
  p->in = xstrdup(s->in);
  p->out = xstrdup(s->out);
  p->err = xstrdup(s->err);
  p->terminal = s->terminal;
}

static struct shim_stdio stdio_of(const struct shim_process *p) {
  return (struct shim_stdio){p->in, p->out, p->err, p->terminal};
}

static int load_options(struct shim_container *c, const struct shim_create *r,
                        struct iob_error **err) {
  bool found = false;
  if (r->options_type &&
      shim_options_from_any(r->options_type, r->options, r->options_len, &c->opts, &found, err) < 0)
    return -1;
  if (!found) {
    /* `start` stored the options it got on stdin (containerd 2.3 sends
     * them only there). */
    if (shim_options_read(c->bundle, &c->opts, err) < 0)
      return -1;
  } else if (shim_options_write(c->bundle, &c->opts, err) < 0) {
    return -1;
  }
  if (c->opts.unknown_keys)
    iob_warn("'%s': unknown key in the runtime options file, ignored: %s", c->id,
             c->opts.unknown_keys);
  return shim_runc_init(&c->runc, &c->opts, c->svc->ns, c->bundle, err);
}

static void on_oom(void *data) {
  struct shim_container *c = data;
  Containerd__Events__TaskOOM e = CONTAINERD__EVENTS__TASK_OOM__INIT;
  e.container_id = c->id;
  shim_events_publish("/tasks/oom", &e.base);
}

/* Run `runc create|exec` with stdio and maybe a console socket; then read
 * the pid file, watch the pid and start copying. */
static int run_with_io(struct shim_process *p, const char *const *args_head, size_t n_head,
                       const char *pidfile, struct iob_error **err) {
  struct shim_container *c = p->c;
  struct shim_stdio st = stdio_of(p);
  struct shim_io_params iop = {&st, c->opts.io_uid, c->opts.io_gid, c->id, c->svc->ns};
  int fds[3];
  if (shim_io_new(c->svc->loop, &iop, &p->io, fds, err) < 0)
    return -1;
  struct shim_console_socket *cs = NULL;
  if (p->terminal && shim_console_socket_new(&cs, err) < 0)
    return -1;
  const char *args[24];
  size_t n = 0;
  for (size_t i = 0; i < n_head; i++)
    args[n++] = args_head[i];
  if (cs) {
    args[n++] = "--console-socket";
    args[n++] = shim_console_socket_path(cs);
  }
  args[n++] = c->id;
  args[n] = NULL;
  int master = -1;
  int r = shim_runc_run(&c->runc, args, fds, NULL, 0, NULL, err);
  if (r == 0 && cs)
    r = shim_console_socket_recv(cs, CONSOLE_TIMEOUT_MS, &master, err);
  shim_console_socket_free(cs);
  if (r == 0)
    r = read_pidfile(pidfile, &p->pid, err);
  if (r == 0)
    r = shim_io_start(p->io, master, err);
  else if (master >= 0)
    close(master);
  if (r == 0)
    r = shim_reaper_watch(p->pid, on_exit_reaped, p, err);
  return r;
}

static int runc_create(struct shim_container *c, struct iob_error **err) {
  cleanup_free char *pidfile = NULL;
  if (asprintf(&pidfile, "%s/init.pid", c->bundle) < 0)
    abort();
  const char *head[8];
  size_t n = 0;
  head[n++] = "create";
  head[n++] = "--bundle";
  head[n++] = c->bundle;
  head[n++] = "--pid-file";
  head[n++] = pidfile;
  if (c->opts.no_pivot_root)
    head[n++] = "--no-pivot";
  if (c->opts.no_new_keyring)
    head[n++] = "--no-new-keyring";
  return run_with_io(&c->init, head, n, pidfile, err);
}

static int mount_rootfs(struct shim_container *c, const struct shim_create *r,
                        struct iob_error **err) {
  if (r->n_mounts == 0)
    return 0;
  cleanup_free char *target = NULL;
  if (asprintf(&target, "%s/rootfs", c->bundle) < 0)
    abort();
  mkdir(target, 0711);
  if (shim_mount_all(r->mounts, r->n_mounts, target, err) < 0)
    return -1;
  c->mounted = true;
  return 0;
}

static void unmount_rootfs(struct shim_container *c) {
  if (!c->mounted)
    return;
  cleanup_free char *target = NULL;
  if (asprintf(&target, "%s/rootfs", c->bundle) < 0)
    abort();
  shim_unmount_all(target);
  c->mounted = false;
}

static void publish_create(struct shim_container *c, const struct shim_create *r) {
  Containerd__Events__TaskCreate e = CONTAINERD__EVENTS__TASK_CREATE__INIT;
  Containerd__Events__TaskIO io = CONTAINERD__EVENTS__TASK_IO__INIT;
  io.stdin = c->init.in;
  io.stdout = c->init.out;
  io.stderr = c->init.err;
  io.terminal = c->init.terminal;
  e.container_id = c->id;
  e.bundle = c->bundle;
  e.io = &io;
  e.pid = (uint32_t)c->init.pid;
  /* The rootfs mounts are left out: containerd does not use them from the
   * event, and they would only make it larger. */
  (void)r;
  shim_events_publish("/tasks/create", &e.base);
}

int shim_container_create(struct shim_service *s, const struct shim_create *r,
                          struct shim_container **out, struct iob_error **err) {
  if (shim_container_find(s, r->id))
    return iob_error_code(err, IOB_CODE_ALREADY_EXISTS, "container '%s' already exists", r->id);
  struct shim_container *c = calloc(1, sizeof(*c));
  if (c == NULL)
    return iob_error(err, ENOMEM, "cannot allocate container");
  c->svc = s;
  c->id = xstrdup(r->id);
  c->bundle = xstrdup(r->bundle);
  c->init.c = c;
  c->init.status = SHIM_STATUS_CREATED;
  stdio_copy(&c->init, &r->stdio);
  if (load_options(c, r, err) < 0 || shim_hook_inject(c->bundle, err) < 0 ||
      shim_admission_check(c->bundle, err) < 0 || mount_rootfs(c, r, err) < 0 ||
      runc_create(c, err) < 0) {
    unmount_rootfs(c);
    container_free(c);
    return -1;
  }
  cleanup_error struct iob_error *oerr = NULL;
  if (shim_oom_watch(s->loop, c->init.pid, on_oom, c, &c->oom, &oerr) < 0)
    iob_warn("no OOM events will be reported for '%s': %s", c->id, oerr->msg);
  c->next = s->containers;
  s->containers = c;
  struct shim_admission_req ar = {c->id, s->ns, c->bundle, c->init.pid, 0};
  shim_admission_register(s->loop, &ar);
  publish_create(c, r);
  *out = c;
  return 0;
}

static int exec_spec_file(struct shim_process *p, char **path, struct iob_error **err) {
  const char *dir = getenv("XDG_RUNTIME_DIR");
  if (dir == NULL || *dir != '/')
    dir = "/tmp";
  if (asprintf(path, "%s/runc-process%sXXXXXX", dir, "") < 0)
    abort();
  cleanup_close int fd = mkostemp(*path, O_CLOEXEC);
  if (fd < 0)
    return iob_error(err, errno, "cannot create exec spec file");
  size_t n = strlen(p->spec);
  if (write(fd, p->spec, n) != (ssize_t)n) {
    unlink(*path);
    return iob_error(err, errno ? errno : EIO, "cannot write exec spec file");
  }
  return 0;
}

static void publish_started(struct shim_process *p) {
  if (p->exec_id) {
    Containerd__Events__TaskExecStarted e = CONTAINERD__EVENTS__TASK_EXEC_STARTED__INIT;
    e.container_id = p->c->id;
    e.exec_id = p->exec_id;
    e.pid = (uint32_t)p->pid;
    shim_events_publish("/tasks/exec-started", &e.base);
    return;
  }
  Containerd__Events__TaskStart e = CONTAINERD__EVENTS__TASK_START__INIT;
  e.container_id = p->c->id;
  e.pid = (uint32_t)p->pid;
  shim_events_publish("/tasks/start", &e.base);
}

static int exec_start(struct shim_process *p, struct iob_error **err) {
  struct shim_container *c = p->c;
  if (c->init.exited || c->init.exit_pending || c->init.status != SHIM_STATUS_RUNNING)
    return iob_error_code(err, IOB_CODE_FAILED_PRECONDITION,
                          "container '%s' is not running", c->id);
  cleanup_free char *spec = NULL, *pidfile = NULL;
  if (exec_spec_file(p, &spec, err) < 0)
    return -1;
  if (asprintf(&pidfile, "%s/%s.pid", c->bundle, p->exec_id) < 0)
    abort();
  const char *head[] = {"exec", "--process", spec, "--detach", "--pid-file", pidfile};
  int r = run_with_io(p, head, IOB_ARRAY_SIZE(head), pidfile, err);
  unlink(spec);
  return r;
}

int shim_process_start(struct shim_process *p, struct iob_error **err) {
  if (p->status != SHIM_STATUS_CREATED || p->exited)
    return iob_error_code(err, IOB_CODE_FAILED_PRECONDITION, "process is not in created state");
  if (p->exec_id) {
    if (exec_start(p, err) < 0) {
      /* Never ran: stopped with runc's failure status, so Delete can
       * remove it (no exit event: there was no start). */
      if (p->pid > 0)
        shim_reaper_unwatch(p->pid);
      p->status = SHIM_STATUS_STOPPED;
      p->exited = true;
      p->exit_status = 255;
      p->exited_at = shim_time_now();
      /* Close our ends of the client's FIFOs, or it waits for EOF forever. */
      shim_io_free(p->io);
      p->io = NULL;
      shim_process_wake(p);
      return -1;
    }
  } else {
    const char *args[] = {"start", p->c->id, NULL};
    const int fds[3] = {-1, -1, -1};
    if (shim_runc_run(&p->c->runc, args, fds, NULL, 0, NULL, err) < 0)
      return -1;
  }
  /* The process may have been reaped already (early exit): keep STOPPED. */
  if (!p->exited)
    p->status = SHIM_STATUS_RUNNING;
  publish_started(p);
  return 0;
}

static bool already_finished(const struct iob_error *e) {
  return e && (strstr(e->msg, "not running") || strstr(e->msg, "process already finished") ||
               strstr(e->msg, "no such process") || strstr(e->msg, "does not exist"));
}

int shim_process_kill(struct shim_process *p, uint32_t sig, bool all, struct iob_error **err) {
  if (sig == 0 || sig > 64)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid signal %u", sig);
  if ((p->exited || p->exit_pending) && !(all && p->exec_id == NULL))
    return iob_error_code(err, IOB_CODE_NOT_FOUND, "process already finished");
  if (p->exec_id) {
    if (p->pid <= 0)
      return iob_error_code(err, IOB_CODE_NOT_FOUND, "process not started");
    if (kill(p->pid, (int)sig) < 0)
      return iob_error_code(err, IOB_CODE_NOT_FOUND, "process already finished");
    return 0;
  }
  char signum[16];
  snprintf(signum, sizeof(signum), "%u", sig);
  const char *with_all[] = {"kill", "--all", p->c->id, signum, NULL};
  const char *without[] = {"kill", p->c->id, signum, NULL};
  const int fds[3] = {-1, -1, -1};
  if (shim_runc_run(&p->c->runc, all ? with_all : without, fds, NULL, 0, NULL, err) < 0) {
    if (already_finished(*err)) {
      iob_error_release(err);
      return iob_error_code(err, IOB_CODE_NOT_FOUND, "process already finished");
    }
    return -1;
  }
  return 0;
}

static void remove_exec(struct shim_container *c, struct shim_process *p) {
  for (struct shim_process **pp = &c->execs; *pp; pp = &(*pp)->next) {
    if (*pp == p) {
      *pp = p->next;
      break;
    }
  }
  process_release(p);
  free(p);
}

static void remove_container(struct shim_container *c) {
  struct shim_service *s = c->svc;
  for (struct shim_container **pp = &s->containers; *pp; pp = &(*pp)->next) {
    if (*pp == c) {
      *pp = c->next;
      break;
    }
  }
  container_free(c);
}

static void publish_delete(struct shim_process *p) {
  Containerd__Events__TaskDelete e = CONTAINERD__EVENTS__TASK_DELETE__INIT;
  Google__Protobuf__Timestamp ts = ts_of(p->exited_at);
  e.container_id = p->c->id;
  e.pid = (uint32_t)p->pid;
  e.exit_status = p->exit_status;
  e.exited_at = &ts;
  shim_events_publish("/tasks/delete", &e.base);
}

int shim_process_delete(struct shim_process *p, uint32_t *pid, uint32_t *status,
                        struct shim_time *at, struct iob_error **err) {
  struct shim_container *c = p->c;
  bool started = p->status != SHIM_STATUS_CREATED;
  if (started && !p->exited)
    return iob_error_code(err, IOB_CODE_FAILED_PRECONDITION, "cannot delete a running process");
  if (p->exec_id == NULL && execs_running(c))
    return iob_error_code(err, IOB_CODE_FAILED_PRECONDITION, "container has running execs");
  *pid = (uint32_t)p->pid;
  *status = p->exit_status;
  *at = p->exited_at;
  if (p->exec_id) {
    remove_exec(c, p);
    return 0;
  }
  const char *args[] = {"delete", c->id, NULL};
  const int fds[3] = {-1, -1, -1};
  if (shim_runc_run(&c->runc, args, fds, NULL, 0, NULL, err) < 0 && !already_finished(*err))
    return -1;
  iob_error_release(err);
  unmount_rootfs(c);
  if (!started)
    *at = shim_time_now();
  publish_delete(p);
  remove_container(c);
  return 0;
}

int shim_exec_add(struct shim_container *c, const char *exec_id, const struct shim_stdio *stdio,
                  const char *spec, size_t spec_len, struct iob_error **err) {
  if (c->init.exited || c->init.exit_pending)
    return iob_error_code(err, IOB_CODE_FAILED_PRECONDITION, "container '%s' has exited", c->id);
  for (struct shim_process *e = c->execs; e; e = e->next)
    if (!strcmp(e->exec_id, exec_id))
      return iob_error_code(err, IOB_CODE_ALREADY_EXISTS, "id '%s' already in use", exec_id);
  json_error_t je;
  json_t *j = json_loadb(spec, spec_len, 0, &je);
  if (!json_is_object(j)) {
    json_decref(j);
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid process spec: %s", je.text);
  }
  json_decref(j);
  struct shim_process *p = calloc(1, sizeof(*p));
  if (p == NULL || (p->spec = strndup(spec, spec_len)) == NULL)
    abort();
  p->c = c;
  p->exec_id = xstrdup(exec_id);
  p->status = SHIM_STATUS_CREATED;
  stdio_copy(p, stdio);
  p->next = c->execs;
  c->execs = p;
  Containerd__Events__TaskExecAdded e = CONTAINERD__EVENTS__TASK_EXEC_ADDED__INIT;
  e.container_id = c->id;
  e.exec_id = p->exec_id;
  shim_events_publish("/tasks/exec-added", &e.base);
  return 0;
}

int shim_container_pause(struct shim_container *c, bool pause, struct iob_error **err) {
  if (c->init.exited || c->init.exit_pending)
    return iob_error_code(err, IOB_CODE_FAILED_PRECONDITION, "container '%s' has exited", c->id);
  const char *args[] = {pause ? "pause" : "resume", c->id, NULL};
  const int fds[3] = {-1, -1, -1};
  if (shim_runc_run(&c->runc, args, fds, NULL, 0, NULL, err) < 0)
    return -1;
  c->init.status = pause ? SHIM_STATUS_PAUSED : SHIM_STATUS_RUNNING;
  Containerd__Events__TaskPaused e = CONTAINERD__EVENTS__TASK_PAUSED__INIT;
  e.container_id = c->id;
  /* TaskPaused and TaskResumed have the same shape; only the descriptor
   * (and so the type_url) differs. */
  if (!pause)
    e.base.descriptor = &containerd__events__task_resumed__descriptor;
  shim_events_publish(pause ? "/tasks/paused" : "/tasks/resumed", &e.base);
  return 0;
}

int shim_container_update(struct shim_container *c, const char *json, size_t len,
                          struct iob_error **err) {
  json_error_t je;
  json_t *j = json_loadb(json, len, 0, &je);
  if (!json_is_object(j)) {
    json_decref(j);
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid resources: %s", je.text);
  }
  json_decref(j);
  const char *args[] = {"update", "--resources", "-", c->id, NULL};
  const int fds[3] = {-1, -1, -1};
  return shim_runc_run(&c->runc, args, fds, json, len, NULL, err);
}

int shim_container_pids(struct shim_container *c, pid_t **pids, size_t *n,
                        struct iob_error **err) {
  const char *args[] = {"ps", "--format", "json", c->id, NULL};
  const int fds[3] = {-1, -1, -1};
  cleanup_free char *out = NULL;
  if (shim_runc_run(&c->runc, args, fds, NULL, 0, &out, err) < 0)
    return -1;
  json_error_t je;
  json_t *j = json_loads(out, 0, &je);
  if (!json_is_array(j) && !json_is_null(j)) {
    json_decref(j);
    return iob_error_code(err, IOB_CODE_INTERNAL, "cannot parse 'runc ps' output: %s", je.text);
  }
  size_t len = json_is_array(j) ? json_array_size(j) : 0;
  *pids = calloc(len ? len : 1, sizeof(pid_t));
  if (*pids == NULL)
    abort();
  *n = 0;
  for (size_t i = 0; i < len; i++) {
    json_int_t v = json_integer_value(json_array_get(j, i));
    if (v > 0)
      (*pids)[(*n)++] = (pid_t)v;
  }
  json_decref(j);
  return 0;
}
