#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Protection of a latency-sensitive container (issue #12), end to end on
# this host: a queue-depth-1 random reader declared io.iobatch.class=latency
# runs; batch writers arrive through io.containerd.iobatch.v2.
#   - the agent learns the victim's rate alone, and while it is within its
#     target a batch writer starts (capped);
#   - once the writers push it below its target, the next batch container
#     is held (reason: protecting ...), and iobatchctl status says so;
#   - when the writers are gone and it has slack again, the held one starts;
#   - the protected container itself is never held;
#   - batch containers run at the least CPU weight while it runs
#     (protect_cpu), and get their own back when it is gone.
# The victim's slowdown beside a buffered writer is what bench/pairs.sh
# measured (2.78x for a QD1 reader); the checks read the agent's own
# account, not the clock.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 12
iob_need containerd ctr runc fio jq
# Protection by share (its rate alone): no latency objective, which the
# victim would learn in its first quiet windows (protect-slo.sh tests those).
# No batch budget: the held writer must start because the victim has
# slack again, not because its budget (a few seconds of its class's
# runtime) ran out first; test_agent_budget and protect-slo.sh test that.
iob_stack_up "max_hold = 120s
protect_objective = off
protect_batch_budget = 0"
# The victim's file, written once before anything runs.
fio --name=prep --filename="$R/data/victim" --rw=write --bs=1M --size=256M --direct=1 \
  >/dev/null 2>&1 || bail "cannot prepare the victim's file"
# victim: 4 KiB direct random reads, one at a time, for a long while.
$CTR run -d --runtime $RT --annotation io.iobatch.class=latency --rootfs "$R" victim \
  /usr/bin/fio --name=v --filename=/data/victim --rw=randread --bs=4k --size=256M \
  --time_based --runtime=300 --direct=1 --ioengine=psync >/dev/null 2>&1
ok "the latency-sensitive container starts" wait_for 20 '[ "$(state victim)" == RUNNING ]'
is "$(agent_field victim protected)" "true" "status marks it protected"
# writer ID SECONDS: a buffered sequential writer (with its writeback)
writer() {
  (
    $CTR run -d --runtime $RT --annotation io.iobatch.class=seq-write --rootfs "$R" "$1" \
      /usr/bin/fio --name=w --filename="/data/$1" --rw=write --bs=1M --size=2G --time_based \
      --runtime="$2" --end_fsync=1 >"$IOB_T/$1.out" 2>&1
    echo $? >"$IOB_T/$1.rc.tmp" && mv "$IOB_T/$1.rc.tmp" "$IOB_T/$1.rc"
  ) &
}
sleep 3 # its rate alone, over a dozen 250 ms windows
writer w1 12
wait_for 20 '[ -e "$IOB_T/w1.rc" ]'
is "$(cat "$IOB_T/w1.rc" 2>/dev/null)" "0" "a batch writer starts while the victim is within its target"
# Seen once is enough: the victim's share moves with the writer's bursts.
wait_for 20 '[ "$(ctl status --json | tee "$IOB_T/st.json" | jq -r .protect_holding)" == true ]'
jq -c ".containers[] | {id, state, class, read_bps, write_bps, protected, share}" "$IOB_T/st.json" |
  sed "s/^/# /"
is "$(jq -r .protect_holding "$IOB_T/st.json")" "true" \
  "the writer pushes the victim below its target (share $(jq -r '.containers[] | select(.id == "victim") | .share' "$IOB_T/st.json"))"
cap=$(jq -r '.containers[] | select(.id == "w1") | .cap_bps' "$IOB_T/st.json")
[ "${cap:-0}" -gt 0 ] 2>/dev/null
is "$?" "0" "the running writer is capped meanwhile ($((${cap:-0} / 1048576)) MiB/s, $(grep -c "cannot cap" "$AGENT_LOG") cap failures logged)"
# cpu_weight ID: what the CPU weight file of container ID's cgroup holds
# (cgroup v2 cpu.weight where the cpu controller is there, else v1
# cpu.shares), from its init's /proc/PID/cgroup
cpu_weight() {
  local pid cg m
  pid=$($CTR task ls 2>/dev/null | awk -v id="$1" '$1 == id { print $2 }')
  [ -n "$pid" ] || return 1
  cg=$(sed -n 's/^0:://p' "/proc/$pid/cgroup")
  for m in /sys/fs/cgroup/unified /sys/fs/cgroup; do
    [ "$cg" != / ] && [ -f "$m$cg/cpu.weight" ] && { cat "$m$cg/cpu.weight"; return; }
  done
  cg=$(awk -F: '$2 ~ /(^|,)cpu(,|$)/ { print $3 }' "/proc/$pid/cgroup")
  cat "/sys/fs/cgroup/cpu$cg/cpu.shares"
}
least=$(w=$(cpu_weight victim); [ "$w" = 100 ] && echo 1 || echo 2)
is "$(cpu_weight w1)" "$least" "the batch writer runs at the least CPU weight ($least)"
victim_w=$(cpu_weight victim)
like "$victim_w" '^(100|1024)$' "the protected container keeps its own ($victim_w)"
writer w2 3
wait_for 10 '[ "$(agent_field w2 state)" == pending ]'
like "$(agent_field w2 reason)" "protecting a latency-sensitive container" \
  "the next batch container is held to protect it"
is "$(agent_field w2 conflict)" "victim" "and status names the victim"
cleanup_ctr w1
wait_for 60 '[ -e "$IOB_T/w2.rc" ]'
is "$(cat "$IOB_T/w2.rc" 2>/dev/null)" "0" "once the writer is gone and the victim has slack, it starts"
grep -q "'victim' has slack again" "$AGENT_LOG"
is "$?" "0" "the agent says the victim has slack again"
cleanup_ctr w2
# a batch container running when the victim goes gets its CPU weight back
writer w3 40
wait_for 90 '[ -e "$IOB_T/w3.rc" ] && [ "$(cpu_weight w3)" = "$least" ]'
cleanup_ctr victim
wait_for 10 '[ "$(cpu_weight w3)" = "$victim_w" ]'
is "$(cpu_weight w3)" "$victim_w" "with the victim gone, a batch container's CPU weight is put back"
cleanup_ctr w3
rm -f "$R"/data/*
tap_done
