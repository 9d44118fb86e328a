// SPDX-License-Identifier: Apache-2.0
/* The kinds of container: what a container is to the batcher (a finite
 * batch job, an open-ended service, a pod sandbox).  One vocabulary for
 * io.iobatch.kind (client/annotations.c), the runtime's word (wcd/kind.c),
 * RegisterRequest.kind, the shim, the agent and its pod rules: a name is
 * parsed here once and compared as a value from then on. */
#ifndef IOB_BATCH_KIND_H
#define IOB_BATCH_KIND_H

enum batch_kind {
  BATCH_KIND_JOB = 0, /* a finite batch job (the default) */
  BATCH_KIND_SERVICE, /* open-ended: never "about to finish"; never held, takes no batch slot */
  BATCH_KIND_SANDBOX, /* a pod sandbox (pause): admitted at once, not planned */
};
/* The number of kinds (not a kind). */
#define BATCH_NKIND (BATCH_KIND_SANDBOX + 1)

/* "job", "service", "sandbox"; "invalid" for out-of-range values.  The
 * names are static. */
const char *batch_kind_name(enum batch_kind k);
/* The kind named NAME (exact, lower case): 0 and *OUT, or -1 (NULL and ""
 * included: the caller says what an unsaid kind means). */
int batch_kind_parse(const char *name, enum batch_kind *out);

#endif
