#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What the agent writes, it undoes exactly (issue #23 items 8 and 9), on
# real cgroups (v1 blkio.throttle on a hybrid host, io.max with the v2 io
# controller), with containers registered by iobatchctl: a batch one beside
# a latency-sensitive one gets the protection cap, the agent is killed
# (kill -9) with the cap in place, and the next agent replays the journal:
#   (a) a value changed since the agent wrote it (as runc update does) is
#       left alone;
#   (b) a cgroup path reused by a new cgroup (a container id reused) gets
#       nothing written back, even where it holds what the agent wrote;
#   (c) a pid reused by a process of another cgroup (forced with
#       ns_last_pid: the test runs in a pid namespace of its own, agent
#       included) gets no cap: the target is the cgroup resolved when the
#       container registered.  The container registers as a shim does (a
#       shim's container outlives its pid by PIDWATCH_SHIM_GRACE_MS, for
#       the shim's own report) and is admitted, and so capped, after the
#       reuse; (c)'s checks come within that grace, the agent's own
#       constant (a cap is lifted when its container leaves), and a second
#       process keeps its cgroup from emptying (the sampler ends a
#       container whose cgroup empties).
# No other clock in the checks: each waits for the state it checks.
if [ -z "${IOB_JOURNAL_PIDNS:-}" ]; then
  IOB_JOURNAL_PIDNS=1 exec unshare --pid --fork --mount-proc "$0" "$@"
fi
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 10
iob_need jq unshare
[ "$(id -u)" -eq 0 ] || bail "needs root"
TOOL=$IOB_B/tests/cg-throttle
[ -x "$TOOL" ] || bail "build first: $TOOL"
AGENT_SAMPLE_PERIOD=1s
CONF="max_hold = 120s
protect_batch_budget = 0"
JOURNAL=$AGENT_STATE/restore.json

V2=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
if grep -qw io "$V2/cgroup.controllers" 2>/dev/null; then
  BASE=$V2/iobj-${IOB_T##*.}
  mkdir "$BASE" && echo +io >"$BASE/cgroup.subtree_control" || bail "cannot make $BASE"
else
  BASE=/sys/fs/cgroup/blkio/iobj-${IOB_T##*.}
  mkdir "$BASE" || bail "neither io in cgroup v2 nor a v1 blkio hierarchy"
fi
at_exit "for d in $BASE/*/; do cg_remove \$d; done; rmdir $BASE"
# proc NAME: a process in cgroup NAME (made when missing); its pid in $!
proc() {
  mkdir -p "$BASE/$1"
  sleep 600 &
  echo $! >"$BASE/$1/cgroup.procs" || bail "cannot move $! into $BASE/$1"
}
capped() { [[ "$("$TOOL" get "$1" "$disk")" =~ ^[1-9][0-9]*\ [1-9][0-9]*\ 0\ 0$ ]]; }
crash() { kill -KILL "$AGENT_PID"; wait "$AGENT_PID" 2>/dev/null; }

agent_start "$CONF" || bail "iobatchd did not start"
proc a
P=$!
proc v
V=$!
read -r mech cgdir devs <<<"$("$TOOL" resolve "$P")"
disk=${devs%% *}
[ -n "$disk" ] || bail "no disk to cap for $cgdir ($mech)"
diag "caps through $mech in $cgdir on $disk"
iobatchctl register b1 --class seq-write --pid "$P" --running >/dev/null
iobatchctl register v1 --class latency --pid "$V" --running >/dev/null
ok "the batch container is capped" wait_for 30 "capped $P"
journal_v2() {
  jq -e --arg ino "$(stat -c %i "$BASE/a")" '.version == 2 and (.entries | length > 0)
    and all(.entries[]; (.ino | tostring) == $ino and (.written | length) > 0)' "$JOURNAL" \
    >/dev/null 2>&1
}
ok "the journal is version 2: each entry with its cgroup's inode and the value written" journal_v2

# (a) the runtime changes the cap after the crash
crash
"$TOOL" set "$P" 3333333 5555555 0 0
agent_start "$CONF" || bail "iobatchd did not start again"
is "$("$TOOL" get "$P" "$disk")" "3333333 5555555 0 0" \
  "(a) a value changed since the agent wrote it is left alone"
ok "with a log line saying so" grep -q "changed since by another writer" "$AGENT_LOG"

# (b) capped again, crash, and the path is another cgroup's
"$TOOL" set "$P" 0 0 0 0
iobatchctl register b1 --class seq-write --pid "$P" --running >/dev/null
iobatchctl register v1 --class latency --pid "$V" --running >/dev/null
ok "capped again" wait_for 30 "capped $P"
held=$("$TOOL" get "$P" "$disk")
crash
kill "$P"
cg_remove "$BASE/a"
proc a
P=$!
"$TOOL" set "$P" $held # its own limits, which happen to be the agent's
agent_start "$CONF" || bail "iobatchd did not start after the second crash"
is "$("$TOOL" get "$P" "$disk")" "$held" "(b) a reused cgroup path gets nothing written back"
ok "with a log line saying so" grep -q "its cgroup is another one now" "$AGENT_LOG"
ok "and the journal is gone" test ! -e "$JOURNAL"

# (c) a container registers; its pid is reused in another cgroup before
# the cap comes (at its admission, beside the protected one)
iobatchctl register v1 --class latency --pid "$V" --running >/dev/null
proc c1 # a second process
proc c1
Q=$!
iobatchctl register b2 --class seq-write --pid "$Q" --as shim >/dev/null
kill "$Q"
wait "$Q" 2>/dev/null
mkdir -p "$BASE/c2"
echo $((Q - 1)) >/proc/sys/kernel/ns_last_pid
sleep 600 &
R=$!
[ "$R" -eq "$Q" ] || bail "pid $Q not reused (got $R)"
echo "$R" >"$BASE/c2/cgroup.procs"
iobatchctl admit b2 --timeout 20000 >/dev/null
# capdir NAME: the cap line of cgroup NAME's write bps for the disk
capdir() {
  if [ "$mech" == io.max ]; then grep "^$disk " "$BASE/$1/io.max"; else
    grep "^$disk " "$BASE/$1/blkio.throttle.write_bps_device"; fi
}
c2=$("$TOOL" get "$R" "$disk")
ok "(c) the cap goes to the cgroup the container registered with" wait_for 4 '[ -n "$(capdir c1)" ]'
c2=$c2/$("$TOOL" get "$R" "$disk")
is "$c2" "0 0 0 0/0 0 0 0" "and not to the one its pid has now"
grep -E "'b2'" "$AGENT_LOG" | sed 's/^/# /'
tap_done
