// SPDX-License-Identifier: Apache-2.0
/* What Kubernetes says of the containers, applied to the container table:
 *
 * - the containers under the kubelet's cgroup tree (agent/kube/kubepods.h):
 *   what a walk finds is registered (source "kubepods", running: it never
 *   asks to start, so it is never held), and what it no longer finds
 *   leaves, through the owner's remove op;
 * - the pod rules (agent/kube/podrules.h), applied again at each change of
 *   what is known of a container's pod: its names and labels from the CRI
 *   (agent/kube/podmeta.h), its QoS class from its cgroup path, a
 *   re-registration, a reload. */
#ifndef IOB_AGENT_KUBE_H
#define IOB_AGENT_KUBE_H

#include <stdint.h>

#include "agent/plan/admission.h"
#include "agent/config.h"
#include "agent/kube/kubepods.h"
#include "agent/serve/metrics.h"
#include "agent/protect/protection.h"
#include "agent/sample/sampler.h"

struct agent_kube_ops {
  /* c's cgroup left the kubelet's tree: the owner ends c (and frees it). */
  void (*remove)(struct agent_ctr *c, const char *why, uint64_t now, void *user);
};

/* All of it the owner's: pointers into it, set once. */
struct agent_kube {
  struct agent_adm *adm;
  const struct agent_pod_rules *rules; /* the configuration's, as reloaded */
  struct agent_kubepods *kubepods;     /* NULL: kubepods = off, or no walk (headless) */
  struct agent_protection *protect;    /* a found container's lever targets */
  struct agent_sampler *sampler;       /* a found container is sampled */
  struct agent_metrics *metrics;       /* registrations */
  const struct agent_kube_ops *ops;
  void *user;
};

/* The pod rules: the first that matches what is known of c's pod
 * (namespace and labels from the CRI, the QoS class from its cgroup path)
 * decides its kind, class and latency target.  What a rule that no longer
 * matches set stays until measured otherwise. */
void agent_kube_pod_changed(struct agent_kube *k, struct agent_ctr *c);
/* The same, as agent_podmeta's `changed` callback (USER: the struct
 * agent_kube), with a line in the debug log. */
void agent_kube_cri_changed(struct agent_ctr *c, void *user);
/* Each sampling window (before it is taken): walk the kubelet's tree when
 * it is due, register what is new, remove what is gone. */
void agent_kube_sync(struct agent_kube *k, uint64_t now);

#endif
