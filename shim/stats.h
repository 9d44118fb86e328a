// SPDX-License-Identifier: Apache-2.0
/* Task metrics from the cgroup (v1 or v2). */
#ifndef SHIM_STATS_H
#define SHIM_STATS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"

/* cgroup metrics of pid's cgroup as containerd's metrics Any. */
int shim_stats_collect(pid_t pid, char **type_url, uint8_t **value, size_t *len,
                       struct iob_error **err);

#endif
