// SPDX-License-Identifier: Apache-2.0
/* The metrics endpoint's HTTP/1.x server (agent/serve/metrics_server.h). */
#include "agent/serve/metrics_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/log.h"
#include "common/xalloc.h"

/* RFC 9110 5.6.2 token characters. */
static bool is_tchar(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         (c != 0 && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static int bad(int *status, int code) {
  *status = code;
  return -1;
}

/* The request line: METHOD SP TARGET SP HTTP/1.x (RFC 9112 3).  No
 * HTTP/0.9 (a line without a version). */
static int parse_request_line(const char *s, size_t n, struct agent_metrics_server_request *req,
                              int *status) {
  size_t i = 0;
  while (i < n && is_tchar((unsigned char)s[i]))
    i++;
  if (i == 0 || i >= n || s[i] != ' ')
    return bad(status, 400);
  if (i == 3 && memcmp(s, "GET", 3) == 0)
    req->method = AGENT_METRICS_SERVER_GET;
  else if (i == 4 && memcmp(s, "HEAD", 4) == 0)
    req->method = AGENT_METRICS_SERVER_HEAD;
  else
    req->method = AGENT_METRICS_SERVER_OTHER;
  size_t p = ++i;
  while (i < n && s[i] > ' ' && s[i] < 0x7f)
    i++;
  if (i == p || i >= n || s[i] != ' ')
    return bad(status, 400);
  if (i - p >= AGENT_METRICS_PATH_MAX)
    return bad(status, 414);
  memcpy(req->path, s + p, i - p);
  req->path[i - p] = '\0';
  const char *ver = s + i + 1;
  size_t vn = n - i - 1;
  if (vn != 8 || memcmp(ver, "HTTP/", 5) != 0 || ver[6] != '.' || ver[5] < '0' || ver[5] > '9' ||
      ver[7] < '0' || ver[7] > '9')
    return bad(status, 400);
  if (ver[5] != '1')
    return bad(status, 505);
  return 0;
}

/* A header field line: NAME ":" VALUE; the values are not used. */
static int check_field(const char *s, size_t n, int *status) {
  size_t i = 0;
  while (i < n && is_tchar((unsigned char)s[i]))
    i++;
  if (i == 0 || i >= n || s[i] != ':')
    return bad(status, 400);
  return 0;
}

int agent_metrics_server_parse_request(const char *buf, size_t len,
                                       struct agent_metrics_server_request *req, int *status) {
  *status = 0;
  size_t lim = len < AGENT_METRICS_HEAD_MAX ? len : AGENT_METRICS_HEAD_MAX;
  size_t start = 0;
  unsigned lineno = 0;
  for (size_t i = 0; i < lim; i++) {
    unsigned char c = (unsigned char)buf[i];
    /* Control bytes, DEL and anything not ASCII have no place in the head
     * of a scrape; a bare LF is a broken line ending. */
    if (c == '\n') {
      if (i == start || buf[i - 1] != '\r')
        return bad(status, 400);
      size_t n = i - 1 - start;
      if (n == 0) {
        if (lineno == 0)
          return bad(status, 400);
        return 1;
      }
      int r = lineno == 0 ? parse_request_line(buf + start, n, req, status)
                          : check_field(buf + start, n, status);
      if (r < 0)
        return -1;
      lineno++;
      start = i + 1;
    } else if (c == '\r') {
      if (i + 1 < lim && buf[i + 1] != '\n')
        return bad(status, 400);
    } else if ((c < 0x20 && c != '\t') || c >= 0x7f) {
      return bad(status, 400);
    }
  }
  if (lineno == 0 && lim - start >= AGENT_METRICS_PATH_MAX + 32)
    return bad(status, 414);
  if (len >= AGENT_METRICS_HEAD_MAX)
    return bad(status, 431);
  return 0;
}

int agent_metrics_server_addr_parse(const char *spec, struct agent_metrics_addr *a,
                                    struct iob_error **err) {
  memset(a, 0, sizeof(*a));
  const char *expect = "expected unix:/PATH, 127.0.0.1:PORT, [::1]:PORT or localhost:PORT";
  if (strncmp(spec, "unix:", 5) == 0) {
    const char *p = spec + 5;
    if (p[0] != '/' || strlen(p) >= sizeof(a->path))
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                            "invalid value '%s' for 'metrics': a unix socket needs an absolute "
                            "path shorter than %zu bytes",
                            spec, sizeof(a->path));
    struct sockaddr_un *un = (struct sockaddr_un *)&a->sa;
    un->sun_family = AF_UNIX;
    snprintf(un->sun_path, sizeof(un->sun_path), "%s", p);
    snprintf(a->path, sizeof(a->path), "%s", p);
    a->salen = (socklen_t)sizeof(*un);
    return 0;
  }
  const char *colon = strrchr(spec, ':');
  if (colon == NULL || colon == spec)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid value '%s' for 'metrics': %s",
                          spec, expect);
  char *end = NULL;
  errno = 0;
  unsigned long port = strtoul(colon + 1, &end, 10);
  if (colon[1] < '0' || colon[1] > '9' || errno != 0 || *end != '\0' || port == 0 || port > 65535)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "invalid value '%s' for 'metrics': the port must be 1 to 65535", spec);
  char host[64];
  size_t hn = (size_t)(colon - spec);
  if (hn >= sizeof(host))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid value '%s' for 'metrics': %s",
                          spec, expect);
  memcpy(host, spec, hn);
  host[hn] = '\0';
  struct sockaddr_in *in4 = (struct sockaddr_in *)&a->sa;
  struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a->sa;
  if (strcmp(host, "localhost") == 0)
    snprintf(host, sizeof(host), "127.0.0.1");
  if (host[0] == '[' && hn >= 2 && host[hn - 1] == ']') {
    host[hn - 1] = '\0';
    if (inet_pton(AF_INET6, host + 1, &in6->sin6_addr) != 1)
      return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid value '%s' for 'metrics': %s",
                            spec, expect);
    if (!IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
      goto not_loopback;
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons((uint16_t)port);
    a->salen = (socklen_t)sizeof(*in6);
    return 0;
  }
  if (inet_pton(AF_INET, host, &in4->sin_addr) != 1)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT, "invalid value '%s' for 'metrics': %s",
                          spec, expect);
  if ((ntohl(in4->sin_addr.s_addr) >> 24) != 127)
    goto not_loopback;
  in4->sin_family = AF_INET;
  in4->sin_port = htons((uint16_t)port);
  a->salen = (socklen_t)sizeof(*in4);
  return 0;
