// SPDX-License-Identifier: Apache-2.0
/* The admission hold: iobatchd (through libagentclient) decides when a
 * created container may start. */
#ifndef SHIM_ADMISSION_H
#define SHIM_ADMISSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"
#include "common/loop.h"
#include "common/oci.h"

/* What <bundle>/config.json's annotations tell the agent, taken once at
 * Create. */
struct shim_ctr_info {
  char *cls;              /* io.iobatch.class; NULL: not declared */
  char *key;              /* wcd_workload_key(); NULL: none */
  char *kind;             /* "job", "service" or "sandbox" (wcd/kind.h); NULL: not said */
  bool kind_from_runtime; /* kind is the CRI's container type, not io.iobatch.kind */
  char *pod_name, *pod_namespace, *container_name; /* CRI names; NULL: not known */
  uint32_t max_hold_ms;                            /* io.iobatch.max-hold-ms; 0: none */
  uint32_t lat_target_us;                          /* io.iobatch.latency-target; 0: none */
  /* iobatch-hook is in its prestart or createRuntime hooks already (the
   * spec's author put it there): `runc create` runs it, and it registers
   * the container with its birth, so the shim does not. */
  bool hook_in_spec;
};

struct shim_admission_req {
  const char *id;
  const char *ns;
  const char *bundle;
  const struct shim_ctr_info *info; /* the container's annotations */
  pid_t pid;
  uint64_t deadline_ms; /* the Start's own deadline (iob_now_ms), 0: none */
};
typedef void (*shim_admission_fn)(void *data, int admitted, struct iob_error *err);
/* Ask the agent (socket: $IOBATCH_AGENT_SOCKET, else the default) whether
 * the container may start now; fn runs on the loop once it is admitted,
 * refused or cancelled (err says why).  No agent: admitted (fail open).
 * A pod sandbox by the CRI's word is not asked: fn runs at once, then the
 * agent is told in the background that it runs.  io.iobatch.kind=sandbox
 * is asked like any container: whether it counts is the agent's call
 * (trust_declared), and a trusted one is admitted at once. */
void shim_admission_wait(struct iob_loop *loop, const struct shim_admission_req *req,
                         shim_admission_fn fn, void *data);
/* Create, before runc create: an invalid io.iobatch.class, .kind or
 * .max-hold-ms is INVALID_ARGUMENT naming the annotation. */
int shim_ctr_info_of(const struct iob_oci_config *cfg, struct shim_ctr_info *out,
                     struct iob_error **err);
/* The same from config.json's text (JSON, LEN bytes). */
int shim_ctr_info_parse(const char *json, size_t len, struct shim_ctr_info *out,
                        struct iob_error **err);
void shim_ctr_info_release(struct shim_ctr_info *in);
/* After runc create, before Create is answered (the init has not exec'd
 * the workload yet): take the container's birth (client/birth.h: cgroup,
 * baseline, the first weight of a declared class), register it with the
 * agent with pid and annotations, and once the agent journalled the
 * weight, write it.  fn runs on the loop once that is done or given up
 * (maybe before this returns): the agent unreachable, silent past the
 * client's timeout or answering an error is logged and Create goes on
 * (fail open; with IobatchFailClosed it is the Start that fails).  Nothing
 * when iobatch-hook is in the spec (hook_in_spec). */
typedef void (*shim_registered_fn)(void *data);
void shim_admission_register(struct iob_loop *loop, const struct shim_admission_req *req,
                             shim_registered_fn fn, void *data);
/* Kill or Delete of an init: a held Start fails with "cancelled". */
void shim_admission_cancel(const char *ns, const char *id);
/* The init exited: cancels a held Start, tells the agent. */
void shim_admission_exited(const char *ns, const char *id, uint32_t status);

#endif
