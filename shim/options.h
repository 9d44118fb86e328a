// SPDX-License-Identifier: Apache-2.0
/* containerd.runc.v1.Options: from an Any, from CRI's ConfigPath TOML, and
 * kept in the bundle for `delete`. */
#ifndef SHIM_OPTIONS_H
#define SHIM_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/error.h"

/* containerd.runc.v1.Options, the parts the shim uses. */
struct shim_options {
  char *binary_name;
  char *root;
  char *shim_cgroup;
  bool systemd_cgroup;
  bool no_pivot_root;
  bool no_new_keyring;
  uint32_t io_uid;
  uint32_t io_gid;
  /* iobatch's own keys, only in the ConfigPath TOML (IobatchAgentSocket,
   * IobatchFailClosed): where iobatchd listens (else $IOBATCH_AGENT_SOCKET,
   * else its default) and whether a Start the agent cannot be asked about
   * fails instead of starting at once.  IobatchAgentTimeoutMs: how long the
   * agent may stay silent before a Start goes on without it (0: the
   * client's default, client/client.h). */
  char *agent_socket;
  bool fail_closed;
  uint32_t agent_timeout_ms;
  /* Keys of the TOML file that no option matches ("'SystemdCgroups' (line
   * 5), ..."), NULL when none: kept in options.json so that Create warns
   * about them whichever of start and Create read the file. */
  char *unknown_keys;
};

/* Decode an Any holding containerd.runc.v1.Options or runtimeoptions.v1.Options
 * (other types: ignored,
 * returns 0 with *found false). */
int shim_options_from_any(const char *type_url, const uint8_t *data, size_t len,
                          struct shim_options *o, bool *found, struct iob_error **err);
void shim_options_release(struct shim_options *o);
/* options.c: runtimeoptions.v1.Options{config_path} naming a TOML file of
 * runc options (what CRI and `ctr --runtime-config-path` send). */
int shim_options_from_config_path(const uint8_t *data, size_t len, struct shim_options *o,
                                  struct iob_error **err);
int shim_options_parse_toml(const char *text, size_t len, struct shim_options *o,
                            struct iob_error **err);
/* options.json in the bundle, so `delete` finds runc's root and binary. */
int shim_options_write(const char *bundle, const struct shim_options *o, struct iob_error **err);
int shim_options_read(const char *bundle, struct shim_options *o, struct iob_error **err);

#endif
