#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# packaging/kubernetes/iobatch-npd.json, the node-problem-detector custom
# plugin monitor that turns `iobatchctl check io-pressure` into the node
# condition IobatchIOPressure, against the rules node-problem-detector
# applies to such a file (pkg/custompluginmonitor/types/config.go,
# ApplyConfiguration and Validate): plugin "custom"; durations Go can
# parse; no rule timeout above the global one; every permanent rule's
# condition among the default conditions; and here: the condition and its
# reasons carry the project's prefix (the kubelet names its own conditions
# *Pressure, and a kubelet PSI proposal, KEP-4205, plans more of that
# shape); the rule runs the binary the DaemonSet's installer puts on the
# host with the agent's socket, and that binary (as built) answers with one
# line of at most max_output_length and an exit status of the protocol (0
# OK, 1 NonOK, 2 Unknown). node-problem-detector itself is not packaged in
# Debian 12: its loader is not run here.
. "$(dirname "$0")/../lib/common.sh"
tap_plan 7
iob_need python3
CFG=$IOB_TOP/packaging/kubernetes/iobatch-npd.json
python3 - "$CFG" <<'PY' >"$IOB_T/v.out" 2>&1
import json, re, sys
c = json.load(open(sys.argv[1]))
def dur(s):  # Go's time.ParseDuration, for the units used here
    m = re.fullmatch(r"((\d+(\.\d+)?)(ns|us|ms|s|m|h))+", s)
    assert m, f"not a Go duration: {s!r}"
    mult = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}
    return sum(float(n) * mult[u] for n, _, u in re.findall(r"(\d+(\.\d+)?)(ns|us|ms|s|m|h)", s))
assert c["plugin"] == "custom", "plugin must be 'custom'"
g = c["pluginConfig"]
gt = dur(g.get("timeout", "5s")); dur(g.get("invoke_interval", "30s"))
assert set(g) <= {"invoke_interval", "timeout", "max_output_length", "concurrency",
                  "enable_message_change_based_condition_update", "skip_initial_status"}, g
assert c["source"], "a source"
defaults = {d["type"] for d in c["conditions"]}
for r in c["rules"]:
    assert r["type"] in ("temporary", "permanent"), r
    if "timeout" in r:
        assert dur(r["timeout"]) <= gt, "rule timeout above the global timeout"
    if r["type"] == "permanent":
        assert r["condition"] in defaults, "permanent rule without a default condition"
print("ok")
PY
is "$(tail -1 "$IOB_T/v.out")" "ok" "the monitor config follows node-problem-detector's rules"
[ "$(tail -1 "$IOB_T/v.out")" = ok ] || sed 's/^/# /' "$IOB_T/v.out"
is "$(jq -r '[.conditions[].type, .conditions[].reason, .rules[].condition, .rules[].reason] | join(" ")' "$CFG")" \
  "IobatchIOPressure IobatchNoIOPressure IobatchIOPressure IobatchIOPressure" \
  "the node condition is IobatchIOPressure (reasons IobatchNoIOPressure, IobatchIOPressure), not a kubelet-like IOPressure"
is "$(jq -r '.rules[0].path' "$CFG")" "/opt/iobatch/bin/iobatchctl" \
  "it runs iobatchctl where the DaemonSet's installer puts it"
is "$(jq -r '.rules[0].args | join(" ")' "$CFG")" "--socket /run/iobatch/iobatchd.sock check io-pressure" \
  "with the agent's socket of the DaemonSet's config"
grep -q "socket = /run/iobatch/iobatchd.sock" "$IOB_TOP/packaging/kubernetes/iobatch-deploy.yaml"
is "$?" 0 "which is the socket the DaemonSet's ConfigMap gives the agent"
# The checker as node-problem-detector runs it, with no agent: Unknown.
args=$(jq -r '.rules[0].args[2:] | join(" ")' "$CFG")
# shellcheck disable=SC2086
out=$("$IOB_B/bin/iobatchctl" --socket "$IOB_T/none.sock" $args)
rc=$?
max=$(jq -r '.pluginConfig.max_output_length' "$CFG")
is "$rc" 2 "no agent: exit 2 (Unknown)"
[ "$(wc -l <<<"$out")" -eq 1 ] && [ "${#out}" -le "$max" ]
is "$?" 0 "one line of at most $max characters ($out)"
tap_done
