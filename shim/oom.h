// SPDX-License-Identifier: Apache-2.0
/* OOM kills in a container's cgroup. */
#ifndef SHIM_OOM_H
#define SHIM_OOM_H

#include <sys/types.h>

#include "common/error.h"
#include "common/loop.h"

struct shim_oom;
typedef void (*shim_oom_fn)(void *data);
int shim_oom_watch(struct iob_loop *loop, pid_t pid, shim_oom_fn fn, void *data,
                   struct shim_oom **out, struct iob_error **err);
void shim_oom_free(struct shim_oom *o);

#endif
