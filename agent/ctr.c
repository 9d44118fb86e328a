// SPDX-License-Identifier: Apache-2.0
/* What every part reads of a container the same way (agent/admission.h
 * declares them with struct agent_ctr): the namespace its declarations
 * belong to, and the class plans and protection go by.  No state. */
#include "agent/admission.h"

enum batch_class agent_ctr_plan_class(const struct agent_ctr *c) {
  if (c->class_source != AGENT_CLASS_HINT)
    return c->cls;
  bool writes = c->cls == BATCH_SEQ_WRITE || c->cls == BATCH_RAND_WRITE || c->cls == BATCH_MIXED;
  return writes ? c->cls : BATCH_UNKNOWN;
}

const char *agent_ctr_tenant(const struct agent_ctr *c) {
  if (c->pod_namespace && *c->pod_namespace)
    return c->pod_namespace;
  return c->ns ? c->ns : "";
}
