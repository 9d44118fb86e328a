/* iobatchd's Prometheus text endpoint (config key `metrics`): a small
 * HTTP/1.x server on the daemon's own loop, for loopback or a unix socket
 * only.  One GET /metrics (or HEAD) per connection, answered from memory
 * and closed: no threads, nothing that blocks the loop.
 *
 * Exposition format 0.0.4 ("text/plain; version=0.0.4"):
 * https://prometheus.io/docs/instrumenting/exposition_formats/ */
#ifndef IOB_AGENT_METRICS_H
#define IOB_AGENT_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "batcher/batcher.h"
#include "common/error.h"
#include "common/loop.h"

#define AGENT_METRICS_HEAD_MAX 8192  /* bytes of a request head */
#define AGENT_METRICS_PATH_MAX 1024  /* bytes of a request target */
#define AGENT_METRICS_MAX_CONNS 16   /* open connections; more are closed at once */
#define AGENT_METRICS_MAX_PER_PEER 4 /* of those, from one uid (unix) or address (TCP) */
#define AGENT_METRICS_PEER_MAX 64
#define AGENT_METRICS_TIMEOUT_MS 5000 /* a connection's whole life */

/* Why a container got admitted (label `reason`): the batcher's admit
 * reasons, "already_running" for one registered as running (an agent
 * restart) and "sandbox" for a pod sandbox (never held). */
enum agent_metrics_reason {
  AGENT_REASON_NOTHING_RUNNING = 0,
  AGENT_REASON_NO_CONFLICT,
  AGENT_REASON_PAYS,
  AGENT_REASON_PLAN,
  AGENT_REASON_FORCED_DEADLINE,
  AGENT_REASON_ALREADY_RUNNING,
  AGENT_REASON_PROBE,
  AGENT_REASON_SERVICE,
  AGENT_REASON_NO_ESTIMATE,
  AGENT_REASON_WAIT_BOUND,
  AGENT_REASON_CROWD,
  AGENT_REASON_SANDBOX,
  AGENT_REASON_N
};

enum agent_metrics_weight {
  AGENT_WEIGHT_WRITTEN = 0,
  AGENT_WEIGHT_NOT_ENFORCED,
  AGENT_WEIGHT_ERROR,
  AGENT_WEIGHT_N
};

#define AGENT_METRICS_WAIT_BUCKETS 9 /* 0.01 0.1 0.5 1 5 10 30 60 300 s, then +Inf */
/* 0.1 0.25 0.5 1 2.5 5 10 25 50 100 250 500 1000 ms, then +Inf: a plan
 * takes well under a millisecond for a few containers and a few hundred
 * for a thousand (README, Solver). */
#define AGENT_METRICS_PLAN_BUCKETS 13

/* Counters since the daemon started. */
struct agent_metrics {
  uint64_t admissions[AGENT_REASON_N];
  uint64_t cancellations, registrations;
  uint64_t wait_bucket[AGENT_METRICS_WAIT_BUCKETS]; /* per bucket, not cumulative */
  uint64_t wait_count, wait_sum_ms;
  uint64_t weight_writes[AGENT_WEIGHT_N];
  uint64_t plan_bucket[AGENT_METRICS_PLAN_BUCKETS]; /* per bucket, not cumulative */
  uint64_t plan_count, plan_sum_ns;
};

/* Count the admission of c (struct agent_ctr, agent/admission.h: its
 * reason, whether it was forced at its deadline, its kind); waited_ms the
 * time it was pending, observed for every container that could have been
 * held (not one registered running, not a sandbox). */
struct agent_ctr;
void agent_metrics_admitted(struct agent_metrics *m, const struct agent_ctr *c, uint64_t waited_ms);

/* A batcher run took ns nanoseconds (agent_metrics_now_ns before and after
 * agent_adm_tick when it planned). */
void agent_metrics_planned(struct agent_metrics *m, uint64_t ns);
uint64_t agent_metrics_now_ns(void); /* CLOCK_MONOTONIC */

/* What the gauges show, taken when a scrape comes. */
struct agent_metrics_view {
  uint64_t pending[BATCH_NCLASS], running[BATCH_NCLASS];
  uint64_t pending_oldest_ms; /* how long the oldest pending one has waited, 0: none */
  const char *policy, *matrix, *sampler;
};

/* Count the containers of the admission list into *v at now_ms. */
void agent_metrics_view_count(struct agent_metrics_view *v, const struct agent_ctr *list,
                              uint64_t now_ms);

/* The exposition text into a malloc'ed *out. */
int agent_metrics_render(const struct agent_metrics *m, const struct agent_metrics_view *v,
                         char **out, size_t *len, struct iob_error **err);

enum agent_http_method { AGENT_HTTP_GET = 0, AGENT_HTTP_HEAD, AGENT_HTTP_OTHER };

struct agent_http_request {
  int method; /* enum agent_http_method */
  char path[AGENT_METRICS_PATH_MAX];
};

/* Parse an HTTP/1.0 or 1.1 request head from a client (outside input).
 * Returns 1 with *req filled when buf holds the whole head (up to an empty
 * CRLF line), 0 when more bytes are needed, < 0 when it is malformed, with
 * the status to answer in *status (400, 414, 431 or 505). */
int agent_http_parse_request(const char *buf, size_t len, struct agent_http_request *req,
                             int *status);

/* Where the endpoint listens. */
struct agent_metrics_addr {
  struct sockaddr_storage sa;
  socklen_t salen;
  char path[108]; /* unix: the socket path; "" otherwise */
};

/* "unix:/ABS/PATH", "127.0.0.1:PORT" (any 127/8), "[::1]:PORT" or
 * "localhost:PORT" (127.0.0.1, no resolver).  Anything else, a non-loopback
 * address above all, is an error naming the key. */
int agent_metrics_addr_parse(const char *spec, struct agent_metrics_addr *a,
                             struct iob_error **err);

struct agent_metrics_server;
/* Render the current exposition text (malloc'ed) for a scrape. */
typedef int (*agent_metrics_fn)(void *user, char **out, size_t *len, struct iob_error **err);

int agent_metrics_server_open(struct iob_loop *loop, const char *spec, agent_metrics_fn fn,
                              void *user, struct agent_metrics_server **out,
                              struct iob_error **err);
/* Close the listener and every connection; a unix socket is unlinked. */
void agent_metrics_server_free(struct agent_metrics_server *s);
const char *agent_metrics_server_spec(const struct agent_metrics_server *s);
/* Who is at the other end of an accepted connection, for the per-peer
 * limit: "uid N" (SO_PEERCRED) on a unix socket, "address A" on TCP. */
int agent_metrics_peer_key(int fd, char *out, size_t n);

#endif
