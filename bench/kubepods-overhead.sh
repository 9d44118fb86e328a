#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sampling cost with every pod counted (issues #25, #35): iobatchd finds N
# real containers under a kubelet-like cgroup tree (kubepods_root, a
# private --cgroup-root; cgroupfs layout, kubepods/besteffort/pod<P>/c<P>-<K>,
# N/10 pods of 10 containers) and samples them at 1 Hz.  Each container is
# a cgroup in every hierarchy the agent reads -- the one its kubepods walk
# takes (v1 pids on a hybrid host: agent/kube/kubepods.c looks at pids, memory,
# blkio, cpu in turn), v1 blkio (the sampler and the BPF program's key)
# and the cgroup2 mount (io.pressure; on a pure v2 host the only one, with
# the io controller enabled down the tree) -- holding one process of its
# own (build/bench/iob-real-ctr) that reads 4 KiB with O_DIRECT every
# REAL_IO_S seconds from a file under REAL_DIR, so that the block layer
# charges it and the BPF map has a real entry for it.
# The sampler is the cheapest the host allows: KP_SAMPLERS (default
# "bpf/bpf": sampler = bpf, latency_source = bpf, no file read per
# container; where the BPF program does not load, auto/off instead, and
# the row says so).  No CRI (cri_endpoint = off): nothing here is a pod
# sandbox, and a host's containerd is not part of what is measured.
# Per N: the agent's utime+stime over WINDOW seconds (a pod of 10 added
# and pod 1 ended in the middle, its processes killed and its cgroups
# removed, so that the window holds walks on inotify events), its RSS, its own account of the walks (status
# "kubepods": walks, the last one's directories and milliseconds), the
# BPF map's entries (all, and those with requests counted; bpftool), and
# what the containers left once stopped (processes, cgroup directories:
# must be 0 0).  N = 0 is the agent with the tree empty.  Rows say
# "real": true.  Everything is removed at exit, on Ctrl-C and on failure
# (the EXIT trap; the helper also when the bench is killed with -9).
# Writes OUT_DIR/kubepods-overhead.json (bench/results by default: a run
# on a busy machine goes to a scratch OUT_DIR).
# PROFILE=callgrind: instead, an instruction profile of the agent under
# valgrind with PROFILE_COUNT real containers found, over PROFILE_WINDOWS
# windows with no pod coming or going (counted from callgrind_control -z,
# once every container is found): instructions per window (Ir / the calls
# of the window's handler) and the top functions, inclusive, in
# OUT_DIR/kubepods-overhead-profile.txt (callgrind's own file to PROFILE_RAW
# if set).  Instructions, not time: a busy
# machine does not disturb them.
# Usage: bench/kubepods-overhead.sh   (env: COUNTS="0 100 1000" WINDOW=30 B=build
#                                      KP_SAMPLERS=bpf/bpf REAL_DIR=/var/tmp
#                                      REAL_IO_S=2 OUT_DIR=bench/results
#                                      PROFILE=callgrind PROFILE_COUNT=200
#                                      PROFILE_WINDOWS=10 PROFILE_RAW=FILE)
set -euo pipefail
cd "$(dirname "$0")/.."
TOP=$PWD
COUNTS=${COUNTS:-"0 100 1000"}
WINDOW=${WINDOW:-30}
B=${B:-build}
OUT_DIR=${OUT_DIR:-bench/results}
KP_SAMPLERS=${KP_SAMPLERS:-bpf/bpf}
REAL=1
REAL_DIR=${REAL_DIR:-/var/tmp}
REAL_IO_S=${REAL_IO_S:-2}
PROFILE=${PROFILE:-}
PROFILE_COUNT=${PROFILE_COUNT:-200}
PROFILE_WINDOWS=${PROFILE_WINDOWS:-10}
CMDLINE=$(for v in COUNTS WINDOW KP_SAMPLERS REAL_IO_S; do printf '%s="%s" ' "$v" "${!v}"; done)"bench/kubepods-overhead.sh"
AGENT=$TOP/$B/bin/iobatchd
CTL=$TOP/$B/bin/iobatchctl
REALCTR=$TOP/$B/bench/iob-real-ctr
[ "$(id -u)" = 0 ] || { echo "kubepods-overhead: must run as root" >&2; exit 1; }
command -v jq >/dev/null || { echo "kubepods-overhead: 'jq' not found" >&2; exit 1; }
for x in "$AGENT" "$CTL" "$REALCTR"; do
  [ -x "$x" ] || { echo "kubepods-overhead: '${x#"$TOP"/}' not built (make all $B/bench/iob-real-ctr)" >&2; exit 1; }
