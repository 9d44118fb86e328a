// SPDX-License-Identifier: Apache-2.0
/* iobatchd's Prometheus text endpoint (config key `metrics`): a small
 * HTTP/1.x server on the daemon's own loop, for loopback or a unix socket
 * only.  One GET /metrics (or HEAD) per connection, answered from memory
 * (the text of agent/serve/metrics.h, rendered by the caller) and closed: no
 * threads, nothing that blocks the loop. */
#ifndef IOB_AGENT_METRICS_SERVER_H
#define IOB_AGENT_METRICS_SERVER_H

#include <stddef.h>
#include <sys/socket.h>

#include "common/error.h"
#include "common/loop.h"

#define AGENT_METRICS_HEAD_MAX 8192  /* bytes of a request head */
#define AGENT_METRICS_PATH_MAX 1024  /* bytes of a request target */
#define AGENT_METRICS_MAX_CONNS 16   /* open connections; more are closed at once */
#define AGENT_METRICS_MAX_PER_PEER 4 /* of those, from one uid (unix) or address (TCP) */
/* A connection that has not sent a whole request head this long after it
 * was accepted is closed: a scraper sends its request at once. */
#define AGENT_METRICS_HEAD_MS 1000
#define AGENT_METRICS_PEER_MAX 64
#define AGENT_METRICS_TIMEOUT_MS 5000 /* from the request: time to take the reply */
/* Past the limits (all connections, or one peer's) a new connection
 * closes the oldest one, of that peer or of anyone, that is still waiting
 * for its request head, rather than being turned away: on TCP every local
 * user is one peer (127.0.0.1), and connections held open without a
 * request must not keep the scraper out.  Only when every connection is
 * being answered is a new one closed at once. */

enum agent_metrics_server_method {
  AGENT_METRICS_SERVER_GET = 0,
  AGENT_METRICS_SERVER_HEAD,
  AGENT_METRICS_SERVER_OTHER
};

struct agent_metrics_server_request {
  int method; /* enum agent_metrics_server_method */
  char path[AGENT_METRICS_PATH_MAX];
};

/* Parse an HTTP/1.0 or 1.1 request head from a client (outside input).
 * Returns 1 with *req filled when buf holds the whole head (up to an empty
 * CRLF line), 0 when more bytes are needed, < 0 when it is malformed, with
 * the status to answer in *status (400, 414, 431 or 505). */
int agent_metrics_server_parse_request(const char *buf, size_t len,
                                       struct agent_metrics_server_request *req, int *status);

/* Where the endpoint listens. */
struct agent_metrics_addr {
  struct sockaddr_storage sa;
  socklen_t salen;
  char path[108]; /* unix: the socket path; "" otherwise */
};

/* "unix:/ABS/PATH", "127.0.0.1:PORT" (any 127/8), "[::1]:PORT" or
 * "localhost:PORT" (127.0.0.1, no resolver).  Anything else, a non-loopback
 * address above all, is an error naming the key. */
int agent_metrics_server_addr_parse(const char *spec, struct agent_metrics_addr *a,
                                    struct iob_error **err);

struct agent_metrics_server;
/* Render the current exposition text (malloc'ed) for a scrape. */
typedef int (*agent_metrics_fn)(void *user, char **out, size_t *len, struct iob_error **err);

/* GROUP (config key metrics_group; 0: none) lets a non-root reader in:
 * the unix socket is made 0660 and its directory 0750, both of GROUP (the
 * directory must be ours and writable by nobody else, or it is refused);
 * without it they are 0600 and (when created) 0700.  A group with a TCP
 * endpoint is an error. */
int agent_metrics_server_open(struct iob_loop *loop, const char *spec, unsigned group,
                              agent_metrics_fn fn, void *user, struct agent_metrics_server **out,
                              struct iob_error **err);
/* iobatchd's endpoint SPEC (NULL: none, *out NULL; then a GROUP is an
 * error), beside its API socket API_SOCKET: with GROUP the group may list
 * the metrics socket's directory, so it must not be the API socket's
 * (root's, 0700, agent/serve/server.c). */
int agent_metrics_server_open_beside(struct iob_loop *loop, const char *spec, unsigned group,
                                     const char *api_socket, agent_metrics_fn fn, void *user,
                                     struct agent_metrics_server **out, struct iob_error **err);
/* *S (NULL: none) replaced by the endpoint SPEC and GROUP, opened as
 * agent_metrics_server_open_beside does: the new endpoint opens before the
 * old one closes, so a bad value or a busy port keeps the old one; only
 * the same unix path under another spelling, which cannot be bound twice,
 * is closed first. */
int agent_metrics_server_replace(struct agent_metrics_server **s, struct iob_loop *loop,
                                 const char *spec, unsigned group, const char *api_socket,
                                 agent_metrics_fn fn, void *user, struct iob_error **err);
/* Close the listener and every connection; a unix socket is unlinked. */
void agent_metrics_server_free(struct agent_metrics_server *s);
const char *agent_metrics_server_spec(const struct agent_metrics_server *s);
unsigned agent_metrics_server_group(const struct agent_metrics_server *s);
/* Who is at the other end of an accepted connection, for the per-peer
 * limit: "uid N" (SO_PEERCRED) on a unix socket, "address A" on TCP. */
int agent_metrics_server_peer_key(int fd, char *out, size_t n);

#endif
