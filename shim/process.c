// SPDX-License-Identifier: Apache-2.0
/* Container and process lifecycle: a state machine per process (created,
 * running, paused, stopped, deleted) as containerd's runc shim keeps it
 * (pkg/process init_state.go, exec_state.go), driven by runc calls that run
 * beside the loop: an operation starts runc and returns; runc's exit (from
 * the reaper) finishes it.  One operation per process at a time, the next
 * ones queued behind it.  Exits are reported in the order containerd
 * requires: a process's after its start, an init's after all its execs'. */
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
#include "common/xalloc.h"
#include "containerd/types/task.pb-c.h"
#include "shim/admission.h"
#include "shim/console.h"
#include "shim/oom.h"
#include "shim/process.h"
#include "shim/reaper.h"
#include "shim/spawn.h"

/* runc has exited when the console is read: the master is queued on the
 * socket already, or it never comes. */
#define CONSOLE_TIMEOUT_MS 1000
#define PIDFILE_MAX 64

#define BIT(x) (1u << (x))

static const char *const state_names[] = {
    [SHIM_STATE_CREATED] = "created", [SHIM_STATE_RUNNING] = "running",
    [SHIM_STATE_PAUSED] = "paused",   [SHIM_STATE_STOPPED] = "stopped",
    [SHIM_STATE_DELETED] = "deleted",
};

static const char *const op_names[] = {
    [SHIM_OP_CREATE] = "create", [SHIM_OP_START] = "start",   [SHIM_OP_KILL] = "kill",
    [SHIM_OP_PAUSE] = "pause",   [SHIM_OP_RESUME] = "resume", [SHIM_OP_UPDATE] = "update",
    [SHIM_OP_PIDS] = "list",     [SHIM_OP_DELETE] = "delete",
};

/* The state changes containerd's transition() allows, per state. */
static const unsigned next_states[] = {
    [SHIM_STATE_CREATED] =
        BIT(SHIM_STATE_RUNNING) | BIT(SHIM_STATE_STOPPED) | BIT(SHIM_STATE_DELETED),
    [SHIM_STATE_RUNNING] = BIT(SHIM_STATE_STOPPED) | BIT(SHIM_STATE_PAUSED),
    [SHIM_STATE_PAUSED] = BIT(SHIM_STATE_RUNNING) | BIT(SHIM_STATE_STOPPED),
    [SHIM_STATE_STOPPED] = BIT(SHIM_STATE_DELETED),
    [SHIM_STATE_DELETED] = 0,
};

/* The operations each state accepts (the others fail, as the state's
 * methods do in containerd).  Pause, resume, update and ps are the
 * container's: only an init takes them. */
static const unsigned init_ops[] = {
    [SHIM_STATE_CREATED] = BIT(SHIM_OP_START) | BIT(SHIM_OP_KILL) | BIT(SHIM_OP_UPDATE) |
                           BIT(SHIM_OP_PIDS) | BIT(SHIM_OP_DELETE),
    [SHIM_STATE_RUNNING] =
        BIT(SHIM_OP_KILL) | BIT(SHIM_OP_PAUSE) | BIT(SHIM_OP_UPDATE) | BIT(SHIM_OP_PIDS),
    [SHIM_STATE_PAUSED] =
        BIT(SHIM_OP_KILL) | BIT(SHIM_OP_RESUME) | BIT(SHIM_OP_UPDATE) | BIT(SHIM_OP_PIDS),
    [SHIM_STATE_STOPPED] = BIT(SHIM_OP_KILL) | BIT(SHIM_OP_PIDS) | BIT(SHIM_OP_DELETE),
    [SHIM_STATE_DELETED] = 0,
};
static const unsigned exec_ops[] = {
    [SHIM_STATE_CREATED] = BIT(SHIM_OP_START) | BIT(SHIM_OP_KILL) | BIT(SHIM_OP_DELETE),
    [SHIM_STATE_RUNNING] = BIT(SHIM_OP_KILL),
    [SHIM_STATE_PAUSED] = BIT(SHIM_OP_KILL),
    [SHIM_STATE_STOPPED] = BIT(SHIM_OP_KILL) | BIT(SHIM_OP_DELETE),
    [SHIM_STATE_DELETED] = 0,
};

