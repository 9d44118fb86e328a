// SPDX-License-Identifier: Apache-2.0
/* Every declaration a container can make, and what the agent does with it
 * from a namespace trust_declared trusts and from one it does not (issue
 * #23: no tenant steers the node).  The rule: an untrusted declaration is a
 * hint only; it never lowers a hold, never raises the container's own
 * protection and never overrides a measured class.
 *
 * The same table is in agent/README.md ("Who may declare what"); the unit
 * test test_agent_admission walks every row and checks the rule it states
 * on the admission state machine, and checks that every io.iobatch.* key
 * the shim, the hook and the detector parse has a row. */
#ifndef IOB_AGENT_TRUST_H
#define IOB_AGENT_TRUST_H

#include <stddef.h>

/* Keys the shim, the hook and wcd read (also defined where they are
 * parsed: shim/admission.c, runtime-hook/hook.h, wcd/kind.h). */
#define AGENT_ANN_CLASS "io.iobatch.class"
#define AGENT_ANN_KIND "io.iobatch.kind"
#define AGENT_ANN_MAX_HOLD "io.iobatch.max-hold-ms"
#define AGENT_ANN_WORKLOAD "io.iobatch.workload"
#define AGENT_ANN_LATENCY_TARGET "io.iobatch.latency-target"

struct agent_trust_rule {
  const char *key;       /* the annotation */
  const char *values;    /* what it may say */
  const char *trusted;   /* what it does from a trusted namespace */
  const char *untrusted; /* ... and from an untrusted one */
};

extern const struct agent_trust_rule agent_trust_table[];
extern const size_t agent_trust_table_len;

#endif
