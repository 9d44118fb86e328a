#!/usr/bin/env bash
# Declared classes are trusted only where trust_declared says (issue #14).
# With `trust_declared = kube-system`, a container of this test's containerd
# namespace that declares io.iobatch.class=idle and then writes (direct
# fio) through io.containerd.iobatch.v2:
#   - starts as "idle" on its declaration (a hint),
#   - is reclassified by the detector and counted as the writer it is,
#   - the agent says once that the declaration was overruled,
#   - iobatchctl status shows "declared idle (untrusted), measured ...",
#   - and its profile is learned under its own namespace, with the
#     measured class, not the declared one.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent-lib.sh"
tap_plan 8
for c in containerd ctr runc fio jq; do
  command -v $c >/dev/null || bail "$c is not installed (scripts/install-deps.sh)"
done
iob_stack_up "max_hold = 60s
trust_declared = kube-system"

# A writer that says it is idle: it sleeps 2 s (the hint is all there is),
# then writes for a while.
$CTR run -d --runtime $RT --annotation io.iobatch.class=idle --annotation io.iobatch.workload=liar \
  --rootfs "$R" liar /bin/sh -c 'sleep 2; exec /usr/bin/fio --name=w --filename=/data/liar \
  --rw=write --bs=1M --size=256M --time_based --runtime=20 --direct=1 --ioengine=psync' \
  >"$IOB_T/liar.out" 2>&1 || bail "ctr run failed: $(cat "$IOB_T/liar.out")"
ok "it starts" wait_for 20 '[ "$(state liar)" == RUNNING ]'
is "$(agent_field liar declared_class)/$(agent_field liar declared_trusted)" "idle/false" \
  "status has its declaration, not trusted"
# measured: the class and its source from one status read, a writing class
WRITING='^(seq-write|rand-write|mixed)$'
measured() {
  local j
  j=$(ctl status --json | jq -c '.containers[] | select(.id == "liar")')
  [ "$(jq -r .class_source <<<"$j")" == detected ] && [[ "$(jq -r .class <<<"$j")" =~ $WRITING ]] &&
    jq -r .class <<<"$j" >"$IOB_T/measured"
}
ok "the detector reclassifies it from what it does" wait_for 30 measured
diag "measured $(cat "$IOB_T/measured" 2>/dev/null)"
# (the first class that disagrees may be another writing one, fio lays its
# file out first)
over=$(grep -E "'liar' declared idle \(namespace '$NS', not trusted by trust_declared\), measured [a-z-]+ \(confidence [0-9.]+\): the measurement wins" "$AGENT_LOG")
diag "${over:-no such line; what the agent says about liar:}"
[ -n "$over" ] || grep "'liar'" "$AGENT_LOG" | sed 's/^/#   /'
is "$(grep -c . <<<"$over")" 1 "the agent says once that the measurement overruled the declaration"
out=$(ctl status liar)
like "$out" "Declared: +idle \(untrusted: a hint until measured\), measured [a-z-]+" \
  "iobatchctl status shows the declaration and the measurement"
ok "it exits" wait_for 60 '[ "$(state liar)" == STOPPED ]'
cleanup_ctr liar
# learnt at exit, saved shortly after
ok "its profile is learnt under its namespace" \
  wait_for 20 'jq -e --arg ns "$NS" ".namespaces[\$ns].liar" "$AGENT_STATE/profiles.json" >/dev/null 2>&1'
learnt=$(jq -r --arg ns "$NS" '.namespaces[$ns].liar.class + " " + (.profiles.liar // "none" | tostring)' "$AGENT_STATE/profiles.json")
like "$learnt" "^(seq-write|rand-write|mixed) none$" \
  "with a measured writing class ($learnt), not idle, and nothing under another namespace"
tap_done
