#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# packaging/kubernetes/*.yaml: valid against the Kubernetes API models of
# Debian's python3-kubernetes (tests/k8s/validate.py; a broken copy must
# fail), and consistent with each other and with install.sh: selectors,
# the RuntimeClass's node label, RBAC names, mounts, probes, metrics path;
# and the least-privilege policy (validate.py; packaging/kubernetes/
# README.md): copies that break each rule must fail it.
. "$(dirname "$0")/../lib/common.sh"
tap_plan 21
PY=/usr/bin/python3
$PY -c 'import yaml, kubernetes' 2>/dev/null || bail "python3-yaml and python3-kubernetes are needed (scripts/install-deps.sh)"
K=$IOB_TOP/packaging/kubernetes
out=$($PY "$IOB_TOP/tests/k8s/validate.py" "$K"/*.yaml 2>&1)
rc=$?
[ -z "$out" ] || diag "$out"
is "$rc" "0" "every manifest validates against the API models"
sed 's/hostPID: true/hostPid: true/; s/value: "false"/value: false/' "$K/iobatch-deploy.yaml" >"$IOB_T/broken.yaml"
out=$($PY "$IOB_TOP/tests/k8s/validate.py" "$IOB_T/broken.yaml" 2>&1)
like "$out" "hostPid: unknown field" "a misspelt field is caught"
like "$out" "value: want str, got bool" "an unquoted env value is caught"

# policy_breaks NAME EXPECTED PYTHON: a copy of iobatch-deploy.yaml changed
# by PYTHON (over docs, the DaemonSet's pod spec `pod` and its containers
# `ctr` by name) must fail the policy with EXPECTED.
policy_breaks() {
  $PY - "$K/iobatch-deploy.yaml" "$3" >"$IOB_T/policy.yaml" <<'PY'
import sys, yaml
docs = list(yaml.safe_load_all(open(sys.argv[1])))
ds = [d for d in docs if d["kind"] == "DaemonSet"][0]
pod = ds["spec"]["template"]["spec"]
ctr = {c["name"]: c for c in pod["containers"] + pod.get("initContainers", [])}
cm = [d for d in docs if d["kind"] == "ConfigMap"][0]
exec(sys.argv[2])
yaml.safe_dump_all(docs, sys.stdout)
PY
  # safe_dump drops comments: the capabilities' reasons go back from the original
  grep -E '^\s*- [A-Z_]+ #' "$K/iobatch-deploy.yaml" | sed 's/^ */# /' >>"$IOB_T/policy.yaml"
  like "$($PY "$IOB_TOP/tests/k8s/validate.py" "$IOB_T/policy.yaml" 2>&1)" "$2" "policy: $1"
}
policy_breaks "privileged: true anywhere is caught" 'privileged: true' \
  'ctr["iobatchd"]["securityContext"]["privileged"] = True'
policy_breaks "a capability added without a comment saying why is caught" "capability SYS_ADMIN added without a comment" \
  'ctr["iobatchd"]["securityContext"]["capabilities"]["add"].append("SYS_ADMIN")'
policy_breaks "a container that does not drop ALL is caught" "metrics-proxy: policy: capabilities.drop must be \[ALL\]" \
  'del ctr["metrics-proxy"]["securityContext"]["capabilities"]'
policy_breaks "the token in every container (automountServiceAccountToken not false) is caught" "automountServiceAccountToken is not false" \
  'del pod["automountServiceAccountToken"]'
policy_breaks "the token in a container that does not call the API server is caught" "metrics-proxy: policy: mounts the service-account token" \
  'ctr["metrics-proxy"]["volumeMounts"].append({"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": True})'
policy_breaks "a root proxy on a port is caught" "metrics-proxy: policy: runs as root .* and listens on a port" \
  'ctr["metrics-proxy"]["securityContext"]["runAsUser"] = 0'
policy_breaks "the root agent on a TCP metrics port is caught" "iobatchd \(root\) would listen on 127.0.0.1:9464" \
  'cm["data"]["iobatchd.conf"] = cm["data"]["iobatchd.conf"].replace("unix:/run/iobatch/metrics/metrics.sock", "127.0.0.1:9464")'

check() { # NAME PYTHON-EXPR over docs d[(kind, name)]
  local r
  r=$($PY - "$K" "$2" <<'PY'
import glob, sys, yaml
d = {}
for f in sorted(glob.glob(sys.argv[1] + "/*.yaml")):
    for doc in yaml.safe_load_all(open(f)):
        if doc:
            d[(doc["kind"], doc["metadata"]["name"])] = doc
ds = d[("DaemonSet", "iobatch")]
pod = ds["spec"]["template"]["spec"]
ctr = {c["name"]: c for c in pod["containers"] + pod.get("initContainers", [])}
print(bool(eval(sys.argv[2])))
PY
)
  is "$r" "True" "$1"
}
label=$(sed -n 's/^NODE_LABEL=\${NODE_LABEL:-\(.*\)}$/\1/p' "$K/install.sh")
check "DaemonSet selector matches its pod labels" \
  'ds["spec"]["selector"]["matchLabels"].items() <= ds["spec"]["template"]["metadata"]["labels"].items()'
check "RuntimeClass iobatch: handler iobatch, nodeSelector on install.sh's label ($label)" \
  'd[("RuntimeClass", "iobatch")]["handler"] == "iobatch" and d[("RuntimeClass", "iobatch")]["scheduling"]["nodeSelector"] == {"'"$label"'": "true"}'
