// SPDX-License-Identifier: Apache-2.0
/* A process's stdio: containerd's FIFOs (or file/binary loggers), the pipes
 * or pty runc gives the process, copying on the loop. */
#ifndef SHIM_IO_H
#define SHIM_IO_H

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "common/loop.h"

struct shim_io;
struct shim_stdio {
  const char *in;
  const char *out;
  const char *err;
  bool terminal;
};
struct shim_io_params {
  const struct shim_stdio *stdio;
  uint32_t uid, gid;
  const char *id;
  const char *ns;
};
/* Open containerd's FIFOs (or file/binary loggers) and make the fds runc
 * gives the process.  runc_fds[] stay owned by io. */
int shim_io_new(struct iob_loop *loop, const struct shim_io_params *p, struct shim_io **out,
                int runc_fds[3], struct iob_error **err);
/* After runc returned: close the process ends, start copying; master is the
 * pty master when a terminal was requested (owned by io afterwards). */
int shim_io_start(struct shim_io *io, int master, struct iob_error **err);
void shim_io_close_stdin(struct shim_io *io);
int shim_io_resize(struct shim_io *io, uint32_t width, uint32_t height, struct iob_error **err);
void shim_io_free(struct shim_io *io);

#endif