not_loopback:
  /* Container names and workload mix are nobody else's business: the
   * endpoint has no authentication, so it stays on this host. */
  memset(a, 0, sizeof(*a));
  return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                        "invalid value '%s' for 'metrics': not a loopback address (%s)", spec,
                        expect);
}

struct metrics_conn {
  struct agent_metrics_server *srv;
  struct metrics_conn *next;
  int fd;
  struct iob_timer *timer;
  char in[AGENT_METRICS_HEAD_MAX];
  size_t in_len;
  char *out; /* the whole reply; nothing else is buffered */
  size_t out_len, out_off;
  char peer[AGENT_METRICS_PEER_MAX]; /* agent_metrics_server_peer_key */
};

struct agent_metrics_server {
  struct iob_loop *loop;
  int fd;
  char *spec;
  char path[108]; /* unix socket to unlink, "" for TCP */
  unsigned group; /* metrics_group, 0: none */
  agent_metrics_fn fn;
  void *user;
  struct metrics_conn *conns;
  unsigned nconns;
};

static void conn_close(struct metrics_conn *c) {
  struct agent_metrics_server *s = c->srv;
  for (struct metrics_conn **p = &s->conns; *p; p = &(*p)->next)
    if (*p == c) {
      *p = c->next;
      break;
    }
  s->nconns--;
  if (c->timer)
    iob_timer_cancel(s->loop, c->timer);
  iob_loop_del(s->loop, c->fd);
  close(c->fd);
  free(c->out);
  free(c);
}