check "the pod's ServiceAccount is the one the ClusterRoleBinding binds to a role that may patch nodes" \
  'd[("ServiceAccount", pod["serviceAccountName"])] and any(s["name"] == pod["serviceAccountName"] for s in d[("ClusterRoleBinding", "iobatch-node-labeler")]["subjects"]) and "patch" in d[("ClusterRole", d[("ClusterRoleBinding", "iobatch-node-labeler")]["roleRef"]["name"])]["rules"][0]["verbs"]'
check "installer: install.sh install, the token mounted, host / at HOST_ROOT, NODE_NAME from the downward API" \
  'ctr["install"]["command"][-1] == "install" and "/var/run/secrets/kubernetes.io/serviceaccount" in [m["mountPath"] for m in ctr["install"]["volumeMounts"]] and {e["name"]: e for e in ctr["install"]["env"]}["NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName" and any(m["mountPath"] == {e["name"]: e for e in ctr["install"]["env"]}["HOST_ROOT"]["value"] for m in ctr["install"]["volumeMounts"])'
check "iobatchd: hostPID, /sys/fs/cgroup, /run/iobatch, /var/lib/iobatch and the CRI socket (read-only) from the host" \
  'pod["hostPID"] and {v["hostPath"]["path"] for v in pod["volumes"] if v["name"] in {m["name"] for m in ctr["iobatchd"]["volumeMounts"]} and "hostPath" in v} == {"/sys/fs/cgroup", "/run/iobatch", "/var/lib/iobatch", "/run/containerd/containerd.sock"} and [m.get("readOnly") for m in ctr["iobatchd"]["volumeMounts"] if m["mountPath"] == "/run/containerd/containerd.sock"] == [True]'
check "liveness probe: iobatchctl status on the agent's socket" \
  'ctr["iobatchd"]["livenessProbe"]["exec"]["command"][-1] == "status" and "/run/iobatch/iobatchd.sock" in ctr["iobatchd"]["livenessProbe"]["exec"]["command"]'
conf='dict(l.split(" = ", 1) for l in d[("ConfigMap", "iobatchd-config")]["data"]["iobatchd.conf"].splitlines() if " = " in l and not l.startswith("#"))'
check "metrics: the proxy connects to the socket the agent's config names, runs in its metrics_group (the agent a member, to give it the socket), mounts only that socket's directory (not the API socket's)" \
  '("UNIX-CONNECT:" + '"$conf"'["metrics"][5:]) in ctr["metrics-proxy"]["command"] and ctr["metrics-proxy"]["securityContext"]["runAsGroup"] == int('"$conf"'["metrics_group"]) in pod["securityContext"]["supplementalGroups"] and [(m["mountPath"], next(v["hostPath"]["path"] for v in pod["volumes"] if v["name"] == m["name"])) for m in ctr["metrics-proxy"]["volumeMounts"]] == [('"$conf"'["metrics"][5:].rsplit("/", 1)[0],) * 2] and '"$conf"'["metrics"][5:].rsplit("/", 1)[0] != '"$conf"'["socket"].rsplit("/", 1)[0]'
check "metrics Service selects the pods, targets the named port, has scrape annotations" \
  'd[("Service", "iobatch-metrics")]["spec"]["selector"].items() <= ds["spec"]["template"]["metadata"]["labels"].items() and d[("Service", "iobatch-metrics")]["spec"]["ports"][0]["targetPort"] in [p["name"] for p in ctr["metrics-proxy"]["ports"]] and d[("Service", "iobatch-metrics")]["metadata"]["annotations"]["prometheus.io/scrape"] == "true"'
# Through the socat proxy every network client is one metrics peer (uid
# 65532), so the agent's per-peer limit cannot tell a scraper from any pod:
# the policy in iobatch-deploy.yaml lets only the scraper reach the port.
check "metrics NetworkPolicy: selects the DaemonSet's pods, Ingress only from a selector (not everyone) to the metrics port" \
  'any(k == "NetworkPolicy" and p["metadata"]["namespace"] == ds["metadata"]["namespace"] and p["spec"]["podSelector"]["matchLabels"].items() <= ds["spec"]["template"]["metadata"]["labels"].items() and p["spec"]["policyTypes"] == ["Ingress"] and len(p["spec"]["ingress"]) > 0 and all(r.get("from") and all(f.get("namespaceSelector") or f.get("podSelector") for f in r["from"]) and [q["port"] for q in r["ports"]] == ["metrics"] for r in p["spec"]["ingress"]) for (k, n), p in d.items())'
check "cleanup DaemonSet runs install.sh uninstall" \
  '"install.sh uninstall" in " ".join(d[("DaemonSet", "iobatch-cleanup")]["spec"]["template"]["spec"]["containers"][0]["command"])'
check "cleanup DaemonSet visits every node, labelled or not: no nodeSelector or affinity, every taint tolerated" \
  '[k for k in ("nodeSelector", "affinity", "nodeName") if k in d[("DaemonSet", "iobatch-cleanup")]["spec"]["template"]["spec"]] == [] and {"operator": "Exists"} in d[("DaemonSet", "iobatch-cleanup")]["spec"]["template"]["spec"]["tolerations"]'
tap_done
