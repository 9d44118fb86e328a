// SPDX-License-Identifier: Apache-2.0
/* libagentclient: how a shim (or anything with an event loop) talks to
 * iobatchd.  Every call is asynchronous on the caller's loop.
 *
 * Fail open: when the agent cannot be asked (no socket, connection refused
 * or lost and not back within CLIENT_RETRY_MS, no answer before the
 * caller's timeout, an error reply), an Admit completes with admitted =
 * true and fail_open = true, and a warning line says why.  With
 * fail_closed set it completes with admitted = false instead.
 *
 * Soft state: when the connection drops while an Admit waits (the agent
 * restarted), the client reconnects, registers the container again and
 * repeats the Admit, so a pending container is never lost.  Containers it
 * admitted (or failed open), and those registered as running, are
 * remembered until Exited or Cancel; whenever
 * it connects anew it registers them again as running.  A lost connection
 * is noticed at once (the loop sees it close); the client then looks for
 * the agent every 200 ms for CLIENT_RETRY_MS, then from
 * CLIENT_WATCH_MS backing off to CLIENT_WATCH_MAX_MS.  While
 * connected and no Admit waits it sets no timer.
 *
 * Bounded waits: an agent that is there but silent (SIGSTOPped, hung,
 * being debugged) must not hold a Start for ever.  Two ways it shows:
 *  - its listen backlog is full: a connect would block until it accepts.
 *    The client connects without blocking (ttrpc_client_connect_timeout,
 *    one try); an Admit refused with EAGAIN tries again every 200 ms and
 *    goes on without the agent timeout_ms after the first refusal;
 *  - the connection is made (the kernel queues it on the backlog, or the
 *    agent stopped later) but nothing comes back.  An Admit may wait
 *    legitimately for minutes while the agent holds the container, so its
 *    own silence proves nothing, and ttrpc has no keepalive
 *    (containerd/ttrpc#203).  So while an Admit is in flight the client
 *    sends the agent a Ping (answered at once from the agent's loop)
 *    every timeout_ms / 5, each with a deadline of the rest of timeout_ms;
 *    one Ping past its deadline means the loop does not run: every
 *    waiting Admit completes without the agent (fail open, or closed),
 *    the connection is dropped, and the agent is looked for again like a
 *    lost one.  Any answer to a Ping counts, an error included (an agent
 *    from before Ping answers UNIMPLEMENTED).  Silence is thus noticed
 *    within timeout_ms of its start.
 * Register, Cancel and Exited time out after timeout_ms.  timeout_ms is
 * CLIENT_TIMEOUT_MS unless client_set_timeout says otherwise
 * (the shim: IobatchAgentTimeoutMs in its runtime options).
 *
 * Use from the shim:
 *
 *   struct client *ac;
 *   client_new(loop, NULL, false, &ac, &err);   // once
 *
 *   Create, after runc create (client/birth.h):
 *     client_birth_sample(NULL, pid, &b, &err);
 *     client_register_birth(ac, &ctr, &b, on_registered, task, &err);
 *     ... on_registered(task, journalled, err): the Create is answered
 *   Start of an init process:
 *     client_admit(ac, &ctr, timeout_ms, on_admitted, task, &err);
 *     ... on_admitted(task, &a): a->admitted ? runc start : fail Start
 *   Kill / Delete of a task whose Admit is still pending:
 *     client_cancel(ac, ns, id, NULL, NULL, &err);    // on_admitted runs
 *                                                     // with "cancelled"
 *   Exit of an init process:
 *     client_exited(ac, ns, id, status, NULL, NULL, &err);
 *
 *   client_free(ac);   // pending admits complete with "client closed"
 */
#ifndef IOB_CLIENT_CLIENT_H
#define IOB_CLIENT_CLIENT_H

#include <stdbool.h>
#include <stdint.h>

#include "client/api.h" /* AGENT_DEFAULT_SOCKET */
#include "client/birth.h"
#include "common/error.h"
#include "common/loop.h"
#include "iobatch/agent.pb-c.h"

#define CLIENT_TIMEOUT_MS 5000    /* default: silence tolerated, per call */
#define CLIENT_RETRY_MS 3000      /* how long a lost agent is waited for */
#define CLIENT_WATCH_MS 1000      /* first look for a lost agent */
#define CLIENT_WATCH_MAX_MS 16000 /* slowest look for a lost agent */