static void on_conn_timeout(struct iob_loop *loop, void *data) {
  (void)loop;
  struct metrics_conn *c = data;
  c->timer = NULL; /* fired timers are freed by the loop */
  iob_debug("metrics: connection closed: %s",
            c->out ? "its reply not taken in time" : "no whole request in time");
  conn_close(c);
}

/* Close the oldest connection (of PEER, or of anyone when NULL) that is
 * still waiting for its request; false when there is none. */
static bool evict_waiting(struct agent_metrics_server *s, const char *peer) {
  struct metrics_conn *old = NULL; /* the list is newest first */
  for (struct metrics_conn *c = s->conns; c; c = c->next)
    if (c->out == NULL && (peer == NULL || strcmp(c->peer, peer) == 0))
      old = c;
  if (old == NULL)
    return false;
  iob_debug("metrics: closed the oldest connection waiting for a request (%s) for a new one",
            old->peer);
  conn_close(old);
  return true;
}

static const char *status_text(int code) {
  switch (code) {
  case 200:
    return "OK";
  case 404:
    return "Not Found";
  case 405:
    return "Method Not Allowed";
  case 414:
    return "URI Too Long";
  case 431:
    return "Request Header Fields Too Large";
  case 505:
    return "HTTP Version Not Supported";
  case 500:
    return "Internal Server Error";
  }
  return "Bad Request";
}

/* Build the whole reply; body NULL: a one-line text body with the status. */
static void make_reply(struct metrics_conn *c, int code, const char *body, size_t body_len,
                       bool head_only) {
  char small[64];
  if (body == NULL) {
    snprintf(small, sizeof(small), "%d %s\n", code, status_text(code));
    body = small;
    body_len = strlen(small);
  }
  char *all = xasprintf("HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
                        "Connection: close\r\n\r\n",
                        code, status_text(code),
                        code == 200 ? "text/plain; version=0.0.4; charset=utf-8"
                                    : "text/plain; charset=utf-8",
                        body_len, code == 405 ? "Allow: GET, HEAD\r\n" : "");
  size_t n = strlen(all);
  size_t total = n + (head_only ? 0 : body_len);
  all = xrealloc(all, total + 1);
  if (!head_only)
    memcpy(all + n, body, body_len);
  c->out = all;
  c->out_len = total;
  c->out_off = 0;
}

/* Write what the socket takes now; 1: all sent, 0: later, < 0: drop. */
static int conn_flush(struct metrics_conn *c) {
  while (c->out_off < c->out_len) {
    ssize_t w = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      return 0;
    if (w <= 0)
      return -1;
    c->out_off += (size_t)w;
  }
  return 1;
}

static void answer(struct metrics_conn *c, const struct agent_metrics_server_request *req,
                   int code) {
  struct agent_metrics_server *s = c->srv;
  cleanup_free char *body = NULL;
  size_t body_len = 0;
  bool head_only = false;
  if (code == 0) {
    const char *q = strchr(req->path, '?');
    size_t pn = q ? (size_t)(q - req->path) : strlen(req->path);
    if (req->method == AGENT_METRICS_SERVER_OTHER)
      code = 405;
    else if (pn != 8 || memcmp(req->path, "/metrics", 8) != 0)
      code = 404;
    else {
      cleanup_error struct iob_error *err = NULL;
      code = 200;
      if (s->fn(s->user, &body, &body_len, &err) < 0) {
        iob_warn("metrics: %s", err->msg);
        code = 500;
      }
    }
    head_only = req->method == AGENT_METRICS_SERVER_HEAD;
  }
  make_reply(c, code, code == 200 ? body : NULL, body_len, head_only);
  int r = conn_flush(c);
  cleanup_error struct iob_error *err = NULL;
  if (r != 0 || iob_loop_mod(s->loop, c->fd, EPOLLOUT, &err) < 0) {
    conn_close(c); /* sent, or the client is gone */
    return;
  }
  /* The rest of the reply: the connection's whole life to take it. */
  if (c->timer)
    iob_timer_cancel(s->loop, c->timer);
  c->timer = iob_loop_timer(s->loop, AGENT_METRICS_TIMEOUT_MS, on_conn_timeout, c);
}

