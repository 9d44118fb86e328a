/* containerd-shim-iobatch-v2: declarations shared by the shim's files.
 * Facts about the protocol: docs/reference/shim-v2.md. */
#ifndef SHIM_SHIM_H
#define SHIM_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"
#include "common/loop.h"

#define SHIM_NAME "containerd-shim-iobatch-v2"
#define SHIM_RUNTIME_NAME "io.containerd.iobatch.v2"
#define SHIM_DEFAULT_RUNC_ROOT "/run/containerd/runc"
#define SHIM_SOCKET_DIR "/run/containerd/s"

/* containerd.v1.types.Status */
enum shim_status {
  SHIM_STATUS_UNKNOWN = 0,
  SHIM_STATUS_CREATED = 1,
  SHIM_STATUS_RUNNING = 2,
  SHIM_STATUS_STOPPED = 3,
  SHIM_STATUS_PAUSED = 4,
  SHIM_STATUS_PAUSING = 5,
};

struct shim_time {
  int64_t sec;
  int32_t nsec;
};
struct shim_time shim_time_now(void);

/* ---- args.c: command line, stdin of `start`, config.json ---- */

struct shim_args {
  const char *ns;
  const char *address; /* containerd's gRPC socket */
  const char *publish_binary;
  const char *id;
  const char *bundle;
  const char *socket;       /* -socket: address the daemon serves (informational) */
  const char *debug_socket; /* -debug-socket */
  bool debug;
  bool version;
  bool info;
  const char *action; /* "start", "delete", or NULL for the daemon */
};

/* containerd.runc.v1.Options, the parts the shim uses. */
struct shim_options {
  char *binary_name;
  char *root;
  char *shim_cgroup;
  bool systemd_cgroup;
  bool no_pivot_root;
  bool no_new_keyring;
  uint32_t io_uid;
  uint32_t io_gid;
  /* iobatch's own keys, only in the ConfigPath TOML (IobatchAgentSocket,
   * IobatchFailClosed): where iobatchd listens (else $IOBATCH_AGENT_SOCKET,
   * else its default) and whether a Start the agent cannot be asked about
   * fails instead of starting at once.  IobatchAgentTimeoutMs: how long the
   * agent may stay silent before a Start goes on without it (0: the
   * client's default, agent/client.h). */
  char *agent_socket;
  bool fail_closed;
  uint32_t agent_timeout_ms;
  /* Keys of the TOML file that no option matches ("'SystemdCgroups' (line
   * 5), ..."), NULL when none: kept in options.json so that Create warns
   * about them whichever of start and Create read the file. */
  char *unknown_keys;
};

/* What `start` learns from stdin. */
struct shim_bootstrap {
  bool is_bootstrap; /* containerd 2.3+ BootstrapParams */
  char *ttrpc_address;
  char *socket_dir;
  int log_level;
  bool have_options;
  struct shim_options options;
};

int shim_args_parse(struct shim_args *a, int argc, char **argv, struct iob_error **err);
/* Decode start's stdin (empty, a legacy Any of runc Options, or 2.3's
 * BootstrapParams told apart by instance_id/namespace). */
int shim_bootstrap_parse(const uint8_t *data, size_t len, const char *id, const char *ns,
                         struct shim_bootstrap *out, struct iob_error **err);
void shim_bootstrap_release(struct shim_bootstrap *b);
/* Decode an Any holding containerd.runc.v1.Options or runtimeoptions.v1.Options
 * (other types: ignored,
 * returns 0 with *found false). */
int shim_options_from_any(const char *type_url, const uint8_t *data, size_t len,
                          struct shim_options *o, bool *found, struct iob_error **err);
void shim_options_release(struct shim_options *o);
/* options.c: runtimeoptions.v1.Options{config_path} naming a TOML file of
 * runc options (what CRI and `ctr --runtime-config-path` send). */
int shim_options_from_config_path(const uint8_t *data, size_t len, struct shim_options *o,
                                  struct iob_error **err);
