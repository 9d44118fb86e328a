// SPDX-License-Identifier: Apache-2.0
/* containerd's Task requests (containerd.task.v2/v3), decoded: the checks
 * each one passes before anything runs, and what the process layer gets
 * from it.  shim/service.c calls these, then hands the operation on;
 * tests/fuzz/fuzz_shim_requests.c calls the same on any payload, as
 * agent/requests.h does for the agent. */
#ifndef SHIM_REQUESTS_H
#define SHIM_REQUESTS_H

#include <stddef.h>

#include "common/error.h"
#include "containerd/task/v2/shim.pb-c.h"
#include "shim/process.h"

/* The largest Exec process spec and Update resources JSON. */
#define SHIM_REQ_SPEC_MAX (1u << 20)

/* id, and exec_id unless NULL or empty. */
int shim_req_ids(const char *id, const char *exec_id, struct iob_error **err);
/* Create: ids, bundle, stdio, rootfs mounts; *out points into r and into
 * *mounts (the caller frees *mounts, also on error). */
int shim_req_create(const Containerd__Task__V2__CreateTaskRequest *r, struct shim_create *out,
                    struct shim_mount **mounts, struct iob_error **err);
/* Exec: ids, stdio and the process spec (a JSON object); *stdio points
 * into r. */
int shim_req_exec(const Containerd__Task__V2__ExecProcessRequest *r, struct shim_stdio *stdio,
                  struct iob_error **err);
/* Update: the resources (a JSON object). */
int shim_req_update(const Containerd__Task__V2__UpdateTaskRequest *r, struct iob_error **err);
/* Any request of the Task service (M's descriptor says which): the checks
 * above for its method, the ids for the others. */
int shim_req_check(const ProtobufCMessage *m, struct iob_error **err);

#endif
