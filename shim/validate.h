// SPDX-License-Identifier: Apache-2.0
/* Identifiers and paths that come from containerd. */
#ifndef SHIM_VALIDATE_H
#define SHIM_VALIDATE_H

#include <stdbool.h>

#include "common/error.h"

/* containerd's identifiers: [A-Za-z0-9][A-Za-z0-9._-]*, at most 76 bytes.
 * An exec id follows the same rules; an empty one is refused. */
int shim_validate_id(const char *what, const char *id, struct iob_error **err);
int shim_validate_path(const char *what, const char *path, bool absolute, struct iob_error **err);

#endif
