// SPDX-License-Identifier: Apache-2.0
/* The long-running shim: the loop, signals, the ttrpc server. */
#ifndef SHIM_DAEMON_H
#define SHIM_DAEMON_H

#include "common/error.h"
#include "shim/args.h"

int shim_daemon_run(const struct shim_args *a, struct iob_error **err);

#endif
