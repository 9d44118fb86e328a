#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sampling cost with every pod counted (issue #25): iobatchd finds N
# containers under a kubelet-like cgroup tree (kubepods_root, a private
# --cgroup-root; cgroupfs layout, N/10 pods of 10 containers, one sleeping
# process each, real cgroups of the hierarchy the agent walks: v1 pids on a
# hybrid host, the cgroup2 mount on a v2 one) and samples them at 1 Hz.
# Per N: the agent's utime+stime over WINDOW seconds (one pod added and
# one removed in the middle, so that the window holds walks on inotify
# events), its RSS, and its own account of the walks (status "kubepods":
# walks, the last one's directories and milliseconds).  N = 0 is the agent
# with the tree empty.
# Writes bench/results/kubepods-overhead.json.
# Usage: bench/kubepods-overhead.sh   (env: COUNTS="0 100 1000" WINDOW=30 B=build
#                                      OUT_DIR=bench/results)
set -euo pipefail
cd "$(dirname "$0")/.."
TOP=$PWD
COUNTS=${COUNTS:-"0 100 1000"}
WINDOW=${WINDOW:-30}
B=${B:-build}
OUT_DIR=${OUT_DIR:-bench/results}
CMDLINE=$(for v in COUNTS WINDOW; do printf '%s="%s" ' "$v" "${!v}"; done)"bench/kubepods-overhead.sh"
AGENT=$TOP/$B/bin/iobatchd
CTL=$TOP/$B/bin/iobatchctl
[ "$(id -u)" = 0 ] || { echo "kubepods-overhead: must run as root" >&2; exit 1; }
command -v jq >/dev/null || { echo "kubepods-overhead: 'jq' not found" >&2; exit 1; }
source tests/integration/lib/common.sh # EXIT trap runs every at_exit in reverse
trap 'exit 130' INT TERM
source bench/agent/lib.sh
START=$(date -u +%FT%TZ)
LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
HZ=$(getconf CLK_TCK)
mkdir -p "$OUT_DIR"
# the hierarchy the agent walks (agent/kubepods.c: v1 pids first on a host with v1)
HIER=$(awk '$0 ~ / - cgroup / && $NF ~ /(^|,)pids(,|$)/ { print $5; exit }' /proc/self/mountinfo)
[ -n "$HIER" ] || HIER=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
KROOT=/iobkp-bench-$$
PIDS=()
cleanup_tree() {
  local p
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -d "$HIER$KROOT" ] && find "$HIER$KROOT" -depth -type d -exec rmdir {} + 2>/dev/null
  return 0
}
at_exit cleanup_tree
# ctr POD K: container K of pod POD, with a sleeping process in it
ctr() {
  local d=$HIER$KROOT/kubepods/besteffort/pod$1/c$1-$2
  mkdir -p "$d"
  sh -c "echo \$\$ >'$d/cgroup.procs' && exec sleep 100000" &
  PIDS+=($!)
}
rows=()
for n in $COUNTS; do
  cleanup_tree
  PIDS=()
  mkdir -p "$HIER$KROOT/kubepods/besteffort"
  for p in $(seq 1 $((n / 10))); do for k in $(seq 1 10); do ctr "$p" "$k"; done; done
  agent_start "$IOB_T/agent-$n" "sample_period = 1s
latency_source = off
kubepods_root = $KROOT"
  st() { "$CTL" --socket "$AGENT_SOCK" status --json; }
  for _ in $(seq 1 120); do
    [ "$(st | jq '[.containers[] | select(.qos != "")] | length')" -ge "$n" ] && break
    sleep 1
  done
  found=$(st | jq '[.containers[] | select(.qos != "")] | length')
  first=$(st | jq -r .kubepods)
  sleep 3
  t0=$(proc_ticks "$AGENT_PID")
  sleep $((WINDOW / 2))
  for k in $(seq 1 10); do ctr new "$k"; done # a pod comes...
  if [ "$n" -gt 0 ]; then
    cat "$HIER$KROOT"/kubepods/besteffort/pod1/*/cgroup.procs | xargs -r kill # ...one empties
  fi
  sleep $((WINDOW - WINDOW / 2))
  t1=$(proc_ticks "$AGENT_PID")
  last=$(st | jq -r .kubepods)
  rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$AGENT_PID/status")
  agent_stop
  cpu_ms=$(((t1 - t0) * 1000 / HZ))
  rows+=("$(jq -nc --argjson n "$n" --argjson found "$found" --argjson cpu_ms "$cpu_ms" \
    --argjson window "$WINDOW" --argjson rss "$rss" --arg first "$first" --arg last "$last" \
    '{containers: $n, found: $found, window_s: $window, cpu_ms: $cpu_ms,
      cpu_percent: ($cpu_ms / $window / 10), rss_kib: $rss,
      kubepods_after_first_walk: $first, kubepods_at_end: $last}')")
  echo "kubepods-overhead: $n containers ($found found): ${cpu_ms} ms CPU in ${WINDOW} s, RSS ${rss} KiB; $last"
done
jq -n --arg cmd "$CMDLINE" --arg date "$START" --arg host "$(hostname)" --arg kernel "$(uname -r)" \
  --arg load "start $LOAD_START, end $(cut -d' ' -f1-3 /proc/loadavg)" --arg hier "$HIER" \
  --argjson runs "$(printf '%s\n' "${rows[@]}" | jq -sc .)" \
  '{benchmark: "kubepods-overhead", command: $cmd, date: $date, host: $host, kernel: $kernel,
    loadavg: $load, hierarchy: $hier, runs: $runs}' >"$OUT_DIR/kubepods-overhead.json"
echo "kubepods-overhead: wrote $OUT_DIR/kubepods-overhead.json"
