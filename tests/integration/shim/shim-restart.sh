#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# containerd killed with -9 while containers run on containerd-shim-iobatch-v2
# and restarted: tasks are still there, exec and kill work, and the exit of a
# container that ended meanwhile is reported.
#
# What happens to that container depends on containerd's version, and the
# checks say which one they hold for (runc's own shim,
# io.containerd.runc.v2, gets the same on each):
# - 1.x keeps its task: STOPPED, its TaskExit forwarded once containerd is
#   back, its exit status in `ctr task delete`;
# - 2.x, loading the shims at its start (core/runtime/v2/shim_load.go),
#   asks each for its Pids and deletes one that lists none and is no
#   sandbox's ("cleaning leaked shim process"): the task is gone, and so
#   are its shim and its exit status.
# Events are seen with a `ctr events` subscriber (2.x logs forwarded
# events at trace level only).
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/shim.sh"
tap_plan 12

PUB=$IOB_B/tests/ttrpc-publish
[ -x "$PUB" ] || bail "$PUB not built"
shim_containerd_start "${SHIM_CONTAINERD_EXTRA:-}" || bail "containerd did not start"
CD_MAJOR=$(containerd --version | awk '{ sub(/^v/, "", $3); split($3, v, "."); print v[1] }')
diag "containerd $(containerd --version | awk '{print $3}')"
R=$IOB_T/rootfs
iob_rootfs_busybox "$R"

# ev_start TTRPC_SOCKET: a `ctr events` subscriber writing $IOB_T/events.log,
# returned once it is subscribed (it subscribes asynchronously: a probe
# event is published until it shows up); ev_stop ends it.
EV_PID=
ev_start() {
  ctr --address "$IOB_SOCK" events >>"$IOB_T/events.log" 2>&1 &
  EV_PID=$!
  at_exit "ev_stop"
  for _ in $(seq 1 100); do
    "$PUB" "$1" exit "$SHIM_NS" probe 1 0 >/dev/null 2>&1
    grep -q '"container_id":"probe"' "$IOB_T/events.log" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}
ev_stop() { [ -n "$EV_PID" ] && kill "$EV_PID" 2>/dev/null && wait "$EV_PID" 2>/dev/null; EV_PID=; }
# ev_wait PATTERN: wait for an event line that matches (up to ~30 s, a
# guard against a hang: a shim retries a forward within 5 s).
ev_wait() {
  for _ in $(seq 1 300); do
    grep -q "$1" "$IOB_T/events.log" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

ok "start a long container" timeout 30 $CTR run --runtime $RT $SHIM_RUNOPTS -d --rootfs "$R" k1 /bin/sleep 600
ok "start a short container" timeout 30 $CTR run --runtime $RT $SHIM_RUNOPTS -d --rootfs "$R" k2 /bin/sh -c 'sleep 3; exit 4'
k1_shim=$(pgrep -f "$SHIM.*-id k1 .*-address $IOB_SOCK")
shims_before=$(shim_pids | sort | tr '\n' ' ')

kill -9 "$IOB_CONTAINERD_PID"
wait "$IOB_CONTAINERD_PID" 2>/dev/null
sleep 4 # k2 exits while containerd is down
# The restarted containerd listens for events on another socket until the
# subscriber is in place; the shims' socket (TTRPC_ADDRESS, fixed when they
# started) then becomes a link to it.  Until then a shim's forward fails
# and is retried, as while containerd was down: no event can slip by
# before there is a subscriber to see it.
TT=$IOB_SOCK.ttrpc
grep -qxF "  address = \"$TT\"" "$IOB_T/config.toml" || bail "no ttrpc address '$TT' in config.toml"
grep -vxF "  address = \"$TT\"" "$IOB_T/config.toml" | sed "s|^\[ttrpc\]\$|&\n  address = \"$TT.2\"|" \
  >"$IOB_T/config-2.toml"
restart() {
  containerd --config "$IOB_T/config-2.toml" >>"$IOB_T/containerd.log" 2>&1 &
  IOB_CONTAINERD_PID=$!
  for _ in $(seq 1 100); do
    ctr --address "$IOB_SOCK" version >/dev/null 2>&1 && break
    sleep 0.1
  done
  ev_start "$TT.2" && ln -sfn "$TT.2" "$TT"
}
ok "containerd restarts" restart

like "$($CTR task ls | grep '^k1 ')" "RUNNING" "the running task is listed after the restart"
if [ "$CD_MAJOR" -lt 2 ]; then
  like "$($CTR task ls | grep '^k2 ')" "STOPPED" "the task that exited meanwhile is STOPPED (containerd 1.x)"
  is "$(shim_pids | sort | tr '\n' ' ')" "$shims_before" "the same shims serve after the restart (containerd 1.x)"
  # The shim retries the TaskExit it could not deliver while containerd was down.
  ok "the TaskExit of k2 is forwarded after the restart (containerd 1.x)" \
    ev_wait "$SHIM_NS /tasks/exit .*\"container_id\":\"k2\".*\"exit_status\":4"
else
  is "$($CTR task ls | grep '^k2 ')" "" "the task that exited meanwhile is gone (containerd 2.x deletes it)"
  # k2's shim exits once it has tried its last events (up to 5 s).
  for _ in $(seq 1 300); do [ "$(shim_pids | tr '\n' ' ')" = "$k1_shim " ] && break; sleep 0.1; done
  is "$(shim_pids | tr '\n' ' ')" "$k1_shim " "k1's shim serves after the restart, k2's has exited (containerd 2.x)"
  ok "no socket or bundle of k2 is left (containerd 2.x)" \
    test ! -e "$(shim_socket_of k2)" -a ! -d "$IOB_T/state/io.containerd.runtime.v2.task/$SHIM_NS/k2"
fi

out=$(timeout 30 $CTR task exec --exec-id x1 k1 /bin/echo still-here 2>&1)
is "$out" "still-here" "exec works after the restart"

ok "kill works after the restart" $CTR task kill -s SIGKILL k1
for _ in $(seq 1 50); do $CTR task ls | grep -q '^k1 .*STOPPED' && break; sleep 0.1; done
like "$($CTR task ls | grep '^k1 ')" "STOPPED" "k1 is STOPPED after the kill"
ok "the TaskExit of k1 reaches a subscriber after the restart" \
  ev_wait "$SHIM_NS /tasks/exit .*\"container_id\":\"k1\",\"id\":\"k1\""
ev_stop

out=$($CTR task delete k2 2>&1)
if [ "$CD_MAJOR" -lt 2 ]; then
  like "$out" "exit code 4" "k2's exit status (4) is reported after the restart (containerd 1.x)"
else
  like "$out" "task k2 not found" "k2 has no task to delete (containerd 2.x)"
fi
$CTR task delete k1 >/dev/null 2>&1
$CTR container delete k1 k2 >/dev/null 2>&1

tap_done
