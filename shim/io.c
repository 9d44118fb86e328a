// SPDX-License-Identifier: Apache-2.0
/* A process's stdio: containerd's FIFOs opened by path, pipes to the
 * process, copying on the event loop; file:// and binary:// loggers; the
 * pty master when there is a terminal.  (docs/reference/shim-v2.md section 5, I/O) */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "shim/io.h"
#include "shim/spawn.h"
#include "shim/uri.h"
#include "shim/validate.h"

#define COPY_BUF 4096
#define LOGGER_READY_MS 10000

struct copier {
  struct shim_io *io;
  int src;
  int dst;
  bool blocking_dst; /* the pty master: also a source, one watch per fd */
  bool output;
  bool done;
  char *buf;
  size_t len, off;
};

struct shim_io {
  struct iob_loop *loop;
  bool terminal;
  int proc[3];      /* the process's ends, handed to runc */
  int fifo_in;      /* stdin FIFO, read side */
  int fifo_in_keep; /* extra writer so a client going away is no EOF */
  int in_w;         /* our end of the stdin pipe */
  int out_r[2];     /* our ends of the stdout/stderr pipes */
  int fifo_out[2];  /* stdout/stderr FIFOs */
  int master;
  pid_t logger;
  struct copier *c[3];
};

static void close_fd(int *fd) {
  if (*fd >= 0)
    close(*fd);
  *fd = -1;
}

static struct shim_io *io_alloc(struct iob_loop *loop) {
  struct shim_io *io = xcalloc(1, sizeof(*io));
  io->loop = loop;
  io->proc[0] = io->proc[1] = io->proc[2] = -1;
  io->fifo_in = io->fifo_in_keep = io->in_w = io->master = -1;
  io->out_r[0] = io->out_r[1] = io->fifo_out[0] = io->fifo_out[1] = -1;
  return io;
}

/* Opening O_RDWR never blocks on a FIFO and makes us a reader as well, so a
 * client that goes away does not turn our writes into EPIPE. */
static int open_out_fifo(const char *path, int *fd, struct iob_error **err) {
  *fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (*fd < 0)
    return iob_error(err, errno, "cannot open '%s'", path);
  return 0;
}

static int open_in_fifo(struct shim_io *io, const char *path, struct iob_error **err) {
  io->fifo_in = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (io->fifo_in < 0)
    return iob_error(err, errno, "cannot open '%s'", path);
  io->fifo_in_keep = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (io->fifo_in_keep < 0)
    return iob_error(err, errno, "cannot open '%s' for writing", path);
  return 0;
}

static int make_pipe(int *rd, int *wr, const struct shim_io_params *p, bool chown_read,
                     struct iob_error **err) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) < 0)
    return iob_error(err, errno, "cannot create pipe");
  *rd = fds[0];
  *wr = fds[1];
  /* The process may run as another user: give it its end (io_uid/io_gid). */
  if ((p->uid || p->gid) && fchown(chown_read ? fds[0] : fds[1], p->uid, p->gid) < 0)
    return iob_error(err, errno, "cannot chown stdio pipe");
  return 0;
}

static int setup_stdin(struct shim_io *io, const struct shim_io_params *p, struct iob_error **err) {
  const char *in = p->stdio->in;
  if (in == NULL || *in == '\0')
    return 0;
  if (shim_validate_path("stdin", in, true, err) < 0)
    return -1;
  if (open_in_fifo(io, in, err) < 0)
    return -1;
  if (io->terminal)
    return 0;
  return make_pipe(&io->proc[0], &io->in_w, p, true, err);
}

static int setup_fifo_out(struct shim_io *io, const struct shim_io_params *p, int i,
                          const char *path, struct iob_error **err) {
  if (path == NULL || *path == '\0')
    return 0;
  struct shim_uri u;
  if (shim_uri_parse(path, &u, err) < 0)
    return -1;
  int r = shim_validate_path(i == 0 ? "stdout" : "stderr", u.path, true, err);
  if (r == 0)
    r = open_out_fifo(u.path, &io->fifo_out[i], err);
  shim_uri_release(&u);
  if (r < 0 || io->terminal)
    return r;
  return make_pipe(&io->out_r[i], &io->proc[1 + i], p, false, err);
}

