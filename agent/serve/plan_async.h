// SPDX-License-Identifier: Apache-2.0
/* The Plan RPC off the agent's loop (agent/serve/plan_async.c): the request is
 * copied, solved on a thread of its own by the solver it is given
 * (agent_api_plan_solve, which touches nothing but its arguments), and the
 * reply sent from the loop.  One plan at a time per agent_plan_async; its
 * owner is the server (agent/serve/server.h), and plan_async.c calls nothing
 * else of the agent's. */
#ifndef IOB_AGENT_PLAN_ASYNC_H
#define IOB_AGENT_PLAN_ASYNC_H

#include "batcher/batcher.h"
#include "common/error.h"
#include "common/loop.h"
#include "iobatch/agent.pb-c.h"

struct ttrpc_call;
struct plan_run;

/* Solve REQ with CFG; *out freed by the matching free. */
typedef int (*agent_plan_solve_fn)(const struct batch_config *cfg,
                                   const Iobatch__Agent__V1__PlanRequest *req,
                                   Iobatch__Agent__V1__PlanResponse **out, struct iob_error **err);
typedef void (*agent_plan_free_fn)(Iobatch__Agent__V1__PlanResponse *resp);

struct agent_plan_async {
  struct iob_loop *loop;
  agent_plan_solve_fn solve;
  agent_plan_free_fn free_resp;
  /* The run in progress (at most one).  Left to the process's end if the
   * agent stops meanwhile: the thread touches only its own copies. */
  struct plan_run *running;
};

void agent_plan_async_init(struct agent_plan_async *pa, struct iob_loop *loop,
                           agent_plan_solve_fn solve, agent_plan_free_fn free_resp);
/* Solve REQ with CFG on a thread and answer CALL from the loop;
 * UNAVAILABLE while another plan runs. */
int agent_plan_async_start(struct agent_plan_async *pa, struct ttrpc_call *call,
                           const struct batch_config *cfg,
                           const Iobatch__Agent__V1__PlanRequest *req, struct iob_error **err);

#endif
