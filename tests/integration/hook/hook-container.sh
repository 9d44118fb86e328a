#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# iobatch-hook in a real container's config.json (prestart and
# createRuntime), run by ctr with io.containerd.runc.v2 on a private
# containerd: the hook runs, finds the container's own cgroup, takes the
# baseline sample, honours the declared class and workload key, refuses a
# bad class (the create fails), and the fallback sampler on the container's
# cgroup reports fio's bytes within 10%.  Also through runc alone, without
# containerd, with the hook listed in config.json.
. "$(dirname "$0")/../lib/common.sh"
tap_plan 19
HOOK=$IOB_B/bin/iobatch-hook
PROBE=$IOB_B/bin/wcd-probe
[ -x "$HOOK" ] && [ -x "$PROBE" ] || bail "build first: $HOOK, $PROBE"
iob_need containerd ctr runc jq fio
iob_containerd_start || bail "containerd did not start"
ROOTFS=$IOB_T/rootfs
iob_rootfs_busybox "$ROOTFS"
iob_rootfs_add_binary "$ROOTFS" "$(command -v fio)"
REC=$IOB_T/rec
mkdir -p "$REC"
ctr oci spec >"$IOB_T/base.json"
V2=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
HAS_IO=0; grep -qw io "$V2/cgroup.controllers" && HAS_IO=1
# cg2_source_pick: io.stat with the v2 io controller, else the container's
# v1 blkio cgroup (runc makes one on a hybrid host), else procfs
SOURCE=procfs
[ -n "$(awk '$0 ~ / - cgroup / && $NF ~ /(^|,)blkio(,|$)/ { print $5; exit }' /proc/self/mountinfo)" ] &&
  SOURCE=blkio-v1
[ $HAS_IO = 1 ] && SOURCE=io.stat

# mkspec ID HOOKKIND ANNOTATIONS(json) ARGS(json) -> $IOB_T/ID.json
mkspec() {
  jq --arg r "$ROOTFS" --arg id "$1" --arg kind "$2" --argjson ann "$3" --argjson args "$4" \
    --arg hook "$HOOK" --arg rec "$REC" --arg sock "$IOB_T/agent.sock" '
    .root = {"path": $r, "readonly": false}
    | .process.args = $args | .process.terminal = false | .process.cwd = "/"
    | .linux.cgroupsPath = ("/iobtest/" + $id)
    | .annotations = $ann
    | .hooks = {($kind): [{"path": $hook,
        "args": ["iobatch-hook", "--debug", "--record-dir", $rec, "--socket", $sock]}]}' \
    "$IOB_T/base.json" >"$IOB_T/$1.json"
}
run() { # ID: run the spec in the foreground, output in $IOB_T/ID.out
  timeout 120 $CTR run --rm --runtime io.containerd.runc.v2 --config "$IOB_T/$1.json" "$1" >"$IOB_T/$1.out" 2>&1
}
rec() { jq -r "$2" "$REC/$1.json" 2>/dev/null; }

# 1. prestart, declared class and workload
mkspec c-decl prestart '{"io.iobatch.class":"seq-write","io.iobatch.workload":"itest-writer"}' \
  '["/bin/sh","-c","grep ^0:: /proc/self/cgroup"]'
run c-decl
is "$?" 0 "container with the prestart hook ran"
[ -f "$REC/c-decl.json" ]; _tap_report $? "the hook ran and left its record"
own=$(sed -n 's/^0:://p' "$IOB_T/c-decl.out")
is "$(rec c-decl .cgroup)" "/iobtest/c-decl" "the hook found the container's cgroup"
is "$(rec c-decl .cgroup)" "$own" "the same cgroup the container sees itself in"
is "$(rec c-decl .baseline.source)" "$SOURCE" "baseline sample from $SOURCE"
is "$(rec c-decl '.class + " " + (.declared|tostring) + " " + .workload')" "seq-write true itest-writer" \
  "declared class and workload key from the annotations"
