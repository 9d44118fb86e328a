#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A latency objective (issue #22), end to end on this host: queue-depth-1
# O_DIRECT sync writers declared io.iobatch.class=latency (their block I/O
# p99 from the BPF sampler), and a sequential O_DIRECT writer beside one
# through io.containerd.iobatch.v2.
#   - a declared io.iobatch.latency-target is the objective in status;
#   - an undeclared one is learned from its windows alone;
#   - the writer pushes the victim's p99 over it: the controller caps the
#     writer (cut from its measured rate, agent/protect/protect.h);
#   - in a later window the victim is back under its objective while the
#     writer still runs, capped, not held;
#   - with the victim gone the cap is lifted;
#   - iobatchctl check io-pressure (node-problem-detector) says 0, 1, 0, 2.
# Every check reads the agent's own account of its windows, never the clock.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 14
iob_need containerd ctr runc fio jq
# These time-based jobs have no learned runtime: the budget would let
# protection add to them only half the time they ran free; with none
# (protect_batch_budget = 0) the controller alone decides here (the
# budget's own tests: test_agent_budget).
iob_stack_up "max_hold = 120s
latency_source = bpf
protect_batch_budget = 0"
is "$(ctl status --json | jq -r .latency_source)" "bpf" "latency from the block layer (BPF)"
for f in victim w1; do
  fio --name=prep --filename="$R/data/$f" --rw=write --bs=1M --size=256M --direct=1 \
    >/dev/null 2>&1 || bail "cannot prepare $f's file"
done
# run_victim ID [ANNOTATIONS...]: a QD1 O_DIRECT sync writer, class latency
run_victim() {
  local id=$1
  shift
  $CTR run -d --runtime $RT --annotation io.iobatch.class=latency "$@" --rootfs "$R" "$id" \
    /usr/bin/fio --name=v --filename=/data/victim --rw=randwrite --bs=4k --size=256M \
    --time_based --runtime=300 --direct=1 --ioengine=psync --iodepth=1 >/dev/null 2>&1
  wait_for 20 '[ "$(state '"$id"')" == RUNNING ]' || bail "$id did not start"
}
# Declared: in force from its first window with block-layer latency.
run_victim v0 --annotation io.iobatch.latency-target=10ms
wait_for 20 '[ "$(agent_field v0 lat_target)" == 10000 ]'
is "$(agent_field v0 protected)/$(agent_field v0 lat_target)/$(agent_field v0 lat_target_source)" \
  "true/10000/declared" "status: protected, its objective a p99 of 10 ms, declared"
cleanup_ctr v0
# Learned (1.5 x the median p99 of its first 10 windows alone): the
# controller is checked against that, which a writer beside it exceeds on
# any disk here, where a fixed figure might not (the writer raised the
# victim's p99 from about 0.2 ms to 20 ms on a busy machine, to 1 ms on a
# quiet one).
run_victim victim
ok "an undeclared objective is learned from its quiet windows" \
  wait_for 30 '[ "$(agent_field victim lat_target_source)" == learned ] && [ "$(agent_field victim "lat_target > 0")" == true ]'
diag "learned: p99 $(agent_field victim lat_target) us after $(agent_field victim lat_quiet_windows) quiet windows"
$CTR run -d --runtime $RT --annotation io.iobatch.class=seq-write --rootfs "$R" w1 \
  /usr/bin/fio --name=w --filename=/data/w1 --rw=write --bs=1M --size=256M --direct=1 \
  --ioengine=libaio --iodepth=8 --time_based --runtime=300 >/dev/null 2>&1
