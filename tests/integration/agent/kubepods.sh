#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue #25: every container under the kubelet's cgroup tree is sampled,
# classified and capped, whatever started it.  Plain runc (no shim, no
# hook) starts containers in a kubepods-like tree of this host's
# hierarchies, in both cgroup drivers' layouts, under a private kubelet
# --cgroup-root (kubepods_root) so that no other agent sees them:
#   - a Guaranteed pod's container (cgroupfs: kubepods/pod<uid>/<id>), a
#     queue-depth-1 random reader that a QoS rule (qos=guaranteed ->
#     class=latency) makes latency-sensitive;
#   - a BestEffort pod's container in the systemd layout
#     (kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod<uid>.slice/
#     cri-containerd-<id>.scope), a direct writer: detected seq-write and
#     capped to protect the reader, whose rule declares an objective
#     no disk meets (the writer's harm is the disk's to decide), and
#     uncapped again once the cap is seen not to help;
#   - a Burstable pod's sandbox: not listed, as the node's CRI (a fake that
#     only lists, tests/tools/cri_fake.py) names it a sandbox; a tenant's
#     container whose process is called "pause", and one called "crunch",
#     are listed (a process's name decides nothing: agent/kube/kubepods.h);
#   - none can be held (status: HELD "never", "Holdable: no"); a container
#     removed (runc delete) leaves status.
# Then the agent's default configuration (no kubepods keys) on the host's
# own /kubepods tree lists a container plain runc started there.
# The checks read the agent's status (windows), not the clock.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 23
iob_need runc fio jq
PY=/usr/bin/python3
$PY -c 'import grpc, grpc_tools' 2>/dev/null || bail "needs python3-grpcio and python3-grpc-tools"
[ "$(id -u)" -eq 0 ] || bail "needs root to create cgroups"

KROOT=/iobkp-$$ # the kubelet's --cgroup-root of this test
R=$IOB_T/rootfs
iob_rootfs_busybox "$R"
iob_rootfs_add_binary "$R" "$(command -v fio)"
cp "$(command -v sleep)" "$R/pause" # a sandbox's process: comm "pause"
cp "$(command -v sleep)" "$R/crunch"
iob_rootfs_add_binary "$R" "$(command -v sleep)"
RUNC="runc --root $IOB_T/runc"

# run_ctr ID CGROUPSPATH ARGS...: a detached runc container in that cgroup
run_ctr() {
  local id=$1 cg=$2 b=$IOB_T/b-$1
  shift 2
  mkdir -p "$b"
  (cd "$b" && runc spec) || return 1
  # (the arguments through a JSON array: jq takes "--name=v" for an option)
  local args
  args=$(printf '%s\n' "$@" | jq -R . | jq -s .)
  jq --arg r "$R" --arg cg "$cg" --argjson a "$args" '.root = {path: $r, readonly: false}
      | .process.terminal = false | .process.args = $a
      | .linux.cgroupsPath = $cg' <"$b/config.json" >"$b/c.json" && mv "$b/c.json" "$b/config.json"
  at_exit "$RUNC delete -f $id"
  $RUNC run -d --bundle "$b" "$id" </dev/null >"$IOB_T/$id.out" 2>&1
}
# every cgroup of the test's tree, deepest first (runc delete removes its
# own; the pod and QoS levels are the test's)
tree_remove() {
  local m
  for m in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
    [ -d "$m${1#/}" ] && find "$m${1#/}" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  return 0
}
at_exit "tree_remove $KROOT"

G_UID=6d2f6f3e-1111-4c2b-9c55-0a1b2c3d4e5f
B_UID=9a8b7c6d-2222-4e3f-8a9b-1c2d3e4f5a6b
S_UID=0f1e2d3c-3333-4b5a-9687-a1b2c3d4e5f6
VIC=vic$$ WRI=wri$$ SBX=sbx$$ TEN=ten$$ CRU=cru$$
# The node's CRI: SBX is the sandbox of pod S_UID, TEN and CRU its
# containers; it has not listed VIC and WRI (their pods were made since
# its last poll, say): their processes are neither "pause" nor an init.
$PY "$IOB_TOP/tests/tools/cri_fake.py" --socket "$IOB_T/cri.sock" --gen "$IOB_T/gen" \
  --sandbox "$SBX:$S_UID" --container "$TEN:$SBX" --container "$CRU:$SBX" >"$IOB_T/cri.log" 2>&1 &