static int setup_file(struct shim_io *io, const struct shim_uri *u, struct iob_error **err) {
  cleanup_free char *dir = xstrdup(u->path);
  char *slash = strrchr(dir, '/');
  if (slash && slash != dir) {
    *slash = '\0';
    mkdir(dir, 0755);
  }
  int fd = open(u->path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return iob_error(err, errno, "cannot open '%s'", u->path);
  io->proc[1] = fd;
  io->proc[2] = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  if (io->proc[2] < 0)
    return iob_error(err, errno, "cannot dup log file");
  return 0;
}

/* Wait for the logger: EOF (binary) or one byte (binary-v2) on fd 5. */
static int wait_ready(int fd, struct iob_error **err) {
  struct pollfd pfd = {.fd = fd, .events = POLLIN};
  int r;
  do
    r = poll(&pfd, 1, LOGGER_READY_MS);
  while (r < 0 && errno == EINTR);
  if (r == 0)
    return iob_error_code(err, IOB_CODE_DEADLINE_EXCEEDED, "logger did not become ready");
  char c;
  if (read(fd, &c, 1) < 0)
    return iob_error(err, errno, "cannot read logger readiness");
  return 0;
}

static int setup_binary(struct shim_io *io, const struct shim_io_params *p,
                        const struct shim_uri *u, struct iob_error **err) {
  /* The logger gets the read ends of stdout/stderr and the write end of
   * the readiness pipe; this process closes its copies on return. */
  cleanup_close int out_r = -1;
  cleanup_close int err_r = -1;
  int ready_r, ready_w;
  if (make_pipe(&out_r, &io->proc[1], p, false, err) < 0)
    return -1;
  if (make_pipe(&err_r, &io->proc[2], p, false, err) < 0)
    return -1;
  int rp[2];
  if (pipe2(rp, O_CLOEXEC) < 0)
    return iob_error(err, errno, "cannot create pipe");
  ready_r = rp[0];
  ready_w = rp[1];
  cleanup_close int rr = ready_r;
  cleanup_close int rw = ready_w;
  const char *argv[2 * 64 + 2];
  size_t n = 0;
  argv[n++] = u->path;
  for (char **a = u->args; a && *a && n < IOB_ARRAY_SIZE(argv) - 1; a++)
    argv[n++] = *a;
  argv[n] = NULL;
  cleanup_free char *e_id = xasprintf("CONTAINER_ID=%s", p->id);
  cleanup_free char *e_ns = xasprintf("CONTAINER_NAMESPACE=%s", p->ns);
  const char *env[] = {e_id, e_ns, NULL};
  struct shim_spawn sp = {.argv = argv,
                          .fds = {-1, -1, -1},
                          .extra = {out_r, err_r, ready_w},
                          .n_extra = 3,
                          .setenv = env};
  if (shim_spawn(&sp, &io->logger, err) < 0)
    return -1;
  close_fd(&rw);
  return wait_ready(rr, err);
}

static int setup_output(struct shim_io *io, const struct shim_io_params *p,
                        struct iob_error **err) {
  const char *out = p->stdio->out;
  if (out && *out) {
    struct shim_uri u;
    if (shim_uri_parse(out, &u, err) < 0)
      return -1;
    int r = 1;
    if (u.kind == SHIM_URI_FILE)
      r = setup_file(io, &u, err);
    else if (u.kind == SHIM_URI_BINARY)
      r = setup_binary(io, p, &u, err);
    shim_uri_release(&u);
    if (r <= 0)
      return r;
  }
  if (setup_fifo_out(io, p, 0, out, err) < 0)
    return -1;
  if (io->terminal)
    return 0;
  return setup_fifo_out(io, p, 1, p->stdio->err, err);
}

int shim_io_new(struct iob_loop *loop, const struct shim_io_params *p, struct shim_io **out,
                int runc_fds[3], struct iob_error **err) {
  struct shim_io *io = io_alloc(loop);
  io->terminal = p->stdio->terminal;
  if (setup_stdin(io, p, err) < 0 || setup_output(io, p, err) < 0) {
    shim_io_free(io);
    return -1;
  }
  for (int i = 0; i < 3; i++)
    runc_fds[i] = io->proc[i];
  *out = io;
  return 0;
}

static void copier_finish(struct copier *c) {
  if (c->done)
    return;
  c->done = true;
  iob_loop_del(c->io->loop, c->src);
  if (c->dst >= 0 && c->len > c->off)
    iob_loop_del(c->io->loop, c->dst);
  free(c->buf);
  c->buf = NULL;
  /* Closing our copy of the FIFO is what gives the client its EOF. */
  if (c->output)
    close_fd(&c->dst);
  else if (!c->blocking_dst)
    close_fd(&c->dst);
  close_fd(&c->src);
}

static void on_src(struct iob_loop *loop, int fd, uint32_t events, void *data);

static int flush(struct copier *c) {
  while (c->off < c->len) {
    ssize_t n = write(c->dst, c->buf + c->off, c->len - c->off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0 && errno == EAGAIN)
      return 1;
    if (n < 0)
      return -1;
    c->off += (size_t)n;
  }
  c->off = c->len = 0;
  return 0;
}

static void on_dst(struct iob_loop *loop, int fd, uint32_t events, void *data) {
  (void)fd;
  (void)events;
  struct copier *c = data;
  int r = flush(c);
  if (r == 1)
    return;
  iob_loop_del(loop, c->dst);
  if (r < 0 || iob_loop_add(loop, c->src, EPOLLIN, on_src, c, NULL) < 0)
    copier_finish(c);
}

static void on_src(struct iob_loop *loop, int fd, uint32_t events, void *data) {
  (void)events;
  struct copier *c = data;
  if (c->buf == NULL)
    c->buf = xmalloc(COPY_BUF);
  ssize_t n = read(fd, c->buf, COPY_BUF);
  if (n < 0 && (errno == EAGAIN || errno == EINTR))
    return;
  if (n <= 0 || c->dst < 0) {
    if (n > 0)
      return; /* nowhere to copy to: drop */
    copier_finish(c);
    return;
  }
  c->len = (size_t)n;
  c->off = 0;
  int r = flush(c);
  if (r == 0)
    return;
  if (r < 0) {
    copier_finish(c);
    return;
  }
  /* The reader is slow: park the source until the destination drains. */
  iob_loop_del(loop, c->src);
  if (iob_loop_add(loop, c->dst, EPOLLOUT, on_dst, c, NULL) < 0)
    copier_finish(c);
}

static int add_copier(struct shim_io *io, int slot, int src, int dst, bool output,
                      struct iob_error **err) {
  if (src < 0)
    return 0;
  struct copier *c = xcalloc(1, sizeof(*c));
  *c = (struct copier){.io = io, .src = src, .dst = dst, .output = output};
  c->blocking_dst = dst >= 0 && dst == io->master;
  io->c[slot] = c;
  fcntl(src, F_SETFL, fcntl(src, F_GETFL) | O_NONBLOCK);
  if (dst >= 0 && !c->blocking_dst)
    fcntl(dst, F_SETFL, fcntl(dst, F_GETFL) | O_NONBLOCK);
  return iob_loop_add(io->loop, src, EPOLLIN, on_src, c, err);
}

int shim_io_start(struct shim_io *io, int master, struct iob_error **err) {
  for (int i = 0; i < 3; i++)
    close_fd(&io->proc[i]);
  if (io->terminal) {
    io->master = master;
    if (master < 0)
      return iob_error_code(err, IOB_CODE_INTERNAL, "no console received");
    int src = io->fifo_in;
    io->fifo_in = -1;
    if (add_copier(io, 0, src, master, false, err) < 0)
      return -1;
    /* The master stays ours (resize); the copier gets a duplicate. */
    int dup = fcntl(master, F_DUPFD_CLOEXEC, 3);
    int out = io->fifo_out[0];
    io->fifo_out[0] = -1;
    return add_copier(io, 1, dup, out, true, err);
  }
  int src = io->fifo_in, dst = io->in_w;
  io->fifo_in = io->in_w = -1;
  if (add_copier(io, 0, src, dst, false, err) < 0)
    return -1;
  for (int i = 0; i < 2; i++) {
    src = io->out_r[i];
    dst = io->fifo_out[i];
    io->out_r[i] = io->fifo_out[i] = -1;
    if (src < 0)
      close_fd(&dst);
    if (add_copier(io, 1 + i, src, dst, true, err) < 0)
      return -1;
  }
  return 0;
}

void shim_io_close_stdin(struct shim_io *io) {
  if (io)
    close_fd(&io->fifo_in_keep);
}

int shim_io_resize(struct shim_io *io, uint32_t width, uint32_t height, struct iob_error **err) {
  if (io == NULL || io->master < 0)
    return iob_error_code(err, IOB_CODE_FAILED_PRECONDITION, "process has no terminal");
  struct winsize ws = {.ws_row = (unsigned short)height, .ws_col = (unsigned short)width};
  if (ioctl(io->master, TIOCSWINSZ, &ws) < 0)
    return iob_error(err, errno, "cannot resize terminal");
  return 0;
}

/* What the process wrote just before it exited may still sit in the pipe
 * when Delete comes: copy it now, as far as the reader takes it without
 * blocking (bounded, so a writer that never stops cannot hold Delete). */
static void drain(struct copier *c) {
  if (c->done || c->dst < 0)
    return;
  if (c->buf == NULL)
    c->buf = xmalloc(COPY_BUF);
  for (int i = 0; i < 256; i++) {
    if (c->len > c->off && flush(c) != 0)
      return;
    ssize_t n = read(c->src, c->buf, COPY_BUF);
    if (n <= 0)
      return;
    c->len = (size_t)n;
    c->off = 0;
  }
}

void shim_io_free(struct shim_io *io) {
  if (io == NULL)
    return;
  for (int i = 1; i < 3; i++)
    if (io->c[i] && io->c[i]->output)
      drain(io->c[i]);
  for (int i = 0; i < 3; i++) {
    if (io->c[i]) {
      copier_finish(io->c[i]);
      free(io->c[i]);
    }
  }
  int *fds[] = {&io->proc[0],      &io->proc[1],     &io->proc[2],  &io->fifo_in,
                &io->fifo_in_keep, &io->in_w,        &io->out_r[0], &io->out_r[1],
                &io->fifo_out[0],  &io->fifo_out[1], &io->master};
  for (size_t i = 0; i < IOB_ARRAY_SIZE(fds); i++)
    close_fd(fds[i]);
  /* The logger normally exits on EOF; do not let it linger. */
  if (io->logger > 0)
    kill(io->logger, SIGTERM);
  free(io);
}
