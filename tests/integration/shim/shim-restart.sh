#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# containerd killed with -9 while containers run on containerd-shim-iobatch-v2
# and restarted: tasks are still there, exec and kill work, and the exit of a
# container that ended meanwhile is reported.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/shim.sh"
tap_plan 11

shim_containerd_start "${SHIM_CONTAINERD_EXTRA:-}" || bail "containerd did not start"
R=$IOB_T/rootfs
iob_rootfs_busybox "$R"

ok "start a long container" timeout 30 $CTR run --runtime $RT $SHIM_RUNOPTS -d --rootfs "$R" k1 /bin/sleep 600
ok "start a short container" timeout 30 $CTR run --runtime $RT $SHIM_RUNOPTS -d --rootfs "$R" k2 /bin/sh -c 'sleep 3; exit 4'
shims_before=$(shim_pids | sort | tr '\n' ' ')

kill -9 "$IOB_CONTAINERD_PID"
lines=$(wc -l <"$IOB_T/containerd.log")
wait "$IOB_CONTAINERD_PID" 2>/dev/null
sleep 4 # k2 exits while containerd is down
ok "containerd restarts" iob_containerd_restart

like "$($CTR task ls | grep '^k1 ')" "RUNNING" "the running task is listed after the restart"
like "$($CTR task ls | grep '^k2 ')" "STOPPED" "the task that exited meanwhile is STOPPED"
is "$(shim_pids | sort | tr '\n' ' ')" "$shims_before" "the same shims serve after the restart"
# The shim retries the TaskExit it could not deliver while containerd was down.
for i in $(seq 1 100); do
  tail -n +$((lines + 1)) "$IOB_T/containerd.log" | grep -q 'event forwarded.*topic=/tasks/exit' && break
  sleep 0.1
done
ok "the TaskExit of k2 is forwarded after the restart" \
  grep -q 'event forwarded.*topic=/tasks/exit' <(tail -n +$((lines + 1)) "$IOB_T/containerd.log")

out=$(timeout 30 $CTR task exec --exec-id x1 k1 /bin/echo still-here 2>&1)
is "$out" "still-here" "exec works after the restart"

ok "kill works after the restart" $CTR task kill -s SIGKILL k1
for _ in $(seq 1 50); do $CTR task ls | grep -q '^k1 .*STOPPED' && break; sleep 0.1; done
like "$($CTR task ls | grep '^k1 ')" "STOPPED" "k1 is STOPPED after the kill"

out=$($CTR task delete k2 2>&1)
like "$out" "exit code 4" "k2's exit status (4) is reported after the restart"
$CTR task delete k1 >/dev/null 2>&1
$CTR container delete k1 k2 >/dev/null 2>&1

tap_done
