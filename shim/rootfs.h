// SPDX-License-Identifier: Apache-2.0
/* The rootfs mounts containerd hands to Create. */
#ifndef SHIM_ROOTFS_H
#define SHIM_ROOTFS_H

#include <stddef.h>

#include "common/error.h"

struct shim_mount {
  const char *type;
  const char *source;
  const char *const *options;
  size_t n_options;
};
/* Split mount options into flags and the data string (caller frees). */
int shim_mount_parse_options(const char *const *opts, size_t n, unsigned long *flags,
                             unsigned long *propagation, char **data, struct iob_error **err);
int shim_mount_all(const struct shim_mount *m, size_t n, const char *target,
                   struct iob_error **err);
/* Unmount everything at target (repeatedly, lazily); never fails. */
void shim_unmount_all(const char *target);

#endif
