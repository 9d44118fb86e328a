// SPDX-License-Identifier: Apache-2.0
/* iobatch-hook in the bundle's prestart hooks. */
#ifndef SHIM_HOOKINJECT_H
#define SHIM_HOOKINJECT_H

#include <stddef.h>

#include "common/error.h"
#include "common/oci.h"

/* Add iobatch-hook ($IOBATCH_HOOK, else next to the shim binary) to the
 * hooks.prestart of CFG, <bundle>/config.json as read at Create, unless it
 * is in prestart or createRuntime already, and write the file; nothing to
 * do when there is no hook binary. */
int shim_hook_inject(const char *bundle, struct iob_oci_config *cfg, struct iob_error **err);
/* The same on config.json's text (for the tests): *out is the new JSON
 * (caller frees) or NULL when nothing changes.  Malformed config:
 * INVALID_ARGUMENT. */
int shim_hook_inject_json(const char *json, size_t len, const char *hook, const char *socket,
                          char **out, struct iob_error **err);

#endif
