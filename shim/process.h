/* Containers and their processes: the state the service keeps and the
 * lifecycle operations it performs through runc. */
#ifndef SHIM_PROCESS_H
#define SHIM_PROCESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"
#include "common/loop.h"
#include "shim/io.h"
#include "shim/mount.h"
#include "shim/options.h"
#include "shim/runc.h"
#include "shim/shim.h"

/* containerd.v1.types.Status */
enum shim_status {
  SHIM_STATUS_UNKNOWN = 0,
  SHIM_STATUS_CREATED = 1,
  SHIM_STATUS_RUNNING = 2,
  SHIM_STATUS_STOPPED = 3,
  SHIM_STATUS_PAUSED = 4,
  SHIM_STATUS_PAUSING = 5,
};

struct ttrpc_call;
struct shim_container;

struct shim_waitcall {
  struct ttrpc_call *call;
  struct shim_process *p;
  struct shim_waitcall *next;
};

struct shim_process {
  struct shim_container *c;
  char *exec_id; /* NULL for init */
  enum shim_status status;
  pid_t pid;
  bool exited;       /* reaped and published */
  bool exit_pending; /* init reaped, waiting for its execs to go first */
  uint32_t exit_status;
  struct shim_time exited_at;
  char *in, *out, *err;
  bool terminal;
  char *spec; /* exec: the runtime-spec Process as JSON */
  struct shim_io *io;
  struct shim_waitcall *waits;
  struct shim_process *next;
};

struct shim_container {
  struct shim_service *svc;
  char *id;
  char *bundle;
  struct shim_options opts;
  struct shim_runc runc;
  struct shim_process init;
  struct shim_process *execs;
  struct shim_oom *oom;
  bool mounted;
  struct shim_container *next;
};

struct shim_service {
  struct iob_loop *loop;
  struct ttrpc_server *server;
  char *ns;
  struct shim_container *containers;
  bool exit_requested;
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

struct shim_container *shim_container_find(struct shim_service *s, const char *id);
/* The container's init (exec_id NULL or empty) or one of its execs. */
int shim_process_find(struct shim_service *s, const char *id, const char *exec_id,
                      struct shim_container **c, struct shim_process **p, struct iob_error **err);

int shim_container_create(struct shim_service *s, const struct shim_create *req,
                          struct shim_container **out, struct iob_error **err);
int shim_process_start(struct shim_process *p, struct iob_error **err);
int shim_process_kill(struct shim_process *p, uint32_t sig, bool all, struct iob_error **err);
/* Delete a stopped (or never started) process; init takes the container
 * with it (the caller must not use c or p afterwards). */
int shim_process_delete(struct shim_process *p, uint32_t *pid, uint32_t *status,
                        struct shim_time *at, struct iob_error **err);
int shim_exec_add(struct shim_container *c, const char *exec_id, const struct shim_stdio *stdio,
                  const char *spec, size_t spec_len, struct iob_error **err);
int shim_container_pause(struct shim_container *c, bool pause, struct iob_error **err);
int shim_container_update(struct shim_container *c, const char *json, size_t len,
                          struct iob_error **err);
/* runc ps: the pids in the container (caller frees *pids). */
int shim_container_pids(struct shim_container *c, pid_t **pids, size_t *n, struct iob_error **err);
/* Answer every Wait on p (after its exit). */
void shim_process_wake(struct shim_process *p);

#endif
