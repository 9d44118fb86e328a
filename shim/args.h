// SPDX-License-Identifier: Apache-2.0
/* The command line, the stdin of `start`, the grouping key of config.json. */
#ifndef SHIM_ARGS_H
#define SHIM_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "common/oci.h"
#include "shim/options.h"

struct shim_args {
  const char *ns;
  const char *address; /* containerd's gRPC socket */
  const char *publish_binary;
  const char *id;
  const char *bundle;
  const char *socket;       /* -socket: address the daemon serves (informational) */
  const char *debug_socket; /* -debug-socket */
  bool debug;
  bool version;
  bool info;
  const char *action; /* "start", "delete", or NULL for the daemon */
};

/* What `start` learns from stdin. */
struct shim_bootstrap {
  bool is_bootstrap; /* containerd 2.3+ BootstrapParams */
  char *ttrpc_address;
  char *socket_dir;
  int log_level;
  bool have_options;
  struct shim_options options;
};

int shim_args_parse(struct shim_args *a, int argc, char **argv, struct iob_error **err);
/* Decode start's stdin (empty, a legacy Any of runc Options, or 2.3's
 * BootstrapParams told apart by instance_id/namespace). */
int shim_bootstrap_parse(const uint8_t *data, size_t len, const char *id, const char *ns,
                         struct shim_bootstrap *out, struct iob_error **err);
void shim_bootstrap_release(struct shim_bootstrap *b);
/* The grouping key from config.json annotations (caller frees), or a copy
 * of id when neither annotation is set. */
int shim_config_group(const struct iob_oci_config *cfg, const char *id, char **group,
                      struct iob_error **err);

#endif
