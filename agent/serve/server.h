// SPDX-License-Identifier: Apache-2.0
/* The agent's ttrpc server (agent/serve/server.c): the glue between ttrpc and
 * the decoded request steps of agent/serve/requests.c.  It owns the ttrpc server
 * and the pending Admit calls (agent_ctr.serve.waiter); what a step changed
 * reaches its owner through an ops table, so that the server calls nothing
 * in daemon.c. */
#ifndef IOB_AGENT_SERVER_H
#define IOB_AGENT_SERVER_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/plan/admission.h"
#include "agent/serve/plan_async.h"
#include "common/error.h"
#include "common/loop.h"

struct agent_api;
struct ttrpc_server;

struct agent_server_ops {
  /* A request changed the state: plan if one is due. */
  void (*changed)(void *user);
  /* A pending container's caller went away: the owner ends c (and frees
   * it). */
  void (*remove)(struct agent_ctr *c, const char *why, uint64_t now, void *user);
};

struct agent_server {
  struct ttrpc_server *ttrpc;
  struct agent_plan_async plan; /* the Plan RPC's thread (agent/serve/plan_async.h) */
  struct agent_api *state;      /* what the request steps work on (agent/serve/requests.h) */
  const struct agent_server_ops *ops;
  void *user;
};

/* Serve the Agent API on SOCKET_PATH (its directory must be private). */
int agent_server_setup(struct agent_server *s, struct iob_loop *loop, const char *socket_path,
                       struct agent_api *state, const struct agent_server_ops *ops, void *user,
                       struct iob_error **err);
/* Close the socket (and unlink it). */
void agent_server_release(struct agent_server *s);
/* Answer ctr's pending Admit (if any) and drop the waiter. */
void agent_server_answer(struct agent_ctr *ctr, bool admitted, const char *reason);
/* Fail ctr's pending Admit (if any) with ABORTED: a newer Admit for the
 * same container replaces it. */
void agent_server_supersede(struct agent_ctr *ctr);
/* Fail ctr's pending Admit (if any) with UNAVAILABLE: the agent goes away. */
void agent_server_abort(struct agent_ctr *ctr, const char *why);

#endif