CRIPID=$!
at_exit "kill $CRIPID 2>/dev/null"
wait_for 60 '[ -S "$IOB_T/cri.sock" ]' || bail "the fake CRI did not start: $(cat "$IOB_T/cri.log")"
WRI_CG=$KROOT/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${B_UID//-/_}.slice/cri-containerd-$WRI.scope

fio --name=prep --filename="$R/data/victim" --rw=write --bs=1M --size=256M --direct=1 \
  >/dev/null 2>&1 || bail "cannot prepare the victim's file"
# Whether this writer slows this reader is the disk's to decide (a cloud
# disk may serve both faster together), so the rule declares an objective
# no disk meets (a p99 of 1 us): every window the writer does I/O beside
# the reader is a miss, and the agent must cap it; capped, the reader
# misses as often, so the agent then lets the cap go (protect_evidence).
# No freezing: the writer must run all along, never held.
agent_start "kubepods_root = $KROOT
cri_endpoint = unix://$IOB_T/cri.sock
protect_objective = declared
protect_freeze = false
pod_rule = guaranteed-latency: qos=guaranteed -> class=latency latency-target=1us
pod_rule = never-matches: namespace=db label:tier=db -> class=latency" || bail "iobatchd did not start"

run_ctr "$VIC" "$KROOT/kubepods/pod$G_UID/$VIC" /usr/bin/fio --name=v --filename=/data/victim \
  --rw=randread --bs=4k --size=256M --time_based --runtime=300 --direct=1 --ioengine=psync ||
  bail "runc did not start the reader: $(cat "$IOB_T/$VIC.out")"
run_ctr "$SBX" "$KROOT/kubepods/burstable/pod$S_UID/$SBX" /pause 600 ||
  bail "runc did not start the sandbox: $(cat "$IOB_T/$SBX.out")"
wait_for 30 '[ "$(agent_field "$VIC" state)" = running ]'
is "$(agent_field "$VIC" state)" "running" "a container plain runc started under kubepods/pod<uid>/ is found, running"
is "$(agent_field "$VIC" qos)/$(agent_field "$VIC" pod_uid)" "guaranteed/$G_UID" \
  "its QoS class and pod uid come from its cgroup path (cgroupfs driver)"
is "$(agent_field "$VIC" rule)/$(agent_field "$VIC" protected)" "guaranteed-latency/true" \
  "the QoS rule decides its class: latency-sensitive, protected"
wait_for 30 '[ "$(agent_field "$VIC" lat_target_source)" = declared ]'
is "$(agent_field "$VIC" lat_target)/$(agent_field "$VIC" lat_target_source)" "1/declared" \
  "its objective is the rule's (block I/O latency measured)"
wait_for 30 'awk -v r="$(agent_field "$VIC" read_bps)" "BEGIN { exit !(r > 0) }"'
is "$?" "0" "it is sampled ($(agent_field "$VIC" read_bps) B/s read)"
is "$(ctl status --json | jq -r --arg s "$SBX" '[.containers[] | select(.id == $s)] | length')" "0" \
  "a pod's sandbox (pause) is not listed"
run_ctr "$TEN" "$KROOT/kubepods/burstable/pod$S_UID/$TEN" /pause 600 ||
  bail "runc did not start the tenant's 'pause': $(cat "$IOB_T/$TEN.out")"
run_ctr "$CRU" "$KROOT/kubepods/burstable/pod$S_UID/$CRU" /crunch 600 ||
  bail "runc did not start 'crunch': $(cat "$IOB_T/$CRU.out")"
wait_for 30 '[ "$(agent_field "$TEN" state)" = running ]'
is "$(agent_field "$TEN" state)/$(agent_field "$TEN" kind)" "running/job" \
  "a tenant's container whose process is called 'pause' is a container (the CRI lists it so)"
wait_for 30 '[ "$(agent_field "$CRU" state)" = running ]'
is "$(agent_field "$CRU" state)" "running" "one whose process is called 'crunch' is not taken for crun's init"
$RUNC delete -f "$TEN" >/dev/null 2>&1
$RUNC delete -f "$CRU" >/dev/null 2>&1

run_ctr "$WRI" "$WRI_CG" /usr/bin/fio --name=w --filename=/data/w --rw=write --bs=1M --size=4G --ioengine=libaio --iodepth=16 \
  --time_based --runtime=300 --direct=1 || bail "runc did not start the writer: $(cat "$IOB_T/$WRI.out")"
wait_for 30 '[ "$(agent_field "$WRI" state)" = running ]'
is "$(agent_field "$WRI" qos)/$(agent_field "$WRI" pod_uid)" "besteffort/$B_UID" \
  "the systemd layout (cri-containerd-<id>.scope, uid with '_') is found too"
wait_for 60 '[ "$(agent_field "$WRI" class)" = seq-write ]'
is "$(agent_field "$WRI" class) ($(agent_field "$WRI" class_source))" "seq-write (detected)" \
  "the writer is classified from its samples"
wait_for 60 '[ "$(agent_field "$WRI" cap_bps)" -gt 0 ] 2>/dev/null'
cap=$(agent_field "$WRI" cap_bps)
ctl status --json | jq -c '.containers[] | {id, class, read_bps, write_bps, protected, share, io_lat_p99_us, lat_target, cap_bps}' | sed 's/^/# /'
[ "${cap:-0}" -gt 0 ] 2>/dev/null
is "$?" "0" "the writer is capped to protect the reader ($((${cap:-0} / 1048576)) MiB/s)"
# The reader misses capped as it did free, and more often per byte the
# writer moves: the agent lets every lever go (agent/protect/protect.h).
wait_for 60 '[ "$(ctl status --json | jq -r .protect_released_why)" = "let go" ]'
ctl status --json | jq -c '{protect_help_ratio, protect_released, protect_released_why}' | sed 's/^/# /'
is "$(ctl status --json | jq -r .protect_released_why)/$(agent_field "$WRI" cap_bps)" "let go/0" \
  "a cap that does not lessen its misses is let go: the writer runs uncapped"
like "$(ctl status)" "every lever released for [0-9]+ more windows" "iobatchctl status says so"
is "$(agent_field "$WRI" holdable)/$(agent_field "$VIC" holdable)" "false/false" "neither can be held (status --json)"
ctl status >"$IOB_T/st.txt"
like "$(grep -F "$WRI" "$IOB_T/st.txt")" " never " "iobatchctl status: HELD says never"
like "$(ctl status "$WRI")" "Holdable: +no" "iobatchctl status ID: not holdable"
like "$(ctl status "$VIC")" "Rule: +guaranteed-latency" "iobatchctl status ID names the rule"
like "$(ctl status --json | jq -r .kubepods)" "tree '.*$KROOT/kubepods" "status names the tree walked"
is "$(ctl status --json | jq -r --arg s "$SBX" '[.containers[] | select(.id == $s)] | length')" "0" \
  "the sandbox is still not listed, past the bound a name would wait (the CRI's word)"
unlike_cri=$(ctl status --json | jq -r .kubepods)
ok "status does not say the CRI is unreachable" test "${unlike_cri/no CRI reachable/}" = "$unlike_cri"
# Sampled windows counted, the writer never held: it ran all along.
is "$(agent_field "$WRI" state)" "running" "the capped writer still runs (never held)"

$RUNC delete -f "$WRI" >/dev/null 2>&1
wait_for 30 '[ -z "$(agent_field "$WRI" state)" ]'
is "$(agent_field "$WRI" state)" "" "removed (runc delete): it leaves status"
$RUNC delete -f "$VIC" >/dev/null 2>&1
$RUNC delete -f "$SBX" >/dev/null 2>&1
agent_stop

# The agent's default configuration (no kubepods keys) on the host's own
# kubelet tree: a container plain runc starts there is listed.
DEF=def$$ DEF_UID=4a3b2c1d-4444-4e5f-8a7b-6c5d4e3f2a1b
at_exit "tree_remove /kubepods/besteffort/pod$DEF_UID"
AGENT_KUBEPODS=default agent_start || bail "iobatchd did not start"
grep -q kubepods "$IOB_T/agent.conf" && bail "the agent's configuration names kubepods"
run_ctr "$DEF" "/kubepods/besteffort/pod$DEF_UID/$DEF" /bin/sleep 600 ||
  bail "runc did not start: $(cat "$IOB_T/$DEF.out")"
wait_for 30 'ctl status | grep -qF "$DEF"'
like "$(ctl status | grep -F "$DEF")" "running" "default configuration: iobatchctl status lists a container under /kubepods"
$RUNC delete -f "$DEF" >/dev/null 2>&1
agent_stop
tap_done
