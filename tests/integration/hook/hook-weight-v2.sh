#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Needs a pure cgroup v2 host with the io controller and a disk that can
# switch to bfq (the VM of tests/vm; on a hybrid host like the development
# machines it bails out, which counts as a failure, so make check leaves
# it out, as every *-v2.sh: tests/integration/module.mk).  The hook's enforcement check must report nothing,
# then bfq, then iocost as each is switched on for the disk under the test,
# write the class's weight only where it can take effect, and the weight
# must read back.  Issue #23: the hook writes it only once the agent (a
# private one here) journalled it; the agent puts it back when it stops,
# and from a namespace trust_declared does not trust it is never written.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 15
HOOK=$IOB_B/bin/iobatch-hook
[ -x "$HOOK" ] || bail "no $HOOK (build first)"
V2=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
grep -qw io "$V2/cgroup.controllers" 2>/dev/null || bail "needs the io controller in cgroup v2 (this host: '$V2' has '$(cat "$V2/cgroup.controllers" 2>/dev/null)')"
[ -f "$V2/io.cost.qos" ] || bail "no io.cost.qos: kernel without iocost"
grep -qw io "$V2/cgroup.subtree_control" || echo +io >"$V2/cgroup.subtree_control" || bail "cannot enable io"
# the disk under $IOB_T (partitions map to their disk, as the hook does)
dev=$(df -P "$IOB_T" | awk 'NR == 2 { print $1 }')
name=$(basename "$(readlink -f "$dev")")
sys=/sys/class/block/$name
[ -e "$sys/partition" ] && sys=$(dirname "$(readlink -f "$sys")")
devno=$(cat "$sys/dev" 2>/dev/null) || bail "no block device under $IOB_T ($dev)"
sched=$sys/queue/scheduler
grep -qw bfq "$sched" || modprobe bfq 2>/dev/null
grep -qw bfq "$sched" || bail "bfq not available for $devno ($(cat "$sched"))"
old_sched=$(sed 's/.*\[\(.*\)\].*/\1/' "$sched")
at_exit "echo '$old_sched' >'$sched'; echo '$devno enable=0' >'$V2/io.cost.qos'"
diag "disk $devno ($sys), scheduler was $old_sched"
# every other disk with bfq or iocost would make the answer "applied" too
others=$(grep -l '\[bfq\]' /sys/block/*/queue/scheduler 2>/dev/null | grep -v "^$sys/" | wc -l)
[ "$others" -eq 0 ] || bail "another disk already runs bfq"

CG=$V2/iobt-w$$
mkdir "$CG"
sleep 300 &
spid=$!
echo $spid >"$CG/cgroup.procs"
at_exit "kill $spid; sleep 0.2; rmdir '$CG'"
mkdir -p "$IOB_T/rec" "$IOB_T/b"
echo '{}' >"$IOB_T/b/config.json"
hook() { # ID
  printf '{"ociVersion":"1.0.2","id":"%s","pid":%d,"bundle":"%s","annotations":{"io.iobatch.class":"rand-write","io.iobatch.workload":"w"}}' \
    "$1" $spid "$IOB_T/b" | "$HOOK" --record-dir "$IOB_T/rec" --socket "$AGENT_SOCK"
}
agent_start "" || bail "iobatchd did not start"
w() { jq -r ".weight | [.applied, .iocost, .bfq] | map(tostring) | join(\" \")" "$IOB_T/rec/$1.json"; }

echo none >"$sched"; echo "$devno enable=0" >"$V2/io.cost.qos"
echo "default 100" >"$CG/io.weight"
ok "nothing enforcing: hook succeeds" hook w0
is "$(w w0)" "false false false" "nothing enforcing: weight not claimed as applied"
is "$(head -1 "$CG/io.weight")" "default 100" "io.weight left alone"

echo bfq >"$sched"
ok "bfq on $devno: hook succeeds" hook w1
is "$(w w1)" "true false true" "bfq reported, weight applied"
is "$(head -1 "$CG/io.bfq.weight")" "default 127" "io.bfq.weight reads back systemd's mapping of 400"

echo none >"$sched"
echo "$devno enable=1" >"$V2/io.cost.qos" || bail "cannot enable iocost on $devno"
ok "iocost on $devno: hook succeeds" hook w2
is "$(w w2)" "true true false" "iocost reported, weight applied"
is "$(head -1 "$CG/io.weight")" "default 400" "io.weight reads back 400"
like "$(cat "$CG/io.stat" 2>/dev/null; echo end)" "end" "io.stat of the cgroup reads"
is "$(jq -r --arg f "$CG/io.weight" '.entries[] | select(.file == $f and .dev == "0:0") | .value + " " + .written' "$AGENT_STATE/restore.json")" \
  "100 400" "the agent journalled the default line before the hook wrote it"
agent_stop
is "$(head -1 "$CG/io.weight")" "default 100" "and puts it back when it stops"
# from a namespace the agent does not trust: never written
agent_start "trust_declared = none" || bail "iobatchd did not start again"
ok "untrusted: hook succeeds" hook w3
is "$(w w3)" "false true false" "untrusted: weight not applied"
is "$(head -1 "$CG/io.weight")" "default 100" "untrusted: io.weight left alone"
tap_done