wait_for 30 '[ "$(state w1)" == RUNNING ]' || bail "the writer did not start"
# st FILE: the status, saved
st() { ctl status --json >"$IOB_T/$1.json" 2>/dev/null && cat "$IOB_T/$1.json"; }
# By an objective there is no first cap: a cap on the writer while the
# objective judges means the agent saw it missed (a state that lasts, unlike
# the window of the miss itself).
capped() { st miss | jq -e '.protect_objective and .protect_cap_bps > 0' >/dev/null; }
ok "the writer pushes the victim over its objective and the agent caps it" wait_for 30 capped
diag "$(grep -o "protecting 'victim': its latency at[^\"]*" "$AGENT_LOG" | head -1)"
met() {
  st met | jq -e '.protect_objective and .protect_lat_ratio > 0 and .protect_lat_ratio <= 1
    and ([.containers[] | select(.id == "w1" and .state == "running" and .cap_bps > 0)] | length == 1)' >/dev/null
}
ok "in a later window the victim is back under its objective, the writer capped" wait_for 60 met
diag "then: $(jq -c '{protect_lat_ratio, protect_cap_bps, protect_holding}' "$IOB_T/met.json"), victim p99 $(jq -r '.containers[] | select(.id == "victim") | .io_lat_p99_us' "$IOB_T/met.json") us, writer $(jq -r '.containers[] | select(.id == "w1") | .write_bps / 1048576 | floor' "$IOB_T/met.json") MiB/s"
is "$(jq -r '.containers[] | select(.id == "w1") | .state' "$IOB_T/met.json")" "running" \
  "the writer runs on meanwhile, capped at $(($(jq -r '.containers[] | select(.id == "w1") | .cap_bps' "$IOB_T/met.json") / 1048576)) MiB/s"
is "$(jq -r '.protect_victim' "$IOB_T/met.json")" "victim" "status names whom it protects"
# The writer's budget: none (-1), never spent; its debt the sum of its parts (how much of it the caps took depends on
# whether it ran uncapped first: a job capped from its start counts each
# window the cap binds whole).
is "$(jq -r '.containers[] | select(.id == "w1") | "\(.budget_source)/\(.protection_budget_s)/\(.budget_spent)/\((.protection_debt_s - .protection_held_s - .frozen_ms / 1000 - .protection_capped_s) | fabs < 0.01)"' "$IOB_T/met.json")" \
  "unknown/-1/false/true" "status: the writer's protection debt, $(jq -r '.containers[] | select(.id == "w1") | "\(.protection_debt_s) s (held \(.protection_held_s), capped \(.protection_capped_s))"' "$IOB_T/met.json"), with no bound"
cleanup_ctr victim
ok "with the victim gone, the writer's cap is lifted" \
  wait_for 30 '[ "$(agent_field w1 cap_bps)" == 0 ] && [ "$(ctl status --json | jq -r .protect_cap_bps)" == 0 ]'
is "$(grep -c "cannot cap" "$AGENT_LOG")" "0" "no cap failed"
cleanup_ctr w1
# node-problem-detector's plugin (iobatchctl check io-pressure): 0 with
# nothing missing, 1 while a protected container misses its objective three
# windows in a row (a target of 1us it cannot meet), 0 once it is gone,
# 2 when there is no agent to ask.
npd() { ctl check io-pressure >"$IOB_T/npd.out" 2>&1; echo "$?:$(cat "$IOB_T/npd.out")"; }
like "$(npd)" "^0:no I/O pressure" "check io-pressure: 0 while nothing misses"
$CTR run -d --runtime $RT --annotation io.iobatch.class=latency \
  --annotation io.iobatch.latency-target=1us --rootfs "$R" v3 \
  /usr/bin/fio --name=v --filename=/data/victim --rw=randwrite --bs=4k --size=256M \
  --time_based --runtime=300 --direct=1 --ioengine=psync --iodepth=1 >/dev/null 2>&1
ok "check io-pressure: 1 while a protected container misses its objective" \
  wait_for 30 '[[ "$(npd)" == "1:'"'"'v3'"'"' misses its latency objective"* ]]'
diag "$(cat "$IOB_T/npd.out")"
cleanup_ctr v3
ok "check io-pressure: 0 once it is gone" wait_for 30 '[[ "$(npd)" == 0:* ]]'
IOBATCH_AGENT_SOCKET=$IOB_T/none.sock "$IOB_B/bin/iobatchctl" check io-pressure >"$IOB_T/npd.out" 2>&1
like "$?:$(cat "$IOB_T/npd.out")" "^2:unknown: cannot connect" "check io-pressure: 2 (unknown) without an agent"
rm -f "$R"/data/*
tap_done