static bool is_init(const struct shim_process *p) {
  return p == &p->c->init;
}

/* The one place a process's state changes: only the moves containerd's
 * state machine makes. */
static int transition(struct shim_process *p, enum shim_state to, struct iob_error **err) {
  if (!(next_states[p->state] & BIT(to)))
    return iob_error_code(err, IOB_CODE_FAILED_PRECONDITION,
                          "invalid state transition '%s' to '%s'", state_names[p->state],
                          state_names[to]);
  p->state = to;
  return 0;
}

/* Whether op may run in p's state: "cannot start a stopped process". */
static int check_op(const struct shim_process *p, enum shim_op_kind k, struct iob_error **err) {
  const unsigned *ok = is_init(p) ? init_ops : exec_ops;
  if (ok[p->state] & BIT(k))
    return 0;
  bool gone = p->state == SHIM_STATE_DELETED && (k == SHIM_OP_KILL || k == SHIM_OP_DELETE);
  return iob_error_code(err, gone ? IOB_CODE_NOT_FOUND : IOB_CODE_FAILED_PRECONDITION,
                        "cannot %s a %s process", op_names[k], state_names[p->state]);
}

struct shim_container *shim_container_find(struct shim_containers *l, const char *id) {
  for (struct shim_container *c = l->head; c; c = c->next)
    if (!strcmp(c->id, id))
      return c->creating ? NULL : c;
  return NULL;
}

struct shim_process *shim_container_creating(struct shim_containers *l, const char *id) {
  for (struct shim_container *c = l->head; c; c = c->next)
    if (!strcmp(c->id, id))
      return c->creating ? &c->init : NULL;
  return NULL;
}

