// SPDX-License-Identifier: Apache-2.0
/* The OCI runtime spec of a bundle (<bundle>/config.json): one reader, one
 * size limit and one rule for fields of the wrong type, for the shim (at
 * Create, once) and the hook.  A field iobatch reads that has the wrong
 * type is an INVALID_ARGUMENT error naming it, never skipped: runc refuses
 * such a spec too (runtime-spec config.md types every one of them), so
 * nothing that would run is refused.  Fields iobatch does not read are
 * not looked at. */
#ifndef IOB_OCI_H
#define IOB_OCI_H

#include <stddef.h>

#include <jansson.h>

#include "common/error.h"

/* The largest config.json: far above any real one, small enough to hold in
 * memory. */
#define IOB_OCI_CONFIG_MAX (16u << 20)

struct iob_oci_config {
  json_t *root;        /* the whole spec, an object; a caller may edit it */
  json_t *annotations; /* "annotations": object of strings; NULL: none */
  json_t *hooks;       /* "hooks": object of arrays; NULL: none */
  const char **args;   /* "process.args", NULL-terminated, strings of root; NULL: none */
  size_t nargs;
};

/* Take the spec from BUF (LEN bytes; NAME says what it is in errors).  On
 * error *cfg holds nothing. */
int iob_oci_config_parse(const char *buf, size_t len, const char *name, struct iob_oci_config *cfg,
                         struct iob_error **err);
/* Read <bundle>/config.json. */
int iob_oci_config_load(const char *bundle, struct iob_oci_config *cfg, struct iob_error **err);
void iob_oci_config_release(struct iob_oci_config *cfg);
/* The annotation KEY, or NULL when it is not there or empty. */
const char *iob_oci_annotation(const struct iob_oci_config *cfg, const char *key);

#endif
