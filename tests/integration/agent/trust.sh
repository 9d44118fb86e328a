#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
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
# And io.iobatch.kind (the same rule): with one batch slot
# (max_concurrency = 1) taken by a trusted sequential writer,
#   - a container of this namespace that declares kind=service, and one
#     that declares kind=sandbox, are jobs: both are held (CREATED,
#     pending), the agent says once for each that it ignored the kind,
#     and iobatchctl status shows "declared kind service (untrusted)";
#     they start, one at a time, when the slot frees;
#   - the CRI's own container-type=sandbox is still a sandbox here: it
#     starts at once;
#   - the same kind=service from a namespace trust_declared lists is a
#     service: it starts at once beside the writer.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 25
iob_need containerd ctr runc fio jq
NS2=iobt${IOB_T##*.} # trusted
iob_stack_up "max_hold = 60s
max_concurrency = 1
trust_declared = kube-system, $NS2"
CTR2=$(iob_ctr "$NS2")
at_exit "for t in blocker tsvc; do $CTR2 task delete -f \$t; $CTR2 container delete \$t; done"

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

# ---- who may declare io.iobatch.kind ----
# The one slot: a trusted, declared sequential writer (a trusted class is
# never measured over, so it keeps the slot while it sleeps).
$CTR2 run -d --runtime $RT --annotation io.iobatch.class=seq-write --rootfs "$R" blocker \
  /bin/sleep 600 >"$IOB_T/blocker.out" 2>&1 || bail "ctr run failed: $(cat "$IOB_T/blocker.out")"
ok "a trusted sequential writer takes the only batch slot" \
  wait_for 20 '[ "$(agent_field blocker state)/$(agent_field blocker class_source)" == running/declared ]'
# held_run ID KIND: ctr run -d in this (untrusted) namespace in the
# background: it blocks in Start while the agent holds the container.
held_run() {
  ($CTR run -d --runtime $RT --annotation "io.iobatch.kind=$2" --annotation io.iobatch.class=seq-write \
    --rootfs "$R" "$1" /bin/sleep 600 >"$IOB_T/$1.out" 2>&1
    echo $? >"$IOB_T/$1.rc.tmp" && mv "$IOB_T/$1.rc.tmp" "$IOB_T/$1.rc") &
}
held_run usvc service
ok "kind=service from an untrusted namespace is held behind the writer" \
  wait_for 20 '[ "$(agent_field usvc state)" == pending ] && [ "$(state usvc)" == CREATED ]'
held_run usbx sandbox
ok "so is kind=sandbox" \
  wait_for 20 '[ "$(agent_field usbx state)" == pending ] && [ "$(state usbx)" == CREATED ]'
j=$(ctl status --json | jq -c '.containers[] | select(.id == "usvc")')
is "$(jq -r '[.kind, .declared_kind, .declared_kind_trusted, .reason] | join("/")' <<<"$j")" \
  "job/service/false/pending: max concurrency reached" \
  "the agent lists it as a job that waits for the batch slot, declared service, untrusted"
is "$(agent_field usbx kind)/$(agent_field usbx declared_kind)" "job/sandbox" \
  "and the sandbox-declared one as a job"
for id in usvc usbx; do
  k=$(agent_field $id declared_kind)
  n=$(grep -c "'$id' declared kind $k (namespace '$NS', not trusted by trust_declared): treated as a job" "$AGENT_LOG")
  is "$n" 1 "the agent says once that it ignored $id's kind $k (the shim's Register and its Admit both said it)"
done
like "$(ctl status usvc)" "Kind: +job \(declared kind service \(untrusted\): ignored\)" \
  "iobatchctl status shows the declared kind as untrusted"
# The CRI's word is not a declaration: a sandbox from any namespace.
$CTR run -d --runtime $RT --annotation io.kubernetes.cri.container-type=sandbox --rootfs "$R" \
  crisbx /bin/sleep 600 >"$IOB_T/crisbx.out" 2>&1
is "$?:$(state crisbx)" "0:RUNNING" "the CRI's container-type=sandbox starts at once in the same namespace"
ok "and the agent lists it as a sandbox" wait_for 10 '[ "$(agent_field crisbx kind)" == sandbox ]'
# Trusted: the same declaration stands.
$CTR2 run -d --runtime $RT --annotation io.iobatch.kind=service --annotation io.iobatch.class=seq-write \
  --rootfs "$R" tsvc /bin/sleep 600 >"$IOB_T/tsvc.out" 2>&1
is "$?:$(CTR=$CTR2 state tsvc)" "0:RUNNING" "kind=service from a trusted namespace starts at once beside the writer"
is "$(agent_field tsvc kind)/$(agent_field tsvc declared_kind_trusted)/$(agent_field tsvc reason)" \
  "service/true/admitted: a service is never held" "the agent lists it as a trusted service"
is "$(grep -c "'tsvc' declared kind" "$AGENT_LOG")" 0 "and says nothing about its kind"
is "$(state usvc)/$(state usbx)" "CREATED/CREATED" "the untrusted ones are still held"
# The slot frees: the older held job starts first.
CTR=$CTR2 cleanup_ctr blocker
ok "kind=service (untrusted) starts once the slot is free" \
  wait_for 30 '[ "$(state usvc)" == RUNNING ] && [ "$(cat "$IOB_T/usvc.rc" 2>/dev/null)" == 0 ]'
cleanup_ctr usvc
ok "then kind=sandbox (untrusted)" \
  wait_for 30 '[ "$(state usbx)" == RUNNING ] && [ "$(cat "$IOB_T/usbx.rc" 2>/dev/null)" == 0 ]'
for id in usbx crisbx; do cleanup_ctr $id; done
CTR=$CTR2 cleanup_ctr tsvc
ok "nothing of the kind tests is listed any more" \
  wait_for 20 '[ -z "$(ctl status --json | jq -r ".containers[].id")" ]'
tap_done