done
source tests/integration/lib/common.sh # EXIT trap runs every at_exit in reverse
trap 'exit 130' INT TERM
source bench/agent/lib.sh
START=$(date -u +%FT%TZ)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
HZ=$(getconf CLK_TCK 2>/dev/null || echo 100) # no getconf in the VM: Linux x86 is 100
mkdir -p "$OUT_DIR"
real_mounts
# the hierarchy the agent walks (agent/kube/kubepods.c: on a host with v1, the
# first of pids, memory, blkio, cpu that has the tree), and the others the
# agent reads: blkio, the cgroup2 mount
HIER=$(awk '$0 ~ / - cgroup / && $NF ~ /(^|,)pids(,|$)/ { print $5; exit }' /proc/self/mountinfo)
[ -n "$HIER" ] || HIER=$REAL_CG2
MOUNTS=$(printf '%s\n' "$HIER" "$REAL_BLKIO" "$REAL_CG2" | awk 'NF && !seen[$0]++')
KROOT=/iobkp-bench-$$
QOS=$KROOT/kubepods/besteffort
# pod P's directory in every hierarchy (made, with its parents; the io
# controller enabled down to it on cgroup v2)
pod_dirs() {
  local m d
  for m in $MOUNTS; do
    for d in "$KROOT" "$KROOT/kubepods" "$QOS" "$QOS/pod$1"; do
      [ -d "$m$d" ] && continue
      real_parent "$m$d"
      at_exit "rmdir '$m$d'"
    done
  done
}
# pods_list LIST P...: one line per container of pods P (10 each) for the helper
pods_list() {
  local list=$1 p k m line
  shift
  : >"$list"
  for p in "$@"; do
    pod_dirs "$p"
    for k in $(seq 1 10); do
      line=
      for m in $MOUNTS; do line+="$m$QOS/pod$p/c$p-$k "; done
      echo "$line" >>"$list"
    done
  done
}
# pod_end P PIDS: pod P ends as the kubelet ends one: its processes
# (the first 10 of PIDS) killed, then its cgroups removed
pod_end() {
  local m k d
  head -10 "$2" | xargs kill || true
  for m in $MOUNTS; do
    for k in $(seq 1 10) pod; do
      d=$m$QOS/pod$1/c$1-$k
      [ "$k" != pod ] || d=$m$QOS/pod$1
      for _ in $(seq 1 100); do rmdir "$d" 2>/dev/null && break; sleep 0.02; done
    done
  done
}
st() { "$CTL" --socket "$AGENT_SOCK" status --json; }
found_now() { st | jq '[.containers[] | select(.qos != "")] | length'; }
# the cheapest sampler that starts: KP_SAMPLERS in turn, then auto/off
start_agent() {
  local cfg smp lat
  for cfg in $KP_SAMPLERS auto/off; do
    smp=${cfg%%/*} lat=${cfg#*/}
    [ "$cfg" != "$smp" ] || lat=off
    if agent_start "$IOB_T/agent-$1-$smp-$lat" "sample_period = 1s
sampler = $smp
latency_source = $lat
cri_endpoint = off
kubepods_root = $KROOT" 2>"$IOB_T/agent-start.err"; then
      SMP=$smp LAT=$lat
      return 0
    fi
    echo "kubepods-overhead: sampler $smp, latency_source $lat did not start: $(tail -1 "$IOB_T/agent-start.err")" >&2
  done
  return 1
}
# cg_calls FN FILE: the calls of function FN in callgrind's FILE
cg_calls() {
  awk -v fn="$1" '$0 ~ "^c?fn=\\([0-9]+\\) " fn "$" { match($0, /\([0-9]+\)/); id = substr($0, RSTART, RLENGTH) }
    /^cfn=/ { c = id != "" && index($0, "cfn=" id) == 1; next }
    c && /^calls=/ { split($1, a, "="); n += a[2]; c = 0 } END { print n + 0 }' "$2"
}
# profile N: the agent under callgrind with N containers found (PROFILE)
profile() {
  local n=$1 pd=$IOB_T/prof p total calls out=$OUT_DIR/kubepods-overhead-profile.txt
  command -v valgrind >/dev/null || { echo "kubepods-overhead: PROFILE=callgrind needs valgrind" >&2; exit 1; }
  local pods=()
  for p in $(seq 1 $((n / 10))); do pods+=("$p"); done
  pods_list "$IOB_T/real-$n.list" "${pods[@]}"
  real_start "$IOB_T/real-$n.list"
  AGENT_SOCK=$pd/agent.sock
  install -d -m 0700 "$pd" "$pd/state"
  printf 'socket = %s\nstate_dir = %s\nsample_period = 1s\nsampler = %s\nlatency_source = %s\ncri_endpoint = off\nkubepods_root = %s\n' \
    "$AGENT_SOCK" "$pd/state" "${KP_SAMPLERS%%/*}" "${KP_SAMPLERS#*/}" "$KROOT" >"$pd/iobatchd.conf"
  valgrind --tool=callgrind --callgrind-out-file="$pd/callgrind.out" \
    "$AGENT" --config "$pd/iobatchd.conf" >"$pd/agent.log" 2>&1 &
  AGENT_PID=$!
  at_exit "agent_stop"
  for _ in $(seq 1 600); do [ -S "$AGENT_SOCK" ] && break; sleep 0.1; done
  for _ in $(seq 1 300); do [ "$(found_now)" -ge "$n" ] && break; sleep 1; done
  sleep 3
  callgrind_control -z "$AGENT_PID" >/dev/null
  sleep "$PROFILE_WINDOWS"
  callgrind_control -d "$AGENT_PID" >/dev/null
  for _ in $(seq 1 100); do [ -s "$pd/callgrind.out.1" ] && break; sleep 0.1; done
  local last
  last=$(st | jq -r .kubepods)
  agent_stop
  real_stop "$REAL_HELPER"
  total=$(callgrind_annotate "$pd/callgrind.out.1" 2>/dev/null | awk '/PROGRAM TOTALS/ && !n++ { gsub(",", "", $1); print $1 }')
  # the windows (calls of the sample timer's handler) and the io.pressure
  # reads, from the raw file (callgrind_annotate hides call counts)
  calls=$(cg_calls on_sample_timer "$pd/callgrind.out.1")
  [ "$calls" -gt 0 ] || calls=$PROFILE_WINDOWS
  {
    echo "# $CMDLINE"
    echo "# $(git log -1 --format='%h %s')"
    echo "== $n real containers found (${KP_SAMPLERS}), $calls windows: $total instructions," \
      "$((total / calls)) per window, $(($(cg_calls cg2_pressure_read "$pd/callgrind.out.1") / calls))" \
      "io.pressure reads per window; inclusive:"
    callgrind_annotate --auto=no --inclusive=yes "$pd/callgrind.out.1" 2>/dev/null |
      grep -E '^ *[0-9,]+ \( *[0-9.]+%\) +[^ ]' | grep -v 'PROGRAM TOTALS' |
      grep -vE 'libc-start|libc_start_call_main|below main|ld-linux|agent/main.c:main|iob_loop_run|agent_daemon_run' |
      grep -vE '\) +/' | sed -n 1,30p | cut -c1-150
    echo "kubepods at the end: $last"
  } >"$out"
  [ -z "${PROFILE_RAW:-}" ] || cp "$pd/callgrind.out.1" "$PROFILE_RAW"
  echo "kubepods-overhead: profile in $out: $total instructions, $calls windows"
}
if [ "$PROFILE" = callgrind ]; then
  CMDLINE="PROFILE=callgrind PROFILE_COUNT=$PROFILE_COUNT PROFILE_WINDOWS=$PROFILE_WINDOWS $CMDLINE"
  profile "$PROFILE_COUNT"
  exit 0
