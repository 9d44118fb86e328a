#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A container registered by the hook alone (runc, the hook in config.json's
# prestart, as hooks.d does for podman and CRI-O) and whose poststop never
# runs (none configured; its init killed with -9 and runc not asked to
# delete it): the agent watches its pid through a pidfd and drops the entry
# when the pid exits, as if Exited came.  A container still running stays
# listed.  The agent's sampling period is longer than the test, so an
# empty cgroup cannot be what ends the entry; the agent's log line says
# which did.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 8
iob_need runc jq
HOOK=$IOB_B/bin/iobatch-hook
[ -x "$HOOK" ] || bail "build first: $HOOK"
# lib/agent.sh's agent_start samples every 250 ms; this one (nearly) never.
cat >"$IOB_T/agent.conf" <<CONF
socket = $AGENT_SOCK
state_dir = $AGENT_STATE
sample_period = 3600s
CONF
iobatchd -c "$IOB_T/agent.conf" -d >>"$AGENT_LOG" 2>&1 &
AGENT_PID=$!
at_exit "kill $AGENT_PID 2>/dev/null; wait $AGENT_PID 2>/dev/null"
wait_for 20 'iobatchctl status >/dev/null 2>&1' || bail "iobatchd did not start"

R=$IOB_T/rootfs
iob_rootfs_busybox "$R"
RUNC="runc --root $IOB_T/runc"
CG=iobpidfd${IOB_T##*.}
at_exit "for d in /sys/fs/cgroup/*/$CG /sys/fs/cgroup/$CG; do [ -d \"\$d\" ] && rmdir \"\$d\"; done"
# bundle ID: a config.json running sleep, the hook at prestart only
bundle() {
  local b=$IOB_T/b-$1
  mkdir -p "$b"
  (cd "$b" && runc spec) || return 1
  jq --arg r "$R" --arg h "$HOOK" --arg s "$AGENT_SOCK" --arg cg "/$CG/$1" \
    '.root = {path: $r, readonly: false} | .process.terminal = false
     | .process.args = ["/bin/sleep", "600"] | .linux.cgroupsPath = $cg
     | .annotations = {"io.iobatch.class": "seq-write"}
     | .hooks = {prestart: [{path: $h, args: ["iobatch-hook", "--socket", $s, "--max-wait-ms", "10000"]}]}' \
    "$b/config.json" >"$b/config.json.new" && mv "$b/config.json.new" "$b/config.json"
}
start() { # ID: runc run -d, detached; the container's init is reparented
  bundle "$1" || return 1
  at_exit "$RUNC delete -f $1"
  timeout -k 5 60 $RUNC run -d --bundle "$IOB_T/b-$1" "$1" </dev/null >"$IOB_T/$1.out" 2>&1
}
pid_of() { $RUNC state "$1" 2>/dev/null | jq -r .pid; }

ok "runc runs a container with only the hook (prestart)" start pa
ok "and a second one" start pb
ok "the agent lists both (registered by the hook)" \
  wait_for 20 '[ -n "$(agent_field pa state)" ] && [ -n "$(agent_field pb state)" ]'
P=$(pid_of pa)
is "$(agent_field pa pid)" "$P" "the agent knows the container's init pid"
kill -9 "$P"
ok "its init killed (-9), no poststop, runc not asked: the entry goes" \
  wait_for 30 '[ -z "$(agent_field pa state)" ]'
is "$(grep -c "'pa' exited: its pid $P ended (pidfd), with no exit reported" "$AGENT_LOG")" 1 \
  "the agent says why, in one line"
is "$(agent_field pb state)" "running" "the other container is still listed, running"
grep -q "'pb' exited" "$AGENT_LOG"
is "$?" 1 "and nothing said it exited"
tap_done
