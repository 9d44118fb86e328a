#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Validate Kubernetes manifests offline against the API models of Debian's
python3-kubernetes (generated from the Kubernetes 1.22 OpenAPI spec): every
field must exist in its kind (no unknown or misspelt keys), values must
have the model's type (str, int, bool, maps, lists, nested objects),
required fields must be there, and the setters' own checks (enums) run.
This is the schema of the kinds as the client knows them, not an API
server: admission rules and defaults are not checked.

Then the least-privilege policy of packaging/kubernetes/README.md, on
every pod iobatch runs (the DaemonSets' templates; runtimeclass.yaml's
example Pod is a tenant's workload):
  - no `privileged: true` anywhere, in any manifest;
  - every container (init containers too) drops ALL capabilities, sets
    allowPrivilegeEscalation false, and each capability it adds back is
    on a line of its own with a comment saying why (`- BPF # ...`);
  - the pod sets automountServiceAccountToken false (else the kubelet
    mounts the token into every container), and a projected
    serviceAccountToken volume is mounted only into containers that call
    the API server (those that run install.sh: kubectl label node);
  - nothing that runs as root listens on a port: a container with ports
    runs as a non-root uid (runAsUser != 0 and runAsNonRoot), no pod with
    a root container uses the node's network, and iobatchd's `metrics`
    (the agent is root) is a unix socket.

usage: validate.py FILE...   (prints one line per problem; exit 1 if any)
"""
import re
import sys

import yaml
from kubernetes import client

KINDS = {
    ("v1", "ConfigMap"): client.V1ConfigMap,
    ("v1", "Service"): client.V1Service,
    ("v1", "ServiceAccount"): client.V1ServiceAccount,
    ("v1", "Pod"): client.V1Pod,
    ("apps/v1", "DaemonSet"): client.V1DaemonSet,
    ("node.k8s.io/v1", "RuntimeClass"): client.V1RuntimeClass,
    ("networking.k8s.io/v1", "NetworkPolicy"): client.V1NetworkPolicy,
    ("rbac.authorization.k8s.io/v1", "ClusterRole"): client.V1ClusterRole,
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): client.V1ClusterRoleBinding,
}
CONF = client.Configuration()
CONF.client_side_validation = True


def required(cls):
    """Fields whose setter refuses None."""
    out = []
    for attr in cls.openapi_types:
        obj = cls.__new__(cls)
        obj.local_vars_configuration = CONF
        try:
            setattr(obj, attr, None)
        except ValueError:
            out.append(attr)
    return out


def check(value, typ, path, errs):
    m = re.fullmatch(r"list\[(.+)\]", typ)
    if m:
        if not isinstance(value, list):
            return errs.append(f"{path}: want a list, got {type(value).__name__}")
        for i, v in enumerate(value):
            check(v, m.group(1), f"{path}[{i}]", errs)
        return
    m = re.fullmatch(r"dict\(str, (.+)\)", typ)
    if m:
        if not isinstance(value, dict):
            return errs.append(f"{path}: want a map, got {type(value).__name__}")
        for k, v in value.items():
            check(v, m.group(1), f"{path}.{k}", errs)
        return
    prim = {"str": str, "int": int, "bool": bool, "float": (int, float)}
    if typ in prim:
        if not isinstance(value, prim[typ]) or (typ == "int" and isinstance(value, bool)):
            errs.append(f"{path}: want {typ}, got {type(value).__name__} {value!r}")
        return
    if typ in ("object", "datetime", "date"):
        return
    check_object(value, getattr(client, typ), path, errs)


def check_object(value, cls, path, errs):
    if not isinstance(value, dict):
        return errs.append(f"{path}: want an object ({cls.__name__}), got {type(value).__name__}")
    by_json = {j: a for a, j in cls.attribute_map.items()}
    for key, v in value.items():
        if key not in by_json:
            errs.append(f"{path}.{key}: unknown field of {cls.__name__}")
            continue
        attr = by_json[key]
        typ = cls.openapi_types[attr]
        check(v, typ, f"{path}.{key}", errs)
        if typ == "str" and isinstance(v, str):
            obj = cls.__new__(cls)
            obj.local_vars_configuration = CONF
            try:
                setattr(obj, attr, v)  # enum and pattern checks of the setter
            except ValueError as e:
                errs.append(f"{path}.{key}: {e}")
    for attr in required(cls):
        if cls.attribute_map[attr] not in value:
            errs.append(f"{path}: missing required field '{cls.attribute_map[attr]}' of {cls.__name__}")


API_CLIENT = re.compile(r"(^|/)install\.sh$")  # the one program that asks the API server


def walk(value, path):
    """(path, key, value) of every mapping entry, depth first."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield path, k, v
            yield from walk(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from walk(v, f"{path}[{i}]")


def pod_of(doc):
    if doc.get("kind") != "DaemonSet":
        return None
    tmpl = (doc.get("spec") or {}).get("template")
    return (tmpl or {}).get("spec")


def commented_caps(text):
    """Capabilities added on a line of their own with a comment after them."""
    return set(re.findall(r"^\s*-\s*([A-Z_]+)\s*#\s*\S", text, re.M))


def policy_pod(where, pod, text, errs):
    ctrs = [("initContainers", c) for c in pod.get("initContainers") or []]
    ctrs += [("containers", c) for c in pod.get("containers") or []]
    psc = pod.get("securityContext") or {}
    commented = commented_caps(text)
    token_vols = {v["name"] for v in pod.get("volumes") or []
                  if any("serviceAccountToken" in s for s in (v.get("projected") or {}).get("sources") or [])}
    if pod.get("automountServiceAccountToken") is not False:
        errs.append(f"{where}: policy: automountServiceAccountToken is not false: the token would be "
                    "mounted into every container")
    root_ctrs = []
    for kind, c in ctrs:
        cw = f"{where}.{kind}.{c.get('name')}"
        sc = c.get("securityContext") or {}
        caps = sc.get("capabilities") or {}
        if caps.get("drop") != ["ALL"]:
            errs.append(f"{cw}: policy: capabilities.drop must be [ALL], got {caps.get('drop')}")
        for cap in caps.get("add") or []:
            if cap not in commented:
                errs.append(f"{cw}: policy: capability {cap} added without a comment saying why")
        if sc.get("allowPrivilegeEscalation") is not False:
            errs.append(f"{cw}: policy: allowPrivilegeEscalation must be false")
        uid = sc.get("runAsUser", psc.get("runAsUser"))
        non_root = sc.get("runAsNonRoot", psc.get("runAsNonRoot"))
        if uid in (0, None) or not non_root:
            root_ctrs.append(c.get("name"))
            if c.get("ports"):
                errs.append(f"{cw}: policy: runs as root (runAsUser {uid}, runAsNonRoot {non_root}) and "
                            "listens on a port")
        cmd = " ".join(str(x) for x in (c.get("command") or []) + (c.get("args") or []))
        calls_api = any(API_CLIENT.search(w) for w in cmd.split())
        for m in c.get("volumeMounts") or []:
            if m.get("name") in token_vols and not calls_api:
                errs.append(f"{cw}: policy: mounts the service-account token ({m['name']}) but does not "
                            "call the API server")
    if root_ctrs and pod.get("hostNetwork"):
        errs.append(f"{where}: policy: hostNetwork with containers that run as root ({', '.join(root_ctrs)})")


def policy(f, text, docs, errs):
    for i, d in enumerate(docs):
        if not isinstance(d, dict):
            continue
        where = f"{f}#{i}:{d.get('kind')}/{(d.get('metadata') or {}).get('name')}"
        for path, k, v in walk(d, where):
            if k == "privileged" and v is True:
                errs.append(f"{path}.privileged: policy: privileged: true")
        pod = pod_of(d)
        if isinstance(pod, dict):
            policy_pod(where, pod, text, errs)
        if d.get("kind") == "ConfigMap":
            conf = (d.get("data") or {}).get("iobatchd.conf", "")
            for line in conf.splitlines():
                m = re.match(r"\s*metrics\s*=\s*(\S+)", line)
                if m and not m.group(1).startswith("unix:"):
                    errs.append(f"{where}: policy: iobatchd (root) would listen on {m.group(1)}: "
                                "metrics must be a unix socket")


def main(files):
    errs = []
    for f in files:
        with open(f) as fh:
            text = fh.read()
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
        policy(f, text, docs, errs)
        for i, d in enumerate(docs):
            where = f"{f}#{i}"
            if not isinstance(d, dict):
                errs.append(f"{where}: not an object")
                continue
            cls = KINDS.get((d.get("apiVersion"), d.get("kind")))
            if cls is None:
                errs.append(f"{where}: unknown apiVersion/kind {d.get('apiVersion')}/{d.get('kind')}")
                continue
            check_object(d, cls, f"{where}:{d['kind']}/{d.get('metadata', {}).get('name')}", errs)
    for e in errs:
        print(e)
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
