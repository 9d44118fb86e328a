#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The PromQL of packaging/kubernetes/: the Grafana dashboard's queries and
the alert rules (a ConfigMap whose data holds a Prometheus rule file).

usage: promql.py names FILE...   every metric name the queries of FILE
                                 (.json: a dashboard; .yaml: the rules
                                 ConfigMap) select, one a line; exit 1 if
                                 a file has no query
       promql.py rules FILE.json the dashboard's queries as a Prometheus
                                 rule file of recording rules (its
                                 variables replaced), for promtool check
       promql.py extract FILE.yaml
                                 the rule file inside the ConfigMap

A metric name is an identifier of the expression that is not a function
or aggregation (followed by "("), a keyword, a label name (in a matcher
or a by/without/on/ignoring/group_left/group_right list) or a number;
label_values(METRIC, LABEL) names METRIC.  Good enough for the queries we
write, strict enough that a misspelt metric shows.
"""
import json
import re
import sys

import yaml

KEYWORDS = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring",
            "group_left", "group_right", "inf", "nan", "Inf", "NaN", "atan2"}
VARS = {"$instance": ".*", "$namespace": ".*", "$__rate_interval": "5m",
        "$__interval": "1m", "$__range": "1h"}


def names(expr):
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    e = re.sub(r"'(?:[^'\\]|\\.)*'", "''", e)
    e = re.sub(r"label_values\(\s*([A-Za-z_:][A-Za-z0-9_:]*)?\s*(\{[^}]*\})?\s*,?\s*[A-Za-z_][A-Za-z0-9_]*\s*\)",
               lambda m: " " + (m.group(1) or "") + " ", e)
    e = re.sub(r"\{[^}]*\}", " ", e)
    e = re.sub(r"\[[^\]]*\]", " ", e)
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    e = re.sub(r"(?<![A-Za-z0-9_:])\d+(\.\d+)?([eE][+-]?\d+|[smhdwy]+)?", " ", e)
    out = set()
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", e):
        if e[m.end():].lstrip().startswith("(") or m.group(0) in KEYWORDS:
            continue
        out.add(m.group(0))
    return out


def dashboard_exprs(d):
    exprs = []

    def panels(ps):
        for p in ps:
            exprs.extend(t["expr"] for t in p.get("targets", []) if t.get("expr"))
            panels(p.get("panels", []))
    panels(d.get("panels", []))
    for v in d.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            q = v.get("query")
            exprs.append(q["query"] if isinstance(q, dict) else q)
            if v.get("definition"):
                exprs.append(v["definition"])
    return exprs


def rules_text(path):
    doc = yaml.safe_load(open(path))
    return doc["data"]["iobatch.rules.yaml"]


def rule_exprs(path):
    return [r["expr"] for g in yaml.safe_load(rules_text(path))["groups"] for r in g["rules"]]


def exprs_of(path):
    if path.endswith(".json"):
        return dashboard_exprs(json.load(open(path)))
    return rule_exprs(path)


def main(argv):
    if len(argv) >= 3 and argv[1] == "names":
        found = set()
        for f in argv[2:]:
            ex = exprs_of(f)
            if not ex:
                print(f"{f}: no query", file=sys.stderr)
                return 1
            for e in ex:
                found |= names(e)
        print("\n".join(sorted(found)))
        return 0
    if len(argv) == 3 and argv[1] == "rules":
        rules = []
        for i, e in enumerate(exprs_of(argv[2])):
            if e.startswith("label_values("):
                continue  # Grafana's, not PromQL: its metric is checked by `names`
            for k, v in VARS.items():
                e = e.replace(k, v)
            rules.append({"record": f"dashboard:query:{i}", "expr": e})
        print(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
        return 0
    if len(argv) == 3 and argv[1] == "extract":
        sys.stdout.write(rules_text(argv[2]))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