int shim_options_parse_toml(const char *text, size_t len, struct shim_options *o,
                            struct iob_error **err);
/* options.json in the bundle, so `delete` finds runc's root and binary. */
int shim_options_write(const char *bundle, const struct shim_options *o, struct iob_error **err);
int shim_options_read(const char *bundle, struct shim_options *o, struct iob_error **err);
/* The grouping key from config.json annotations (caller frees), or a copy
 * of id when neither annotation is set. */
int shim_config_group(const char *json, size_t len, const char *id, char **group,
                      struct iob_error **err);

/* ---- validate.c ---- */

/* containerd's identifiers: [A-Za-z0-9][A-Za-z0-9._-]*, at most 76 bytes. */
int shim_validate_id(const char *what, const char *id, struct iob_error **err);
/* An exec id: the same rules. An empty one is refused. */
int shim_validate_path(const char *what, const char *path, bool absolute, struct iob_error **err);

/* ---- spawn.c: every child process goes through here ---- */

struct shim_spawn {
  const char *const *argv; /* argv[0] is looked up in PATH */
  int fds[3];              /* stdin, stdout, stderr; -1: /dev/null */
  int extra[3];            /* become fds 3, 4, 5 when >= 0 */
  int n_extra;
  const char *cwd;
  const char *const *setenv; /* "K=V" entries added to the environment */
  bool pdeathsig;            /* SIGKILL when the shim dies (runc) */
  bool setpgid;
  bool keep_thp; /* the daemon keeps PR_SET_THP_DISABLE */
};

int shim_spawn(const struct shim_spawn *sp, pid_t *pid, struct iob_error **err);
/* Wait for a child we spawned synchronously; *status is the raw wait status. */
int shim_spawn_wait(pid_t pid, int *status, struct iob_error **err);
/* WEXITSTATUS, or 128 + signal. */
uint32_t shim_exit_code(int status);

/* ---- reaper.c: one pid -> waiter table, early-exit cache ---- */

typedef void (*shim_reap_fn)(pid_t pid, int status, struct shim_time at, void *data);
/* Call fn when pid exits.  If pid already exited (early-exit cache) fn runs
 * before this returns. */
int shim_reaper_watch(pid_t pid, shim_reap_fn fn, void *data, struct iob_error **err);
void shim_reaper_unwatch(pid_t pid);
/* wait4(-1, WNOHANG) until nothing is left; dispatch each exit. */
void shim_reaper_reap(void);
/* Hand one exit to its waiter or to the cache (separate for tests). */
void shim_reaper_dispatch(pid_t pid, int status, struct shim_time at);
void shim_reaper_reset(void);

/* ---- runc.c: the runc driver ---- */

struct shim_runc {
  const char *binary;
  char *root; /* <options.root>/<ns> */
  char *log;  /* <bundle>/log.json */
  bool systemd_cgroup;
};

int shim_runc_init(struct shim_runc *r, const struct shim_options *o, const char *ns,
                   const char *bundle, struct iob_error **err);
void shim_runc_release(struct shim_runc *r);
/* Run `runc <global flags> args...` with stdio fds (-1: /dev/null), wait.
 * in/in_len: written to runc's stdin when fds[0] is -1 and in != NULL.
 * out: when not NULL, runc's stdout is captured (caller frees). */
int shim_runc_run(const struct shim_runc *r, const char *const *args, const int fds[3],
                  const char *in, size_t in_len, char **out, struct iob_error **err);
/* The message of the last "error" entry of runc's log.json (caller frees),
 * or NULL. */
char *shim_runc_last_error(const char *log_json, size_t len);

/* ---- mount.c ---- */

struct shim_mount {
  const char *type;
  const char *source;
  const char *const *options;
  size_t n_options;
};
/* Split mount options into flags and the data string (caller frees). */
int shim_mount_parse_options(const char *const *opts, size_t n, unsigned long *flags,
                             unsigned long *propagation, char **data, struct iob_error **err);
