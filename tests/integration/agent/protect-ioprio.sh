#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The I/O priority lever, end to end on this host (agent/protect/ioprio.h): a
# queue-depth-1 random reader declared io.iobatch.class=latency runs, and
# a batch writer (fio with two job threads) arrives through
# io.containerd.iobatch.v2.  Read with util-linux's ionice, thread by
# thread of the writer's cgroup:
#   - while protection limits it, every thread has the idle class, and
#     iobatchctl status says the lever is on;
#   - a second fio started in it later (ctr task exec) is held too;
#   - when the victim is gone, every thread has its old class back;
#   - with a victim again, they are idle again; then the agent is killed
#     with SIGKILL and started again (with the lever off, so that nothing
#     sets the class anew): its journal puts every old class back.
# Protection by share (no objective, no budget), as in protect.sh: it
# limits batch containers while a protected container runs.  The disk
# under the test's files must run mq-deadline or bfq; with none or kyber
# the lever is off and the test says so.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 9
iob_need containerd ctr runc fio jq ionice
CONF="max_hold = 120s
protect_objective = off
protect_batch_budget = 0"
iob_stack_up "$CONF"
# The old class: what this shell has, which containerd, the shims and
# the containers inherit.
OLD=$(ionice -p $$)
dev=$(stat -c %d "$IOB_T")
sched=$(cat "/sys/dev/block/$((dev >> 8)):$((dev & 255))/queue/scheduler" 2>/dev/null ||
  cat "/sys/dev/block/$((dev >> 8)):$((dev & 255))/../queue/scheduler" 2>/dev/null)
case "$sched" in
  *"[mq-deadline]"* | *"[bfq]"*) ;;
  *) bail "the disk under '$IOB_T' runs '$sched': I/O priority is off there" ;;
esac
fio --name=prep --filename="$R/data/victim" --rw=write --bs=1M --size=128M --direct=1 \
  >/dev/null 2>&1 || bail "cannot prepare the victim's file"
# victim ID: 4 KiB direct random reads, one at a time, for a long while.
victim() {
  $CTR run -d --runtime $RT --annotation io.iobatch.class=latency --rootfs "$R" "$1" \
    /usr/bin/fio --name=v --filename=/data/victim --rw=randread --bs=4k --size=128M \
    --time_based --runtime=300 --direct=1 --ioengine=psync >/dev/null 2>&1
}
victim v1
ok "the latency-sensitive container starts" wait_for 20 '[ "$(state v1)" == RUNNING ]'
# The batch writer: fio with two job threads (--thread), direct writes.
(
  $CTR run -d --runtime $RT --annotation io.iobatch.class=seq-write --rootfs "$R" w1 \
    /usr/bin/fio --name=w --filename=/data/w1 --rw=write --bs=1M --size=256M --direct=1 \
    --time_based --runtime=300 --thread --numjobs=2 >"$IOB_T/w1.out" 2>&1
  echo $? >"$IOB_T/w1.rc.tmp" && mv "$IOB_T/w1.rc.tmp" "$IOB_T/w1.rc"
) &
wait_for 60 '[ -e "$IOB_T/w1.rc" ]'
# tids ID: every thread of container ID's cgroup (v1 blkio's tasks, else
# v2's cgroup.threads), from its init's /proc/PID/cgroup
tids() {
  local pid cg
  pid=$($CTR task ls 2>/dev/null | awk -v id="$1" '$1 == id { print $2 }')
  [ -n "$pid" ] || return 1
  cg=$(awk -F: '$2 ~ /(^|,)blkio(,|$)/ { print $3 }' "/proc/$pid/cgroup")
  if [ -n "$cg" ] && [ -f "/sys/fs/cgroup/blkio$cg/tasks" ]; then
    cat "/sys/fs/cgroup/blkio$cg/tasks"
    return
  fi
  cg=$(sed -n 's/^0:://p' "/proc/$pid/cgroup")
  cat "/sys/fs/cgroup$cg/cgroup.threads"
}
# classes ID: the distinct classes of its threads, one a line
classes() {
  local t
  for t in $(tids "$1"); do ionice -p "$t" 2>/dev/null; done | sort -u
}
# all_are ID CLASS: every thread of ID has CLASS, and there are N of them or more
all_are() { [ "$(tids "$1" | wc -l)" -ge "${3:-1}" ] && [ "$(classes "$1")" == "$2" ]; }
# fio --thread: its main thread and one per job
wait_for 30 'all_are w1 idle 3'
is "$(classes w1)" "idle" "every thread of the batch writer has the idle class ($(tids w1 | wc -l) threads)"
ctl status --json >"$IOB_T/st.json"
is "$(jq -r .protect_ioprio "$IOB_T/st.json")" "on" \
  "status says the lever is on ($(jq -r .protect_ioprio_tasks "$IOB_T/st.json") threads held)"
n=$(tids w1 | wc -l)
$CTR task exec -d --exec-id late w1 /usr/bin/fio --name=late --filename=/data/late --rw=write \
  --bs=1M --size=64M --direct=1 --time_based --runtime=300 >/dev/null 2>&1
wait_for 30 "all_are w1 idle $((n + 1))"
is "$(classes w1)/$(($(tids w1 | wc -l) > n))" "idle/1" \
  "a process started in it later is held too ($(tids w1 | wc -l) threads)"
cleanup_ctr v1
wait_for 30 'all_are w1 "$OLD"'
is "$(classes w1)" "$OLD" "with the victim gone, every thread has its old class back"
victim v2
wait_for 30 'all_are w1 idle'
is "$(classes w1)" "idle" "with a victim again, idle again"
{ kill -9 "$AGENT_PID"; wait "$AGENT_PID"; } 2>/dev/null
is "$(classes w1)" "idle" "a killed agent leaves them idle"
agent_start "$CONF
protect_ioprio = off" || bail "iobatchd did not start again"
wait_for 30 'all_are w1 "$OLD"'
is "$(classes w1)" "$OLD" "the next agent's start puts every old class back"
grep -q "threads given back the I/O priority .* (left by an agent that did not stop)" "$AGENT_LOG"
is "$?" "0" "from the journal the killed one left"
cleanup_ctr w1
cleanup_ctr v2
rm -f "$R"/data/*
tap_done
