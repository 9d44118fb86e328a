// SPDX-License-Identifier: Apache-2.0
/* Pod rules: policy from what the cluster already says.  One
 * rule per `pod_rule` line of iobatchd.conf (repeatable; also from the
 * DaemonSet's ConfigMap):
 *
 *   pod_rule = NAME: [namespace=NS] [qos=QOS] [label:KEY=VALUE ...] -> EFFECT...
 *
 * Every selector given must match (none: every pod); EFFECT is one or more
 * of kind=job|service, class=CLASS|latency, latency-target=DURATION (us,
 * ms or s; at most 10 s).  Rules apply in order and the first that matches
 * decides; the container records its name (agent_ctr.kube.rule).
 *
 * Trust: labels and the QoS class are the tenant's to set (a pod is
 * Guaranteed when its requests equal its limits), namespaces are not.  A
 * rule that selects by label or QoS grants protection (class latency, kind
 * service, a latency target) only in namespaces trust_declared trusts;
 * elsewhere those effects are ignored (agent_pod_rule_trusted) and a class
 * it sets is a hint, as an untrusted io.iobatch.class is (agent_adm_trusted,
 * agent/plan/admission.h).
 * Only a rule by namespace alone is the administrator's word everywhere,
 * and in an untrusted namespace it wins over an earlier tenant-selected
 * rule that also matches (agent_pod_rules_match_trust): otherwise a label
 * would take a pod out of the rule written for its namespace. */
#ifndef IOB_AGENT_PODRULES_H
#define IOB_AGENT_PODRULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AGENT_POD_RULES_MAX 64
#define AGENT_POD_RULE_LABELS 8
#define AGENT_POD_RULE_NAME_MAX 64
#define AGENT_POD_LABEL_MAX 320 /* "key=value": a key (prefix/name, 317) and a value (63) */
#define AGENT_POD_LAT_MAX_US 10000000u

struct agent_pod_rule {
  char name[AGENT_POD_RULE_NAME_MAX];
  /* Selectors; "" any. */
  char ns[254];
  char qos[12]; /* "guaranteed", "burstable", "besteffort" */
  char labels[AGENT_POD_RULE_LABELS][AGENT_POD_LABEL_MAX]; /* "key=value" */
  size_t n_labels;
  /* Effects; "" / 0: not set. */
  char kind[8]; /* "job" or "service" */
  char cls[16]; /* a batch class name or "latency" */
  uint32_t lat_target_us;
};

/* What a rule is matched against (the container's pod). */
struct agent_pod_view {
  const char *ns;  /* the pod's namespace; NULL or "": not known */
  const char *qos; /* "": not known */
  char *const *labels;
  size_t n_labels;
};

/* Parse the value of one pod_rule line.  Returns < 0 with a reason in WHY
 * (for the config's message) on anything malformed. */
int agent_pod_rule_parse(const char *value, struct agent_pod_rule *out, char *why, size_t why_len);

/* The index of the first rule of RULES[0..N) that VIEW matches, or -1. */
int agent_pod_rules_match(const struct agent_pod_rule *rules, size_t n,
                          const struct agent_pod_view *view);
/* The same for a pod whose namespace is NS_TRUSTED or not: when not, the
 * first matching rule that is not tenant-selected, else the first match. */
int agent_pod_rules_match_trust(const struct agent_pod_rule *rules, size_t n,
                                const struct agent_pod_view *view, bool ns_trusted);

/* Whether R selects by label. */
bool agent_pod_rule_by_label(const struct agent_pod_rule *r);
/* Whether R selects by something the tenant sets (a label or the QoS
 * class): its grants then depend on trust. */
bool agent_pod_rule_tenant_selected(const struct agent_pod_rule *r);
/* Whether R grants protection: class latency, kind service or a latency
 * target. */
bool agent_pod_rule_protects(const struct agent_pod_rule *r);
/* Whether R's effects stand for a container of namespace NS_TRUSTED (what
 * trust_declared says of its pod's namespace): always for a rule by
 * namespace alone; for a rule by label or QoS, only when trusted. */
bool agent_pod_rule_trusted(const struct agent_pod_rule *r, bool ns_trusted);

#endif
