// SPDX-License-Identifier: Apache-2.0
/* The agent's requests, decoded: each step takes the protobuf request as
 * the ttrpc server decoded it (proto/iobatch/agent.proto) and the parts it
 * reads and calls (struct agent_api), and fills the reply or an error (its
 * code is what the caller gets).  No ttrpc here: agent/serve/server.c is the thin
 * glue that hangs waiters, replies and tells its owner after each step;
 * the fuzzer (tests/fuzz/fuzz_agent_requests.c) calls these same steps on
 * the parts of a daemon from agent_daemon_init_headless. */
#ifndef IOB_AGENT_REQUESTS_H
#define IOB_AGENT_REQUESTS_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/plan/admission.h"
#include "agent/config.h"
#include "agent/kube/kube.h"
#include "agent/plan/learning.h"
#include "agent/serve/metrics.h"
#include "agent/plan/penalties.h"
#include "agent/serve/pidwatch.h"
#include "agent/kube/podmeta.h"
#include "agent/protect/protection.h"
#include "agent/store/restore.h"
#include "agent/sample/sampler.h"
#include "batcher/batcher.h"
#include "common/error.h"
#include "iobatch/agent.pb-c.h"

/* What a step asks of its owner, so that requests.c calls nothing in
 * daemon.c or server.c (no circle: daemon.c and server.c call in here,
 * never the other way; tests/cycles.sh). */
struct agent_api_ops {
  /* A container leaves (agent_daemon_remove): learn, answer, free. */
  void (*remove)(struct agent_ctr *c, const char *why, uint64_t now, void *user);
  /* Fail c's older pending Admit: a newer one replaces it
   * (agent_server_supersede). */
  void (*supersede)(struct agent_ctr *c, void *user);
};

/* What the steps read, and the parts they register a container with:
 * the owner's (the daemon's d->api, set at agent_daemon_init and
 * _init_headless), pointed to once. */
struct agent_api {
  struct agent_adm *adm;            /* find, register, declare, admit */
  struct agent_sampler *sampler;    /* a registration is sampled; the cgroup root */
  struct agent_pidwatch *pidwatch;  /* a registered pid is watched */
  struct agent_protection *protect; /* lever targets bound; the view for status */
  struct agent_restore *restore;    /* the hook's first io.weight journalled */
  struct agent_learn *learn;        /* a profile applied at registration */
  struct agent_kube *kube;          /* the pod rules; the kubelet's tree for status */
  struct agent_metrics *metrics;    /* registrations, refusals, cancellations */
  const struct agent_penalties *pen;
  const struct agent_podmeta *podmeta;
  const struct agent_config *cfg;  /* the configuration in force (batch_window_ms) */
  const struct batch_config *bcfg; /* the batcher settings in force */
  const char *matrix_source;
  const struct agent_api_ops *ops;
  void *user;
};

/* Register (or refresh) a container; *out's strings are static. */
int agent_api_register(struct agent_api *a, const Iobatch__Agent__V1__RegisterRequest *req,
                       uint64_t now, Iobatch__Agent__V1__RegisterResponse *out,
                       struct iob_error **err);

/* Admit: find the container (or register it from the Admit's fields),
 * apply its kind and class, supersede an older waiter and make it pending
 * with a deadline of at most cap_ms (0: none).  Returns 1 when it already
 * runs (answer at once, agent_api_admit_reply), 0 when it is pending (the
 * caller hangs its waiter on *ctr), <0 on error. */
int agent_api_admit(struct agent_api *a, const Iobatch__Agent__V1__AdmitRequest *req, uint64_t now,
                    uint64_t cap_ms, struct agent_ctr **ctr, struct iob_error **err);
/* The AdmitResponse of ctr; its strings are static or ctr's. */
void agent_api_admit_reply(const struct agent_ctr *c, bool admitted, const char *reason,
                           uint64_t now, Iobatch__Agent__V1__AdmitResponse *out);

/* Cancel and Exited: remove the container if known (unknown is fine).
 * Returns true when something was removed. */
bool agent_api_cancel(struct agent_api *a, const Iobatch__Agent__V1__CancelRequest *req,
                      uint64_t now);
bool agent_api_exited(struct agent_api *a, const Iobatch__Agent__V1__ExitedRequest *req,
                      uint64_t now);

/* Status: *out borrows the daemon's strings; free what it allocated with
 * agent_api_status_release (before the daemon changes).  Pod labels only
 * when REQ asks for them (NULL: the defaults), at most
 * AGENT_STATUS_LABEL_BYTES of them: a Status reply must fit a ttrpc frame
 * (4 MiB) whatever tenants put in their labels.  Returns 0 (out of memory
 * aborts, common/xalloc.h). */
#define AGENT_STATUS_LABEL_BYTES (1u << 20)
int agent_api_status(struct agent_api *a, const Iobatch__Agent__V1__StatusRequest *req,
                     uint64_t now, Iobatch__Agent__V1__StatusResponse *out, struct iob_error **err);
void agent_api_status_release(Iobatch__Agent__V1__StatusResponse *r);

/* Plan's checks: the agent's batcher settings with req's cap and alpha in
 * *cfg, or an error. */
int agent_api_plan_check(struct agent_api *a, const Iobatch__Agent__V1__PlanRequest *req,
                         struct batch_config *cfg, struct iob_error **err);
/* The offline plan of req's jobs with cfg (batcher/jobfile.h); touches nothing
 * but its arguments (agent/serve/plan_async.c runs it on a thread).  *out's names
 * point into req; free it with agent_api_plan_free. */
int agent_api_plan_solve(const struct batch_config *cfg, const Iobatch__Agent__V1__PlanRequest *req,
                         Iobatch__Agent__V1__PlanResponse **out, struct iob_error **err);
/* Plan, all at once: agent_api_plan_check, then agent_api_plan_solve. */
int agent_api_plan(struct agent_api *a, const Iobatch__Agent__V1__PlanRequest *req,
                   Iobatch__Agent__V1__PlanResponse **out, struct iob_error **err);
void agent_api_plan_free(Iobatch__Agent__V1__PlanResponse *r);

/* Put back the hook's first io.weight of CTR (journalled at its
 * Register), if its cgroup is still the one the hook saw. */
void agent_api_forget_hook_weight(struct agent_api *a, const struct agent_ctr *ctr);

#endif
