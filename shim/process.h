// SPDX-License-Identifier: Apache-2.0
/* Containers and their processes: the state machine of each process and the
 * runc operations that drive it.  Nothing here knows the Task service:
 * results go back through the callbacks the caller hands in (an operation's
 * done, a Wait's waiter, the container list's observer). */
#ifndef SHIM_PROCESS_H
#define SHIM_PROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"
#include "common/loop.h"
#include "shim/admission.h"
#include "shim/io.h"
#include "shim/rootfs.h"
#include "shim/options.h"
#include "shim/runc.h"
#include "shim/shim.h"

/* As containerd's runc shim (pkg/process init_state.go, exec_state.go):
 * created -> running -> paused -> running, any of those -> stopped when
 * the process exits, created or stopped -> deleted. */
enum shim_state {
  SHIM_STATE_CREATED,
  SHIM_STATE_RUNNING,
  SHIM_STATE_PAUSED,
  SHIM_STATE_STOPPED,
  SHIM_STATE_DELETED,
};

enum shim_op_kind {
  SHIM_OP_CREATE, /* internal: the init while `runc create` runs */
  SHIM_OP_START,
  SHIM_OP_KILL,
  SHIM_OP_PAUSE,
  SHIM_OP_RESUME,
  SHIM_OP_UPDATE,
  SHIM_OP_PIDS,
  SHIM_OP_DELETE,
};

struct shim_op;
/* An operation finished: *err is NULL on success; the callee may take it
 * (it is released after the call otherwise).  op->p is valid during the
 * call, even for a Delete (the process is freed right after). */
typedef void (*shim_op_fn)(struct shim_op *op, struct iob_error **err);

/* One operation on a process, owned by the caller until done runs.  The
 * operations of one process run one at a time, in the order submitted (a
 * second one waits behind the first, as containerd's shim serialises them
 * with the process's mutex); other processes are not held up. */
struct shim_op {
  enum shim_op_kind kind;
  shim_op_fn done;
  uint32_t signal;       /* KILL */
  bool all;              /* KILL */
  const char *resources; /* UPDATE: LinuxResources JSON, valid until done */
  size_t resources_len;
  /* results */
  struct shim_process *p;
  uint32_t pid;               /* DELETE */
  uint32_t exit_status;       /* DELETE */
  struct shim_time exited_at; /* DELETE */
  pid_t *pids;                /* PIDS (caller frees) */
  size_t n_pids;
  struct shim_op *next;
};

/* A Wait: fn runs once p has exited (or is deleted without having run). */
struct shim_waiter {
  void (*fn)(struct shim_waiter *w, struct shim_process *p);
  void *data;
  struct shim_waiter *next;
};

struct shim_console_socket;
struct shim_container;
struct shim_oom;

struct shim_process {
  struct shim_container *c;
  char *exec_id; /* NULL for init */
  enum shim_state state;
  pid_t pid;
  bool reaped;       /* the reaper reported the exit (status, exited_at set) */
  bool exit_pending; /* init reaped, waiting for its execs to go first */
  uint32_t exit_status;
  struct shim_time exited_at;
  char *in, *out, *err;
  bool terminal;
  char *spec; /* exec: the runtime-spec Process as JSON */
  struct shim_io *io;
  struct shim_op *busy; /* the operation in flight */
  /* The runc of a create, start or exec in flight (shim_runc_start_killable:
   * its own process group), 0: none; runc_killed: a Delete or SIGKILL
   * killed it (shim_process_submit). */
  pid_t runc_pgid;
  bool runc_killed;
  struct shim_op *queue; /* waiting behind it */
  struct shim_waiter *waiters;
  /* what the operation in flight needs when runc returns */
  struct shim_console_socket *console;
  char *pidfile;
  char *specfile;
  struct shim_process *next;
};

struct shim_containers;

struct shim_container {
  struct shim_containers *list;
  char *id;
  char *bundle;
  struct shim_options opts;
  struct shim_ctr_info info; /* config.json's annotations, read at Create */
  struct shim_runc runc;
  struct shim_process init;
  struct shim_process *execs;
  struct shim_oom *oom;
  bool mounted;
  bool creating; /* `runc create` still runs: not visible to lookups */
  struct shim_container *next;
};

/* Told about what happens without a request: an exit (in containerd's
 * order: an init's after all its execs'), an OOM kill. */
struct shim_observer {
  void (*exited)(void *data, struct shim_process *p);
  void (*oom)(void *data, struct shim_container *c);
  void *data;
};

/* The containers of one shim. */
struct shim_containers {
  struct iob_loop *loop;
  const char *ns;
  struct shim_observer observer;
  struct shim_container *head;
};

struct shim_create {
  const char *id;
  const char *bundle;
  const struct shim_mount *mounts;
  size_t n_mounts;
  struct shim_stdio stdio;
  const char *options_type; /* the Any of runc Options, or NULL */
  const uint8_t *options;
  size_t options_len;
};

/* A created container (not one whose `runc create` still runs). */
struct shim_container *shim_container_find(struct shim_containers *l, const char *id);
/* The init of a container whose `runc create` still runs, or NULL: only a
 * Delete reaches it (containerd's cleanup of a Create that failed on its
 * side, say at the caller's deadline). */
struct shim_process *shim_container_creating(struct shim_containers *l, const char *id);
/* The container's init (exec_id NULL or empty) or one of its execs. */
int shim_process_find(struct shim_containers *l, const char *id, const char *exec_id,
                      struct shim_process **p, struct iob_error **err);

/* Create: op->done runs when `runc create` returned (maybe before this
 * returns, on an early failure); on success op->p is the new init. */
void shim_container_create(struct shim_containers *l, const struct shim_create *req,
                           struct shim_op *op);
/* Run op on p now, or after the operations before it; an operation the
 * process's state does not allow fails ("cannot start a stopped
 * process").  done may run before this returns. */
void shim_process_submit(struct shim_process *p, struct shim_op *op);
/* A new exec of c; spec is the runtime-spec Process JSON, checked by
 * shim_req_exec. */
int shim_exec_add(struct shim_container *c, const char *exec_id, const struct shim_stdio *stdio,
                  const char *spec, size_t spec_len, struct shim_process **out,
                  struct iob_error **err);

/* containerd.v1.types.Status of p: PAUSING while a pause runs, RUNNING
 * while an init's exit waits for its execs. */
int shim_process_status(const struct shim_process *p);
bool shim_process_exited(const struct shim_process *p);
void shim_process_wait(struct shim_process *p, struct shim_waiter *w);
void shim_process_unwait(struct shim_process *p, struct shim_waiter *w);
bool shim_containers_empty(const struct shim_containers *l);

#endif
