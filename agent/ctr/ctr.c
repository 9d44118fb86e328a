// SPDX-License-Identifier: Apache-2.0
/* The container table (agent/ctr/ctr.h), and what every part reads of a
 * container the same way: the namespace its declarations belong to, and
 * the class plans and protection go by.  No state of its own: the table
 * is the admission state's (struct agent_adm). */
#include "agent/ctr/ctr.h"

#include <stdlib.h>
#include <string.h>

#include "agent/plan/admission.h"
#include "common/xalloc.h"

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

/* The table: adm->list, in registration order, adm->n long. */

static const char *nz(const char *s) {
  return s ? s : "";
}

struct agent_ctr *agent_ctr_find(const struct agent_adm *adm, const char *ns, const char *id) {
  for (struct agent_ctr *c = adm->list; c; c = c->next)
    if (strcmp(c->id, nz(id)) == 0 && strcmp(c->ns, nz(ns)) == 0)
      return c;
  return NULL;
}

size_t agent_ctr_count(const struct agent_adm *adm, enum agent_state s) {
  size_t n = 0;
  for (struct agent_ctr *c = adm->list; c; c = c->next)
    n += c->state == s;
  return n;
}

struct agent_ctr *agent_ctr_new(struct agent_adm *adm, uint64_t now) {
  struct agent_ctr *c = xcalloc(1, sizeof(*c));
  c->handle = adm->next_handle++;
  c->cls = BATCH_UNKNOWN;
  c->sample.run_cls = -1;
  c->plan.reason = -1;
  c->plan.weight = 100;
  c->plan.registered_ms = now;
  c->protect.share = -1;
  c->protect.stall = c->protect.stall_alone = -1;
  c->protect.alone_var = 0;
  return c;
}

void agent_ctr_append(struct agent_adm *adm, struct agent_ctr *c) {
  c->next = NULL;
  struct agent_ctr **tail = &adm->list;
  while (*tail)
    tail = &(*tail)->next;
  *tail = c;
  adm->n++;
}

void agent_ctr_unlink(struct agent_adm *adm, struct agent_ctr *c) {
  for (struct agent_ctr **p = &adm->list; *p; p = &(*p)->next) {
    if (*p == c) {
      *p = c->next;
      c->next = NULL;
      adm->n--;
      break;
    }
  }
}

void agent_ctr_free(struct agent_ctr *c) {
  if (c == NULL)
    return;
  free(c->id);
  free(c->ns);
  free(c->workload_key);
  free(c->cgroup);
  free(c->bundle);
  free(c->source);
  free(c->kube.pod_name);
  free(c->kube.pod_namespace);
  free(c->kube.container_name);
  for (size_t i = 0; i < c->kube.n_pod_labels; i++)
    free(c->kube.pod_labels[i]);
  free(c->kube.pod_labels);
  free(c->kube.pod_uid);
  free(c);
}

void agent_ctr_free_all(struct agent_adm *adm) {
  struct agent_ctr *c = adm->list;
  while (c) {
    struct agent_ctr *n = c->next;
    agent_ctr_free(c);
    c = n;
  }
  adm->list = NULL;
  adm->n = 0;
}
