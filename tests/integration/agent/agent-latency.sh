#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Per-container block I/O latency (issue #22), end to end: real containerd,
# runc and fio through io.containerd.iobatch.v2.  A container doing
# queue-depth-1 O_DIRECT random reads shows a nonzero request count and a
# p99 in iobatchctl status within a few of the agent's windows after its
# I/O starts, and an idle container a count of 0:
#   - with latency_source = bpf (agent/sample/bpf/blklat.bpf.c on the block
#     tracepoints; the agent does not start if it cannot load), and in the
#     metrics' histogram;
#   - with latency_source = pressure (io.pressure), marked approximate
#     (status and the metrics).
# Everything is counted in the agent's own windows (io_lat_windows), never
# timed by the test; wait_for's clock only bounds a hang.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 21
iob_need containerd ctr runc fio jq curl
MSOCK=$IOB_T/metrics.sock
iob_stack_up "latency_source = bpf
metrics = unix:$MSOCK"
fio --name=prep --filename="$R/data/reader" --rw=write --bs=1M --size=128M --direct=1 \
  >/dev/null 2>&1 || bail "cannot prepare the reader's file"

num() { awk -v a="$1" -v op="$2" -v b="$3" 'BEGIN { exit !(op == ">" ? a > b : op == ">=" ? a >= b : a <= b) }'; }

# run_pair SUFFIX: a QD1 O_DIRECT random reader and an idle container
run_pair() {
  $CTR run -d --runtime $RT --rootfs "$R" "reader$1" \
    /usr/bin/fio --name=r --filename=/data/reader --rw=randread --bs=4k --size=128M \
    --time_based --runtime=300 --direct=1 --ioengine=psync --iodepth=1 >/dev/null 2>&1
  $CTR run -d --runtime $RT --rootfs "$R" "idle$1" /bin/sleep 300 >/dev/null 2>&1
}

# check SUFFIX MODE: the checks of one agent's latency source
check() {
  local s=$1 mode=$2 w0
  ok "$mode: the reader and the idle container run" \
    wait_for 30 '[ "$(state reader'"$s"')" == RUNNING ] && [ "$(state idle'"$s"')" == RUNNING ]'
  # The window in which the sampler first sees its reads, then three more
  # of the agent's windows.
  wait_for 30 'num "$(agent_field reader'"$s"' read_iops)" ">" 0'
  # shellcheck disable=SC2034  # read in the wait_for string below
  w0=$(agent_field "reader$s" io_lat_windows)
  wait_for 30 'num "$(agent_field reader'"$s"' io_lat_windows)" ">=" "$((w0 + 3))"'
  ctl status --json >"$IOB_T/st$s.json"
  st() { jq -r --arg id "$1" ".containers[] | select(.id == \$id) | .$2" "$IOB_T/st$s.json"; }
  jq -c '.containers[] | {id, read_iops, io_lat_valid, io_lat_approx, io_lat_count, io_lat_p50_us,
    io_lat_p99_us, io_lat_windows, io_stall_share}' "$IOB_T/st$s.json" | sed 's/^/# /'
  is "$(jq -r .latency_source "$IOB_T/st$s.json")" "$mode" "$mode: status names the latency source"
  num "$(st "reader$s" io_lat_count)" ">" 0
  is "$?" "0" "$mode: the reader's requests are counted within 3 windows of its first reads ($(st "reader$s" io_lat_count) in the last window, window $(st "reader$s" io_lat_windows))"
  num "$(st "reader$s" io_lat_p99_us)" ">" 0 && num "$(st "reader$s" io_lat_p99_us)" ">=" "$(st "reader$s" io_lat_p50_us)"
  is "$?" "0" "$mode: it has a p99 ($(st "reader$s" io_lat_p99_us) us) at or above its p50 ($(st "reader$s" io_lat_p50_us) us)"
  is "$(st "idle$s" io_lat_valid):$(st "idle$s" io_lat_count)" "true:0" "$mode: the idle container's windows count no request"
  num "$(st "idle$s" io_lat_windows)" ">=" 1
  is "$?" "0" "$mode: and were measured ($(st "idle$s" io_lat_windows) windows)"
}

# bpf
grep -q "block I/O latency per container from BPF" "$AGENT_LOG"
is "$?" "0" "bpf: the agent says at start that BPF measures latency"
run_pair 1
check 1 bpf
is "$(agent_field reader1 io_lat_approx)" "false" "bpf: not marked approximate"
d=$(ctl status reader1)
like "$(grep '^I/O latency:' <<<"$d")" "p50 .*, p99 .*, [0-9]+ requests" "bpf: iobatchctl status shows p50, p99 and the count"
m=$(curl -sS --max-time 10 --unix-socket "$MSOCK" http://x/metrics)
like "$(grep '^iobatch_container_io_latency_seconds_count{.*id="reader1"' <<<"$m")" \
  'approx="false"\} [1-9][0-9]*$' "bpf: the metrics' latency histogram counts the reader's requests"
# the reader's histogram: buckets cumulative, +Inf its _count, and a _sum
series=$(grep '^iobatch_container_io_latency_seconds_\(bucket\|count\|sum\){.*id="reader1"' <<<"$m")
hist=$(awk '/_bucket\{/ { if ($2 < last) bad = 1; last = $2; inf = $2 }
  /_count\{/ { n = $2 } /_sum\{/ { s = $2 }
  END { print (bad ? "falling" : "rising") ":" (inf == n ? "inf=count" : inf "!=" n) ":" (s > 0 ? "sum" : "nosum") }' <<<"$series")
is "$hist" "rising:inf=count:sum" "bpf: its buckets rise to +Inf, which is its _count, and it has a _sum"
cleanup_ctr reader1
cleanup_ctr idle1
agent_stop

# pressure: the same with io.pressure, marked approximate
: >"$AGENT_LOG"
agent_start "latency_source = pressure
metrics = unix:$MSOCK" || bail "iobatchd did not start"
like "$(grep 'block I/O latency' "$AGENT_LOG")" "approximated from io.pressure, not BPF: latency_source = pressure" \
  "pressure: one line at start says why not BPF"
run_pair 2
check 2 pressure
is "$(agent_field reader2 io_lat_approx)" "true" "pressure: marked approximate"
like "$(ctl status | sed -n 1,5p | grep "^block I/O latency")" "^block I/O latency approximate, from io.pressure" "pressure: status says so in its summary"
m=$(curl -sS --max-time 10 --unix-socket "$MSOCK" http://x/metrics)
like "$(grep '^iobatch_container_io_latency_seconds_count{.*id="reader2"' <<<"$m")" \
  'approx="true"\} [1-9][0-9]*$' "pressure: the metrics' histogram counts its requests, marked approximate"
cleanup_ctr reader2
cleanup_ctr idle2
rm -f "$R"/data/*
tap_done
