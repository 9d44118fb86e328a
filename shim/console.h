// SPDX-License-Identifier: Apache-2.0
/* The console socket runc sends a terminal's pty master to. */
#ifndef SHIM_CONSOLE_H
#define SHIM_CONSOLE_H

#include "common/error.h"

struct shim_console_socket;
int shim_console_socket_new(struct shim_console_socket **out, struct iob_error **err);
const char *shim_console_socket_path(const struct shim_console_socket *s);
/* Receive the pty master runc sent (waits up to timeout_ms). */
int shim_console_socket_recv(struct shim_console_socket *s, int timeout_ms, int *master,
                             struct iob_error **err);
void shim_console_socket_free(struct shim_console_socket *s);

#endif
