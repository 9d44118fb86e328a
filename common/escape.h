// SPDX-License-Identifier: Apache-2.0
/* Text that others wrote (workload keys, pod and container names, ids:
 * anything a tenant chose) on its way to a terminal or into JSON. */
#ifndef IOB_COMMON_ESCAPE_H
#define IOB_COMMON_ESCAPE_H

#include <stdbool.h>

/* A copy of S (malloc'd) in which every byte that is not part of a valid
 * UTF-8 sequence reads \xNN (so the result is valid UTF-8, as JSON needs);
 * with CONTROLS also every control character (C0, DEL: \xNN; C1 and the
 * bidirectional overrides and isolates U+202A-U+202E, U+2066-U+2069, which
 * reorder what a terminal shows: \uNNNN) and the backslash itself (\\), so
 * that nothing in it can move the cursor, recolour the terminal, retitle
 * the window or pass for other text.  NULL: "". */
char *iob_escape_text(const char *s, bool controls);
/* Whether iob_escape_text would change S. */
bool iob_text_needs_escape(const char *s, bool controls);

#endif
