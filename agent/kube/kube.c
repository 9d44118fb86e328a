// SPDX-License-Identifier: Apache-2.0
/* What Kubernetes says of the containers, applied (agent/kube/kube.h). */
#include "agent/kube/kube.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/kube/podrules.h"
#include "common/cleanup.h"
#include "common/loop.h"
#include "common/log.h"
#include "common/xalloc.h"

void agent_kube_cri_changed(struct agent_ctr *c, void *user) {
  iob_debug("'%s' is %s/%s%s%s in Kubernetes' terms (%zu labels)", c->id, c->kube.pod_namespace,
            c->kube.pod_name, c->kube.container_name && *c->kube.container_name ? "/" : "",
            c->kube.container_name ? c->kube.container_name : "", c->kube.n_pod_labels);
  agent_kube_pod_changed(user, c);
}

void agent_kube_pod_changed(struct agent_kube *k, struct agent_ctr *c) {
  const struct agent_pod_rules *rs = k->rules;
  struct agent_pod_view v = {.ns = c->kube.pod_namespace,
                             .qos = c->kube.qos,
                             .labels = c->kube.pod_labels,
                             .n_labels = c->kube.n_pod_labels};
  bool ns_trusted = agent_adm_trusted(k->adm, c);
  int i = agent_pod_rules_match_trust(rs->v, rs->n, &v, ns_trusted);
  if (i < 0) {
    if (c->kube.rule[0])
      iob_info("'%s': pod rule '%s' no longer matches", c->id, c->kube.rule);
    c->kube.rule[0] = '\0';
    c->kube.rule_untrusted = false;
    return;
  }
  const struct agent_pod_rule *r = &rs->v[i];
  bool changed = strcmp(c->kube.rule, r->name) != 0;
  bool trusted = agent_pod_rule_trusted(r, ns_trusted);
  snprintf(c->kube.rule, sizeof(c->kube.rule), "%s", r->name);
  c->kube.rule_untrusted = !trusted && agent_pod_rule_protects(r);
  uint64_t now = iob_now_ms();
  if (r->kind[0])
    agent_ctr_set_kind(c, r->kind, false, trusted);
  if (r->cls[0])
    agent_adm_declare(k->adm, c, r->cls, trusted, now);
  if (r->lat_target_us && trusted)
    c->lat.target_declared_us = r->lat_target_us;
  if (changed)
    iob_info("'%s' (pod %s/%s, %s): pod rule '%s'%s", c->id,
             c->kube.pod_namespace && *c->kube.pod_namespace ? c->kube.pod_namespace : "?",
             c->kube.pod_name && *c->kube.pod_name ? c->kube.pod_name : "?",
             c->kube.qos[0] ? c->kube.qos : "qos unknown", r->name,
             c->kube.rule_untrusted ? ": matched by label or QoS class in an untrusted namespace, "
                                      "protection not "
                                      "granted"
                                    : "");
  agent_adm_schedule(k->adm, now); /* its kind or class may change the plan */
}

#define KUBEPODS_NS "k8s.io" /* containerd's CRI namespace: a shim's registration merges */

static struct agent_ctr *find_id(const struct agent_kube *k, const char *id) {
  for (struct agent_ctr *c = k->adm->list; c; c = c->next)
    if (strcmp(c->id, id) == 0)
      return c;
  return NULL;
}

static bool kp_known(const char *id, void *user) {
  return find_id(user, id) != NULL;
}

static bool from_kubepods(const struct agent_ctr *c) {
  return c->source && strcmp(c->source, "kubepods") == 0;
}

static int found_cmp(const void *a, const void *b) {
  return strcmp(((const struct agent_kubepods_found *)a)->id,
                ((const struct agent_kubepods_found *)b)->id);
}

static void kubepods_add(struct agent_kube *k, const struct agent_kubepods_found *f, uint64_t now) {
  cleanup_error struct iob_error *err = NULL;
  struct agent_ctr_info in = {.id = f->id,
                              .ns = KUBEPODS_NS,
                              .source = "kubepods",
                              .cgroup = k->kubepods->v2 ? f->cgroup : NULL,
                              .pid = (uint32_t)f->pid,
                              .running = true};
  struct agent_ctr *c = NULL;
  if (agent_adm_register(k->adm, &in, now, &c, &err) < 0) {
    iob_warn("'%s' under the kubelet's cgroup tree not sampled: %s", f->id, err->msg);
    return;
  }
  k->metrics->registrations++;
  free(c->kube.pod_uid);
  c->kube.pod_uid = xstrdup(f->pod_uid);
  snprintf(c->kube.qos, sizeof(c->kube.qos), "%s", f->qos);
  agent_protection_bind(k->protect, c); /* its lever targets, from its pid, once */
  agent_kube_pod_changed(k, c);
  agent_sampler_add(k->sampler, c, &(struct cg2_sample){0});
  iob_info("found '%s' under the kubelet's cgroup tree ('%s', pod %s, %s, pid %d): sampled, "
           "never held",
           c->id, f->cgroup, f->pod_uid, f->qos, (int)f->pid);
}

void agent_kube_sync(struct agent_kube *k, uint64_t now) {
  if (k->kubepods == NULL || !agent_kubepods_due(k->kubepods))
    return;
  cleanup_error struct iob_error *err = NULL;
  struct agent_kubepods_found *found = NULL;
  size_t n = 0;
  if (agent_kubepods_walk(k->kubepods, AGENT_MAX_CONTAINERS, kp_known, k, &found, &n, &err) < 0) {
    iob_warn("kubelet cgroup tree not walked: %s", err->msg);
    return;
  }
  qsort(found, n, sizeof(found[0]), found_cmp);
  struct agent_ctr *next;
  for (struct agent_ctr *c = k->adm->list; c; c = next) {
    next = c->next;
    struct agent_kubepods_found key;
    snprintf(key.id, sizeof(key.id), "%s", c->id);
    if (from_kubepods(c) && bsearch(&key, found, n, sizeof(found[0]), found_cmp) == NULL) {
      iob_info("'%s' is gone: its cgroup left the kubelet's tree", c->id);
      k->ops->remove(c, "cgroup removed", now, k->user);
    }
  }
  for (size_t i = 0; i < n; i++)
    if (found[i].pid > 0 && find_id(k, found[i].id) == NULL)
      kubepods_add(k, &found[i], now);
  agent_kubepods_found_free(found, n);
}
