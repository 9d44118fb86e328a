#!/usr/bin/env bash
# packaging/kubernetes/*.yaml: valid against the Kubernetes API models of
# Debian's python3-kubernetes (tests/k8s/validate.py; a broken copy must
# fail), and consistent with each other and with install.sh: selectors,
# the RuntimeClass's node label, RBAC names, mounts, probes, metrics path.
. "$(dirname "$0")/lib.sh"
tap_plan 13
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
check "installer: install.sh install, privileged, host / at HOST_ROOT, NODE_NAME from the downward API" \
  'ctr["install"]["command"][-1] == "install" and ctr["install"]["securityContext"]["privileged"] and {e["name"]: e for e in ctr["install"]["env"]}["NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName" and any(m["mountPath"] == {e["name"]: e for e in ctr["install"]["env"]}["HOST_ROOT"]["value"] for m in ctr["install"]["volumeMounts"])'
check "iobatchd: hostPID, /sys/fs/cgroup, /run/iobatch, /var/lib/iobatch from the host" \
  'pod["hostPID"] and {v["hostPath"]["path"] for v in pod["volumes"] if v["name"] in {m["name"] for m in ctr["iobatchd"]["volumeMounts"]} and "hostPath" in v} == {"/sys/fs/cgroup", "/run/iobatch", "/var/lib/iobatch"}'
check "liveness probe: iobatchctl status on the agent's socket" \
  'ctr["iobatchd"]["livenessProbe"]["exec"]["command"][-1] == "status" and "/run/iobatch/iobatchd.sock" in ctr["iobatchd"]["livenessProbe"]["exec"]["command"]'
check "metrics: the proxy connects to the socket the agent's config names" \
  '("UNIX-CONNECT:" + [l.split("unix:")[1] for l in d[("ConfigMap", "iobatchd-config")]["data"]["iobatchd.conf"].splitlines() if l.startswith("metrics")][0]) in ctr["metrics-proxy"]["command"]'
check "metrics Service selects the pods, targets the named port, has scrape annotations" \
  'd[("Service", "iobatch-metrics")]["spec"]["selector"].items() <= ds["spec"]["template"]["metadata"]["labels"].items() and d[("Service", "iobatch-metrics")]["spec"]["ports"][0]["targetPort"] in [p["name"] for p in ctr["metrics-proxy"]["ports"]] and d[("Service", "iobatch-metrics")]["metadata"]["annotations"]["prometheus.io/scrape"] == "true"'
check "cleanup DaemonSet runs install.sh uninstall" \
  '"install.sh uninstall" in " ".join(d[("DaemonSet", "iobatch-cleanup")]["spec"]["template"]["spec"]["containers"][0]["command"])'
check "cleanup DaemonSet visits every node, labelled or not: no nodeSelector or affinity, every taint tolerated" \
  '[k for k in ("nodeSelector", "affinity", "nodeName") if k in d[("DaemonSet", "iobatch-cleanup")]["spec"]["template"]["spec"]] == [] and {"operator": "Exists"} in d[("DaemonSet", "iobatch-cleanup")]["spec"]["template"]["spec"]["tolerations"]'
tap_done