fi
rows=()
for n in $COUNTS; do
  pods=()
  for p in $(seq 1 $((n / 10))); do pods+=("$p"); done
  main=
  if [ "$n" -gt 0 ]; then
    pods_list "$IOB_T/real-$n.list" "${pods[@]}"
    real_start "$IOB_T/real-$n.list"
    main=$REAL_HELPER
  fi
  pod_dirs new
  start_agent "$n"
  for _ in $(seq 1 120); do
    [ "$(found_now)" -ge "$n" ] && break
    sleep 1
  done
  found=$(found_now)
  first=$(st | jq -r .kubepods)
  sampler=$(st | jq -r .sampler)
  latency=$(st | jq -r .latency_source)
  sleep 3
  t0=$(proc_ticks "$AGENT_PID")
  sleep $((WINDOW / 2))
  pods_list "$IOB_T/real-$n-new.list" new # a pod comes...
  real_start "$IOB_T/real-$n-new.list"
  if [ "$n" -gt 0 ]; then
    pod_end 1 "$IOB_T/real-$n.list.pids" # ...and pod 1 ends
  fi
  sleep $((WINDOW - WINDOW / 2))
  t1=$(proc_ticks "$AGENT_PID")
  last=$(st | jq -r .kubepods)
  with_io=$(st | jq '[.containers[] | select(.qos != "" and (.read_bps > 0 or .write_bps > 0))] | length')
  found_end=$(found_now)
  read -r map_entries map_with_io < <(real_lat_entries)
  rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$AGENT_PID/status")
  agent_stop
  real_stop "$REAL_HELPER"
  read -r lp ld < <(real_left "$IOB_T/real-$n-new.list")
  if [ -n "$main" ]; then
    real_stop "$main"
    read -r lp2 ld2 < <(real_left "$IOB_T/real-$n.list")
    lp=$((lp + lp2)) ld=$((ld + ld2))
  fi
  cpu_ms=$(((t1 - t0) * 1000 / HZ))
  rows+=("$(jq -nc --argjson n "$n" --argjson found "$found" --argjson found_end "$found_end" \
    --argjson cpu_ms "$cpu_ms" --argjson window "$WINDOW" --argjson rss "$rss" --arg first "$first" \
    --arg last "$last" --arg smp "$SMP" --arg lat "$LAT" --arg sampler "$sampler" --arg latency "$latency" \
    --argjson io_s "$REAL_IO_S" --argjson with_io "$with_io" --argjson map_entries "$map_entries" \
    --argjson map_with_io "$map_with_io" --argjson lp "$lp" --argjson ld "$ld" \
    '{containers: $n, real: true, real_io_every_s: $io_s, found: $found, found_at_end: $found_end,
      sampler_option: $smp, latency_source_option: $lat, sampler: $sampler, latency_source: $latency,
      window_s: $window, cpu_ms: $cpu_ms, cpu_percent: ($cpu_ms / $window / 10), rss_kib: $rss,
      doing_io_in_last_window: $with_io, bpf_map_entries: $map_entries, bpf_map_entries_with_io: $map_with_io,
      processes_left: $lp, cgroup_dirs_left: $ld,
      kubepods_after_first_walk: $first, kubepods_at_end: $last}')")
  echo "kubepods-overhead: $n real containers ($found found, $found_end at the end; $sampler, latency $latency): ${cpu_ms} ms CPU in ${WINDOW} s, RSS ${rss} KiB; BPF map: $map_entries entries, $map_with_io with I/O; left: $lp processes, $ld cgroup directories; $last"
done
jq -n --arg cmd "$CMDLINE" --arg date "$START" --arg host "$(hostname)" --arg kernel "$(uname -r)" \
  --arg load "start $LOAD_START, end $(cut -d' ' -f1-3 /proc/loadavg)" --arg hier "$HIER" \
  --argjson runs "$(printf '%s\n' "${rows[@]}" | jq -sc .)" --arg commit "$(git rev-parse --short HEAD 2>/dev/null)" \
  '{benchmark: "kubepods-overhead", command: $cmd, date: $date, commit: $commit, host: $host, kernel: $kernel,
    loadavg: $load, hierarchy: $hier, runs: $runs}' >"$OUT_DIR/kubepods-overhead.json"
echo "kubepods-overhead: wrote $OUT_DIR/kubepods-overhead.json"
