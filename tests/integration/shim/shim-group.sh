#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Grouping (one shim per pod, as the runc shim does), the log URIs, and OOM
# events.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/shim.sh"
tap_plan 14

PUB=$IOB_B/tests/ttrpc-publish
[ -x "$PUB" ] || bail "$PUB not built"
shim_containerd_start || bail "containerd did not start"
R=$IOB_T/rootfs
iob_rootfs_busybox "$R"

# Events are seen by a `ctr events` subscriber (containerd 2.x logs
# forwarded events at trace level only).  ctr subscribes asynchronously:
# ev_probe publishes an event of its own through containerd's ttrpc socket
# and waits until the subscriber has it, and so everything containerd
# forwarded before.
ctr --address "$IOB_SOCK" events >"$IOB_T/events.log" 2>&1 &
EV_PID=$!
at_exit "kill $EV_PID"
ev_probe() {
  local i
  for i in $(seq 1 100); do
    "$PUB" "$IOB_SOCK.ttrpc" exit "$SHIM_NS" "probe$1" "$i" 0 >/dev/null 2>&1
    grep -q "\"container_id\":\"probe$1\"" "$IOB_T/events.log" && return 0
    sleep 0.1
  done
  return 1
}
ev_probe 0 || bail "ctr events did not subscribe"

# Two containers of one "pod": io.kubernetes.cri.sandbox-id groups them.
ok "first container of the pod" timeout 30 $CTR run --runtime $RT $SHIM_RUNOPTS -d \
  --annotation io.kubernetes.cri.sandbox-id=pod1 --rootfs "$R" g1 /bin/sleep 600
ok "second container of the pod" timeout 30 $CTR run --runtime $RT $SHIM_RUNOPTS -d \
  --annotation io.kubernetes.cri.sandbox-id=pod1 --rootfs "$R" g2 /bin/sleep 600
is "$(shim_pids | wc -l)" 1 "both are served by one shim"
ok "the shim listens on the pod's socket" test -S "$(shim_socket_of pod1)"
$CTR task kill -s SIGKILL g1 >/dev/null 2>&1
for i in $(seq 1 50); do $CTR task ls | grep -q '^g1 .*STOPPED' && break; sleep 0.1; done
$CTR task delete g1 >/dev/null 2>&1 && $CTR container delete g1 >/dev/null 2>&1
sleep 0.5
like "$($CTR task ls | grep '^g2 ')" "RUNNING" "the shim stays while the pod has a container (Shutdown is a no-op)"
$CTR task kill -s SIGKILL g2 >/dev/null 2>&1
for i in $(seq 1 50); do $CTR task ls | grep -q '^g2 .*STOPPED' && break; sleep 0.1; done
$CTR task delete g2 >/dev/null 2>&1 && $CTR container delete g2 >/dev/null 2>&1
is "$(shim_wait_gone)" 0 "the shim exits with the pod's last container"
ok "no sockets, bundles or mounts left" shim_no_leftovers pod1 g1 g2

# file:// log URI: stdout and stderr appended to the file.
timeout 30 $CTR run --runtime $RT $SHIM_RUNOPTS --rm --log-uri "file://$IOB_T/logs/f1.log" --rootfs "$R" f1 \
  /bin/sh -c 'echo out-line; echo err-line >&2' >/dev/null 2>&1
is "$(sort "$IOB_T/logs/f1.log" 2>/dev/null | tr '\n' ' ')" "err-line out-line " "file:// log URI gets stdout and stderr"

# binary:// log URI: a logger process gets stdout on fd 3, stderr on fd 4.
cat >"$IOB_T/logger.sh" <<'SH'
#!/bin/sh
# $1 $2: "dir" and the output directory (from the URI query).
# Closing fd 5 (EOF on the ready pipe) tells the shim the logger is ready.
# Each stream is copied to a .tmp file, renamed once it ended: the test
# reads a file only when it is whole (the shim SIGTERMs this shell when it
# lets the logger go; the copies go on in their own processes).
exec 5>&-
(cat <&3 >"$2/$CONTAINER_ID.out.tmp" && mv "$2/$CONTAINER_ID.out.tmp" "$2/$CONTAINER_ID.out") &
(cat <&4 >"$2/$CONTAINER_ID.err.tmp" && mv "$2/$CONTAINER_ID.err.tmp" "$2/$CONTAINER_ID.err") &
wait
SH
chmod +x "$IOB_T/logger.sh"
timeout 30 $CTR run --runtime $RT $SHIM_RUNOPTS --rm --log-uri "binary://$IOB_T/logger.sh?dir=$IOB_T/logs" --rootfs "$R" b1 \
  /bin/sh -c 'echo to-logger; echo err-logger >&2' >/dev/null 2>&1
for i in $(seq 1 300); do [ -e "$IOB_T/logs/b1.out" ] && [ -e "$IOB_T/logs/b1.err" ] && break; sleep 0.1; done
is "$(cat "$IOB_T/logs/b1.out" 2>/dev/null)" "to-logger" "binary:// logger gets stdout on fd 3"
is "$(cat "$IOB_T/logs/b1.err" 2>/dev/null)" "err-logger" "binary:// logger gets stderr on fd 4"
# OOM: a 32 MiB container that wants more; the shim publishes /tasks/oom.
# The timeouts only guard against a hang: in the cgroup v2 VM under load this
# run once took more than 30 s (the OOM kill and its event did come).
timeout 180 $CTR run --runtime $RT $SHIM_RUNOPTS --rm --memory-limit 33554432 --rootfs "$R" o1 \
  /bin/sh -c 'head -c 200000000 /dev/zero | tail -n 1 >/dev/null' >/dev/null 2>&1
is "$?" 137 "the OOM-killed container exits with 137"
for _ in $(seq 1 300); do grep -q "$SHIM_NS /tasks/oom .*\"o1\"" "$IOB_T/events.log" && break; sleep 0.1; done
ok "a TaskOOM event of o1 reaches a subscriber" grep -q "$SHIM_NS /tasks/oom .*\"o1\"" "$IOB_T/events.log"
is "$(shim_wait_gone)" 0 "no shim left"
# Every shim has exited, so what they forwarded is before the probe.
# cgroup v1 signals the OOM eventfd when a memory cgroup is removed too:
# that is no OOM (g1 and g2 were killed, f1 and b1 ended by themselves).
ev_probe 1 || bail "the last probe did not reach ctr events"
is "$(grep -o "$SHIM_NS /tasks/oom .*" "$IOB_T/events.log" | grep -v '"o1"')" "" \
  "no TaskOOM for a container that was not OOM-killed"

tap_done
