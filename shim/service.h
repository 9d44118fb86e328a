// SPDX-License-Identifier: Apache-2.0
/* containerd.task.v2.Task (and v3) on the ttrpc server. */
#ifndef SHIM_SERVICE_H
#define SHIM_SERVICE_H

#include "common/error.h"
#include "common/loop.h"

struct ttrpc_server;
struct shim_service;
int shim_service_new(struct iob_loop *loop, struct ttrpc_server *server, const char *ns,
                     struct shim_service **out, struct iob_error **err);
void shim_service_free(struct shim_service *s);

#endif