int shim_process_find(struct shim_containers *l, const char *id, const char *exec_id,
                      struct shim_process **pp, struct iob_error **err) {
  struct shim_container *c = id ? shim_container_find(l, id) : NULL;
  if (c == NULL)
    return iob_error_code(err, IOB_CODE_NOT_FOUND, "container not created");
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

bool shim_containers_empty(const struct shim_containers *l) {
  return l->head == NULL;
}

bool shim_process_exited(const struct shim_process *p) {
  return p->state == SHIM_STATE_STOPPED || p->state == SHIM_STATE_DELETED;
}

int shim_process_status(const struct shim_process *p) {
  if (p->busy && p->busy->kind == SHIM_OP_PAUSE)
    return CONTAINERD__V1__TYPES__STATUS__PAUSING;
  switch (p->state) {
  case SHIM_STATE_CREATED:
    return CONTAINERD__V1__TYPES__STATUS__CREATED;
  case SHIM_STATE_RUNNING:
    return CONTAINERD__V1__TYPES__STATUS__RUNNING;
  case SHIM_STATE_PAUSED:
    return CONTAINERD__V1__TYPES__STATUS__PAUSED;
  default:
    return CONTAINERD__V1__TYPES__STATUS__STOPPED;
  }
}

void shim_process_wait(struct shim_process *p, struct shim_waiter *w) {
  w->next = p->waiters;
  p->waiters = w;
}

void shim_process_unwait(struct shim_process *p, struct shim_waiter *w) {
  for (struct shim_waiter **pp = &p->waiters; *pp; pp = &(*pp)->next) {
    if (*pp == w) {
      *pp = w->next;
      return;
    }
  }
}

static void wake(struct shim_process *p) {
  while (p->waiters) {
    struct shim_waiter *w = p->waiters;
    p->waiters = w->next;
    w->fn(w, p);
  }
}

/* ---- runc calls nobody waits for ---- */

static void runc_detached(struct shim_container *c, const char *const *args) {
  const int fds[3] = {-1, -1, -1};
  cleanup_error struct iob_error *err = NULL;
  if (shim_runc_start(&c->runc, args, fds, NULL, 0, false, NULL, NULL, &err) < 0)
    iob_debug("%s '%s': %s", args[0], c->id, err->msg);
}

/* ---- exits ---- */

static bool exec_running(const struct shim_process *e) {
  return e->state == SHIM_STATE_RUNNING || (e->busy && e->busy->kind == SHIM_OP_START);
}

static bool execs_running(const struct shim_container *c) {
  for (const struct shim_process *e = c->execs; e; e = e->next)
    if (exec_running(e))
      return true;
  return false;
}

static void complete_exit(struct shim_process *p) {
  struct shim_container *c = p->c;
  p->exit_pending = false;
  if (p->state == SHIM_STATE_PAUSED) {
    /* A frozen cgroup would keep what is left of it frozen (containerd's
     * pausedState.SetExited resumes too). */
    const char *args[] = {"resume", c->id, NULL};
    runc_detached(c, args);
  }
  cleanup_error struct iob_error *err = NULL;
  if (transition(p, SHIM_STATE_STOPPED, &err) < 0) {
    iob_warn("'%s': %s", c->id, err->msg);
    return;
  }
  if (c->list->observer.exited)
    c->list->observer.exited(c->list->observer.data, p);
  wake(p);
}

/* Make a reaped exit visible once nothing holds it back: the operation in
 * flight on p (its start is reported first) or, for an init, running
 * execs (their exits are reported first). */
static void settle(struct shim_process *p) {
  if (p->busy || !p->reaped || shim_process_exited(p))
    return;
  struct shim_container *c = p->c;
  if (is_init(p) && execs_running(c)) {
    if (!p->exit_pending) {
      p->exit_pending = true;
      /* In a private pid namespace the kernel already killed the execs; in
       * the host's (or a shared) one they would outlive init and hold its
       * exit back, so end them as the runc shim does. */
      const char *args[] = {"kill", "--all", c->id, "9", NULL};
      runc_detached(c, args);
    }
    return;
  }
  complete_exit(p);
  if (!is_init(p))
    settle(&c->init);
}

static void on_exit_reaped(pid_t pid, int status, struct shim_time at, void *data) {
  struct shim_process *p = data;
  (void)pid;
  p->reaped = true;
  p->exit_status = shim_exit_code(status);
  p->exited_at = at;
  settle(p);
}

/* ---- operations: queue, run, finish ---- */

static void run_op(struct shim_process *p);

static void fail_op(struct shim_op *op, struct iob_error **err) {
  op->done(op, err);
  iob_error_release(err);
}

/* The operation in flight ended (err NULL: it did what it should); the
 * next one runs, or a held-back exit is reported. */
static void finish_op(struct shim_process *p, struct iob_error **err) {
  struct shim_op *op = p->busy;
  p->busy = NULL;
  op->done(op, err);
  iob_error_release(err);
  settle(p);
  if (!p->busy && p->queue)
    run_op(p);
}

/* A Delete or a SIGKILL does not wait for ever behind a runc that hangs (a
 * hook that never returns, a wedged runtime): the runc of the create,
 * start or exec in flight is killed with its process group (what it
 * started, runc init included), that operation fails, and op runs next.
 * The shim sets no time limit of its own on runc, as containerd's runc
 * shim does not: the caller's deadline is containerd's, and when it gives
 * up it deletes (Create) or kills (Start) the task. */
static void cut_short(struct shim_process *p, const struct shim_op *op) {
  if (p->busy == NULL || p->runc_pgid <= 0 || p->runc_killed)
    return;
  if (op->kind != SHIM_OP_DELETE && !(op->kind == SHIM_OP_KILL && op->signal == SIGKILL))
    return;
  iob_warn("'%s': the runc of its %s still runs; killing it for a %s", p->c->id,
           op_names[p->busy->kind], op->kind == SHIM_OP_DELETE ? "Delete" : "SIGKILL");
  if (kill(-p->runc_pgid, SIGKILL) == 0)
    p->runc_killed = true;
}

/* The runc of the operation in flight returned: if it was killed, the
 * operation's error says why. */
static void runc_returned(struct shim_process *p, struct iob_error **err) {
  bool killed = p->runc_killed;
  p->runc_pgid = 0;
  p->runc_killed = false;
  if (!killed || *err == NULL)
    return;
  enum shim_op_kind k = p->busy ? p->busy->kind : SHIM_OP_CREATE;
  iob_error_release(err);
  iob_error_code(err, IOB_CODE_ABORTED,
                 "%s of '%s' cut short: its runc was killed by a Delete or SIGKILL", op_names[k],
                 p->c->id);
}

void shim_process_submit(struct shim_process *p, struct shim_op *op) {
  op->p = p;
  op->next = NULL;
  cut_short(p, op);
  if (p->busy == NULL) {
    p->busy = op;
    run_op(p);
    return;
  }
  struct shim_op **pp = &p->queue;
  while (*pp)
    pp = &(*pp)->next;
  *pp = op;
}

/* Operations still waiting when their process goes away. */
static void fail_queue(struct shim_process *p) {
  while (p->queue) {
    struct shim_op *op = p->queue;
    p->queue = op->next;
    cleanup_error struct iob_error *err = NULL;
    if (check_op(p, op->kind, &err) == 0)
      iob_error_code(&err, IOB_CODE_NOT_FOUND, "cannot %s a deleted process", op_names[op->kind]);
    fail_op(op, &err);
  }
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
  if (p->pid > 0 && !p->reaped)
    shim_reaper_unwatch(p->pid);
  if (p->state != SHIM_STATE_DELETED)
    transition(p, SHIM_STATE_DELETED, NULL);
  fail_queue(p);
  /* Waits on a process deleted before it ran are answered, not leaked. */
  wake(p);
  shim_io_free(p->io);
  p->io = NULL;
  shim_console_socket_free(p->console);
  if (p->specfile)
    unlink(p->specfile);
  free(p->specfile);
  free(p->pidfile);
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
  shim_ctr_info_release(&c->info);
  free(c);
}

static void remove_container(struct shim_container *c) {
  for (struct shim_container **pp = &c->list->head; *pp; pp = &(*pp)->next) {
    if (*pp == c) {
      *pp = c->next;
      break;
    }
  }
  container_free(c);
}

static void stdio_copy(struct shim_process *p, const struct shim_stdio *s) {
  p->in = xstrdup(s->in ? s->in : "");
  p->out = xstrdup(s->out ? s->out : "");
  p->err = xstrdup(s->err ? s->err : "");
  p->terminal = s->terminal;
}

static struct shim_stdio stdio_of(const struct shim_process *p) {
  return (struct shim_stdio){p->in, p->out, p->err, p->terminal};
}

/* Start `runc create|exec` with the process's stdio and maybe a console
 * socket; done runs when runc exited. */
static int start_with_io(struct shim_process *p, const char *const *args_head, size_t n_head,
                         shim_runc_fn done, struct iob_error **err) {
  struct shim_container *c = p->c;
  struct shim_stdio st = stdio_of(p);
  struct shim_io_params iop = {&st, c->opts.io_uid, c->opts.io_gid, c->id, c->list->ns};
  int fds[3];
  if (shim_io_new(c->list->loop, &iop, &p->io, fds, err) < 0)
    return -1;
  if (p->terminal && shim_console_socket_new(&p->console, err) < 0)
    return -1;
  const char *args[24];
  size_t n = 0;
  for (size_t i = 0; i < n_head; i++)
    args[n++] = args_head[i];
  if (p->console) {
    args[n++] = "--console-socket";
    args[n++] = shim_console_socket_path(p->console);
  }
  args[n++] = c->id;
  args[n] = NULL;
  return shim_runc_start_killable(&c->runc, args, fds, done, p, &p->runc_pgid, err);
}

/* runc create|exec returned successfully: the pty, the pid, the copying,
 * the exit watch. */
static int started_with_io(struct shim_process *p, struct iob_error **err) {
  int master = -1;
  int r = 0;
  if (p->console)
    r = shim_console_socket_recv(p->console, CONSOLE_TIMEOUT_MS, &master, err);
  shim_console_socket_free(p->console);
  p->console = NULL;
  if (r == 0)
    r = read_pidfile(p->pidfile, &p->pid, err);
  if (r == 0)
    r = shim_io_start(p->io, master, err);
  else if (master >= 0)
    close(master);
  /* An exit already reaped runs on_exit_reaped now; p->busy holds it back
   * until the operation has been reported. */
  if (r == 0)
    r = shim_reaper_watch(p->pid, on_exit_reaped, p, err);
  return r;
}

/* ---- create ---- */

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
  shim_runc_init(&c->runc, &c->opts, c->list->ns, c->bundle);
  return 0;
}