int shim_mount_all(const struct shim_mount *m, size_t n, const char *target,
                   struct iob_error **err);
/* Unmount everything at target (repeatedly, lazily); never fails. */
void shim_unmount_all(const char *target);

/* ---- io.c / console.c ---- */

enum shim_uri_kind { SHIM_URI_FIFO, SHIM_URI_FILE, SHIM_URI_BINARY };
struct shim_uri {
  enum shim_uri_kind kind;
  char *path;
  char **args; /* binary://: k, v, k, v ... NULL-terminated */
};
int shim_uri_parse(const char *s, struct shim_uri *u, struct iob_error **err);
void shim_uri_release(struct shim_uri *u);

struct shim_io;
struct shim_stdio {
  const char *in;
  const char *out;
  const char *err;
  bool terminal;
};
struct shim_io_params {
  const struct shim_stdio *stdio;
  uint32_t uid, gid;
  const char *id;
  const char *ns;
};
/* Open containerd's FIFOs (or file/binary loggers) and make the fds runc
 * gives the process.  runc_fds[] stay owned by io. */
int shim_io_new(struct iob_loop *loop, const struct shim_io_params *p, struct shim_io **out,
                int runc_fds[3], struct iob_error **err);
/* After runc returned: close the process ends, start copying; master is the
 * pty master when a terminal was requested (owned by io afterwards). */
int shim_io_start(struct shim_io *io, int master, struct iob_error **err);
void shim_io_close_stdin(struct shim_io *io);
int shim_io_resize(struct shim_io *io, uint32_t width, uint32_t height, struct iob_error **err);
/* Whether all output has been copied (pipes hit EOF). */
bool shim_io_drained(const struct shim_io *io);
void shim_io_free(struct shim_io *io);

struct shim_console_socket;
int shim_console_socket_new(struct shim_console_socket **out, struct iob_error **err);
const char *shim_console_socket_path(const struct shim_console_socket *s);
/* Receive the pty master runc sent (waits up to timeout_ms). */
int shim_console_socket_recv(struct shim_console_socket *s, int timeout_ms, int *master,
                             struct iob_error **err);
void shim_console_socket_free(struct shim_console_socket *s);

/* ---- events.c ---- */

struct ProtobufCMessage;
int shim_events_init(struct iob_loop *loop, const char *ttrpc_address, const char *ns,
                     struct iob_error **err);
/* Queue an event for Events/Forward; events go out in queue order. */
void shim_events_publish(const char *topic, const struct ProtobufCMessage *ev);
/* Run the loop until the queue is empty or timeout_ms passed. */
void shim_events_drain(struct iob_loop *loop, int timeout_ms);
size_t shim_events_pending(void);

/* ---- stats.c / oom.c ---- */

/* cgroup metrics of pid's cgroup as containerd's metrics Any. */
int shim_stats_collect(pid_t pid, char **type_url, uint8_t **value, size_t *len,
                       struct iob_error **err);
struct shim_oom;
typedef void (*shim_oom_fn)(void *data);
int shim_oom_watch(struct iob_loop *loop, pid_t pid, shim_oom_fn fn, void *data,
                   struct shim_oom **out, struct iob_error **err);
void shim_oom_free(struct shim_oom *o);

/* ---- admission.c: the admission hold (iobatchd via libagentclient) ---- */

struct shim_admission_req {
  const char *id;
  const char *ns;
  const char *bundle;
  pid_t pid;
  uint64_t deadline_ms; /* the Start's own deadline (iob_now_ms), 0: none */
};
typedef void (*shim_admission_fn)(void *data, int admitted, struct iob_error *err);
/* Ask the agent (socket: $IOBATCH_AGENT_SOCKET, else the default) whether
 * the container may start now; fn runs on the loop once it is admitted,
 * refused or cancelled (err says why).  No agent: admitted (fail open).
 * A pod sandbox is not asked: fn runs at once, then the agent is told in
 * the background that it runs. */
