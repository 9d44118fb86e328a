#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Real containers (private containerd, real runc, fio inside) registered with
# iobatchd the way the shim does it: Register, Admit, start, Register again
# with the init pid.  The agent finds the cgroup from the pid, samples it
# (procfs fallback on this hybrid host), classifies the workloads, notices
# the task's deletion as an exit, and knows the workload on its next run.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 12

iob_need fio containerd
iob_containerd_start || bail "containerd did not start"
agent_start || bail "iobatchd did not start"
ROOTFS=$IOB_T/rootfs
iob_rootfs_busybox "$ROOTFS"
iob_rootfs_add_binary "$ROOTFS" "$(command -v fio)"
NS=iobtest

task_pid() { $CTR task ls 2>/dev/null | awk -v id="$1" '$1 == id { print $2 }'; }

# start_ctr ID KEY FIO-ARGS...: register, admit, run, register the pid
start_ctr() {
  local id=$1 key=$2; shift 2
  ctl register "$id" --ns $NS --key "$key" >/dev/null || return 1
  ctl admit "$id" --ns $NS >"$IOB_T/$id.admit" || return 1
  $CTR run -d --rootfs "$ROOTFS" "$id" /usr/bin/fio --name=j --directory=/data \
    --direct=1 --ioengine=psync --size=256M --time_based --runtime=60 "$@" >/dev/null || return 1
  local pid
  wait_for 5 '[ -n "$(task_pid '"$id"')" ]'
  pid=$(task_pid "$id")
  ctl register "$id" --ns $NS --pid "$pid" >/dev/null
}

stop_ctr() {
  $CTR task kill -s KILL "$1" >/dev/null 2>&1
  wait_for 5 '! $CTR task ls 2>/dev/null | grep -q "^$1 .*RUNNING"'
  $CTR task delete "$1" >/dev/null 2>&1
  $CTR container delete "$1" >/dev/null 2>&1
}

ok "sequential fio container started through Register/Admit" \
  start_ctr seq1 ctr-fio-seq --rw=write --bs=1M
like "$(cat "$IOB_T/seq1.admit")" "^seq1 admitted" "admitted with nothing else running"
wait_for 15 '[ "$(agent_field seq1 class)" == seq-write ]'
is "$(agent_field seq1 class)" "seq-write" "container classified seq-write from its I/O"
like "$(agent_field seq1 pid)" "^[1-9][0-9]*$" "status shows its init pid"
wait_for 5 'awk -v w="$(agent_field seq1 write_bps)" "BEGIN { exit !(w > 65536) }"'
is "$?" "0" "and its write rate"
stop_ctr seq1
wait_for 5 '[ -z "$(agent_field seq1 state)" ]'
is "$(agent_field seq1 state)" "" "task deleted: the agent counts it as exited"

ok "random fio container started" start_ctr rand1 ctr-fio-rand --rw=randwrite --bs=4k
wait_for 15 '[ "$(agent_field rand1 class)" == rand-write ]'
is "$(agent_field rand1 class)" "rand-write" "container classified rand-write from its I/O"
table=$(ctl status)
like "$table" "rand1 +running +rand-write \(detected\)" "status table shows it"
stop_ctr rand1
wait_for 5 '[ -z "$(agent_field rand1 state)" ]'
is "$(agent_field rand1 state)" "" "second task gone too"

is "$(ctl register seq2 --ns $NS --key ctr-fio-seq)" "registered seq2: class seq-write" \
  "the next run of the sequential workload is known before it starts"
is "$(ctl register rand2 --ns $NS --key ctr-fio-rand)" "registered rand2: class rand-write" \
  "and of the random one"
agent_stop
tap_done