/* config.json, read once and left as it is: the annotations are checked
 * and kept for the agent (Register after runc create, Admit at Start). */
static int read_spec(struct shim_container *c, struct iob_error **err) {
  struct iob_oci_config cfg;
  if (iob_oci_config_load(c->bundle, &cfg, err) < 0)
    return -1;
  int r = shim_ctr_info_of(&cfg, &c->info, err);
  iob_oci_config_release(&cfg);
  return r;
}

static void on_oom(void *data) {
  struct shim_container *c = data;
  if (c->list->observer.oom)
    c->list->observer.oom(c->list->observer.data, c);
}

static int mount_rootfs(struct shim_container *c, const struct shim_create *r,
                        struct iob_error **err) {
  if (r->n_mounts == 0)
    return 0;
  cleanup_free char *target = xasprintf("%s/rootfs", c->bundle);
  mkdir(target, 0711);
  if (shim_mount_all(r->mounts, r->n_mounts, target, err) < 0)
    return -1;
  c->mounted = true;
  return 0;
}

static void unmount_rootfs(struct shim_container *c) {
  if (!c->mounted)
    return;
  cleanup_free char *target = xasprintf("%s/rootfs", c->bundle);
  shim_unmount_all(target);
  c->mounted = false;
}

static void create_failed(struct shim_container *c, struct iob_error **err) {
  struct shim_op *op = c->init.busy;
  c->init.busy = NULL;
  unmount_rootfs(c);
  remove_container(c);
  op->p = NULL;
  fail_op(op, err);
}

