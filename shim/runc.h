// SPDX-License-Identifier: Apache-2.0
/* The runc (or crun) driver. */
#ifndef SHIM_RUNC_H
#define SHIM_RUNC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/error.h"
#include "shim/options.h"

struct shim_runc {
  const char *binary;
  char *root; /* <options.root>/<ns> */
  char *log;  /* <bundle>/log.json */
  bool systemd_cgroup;
};

void shim_runc_init(struct shim_runc *r, const struct shim_options *o, const char *ns,
                    const char *bundle);
void shim_runc_release(struct shim_runc *r);
/* Run `runc <global flags> args...` with stdio fds (-1: /dev/null), wait
 * (for `shim delete`; the daemon uses shim_runc_start).
 * in/in_len: written to runc's stdin when fds[0] is -1 and in != NULL.
 * out: when not NULL, runc's stdout is captured (caller frees). */
int shim_runc_run(const struct shim_runc *r, const char *const *args, const int fds[3],
                  const char *in, size_t in_len, char **out, struct iob_error **err);
/* An asynchronous runc call finished: *err is NULL on success, *out the
 * captured stdout when asked for; the callee may take either (they are
 * freed after the call otherwise). */
typedef void (*shim_runc_fn)(void *data, char **out, struct iob_error **err);
/* Start `runc <global flags> args...` and return; fn runs on the loop when
 * runc exited (fn NULL: nobody waits, a failure is logged).  in/in_len go
 * to runc's stdin, capture collects its stdout.  r need not outlive the
 * call.  Returns <0 (and fn never runs) when runc could not be started. */
int shim_runc_start(const struct shim_runc *r, const char *const *args, const int fds[3],
                    const char *in, size_t in_len, bool capture, shim_runc_fn fn, void *data,
                    struct iob_error **err);
/* The same (no stdin, no capture) for a call that a Delete or a SIGKILL may
 * have to cut short (create, start, exec): runc leads a process group of its
 * own, *pgid, which holds what it starts too (hooks, runc init); killing
 * the group ends them all. */
int shim_runc_start_killable(const struct shim_runc *r, const char *const *args, const int fds[3],
                             shim_runc_fn fn, void *data, pid_t *pgid, struct iob_error **err);
/* The message of the last "error" entry of runc's log.json (caller frees),
 * or NULL. */
char *shim_runc_last_error(const char *log_json, size_t len);

#endif
