// SPDX-License-Identifier: Apache-2.0
/* The shim binary's `start`, `delete` and `-info` actions. */
#ifndef SHIM_MANAGER_H
#define SHIM_MANAGER_H

#include "common/error.h"
#include "shim/args.h"

int shim_manager_start(const struct shim_args *a, struct iob_error **err);
/* shim_cgroup on a cgroup v2 host: a clean absolute path, as containerd's
 * cgroup2.VerifyGroupPath wants it. */
int shim_cgroup_path_check(const char *cg, struct iob_error **err);
int shim_manager_delete(const struct shim_args *a, struct iob_error **err);
int shim_manager_info(struct iob_error **err);
/* Socket address for (address, ns, group) under dir; caller frees. */
int shim_socket_address(const char *dir, const char *grpc_address, const char *ns,
                        const char *group, char **out, struct iob_error **err);

#endif
