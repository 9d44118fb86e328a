// SPDX-License-Identifier: Apache-2.0
/* libFuzzer target: the kubelet's cgroup paths and the pod rules (outside
 * input: directory names under the kubelet's tree, which any runtime on
 * the node may create; pod_rule lines of iobatchd.conf and the DaemonSet's
 * ConfigMap).  The first byte picks: 0 agent_kubepods_parse, 1
 * agent_pod_rule_parse, then a match of the rule against a pod whose
 * labels are the rest of the input's lines. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/kube/kubepods.h"
#include "agent/kube/podrules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 4096)
    return 0;
  char *s = malloc(size);
  if (s == NULL)
    return 0;
  memcpy(s, data + 1, size - 1);
  s[size - 1] = '\0';
  if (data[0] % 2 == 0) {
    struct agent_kubepods_path p;
    (void)agent_kubepods_parse(s, &p);
  } else {
    struct agent_pod_rule r;
    char why[256];
    char *nl = strchr(s, '\n');
    char *labels[4] = {0};
    size_t n = 0;
    for (char *l = nl; l && n < 4; l = strchr(l + 1, '\n')) {
      *l = '\0';
      labels[n++] = l + 1;
    }
    if (agent_pod_rule_parse(s, &r, why, sizeof(why)) == 0) {
      struct agent_pod_view v = {.ns = "db", .qos = "burstable", .labels = labels, .n_labels = n};
      (void)agent_pod_rules_match(&r, 1, &v);
    }
  }
  free(s);
  return 0;
}