static void on_conn(struct iob_loop *loop, int fd, uint32_t events, void *data) {
  (void)loop;
  (void)fd;
  struct metrics_conn *c = data;
  if (c->out) {
    if ((events & (EPOLLERR | EPOLLHUP)) || conn_flush(c) != 0)
      conn_close(c);
    return;
  }
  bool eof = false;
  for (;;) {
    if (c->in_len == sizeof(c->in))
      break;
    ssize_t r = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, 0);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
      break;
    if (r == 0 && c->in_len > 0) {
      /* Half-closed after its request (socat, `printf ... | nc -N`): the
       * reply can still go out. */
      eof = true;
      break;
    }
    if (r <= 0) {
      conn_close(c); /* closed before a request, or an error */
      return;
    }
    c->in_len += (size_t)r;
  }
  struct agent_metrics_server_request req;
  int status = 0;
  int p = agent_metrics_server_parse_request(c->in, c->in_len, &req, &status);
  if (p == 0 && eof) {
    conn_close(c); /* closed before a whole request */
    return;
  }
  if (p == 0)
    return; /* more to come, or the timeout */
  answer(c, &req, p < 0 ? status : 0);
}

int agent_metrics_server_peer_key(int fd, char *out, size_t n) {
  struct sockaddr_storage ss;
  socklen_t len = sizeof(ss);
  if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
    return -1;
  if (ss.ss_family == AF_UNIX) {
    struct ucred cr;
    socklen_t crlen = sizeof(cr);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crlen) < 0)
      return -1;
    snprintf(out, n, "uid %u", (unsigned)cr.uid);
    return 0;
  }
  len = sizeof(ss);
  if (getpeername(fd, (struct sockaddr *)&ss, &len) < 0)
    return -1;
  char a[INET6_ADDRSTRLEN] = "";
  const void *src = ss.ss_family == AF_INET6
                        ? (const void *)&((struct sockaddr_in6 *)&ss)->sin6_addr
                        : (const void *)&((struct sockaddr_in *)&ss)->sin_addr;
  if (inet_ntop(ss.ss_family, src, a, sizeof(a)) == NULL)
    return -1;
  snprintf(out, n, "address %s", a);
  return 0;
}

static unsigned peer_conns(const struct agent_metrics_server *s, const char *peer) {
  unsigned n = 0;
  for (const struct metrics_conn *c = s->conns; c; c = c->next)
    n += strcmp(c->peer, peer) == 0;
  return n;
}

static void on_accept(struct iob_loop *loop, int fd, uint32_t events, void *data) {
  (void)events;
  struct agent_metrics_server *s = data;
  for (;;) {
    int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (cfd < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
        iob_warn("metrics: accept: %s", strerror(errno));
      if (errno == EINTR || errno == ECONNABORTED)
        continue;
      return;
    }
    /* One peer (a local user, an address) gets a share of the slots, and
     * past it or past all of them the oldest connection still waiting for
     * its request makes room (agent/serve/metrics_server.h): scrapers are few
     * and quick, so it is a stuck or hostile one. */
    char peer[AGENT_METRICS_PEER_MAX];
    if (agent_metrics_server_peer_key(cfd, peer, sizeof(peer)) < 0 ||
        (peer_conns(s, peer) >= AGENT_METRICS_MAX_PER_PEER && !evict_waiting(s, peer)) ||
        (s->nconns >= AGENT_METRICS_MAX_CONNS && !evict_waiting(s, NULL))) {
      close(cfd);
      continue;
    }
    struct metrics_conn *c = xcalloc(1, sizeof(*c));
    cleanup_error struct iob_error *err = NULL;
    c->srv = s;
    c->fd = cfd;
    memcpy(c->peer, peer, sizeof(peer));
    c->timer = iob_loop_timer(loop, AGENT_METRICS_HEAD_MS, on_conn_timeout, c);
    if (iob_loop_add(loop, cfd, EPOLLIN, on_conn, c, &err) < 0) {
      iob_timer_cancel(loop, c->timer);
      close(cfd);
      free(c);
      continue;
    }
    c->next = s->conns;
    s->conns = c;
    s->nconns++;
  }
}