void shim_admission_wait(struct iob_loop *loop, const struct shim_admission_req *req,
                         shim_admission_fn fn, void *data);
/* What <bundle>/config.json's annotations tell the agent. */
struct shim_ctr_info {
  char *cls;  /* io.iobatch.class; NULL: not declared */
  char *key;  /* wcd_workload_key(); NULL: none */
  char *kind; /* "job", "service" or "sandbox" (wcd/kind.h); NULL: not said */
  char *pod_name, *pod_namespace, *container_name; /* CRI names; NULL: not known */
  uint32_t max_hold_ms;                            /* io.iobatch.max-hold-ms; 0: none */
};
/* config.json (JSON, LEN bytes): an invalid io.iobatch.class, .kind or
 * .max-hold-ms is INVALID_ARGUMENT naming the annotation. */
int shim_ctr_info_parse(const char *json, size_t len, struct shim_ctr_info *out,
                        struct iob_error **err);
void shim_ctr_info_release(struct shim_ctr_info *in);
/* Create, before runc create: the iobatch annotations of config.json are
 * valid (an invalid io.iobatch.max-hold-ms is INVALID_ARGUMENT). */
int shim_admission_check(const char *bundle, struct iob_error **err);
/* After runc create: register pid, cgroup and annotations with the agent. */
void shim_admission_register(struct iob_loop *loop, const struct shim_admission_req *req);
/* Kill or Delete of an init: a held Start fails with "cancelled". */
void shim_admission_cancel(const char *ns, const char *id);
/* The init exited: cancels a held Start, tells the agent. */
void shim_admission_exited(const char *ns, const char *id, uint32_t status);

/* ---- hookinject.c ---- */

/* Add iobatch-hook ($IOBATCH_HOOK, else next to the shim binary) to
 * <bundle>/config.json's hooks.prestart unless it is in prestart or
 * createRuntime already; nothing to do when there is no hook binary.  Malformed config:
 * INVALID_ARGUMENT. */
int shim_hook_inject(const char *bundle, struct iob_error **err);
/* The same on a config held in memory (for the tests): *out is the new
 * JSON (caller frees) or NULL when nothing changes. */
int shim_hook_inject_json(const char *json, size_t len, const char *hook, const char *socket,
                          char **out, struct iob_error **err);

/* ---- trim.c ---- */

/* Drop the executable file mappings' pages from the page tables (and
 * return free heap to the kernel): now, or once the loop has been quiet for
 * a second after a burst of work. */
void shim_trim_now(void);
void shim_trim_later(struct iob_loop *loop);

/* ---- manager.c / daemon.c / service.c ---- */

int shim_manager_start(const struct shim_args *a, struct iob_error **err);
/* shim_cgroup on a cgroup v2 host: a clean absolute path, as containerd's
 * cgroup2.VerifyGroupPath wants it. */
int shim_cgroup_path_check(const char *cg, struct iob_error **err);
int shim_manager_delete(const struct shim_args *a, struct iob_error **err);
int shim_manager_info(struct iob_error **err);
int shim_daemon_run(const struct shim_args *a, struct iob_error **err);
/* Socket address for (address, ns, group) under dir; caller frees. */
int shim_socket_address(const char *dir, const char *grpc_address, const char *ns,
                        const char *group, char **out, struct iob_error **err);

struct ttrpc_server;
struct shim_service;
int shim_service_new(struct iob_loop *loop, struct ttrpc_server *server, const char *ns,
                     struct shim_service **out, struct iob_error **err);
/* The reaper and SIGTERM call in here. */
bool shim_service_idle(const struct shim_service *s);
void shim_service_free(struct shim_service *s);
/* Set when Shutdown is accepted; the daemon loop then exits. */
bool shim_service_should_exit(const struct shim_service *s);

#endif
