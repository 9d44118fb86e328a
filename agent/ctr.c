// SPDX-License-Identifier: Apache-2.0
/* What every part reads of a container the same way (agent/ctr.h
 * declares them with struct agent_ctr): the namespace its declarations
 * belong to, and the class plans and protection go by.  No state. */
#include "agent/ctr.h"

enum batch_class agent_ctr_plan_class(const struct agent_ctr *c) {
  /* An untrusted namespace teaches its own profiles: an idle profile
   * trained under a key would let a writer run under it unplanned and
   * unprotected against, so it is a hint too. */
  bool hint = c->class_source == AGENT_CLASS_HINT ||
              (c->class_source == AGENT_CLASS_PROFILE && c->decl.profile_untrusted);
  if (!hint)
    return c->cls;
  bool writes = c->cls == BATCH_SEQ_WRITE || c->cls == BATCH_RAND_WRITE || c->cls == BATCH_MIXED;
  return writes ? c->cls : BATCH_UNKNOWN;
}

const char *agent_ctr_tenant(const struct agent_ctr *c) {
  if (c->kube.pod_namespace && *c->kube.pod_namespace)
    return c->kube.pod_namespace;
  return c->ns ? c->ns : "";
}