/* The directory of a unix metrics socket.  Without a group: made 0700
 * when missing, the API socket's rule (agent/serve/server.c).  With
 * GROUP: a directory of its own, root's, made (or changed to) 0750 and of
 * GROUP through an O_NOFOLLOW descriptor, so that members of GROUP reach
 * the socket and nothing else of the agent's.  One that others can write,
 * or that is not ours, is refused: they may already have put something in
 * it. */
static int socket_dir(const char *path, unsigned group, struct iob_error **err) {
  cleanup_free char *dir = xstrdup(path);
  char *slash = strrchr(dir, '/');
  if (slash == NULL || slash == dir)
    return group ? iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                                  "metrics_group: the metrics socket '%s' needs a directory of "
                                  "its own, not /",
                                  path)
                 : 0;
  *slash = '\0';
  if (mkdir(dir, 0700) < 0 && errno != EEXIST) /* checked: agent/serve/server.c */
    return iob_error(err, errno, "cannot create socket directory '%s'", dir);
  if (group == 0)
    return 0;
  cleanup_close int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0)
    return iob_error(err, errno, "metrics socket directory '%s'", dir);
  if (st.st_uid != geteuid() || (st.st_mode & 022))
    return iob_error_code(err, IOB_CODE_PERMISSION_DENIED,
                          "metrics socket directory '%s' (owner %u, mode %04o) must be ours (uid "
                          "%u) and writable by nobody else",
                          dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777),
                          (unsigned)geteuid());
  if (st.st_gid != group && fchown(fd, (uid_t)-1, (gid_t)group) < 0)
    return iob_error(err, errno,
                     "cannot give metrics socket directory '%s' to group %u (the agent must be "
                     "in the group, or have CAP_CHOWN)",
                     dir, group);
  if ((st.st_mode & 07777) != 0750 && fchmod(fd, 0750) < 0)
    return iob_error(err, errno, "cannot set the mode of metrics socket directory '%s' to 0750",
                     dir);
  return 0;
}

static int listen_on(const struct agent_metrics_addr *a, const char *spec, unsigned group,
                     struct iob_error **err) {
  int family = a->sa.ss_family;
  if (family != AF_UNIX && group)
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "metrics_group %u: needs metrics = unix:PATH, not '%s'", group, spec);
  if (family == AF_UNIX) {
    struct stat st;
    if (lstat(a->path, &st) == 0) {
      if (!S_ISSOCK(st.st_mode))
        return iob_error(err, EEXIST, "cannot listen on '%s' (metrics): not a socket", a->path);
      /* A socket left by an agent that did not stop cleanly: ours. */
      if (unlink(a->path) < 0 && errno != ENOENT)
        return iob_error(err, errno, "cannot remove stale socket '%s'", a->path);
    }
    if (socket_dir(a->path, group, err) < 0)
      return -1;
  }
  cleanup_close int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return iob_error(err, errno, "cannot create a socket for metrics '%s'", spec);
  int one = 1;
  if (family != AF_UNIX && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0)
    return iob_error(err, errno, "cannot set SO_REUSEADDR for metrics '%s'", spec);
  /* Like the API socket (ttrpc_server_listen): 0600 from the bind on, by
   * the socket's own mode and the umask, never a chmod by path; 0660 with
   * a metrics group. */
  mode_t mode = group ? 0660 : 0600;
  if (family == AF_UNIX && fchmod(fd, mode) < 0)
    return iob_error(err, errno, "cannot set the mode of the metrics socket '%s'", spec);
  mode_t old = umask(0777 & ~mode);
  int r = bind(fd, (const struct sockaddr *)&a->sa, a->salen);
  int e = errno;
  umask(old);
  if (r < 0)
    return iob_error(err, e, "cannot bind metrics '%s'", spec);
  /* The group, by path: the directory is ours and nobody else writes it
   * (socket_dir), and nothing can connect before listen(). */
  if (group && lchown(a->path, (uid_t)-1, (gid_t)group) < 0) {
    e = errno;
    unlink(a->path);
    return iob_error(err, e,
                     "cannot give the metrics socket '%s' to group %u (the agent must be in the "
                     "group, or have CAP_CHOWN)",
                     a->path, group);
  }
  if (listen(fd, AGENT_METRICS_MAX_CONNS) < 0) {
    e = errno;
    if (family == AF_UNIX)
      unlink(a->path);
    return iob_error(err, e, "cannot listen on metrics '%s'", spec);
  }
  return steal_fd(&fd);
}