/* The agent has heard of it (or could not be asked): Create is answered. */
static void registered(void *data) {
  struct shim_process *p = data;
  p->c->creating = false;
  finish_op(p, &(struct iob_error *){NULL});
}

static void on_created(void *data, char **out, struct iob_error **err) {
  struct shim_process *p = data;
  struct shim_container *c = p->c;
  (void)out;
  runc_returned(p, err);
  if (*err || started_with_io(p, err) < 0) {
    create_failed(c, err);
    return;
  }
  cleanup_error struct iob_error *oerr = NULL;
  if (shim_oom_watch(c->list->loop, p->pid, on_oom, c, &c->oom, &oerr) < 0)
    iob_warn("no OOM events will be reported for '%s': %s", c->id, oerr->msg);
  /* Here, and not in a hook runc would fork and exec for it: the
   * namespaces and cgroup exist, the init waits before exec, and the
   * create operation stays in flight (a Delete queues behind it) until the
   * agent answered, so the agent knows the container before Create, and
   * so Start, is answered. */
  struct shim_admission_req ar = {
      .id = c->id, .ns = c->list->ns, .bundle = c->bundle, .info = &c->info, .pid = p->pid};
  shim_admission_register(c->list->loop, &ar, registered, p);
}

static int runc_create(struct shim_container *c, struct iob_error **err) {
  c->init.pidfile = xasprintf("%s/init.pid", c->bundle);
  const char *head[8];
  size_t n = 0;
  head[n++] = "create";
  head[n++] = "--bundle";
  head[n++] = c->bundle;
  head[n++] = "--pid-file";
  head[n++] = c->init.pidfile;
  if (c->opts.no_pivot_root)
    head[n++] = "--no-pivot";
  if (c->opts.no_new_keyring)
    head[n++] = "--no-new-keyring";
  return start_with_io(&c->init, head, n, on_created, err);
}

void shim_container_create(struct shim_containers *l, const struct shim_create *r,
                           struct shim_op *op) {
  cleanup_error struct iob_error *err = NULL;
  op->kind = SHIM_OP_CREATE;
  op->p = NULL;
  for (struct shim_container *o = l->head; o; o = o->next) {
    if (!strcmp(o->id, r->id)) {
      iob_error_code(&err, IOB_CODE_ALREADY_EXISTS, "container '%s' already exists", r->id);
      fail_op(op, &err);
      return;
    }
  }
  struct shim_container *c = xcalloc(1, sizeof(*c));
  c->list = l;
  c->id = xstrdup(r->id);
  c->bundle = xstrdup(r->bundle);
  c->creating = true;
  c->init.c = c;
  c->init.state = SHIM_STATE_CREATED;
  c->init.busy = op;
  op->p = &c->init;
  stdio_copy(&c->init, &r->stdio);
  c->next = l->head;
  l->head = c;
  if (load_options(c, r, &err) < 0 || read_spec(c, &err) < 0 || mount_rootfs(c, r, &err) < 0 ||
      runc_create(c, &err) < 0)
    create_failed(c, &err);
}

