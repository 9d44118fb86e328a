// SPDX-License-Identifier: Apache-2.0
/* Service readiness for systemd's Type=notify without libsystemd: the
 * datagram protocol of sd_notify(3) ("Notes": one AF_UNIX SOCK_DGRAM
 * message of newline-separated VAR=VALUE lines sent to $NOTIFY_SOCKET; a
 * path starting with '@' names an abstract socket). */
#ifndef IOB_SDNOTIFY_H
#define IOB_SDNOTIFY_H

#include "common/error.h"

/* Send `state` (e.g. "READY=1\nSTATUS=listening") to $NOTIFY_SOCKET.
 * Returns 0 when NOTIFY_SOCKET is unset or empty (not started by systemd),
 * 1 when the datagram was sent, < 0 with *err filled otherwise. */
int iob_sd_notify(const char *state, struct iob_error **err);

/* The same to an explicit address (a path, or '@' + an abstract name). */
int iob_sd_notify_to(const char *addr, const char *state, struct iob_error **err);

#endif
