#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Validate Kubernetes manifests offline against the API models of Debian's
python3-kubernetes (generated from the Kubernetes 1.22 OpenAPI spec): every
field must exist in its kind (no unknown or misspelt keys), values must
have the model's type (str, int, bool, maps, lists, nested objects),
required fields must be there, and the setters' own checks (enums) run.
This is the schema of the kinds as the client knows them, not an API
server: admission rules and defaults are not checked.

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


def main(files):
    errs = []
    for f in files:
        with open(f) as fh:
            docs = [d for d in yaml.safe_load_all(fh) if d is not None]
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