struct client;

/* What the agent is told about a container (strings are copied). */
struct client_container {
  const char *id;
  const char *ns;     /* containerd namespace */
  uint32_t pid;       /* init pid, 0 when not known yet */
  const char *cgroup; /* relative to the cgroup2 mount ("/a/b"), may be NULL */
  const char *bundle;
  const char *declared_class; /* annotation io.iobatch.class, may be NULL */
  const char *workload_key;   /* wcd_workload_key(), may be NULL */
  const char *kind;           /* "job", "service", "sandbox"; NULL: not said (job) */
  const char *pod_name, *pod_namespace, *container_name; /* CRI names, may be NULL */
  uint32_t max_hold_ms;                                  /* 0: the agent's default */
  uint32_t lat_target_us;                                /* io.iobatch.latency-target; 0: none */
  bool running;                                          /* already started (re-registration) */
  /* kind is the CRI's container type (wcd_kind.runtime), not
   * io.iobatch.kind: RegisterRequest.kind_source RUNTIME, else ANNOTATION. */
  bool kind_from_runtime;
};

/* RegisterRequest.kind_source (and AdmitRequest's) for KIND. */
Iobatch__Agent__V1__KindSource client_kind_source(const char *kind, bool from_runtime);

/* The RegisterRequest for ctr, sent by SOURCE ("shim", "hook", "iobatchctl",
 * "bench"); the only place one is filled.  Its strings point into ctr
 * (NULL becomes ""); no baseline (the hook adds its own). */
void client_register_request(const struct client_container *ctr, const char *source,
                             Iobatch__Agent__V1__RegisterRequest *out);

struct client_admission {
  bool admitted;  /* start the container now */
  bool fail_open; /* admitted without the agent's word; reason says why */
  bool no_agent;  /* the agent was not asked (fail open or closed); reason names
                     its socket and why */
  const char *reason;
  uint64_t held_ms;
  const char *cls; /* class the agent assumed ("" when not asked) */
  unsigned io_weight;
};

/* Runs on the loop, exactly once per successful client_admit. */
typedef void (*client_admit_fn)(void *user, const struct client_admission *a);
/* err NULL on success; runs on the loop.  May be NULL. */
typedef void (*client_done_fn)(void *user, const struct iob_error *err);

/* socket_path NULL: AGENT_DEFAULT_SOCKET.  Does not connect yet. */
int client_new(struct iob_loop *loop, const char *socket_path, bool fail_closed,
               struct client **out, struct iob_error **err);
void client_free(struct client *c);

int client_register(struct client *c, const struct client_container *ctr, client_done_fn done,
                    void *user, struct iob_error **err);

/* Runs on the loop, exactly once per successful client_register_birth:
 * err NULL when the agent took it; journalled: it journalled the birth's
 * weight, which may now be written (client_birth_weight_write). */
typedef void (*client_registered_fn)(void *user, bool journalled, const struct iob_error *err);
/* Register ctr with its birth (baseline, first weight).  Returns < 0 at
 * once when the agent cannot be reached (fn does not run then). */
int client_register_birth(struct client *c, const struct client_container *ctr,
                          const struct client_birth *b, client_registered_fn fn, void *user,
                          struct iob_error **err);

/* Ask to start ctr.  timeout_ms (0: none) is the caller's own deadline (a
 * Start's timeout_nano less what starting takes): the agent admits by force
 * before it, and if no answer came by then the client fails open.  Returns
 * < 0 only for bad arguments or no memory; agent trouble is reported
 * through fn (fail open). */
int client_admit(struct client *c, const struct client_container *ctr, int timeout_ms,
                 client_admit_fn fn, void *user, struct iob_error **err);

/* The container is killed or deleted before it started: completes a
 * pending admit of (ns, id) at once with admitted = false, "cancelled",
 * and tells the agent. */
int client_cancel(struct client *c, const char *ns, const char *id, client_done_fn done, void *user,
                  struct iob_error **err);

int client_exited(struct client *c, const char *ns, const char *id, uint32_t exit_status,
                  client_done_fn done, void *user, struct iob_error **err);

/* How long the agent may stay silent (see above); 0: the default. */
void client_set_timeout(struct client *c, unsigned timeout_ms);

/* Admits still waiting for an answer. */
unsigned client_pending(const struct client *c);

#endif