int agent_metrics_server_open(struct iob_loop *loop, const char *spec, unsigned group,
                              agent_metrics_fn fn, void *user, struct agent_metrics_server **out,
                              struct iob_error **err) {
  struct agent_metrics_addr a;
  if (agent_metrics_server_addr_parse(spec, &a, err) < 0)
    return -1;
  struct agent_metrics_server *s = xcalloc(1, sizeof(*s));
  s->spec = xstrdup(spec);
  s->loop = loop;
  s->fn = fn;
  s->user = user;
  s->group = group;
  s->fd = listen_on(&a, spec, group, err);
  if (s->fd < 0) {
    free(s->spec);
    free(s);
    return -1;
  }
  snprintf(s->path, sizeof(s->path), "%s", a.path);
  if (iob_loop_add(loop, s->fd, EPOLLIN, on_accept, s, err) < 0) {
    agent_metrics_server_free(s);
    return -1;
  }
  *out = s;
  return 0;
}

void agent_metrics_server_free(struct agent_metrics_server *s) {
  if (s == NULL)
    return;
  while (s->conns)
    conn_close(s->conns);
  iob_loop_del(s->loop, s->fd);
  close(s->fd);
  if (s->path[0] && unlink(s->path) < 0 && errno != ENOENT)
    iob_warn("cannot remove '%s': %s", s->path, strerror(errno));
  free(s->spec);
  free(s);
}

const char *agent_metrics_server_spec(const struct agent_metrics_server *s) {
  return s->spec;
}

unsigned agent_metrics_server_group(const struct agent_metrics_server *s) {
  return s->group;
}

/* Whether unix socket paths A and B are in the same directory. */
static bool same_dir(const char *a, const char *b) {
  const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
  return sa && sb && sa - a == sb - b && strncmp(a, b, (size_t)(sa - a)) == 0;
}

int agent_metrics_server_open_beside(struct iob_loop *loop, const char *spec, unsigned group,
                                     const char *api_socket, agent_metrics_fn fn, void *user,
                                     struct agent_metrics_server **out, struct iob_error **err) {
  *out = NULL;
  if (spec == NULL)
    return group ? iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                                  "metrics_group %u: no metrics = unix:PATH to give it", group)
                 : 0;
  if (group && strncmp(spec, "unix:", 5) == 0 && same_dir(spec + 5, api_socket))
    return iob_error_code(err, IOB_CODE_INVALID_ARGUMENT,
                          "metrics_group %u: the metrics socket '%s' needs a directory of its "
                          "own, not the API socket's ('%s'): e.g. unix:/run/iobatch/metrics/"
                          "metrics.sock",
                          group, spec + 5, api_socket);
  return agent_metrics_server_open(loop, spec, group, fn, user, out, err);
}

int agent_metrics_server_replace(struct agent_metrics_server **s, struct iob_loop *loop,
                                 const char *spec, unsigned group, const char *api_socket,
                                 agent_metrics_fn fn, void *user, struct iob_error **err) {
  struct agent_metrics_server *ns = NULL;
  if (spec) {
    struct agent_metrics_addr a;
    if (agent_metrics_server_addr_parse(spec, &a, err) < 0)
      return -1;
    const char *cur = *s ? agent_metrics_server_spec(*s) : "";
    if (a.path[0] && strncmp(cur, "unix:", 5) == 0 && strcmp(cur + 5, a.path) == 0) {
      agent_metrics_server_free(*s);
      *s = NULL;
    }
  }
  if (agent_metrics_server_open_beside(loop, spec, group, api_socket, fn, user, &ns, err) < 0)
    return -1;
  agent_metrics_server_free(*s);
  *s = ns;
  return 0;
}