if [ $HAS_IO = 0 ]; then
  is "$(rec c-decl '.weight.value, .weight.applied' | tr '\n' ' ')" "50 false " \
    "weight for seq-write not claimed as applied without the v2 io controller"
else
  is "$(rec c-decl .weight.value)" 50 "weight for seq-write chosen"
fi

# 2. createRuntime, no annotations: workload key from process.args
mkspec c-args createRuntime '{}' '["/bin/sh","-c","true"]'
run c-args
is "$?" 0 "container with the createRuntime hook ran"
is "$(rec c-args .workload)" "/bin/sh -c true" "workload key from process.args (config.json)"
is "$(rec c-args '.class + " " + (.declared|tostring)')" "unknown false" "no declared class: unknown"

# 3. a bad declared class fails the create, and the process never runs
mkspec c-bad prestart '{"io.iobatch.class":"turbo"}' '["/bin/sh","-c","echo RAN"]'
run c-bad
rc=$?
[ "$rc" -ne 0 ]; _tap_report $? "bad class: ctr run fails (rc $rc)"
grep -q "invalid annotation 'io.iobatch.class': unknown class 'turbo'" "$IOB_T/c-bad.out"; _tap_report $? "the hook's error reaches the user"
! grep -q RAN "$IOB_T/c-bad.out"; _tap_report $? "the container process never ran"
[ ! -e "$REC/c-bad.json" ]; _tap_report $? "no record for the refused container"

# 4. fio inside the container, sampled through the cgroup the hook found
mkspec c-fio prestart '{"io.iobatch.class":"seq-write"}' \
  '["/usr/bin/fio","--name=w","--filename=/tmp/f","--rw=write","--bs=1M","--size=128M","--direct=1","--ioengine=psync","--exec_postrun=sleep 0.5","--output-format=json","--output=/tmp/fio.json"]'
run c-fio &
runner=$!
for _ in $(seq 1 100); do [ -f "$REC/c-fio.json" ] && break; sleep 0.1; done
cgdir=$(rec c-fio .cgdir)
"$PROBE" --cgdir "$cgdir" --source "$SOURCE" --until-empty --interval-ms 100 >"$IOB_T/probe.json" 2>"$IOB_T/probe.err"
prc=$?
wait $runner
diag "probe: $(cat "$IOB_T/probe.json" "$IOB_T/probe.err")"
got=$(jq .wbytes "$IOB_T/probe.json" 2>/dev/null); want=$(jq '.jobs[0].write.io_bytes' "$ROOTFS/tmp/fio.json" 2>/dev/null)
awk -v g="${got:-0}" -v w="${want:-0}" -v p=$prc 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(p == 0 && w > 0 && d / w <= 0.10) }'
_tap_report $? "sampler on the container's cgroup: $got bytes vs fio's $want (within 10%)"
is "$(jq -r .class "$IOB_T/probe.json" 2>/dev/null)" seq-write "the fio container classified seq-write"

# 5. runc alone, the hook listed in the bundle's config.json
mkdir -p "$IOB_T/bundle"
mkspec c-runc createRuntime '{"io.iobatch.class":"rand-read"}' '["/bin/sh","-c","grep ^0:: /proc/self/cgroup"]'
cp "$IOB_T/c-runc.json" "$IOB_T/bundle/config.json"
(cd "$IOB_T/bundle" && timeout 60 runc --root "$IOB_T/runc" run c-runc) >"$IOB_T/c-runc.out" 2>&1
is "$?" 0 "runc run (no containerd) with the hook in config.json"
is "$(rec c-runc '.class + " " + .cgroup')" "rand-read /iobtest/c-runc" "hook record from the runc run"
is "$(rec c-runc .cgroup)" "$(sed -n 's/^0:://p' "$IOB_T/c-runc.out")" "it is the cgroup runc put the container in"
tap_done