/* ---- start ---- */

static void on_started(void *data, char **out, struct iob_error **err) {
  struct shim_process *p = data;
  (void)out;
  runc_returned(p, err);
  if (*err == NULL)
    transition(p, SHIM_STATE_RUNNING, err);
  finish_op(p, err);
}

static void exec_failed(struct shim_process *p, struct iob_error **err) {
  /* Never ran: stopped with runc's failure status, so Delete can remove it
   * (no exit event: there was no start). */
  if (p->pid > 0 && !p->reaped)
    shim_reaper_unwatch(p->pid);
  p->reaped = true;
  p->exit_status = 255;
  p->exited_at = shim_time_now();
  transition(p, SHIM_STATE_STOPPED, NULL);
  /* Close our ends of the client's FIFOs, or it waits for EOF forever. */
  shim_io_free(p->io);
  p->io = NULL;
  shim_console_socket_free(p->console);
  p->console = NULL;
  struct shim_op *op = p->busy;
  p->busy = NULL;
  fail_op(op, err);
  wake(p);
  settle(&p->c->init);
  if (p->queue)
    run_op(p);
}

static void on_exec_started(void *data, char **out, struct iob_error **err) {
  struct shim_process *p = data;
  (void)out;
  runc_returned(p, err);
  unlink(p->specfile);
  free(p->specfile);
  p->specfile = NULL;
  if (*err || started_with_io(p, err) < 0) {
    exec_failed(p, err);
    return;
  }
  on_started(p, out, err);
}

static int exec_spec_file(struct shim_process *p, struct iob_error **err) {
  const char *dir = getenv("XDG_RUNTIME_DIR");
  if (dir == NULL || *dir != '/')
    dir = "/tmp";
  p->specfile = xasprintf("%s/runc-processXXXXXX", dir);
  cleanup_close int fd = mkostemp(p->specfile, O_CLOEXEC);
  if (fd < 0) {
    free(p->specfile);
    p->specfile = NULL;
    return iob_error(err, errno, "cannot create exec spec file");
  }
  size_t n = strlen(p->spec);
  if (write(fd, p->spec, n) != (ssize_t)n)
    return iob_error(err, errno ? errno : EIO, "cannot write exec spec file");
  return 0;
}

static int exec_start(struct shim_process *p, struct iob_error **err) {
  struct shim_container *c = p->c;
  const struct shim_process *init = &c->init;
  if (init->reaped || init->state != SHIM_STATE_RUNNING)
    return iob_error_code(err, IOB_CODE_FAILED_PRECONDITION, "container '%s' is not running",
                          c->id);
  if (exec_spec_file(p, err) < 0)
    return -1;
  p->pidfile = xasprintf("%s/%s.pid", c->bundle, p->exec_id);
  const char *head[] = {"exec", "--process", p->specfile, "--detach", "--pid-file", p->pidfile};
  return start_with_io(p, head, IOB_ARRAY_SIZE(head), on_exec_started, err);
}

static void op_start(struct shim_process *p) {
  cleanup_error struct iob_error *err = NULL;
  if (p->exec_id) {
    if (exec_start(p, &err) < 0)
      exec_failed(p, &err);
    return;
  }
  const char *args[] = {"start", p->c->id, NULL};
  const int fds[3] = {-1, -1, -1};
  if (shim_runc_start_killable(&p->c->runc, args, fds, on_started, p, &p->runc_pgid, &err) < 0)
    finish_op(p, &err);
}

/* ---- kill, pause, resume, update, ps ---- */

static bool already_finished(const struct iob_error *e) {
  return e && (strstr(e->msg, "not running") || strstr(e->msg, "process already finished") ||
               strstr(e->msg, "no such process") || strstr(e->msg, "does not exist"));
}

