// SPDX-License-Identifier: Apache-2.0
/* Keeping the shim's resident memory small. */
#ifndef SHIM_TRIM_H
#define SHIM_TRIM_H

#include "common/loop.h"

/* Drop the executable file mappings' pages from the page tables (and
 * return free heap to the kernel): now, or once the loop has been quiet for
 * a second after a burst of work. */
void shim_trim_now(void);
void shim_trim_later(struct iob_loop *loop);

#endif