static void on_killed(void *data, char **out, struct iob_error **err) {
  struct shim_process *p = data;
  (void)out;
  if (already_finished(*err)) {
    iob_error_release(err);
    iob_error_code(err, IOB_CODE_NOT_FOUND, "process already finished");
  }
  finish_op(p, err);
}

static void op_kill(struct shim_process *p, struct shim_op *op) {
  cleanup_error struct iob_error *err = NULL;
  if (op->signal == 0 || op->signal > 64) {
    iob_error_code(&err, IOB_CODE_INVALID_ARGUMENT, "invalid signal %u", op->signal);
    finish_op(p, &err);
    return;
  }
  if ((p->reaped || shim_process_exited(p)) && !(op->all && is_init(p))) {
    iob_error_code(&err, IOB_CODE_NOT_FOUND, "process already finished");
    finish_op(p, &err);
    return;
  }
  if (p->exec_id) {
    if (p->pid <= 0)
      iob_error_code(&err, IOB_CODE_NOT_FOUND, "process not started");
    else if (kill(p->pid, (int)op->signal) < 0)
      iob_error_code(&err, IOB_CODE_NOT_FOUND, "process already finished");
    finish_op(p, &err);
    return;
  }
  char signum[16];
  snprintf(signum, sizeof(signum), "%u", op->signal);
  const char *with_all[] = {"kill", "--all", p->c->id, signum, NULL};
  const char *without[] = {"kill", p->c->id, signum, NULL};
  const int fds[3] = {-1, -1, -1};
  if (shim_runc_start(&p->c->runc, op->all ? with_all : without, fds, NULL, 0, false, on_killed, p,
                      &err) < 0)
    finish_op(p, &err);
}

static void on_paused(void *data, char **out, struct iob_error **err) {
  struct shim_process *p = data;
  (void)out;
  if (*err == NULL)
    transition(p, p->busy->kind == SHIM_OP_PAUSE ? SHIM_STATE_PAUSED : SHIM_STATE_RUNNING, err);
  finish_op(p, err);
}

static void on_done(void *data, char **out, struct iob_error **err) {
  (void)out;
  finish_op(data, err);
}

static int parse_pids(const char *out, struct shim_op *op, struct iob_error **err) {
  json_error_t je;
  /* runc ps prints "null" for a container without processes (a Go nil
   * slice): jansson decodes a bare null only with JSON_DECODE_ANY. */
  json_t *j = json_loads(out ? out : "", JSON_DECODE_ANY, &je);
  if (!json_is_array(j) && !json_is_null(j)) {
    json_decref(j);
    return iob_error_code(err, IOB_CODE_INTERNAL, "cannot parse 'runc ps' output: %s", je.text);
  }
  size_t len = json_is_array(j) ? json_array_size(j) : 0;
  op->pids = xcalloc(len, sizeof(pid_t));
  op->n_pids = 0;
  for (size_t i = 0; i < len; i++) {
    json_int_t v = json_integer_value(json_array_get(j, i));
    if (v > 0)
      op->pids[op->n_pids++] = (pid_t)v;
  }
  json_decref(j);
  return 0;
}

static void on_ps(void *data, char **out, struct iob_error **err) {
  struct shim_process *p = data;
  if (*err == NULL)
    parse_pids(*out, p->busy, err);
  finish_op(p, err);
}

static void op_runc(struct shim_process *p, struct shim_op *op) {
  cleanup_error struct iob_error *err = NULL;
  const char *id = p->c->id;
  const char *pause[] = {"pause", id, NULL};
  const char *resume[] = {"resume", id, NULL};
  const char *update[] = {"update", "--resources", "-", id, NULL};
  const char *ps[] = {"ps", "--format", "json", id, NULL};
  const int fds[3] = {-1, -1, -1};
  int r;
  switch (op->kind) {
  case SHIM_OP_PAUSE:
    r = shim_runc_start(&p->c->runc, pause, fds, NULL, 0, false, on_paused, p, &err);
    break;
  case SHIM_OP_RESUME:
    r = shim_runc_start(&p->c->runc, resume, fds, NULL, 0, false, on_paused, p, &err);
    break;
  case SHIM_OP_UPDATE:
    r = shim_runc_start(&p->c->runc, update, fds, op->resources, op->resources_len, false, on_done,
                        p, &err);
    break;
  default:
    r = shim_runc_start(&p->c->runc, ps, fds, NULL, 0, true, on_ps, p, &err);
    break;
  }
  if (r < 0)
    finish_op(p, &err);
}

/* ---- delete ---- */

static void deleted(struct shim_process *p) {
  struct shim_op *op = p->busy;
  op->pid = (uint32_t)p->pid;
  op->exit_status = p->exit_status;
  op->exited_at = p->state == SHIM_STATE_CREATED ? shim_time_now() : p->exited_at;
  transition(p, SHIM_STATE_DELETED, NULL);
  p->busy = NULL;
  op->done(op, &(struct iob_error *){NULL});
}

static void on_runc_deleted(void *data, char **out, struct iob_error **err) {
  struct shim_process *p = data;
  struct shim_container *c = p->c;
  (void)out;
  if (*err && !already_finished(*err)) {
    finish_op(p, err);
    return;
  }
  unmount_rootfs(c);
  deleted(p);
  remove_container(c);
}

static void op_delete(struct shim_process *p) {
  cleanup_error struct iob_error *err = NULL;
  struct shim_container *c = p->c;
  if (p->exec_id) {
    for (struct shim_process **pp = &c->execs; *pp; pp = &(*pp)->next) {
      if (*pp == p) {
        *pp = p->next;
        break;
      }
    }
    deleted(p);
    process_release(p);
    free(p);
    return;
  }
  if (execs_running(c)) {
    iob_error_code(&err, IOB_CODE_FAILED_PRECONDITION, "container has running execs");
    finish_op(p, &err);
    return;
  }
  const char *args[] = {"delete", c->id, NULL};
  const int fds[3] = {-1, -1, -1};
  if (shim_runc_start(&c->runc, args, fds, NULL, 0, false, on_runc_deleted, p, &err) < 0)
    finish_op(p, &err);
}

/* p->busy is the operation to run; its state decides whether it may. */
static void run_op(struct shim_process *p) {
  if (p->busy == NULL) {
    p->busy = p->queue;
    p->queue = p->busy->next;
  }
  struct shim_op *op = p->busy;
  cleanup_error struct iob_error *err = NULL;
  if (check_op(p, op->kind, &err) < 0) {
    finish_op(p, &err);
    return;
  }
  switch (op->kind) {
  case SHIM_OP_START:
    op_start(p);
    return;
  case SHIM_OP_KILL:
    op_kill(p, op);
    return;
  case SHIM_OP_DELETE:
    op_delete(p);
    return;
  case SHIM_OP_PAUSE:
  case SHIM_OP_RESUME:
  case SHIM_OP_UPDATE:
  case SHIM_OP_PIDS:
    op_runc(p, op);
    return;
  default:
    iob_error_code(&err, IOB_CODE_INTERNAL, "unexpected operation %d", (int)op->kind);
    finish_op(p, &err);
    return;
  }
}

/* ---- exec ---- */

int shim_exec_add(struct shim_container *c, const char *exec_id, const struct shim_stdio *stdio,
                  const char *spec, size_t spec_len, struct shim_process **out,
                  struct iob_error **err) {
  const struct shim_process *init = &c->init;
  if (init->reaped || shim_process_exited(init))
    return iob_error_code(err, IOB_CODE_FAILED_PRECONDITION, "container '%s' has exited", c->id);
  if (init->state == SHIM_STATE_PAUSED)
    return iob_error_code(err, IOB_CODE_FAILED_PRECONDITION, "cannot exec in a paused state");
  for (struct shim_process *e = c->execs; e; e = e->next)
    if (!strcmp(e->exec_id, exec_id))
      return iob_error_code(err, IOB_CODE_ALREADY_EXISTS, "id '%s' already in use", exec_id);
  struct shim_process *p = xcalloc(1, sizeof(*p));
  p->spec = xstrndup(spec, spec_len);
  p->c = c;
  p->exec_id = xstrdup(exec_id);
  p->state = SHIM_STATE_CREATED;
  stdio_copy(p, stdio);
  p->next = c->execs;
  c->execs = p;
  *out = p;
  return 0;
}
