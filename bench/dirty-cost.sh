#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What the BPF program's dirty-page counter (agent/sample/bpf/blklat.bpf.c,
# blklat_dirty on writeback_dirty_folio) costs the containers that write
# through the page cache.  It runs in the writer's context for every folio
# the writer dirties, wherever the agent loads it (a v1 or hybrid host,
# sampler auto or bpf).  The worst case: the writer is in a container the
# agent samples, so each call finds its entry and adds to it.
#   - Two writers into a file under WRITE_DIR, buffered, no fsync (the
#     file removed and the machine synced before each run, outside the
#     time), in a cgroup of its own in the cgroup2 mount and, on a hybrid
#     host, in v1 blkio: `seq`, dd of MIB MiB in 1 MiB writes (large
#     folios where the filesystem has them: few calls), and `rand4k`, fio
#     writing MIB/4 MiB in 4 KiB writes at random offsets (one folio, one
#     call, per write).  Each REPS times with iobatchd running (the
#     container registered) and REPS times without, interleaved; medians
#     and their ratio.
#   - The program's own account, from one more run of each writer with
#     kernel.bpf_stats_enabled on (restored after; off for the timed
#     runs, whose kernel it would slow): calls and ns per call, from
#     bpftool.
# Writes OUT_DIR/dirty-cost.json (bench/results by default: a run on a
# busy machine goes to a scratch OUT_DIR).
# Usage: bench/dirty-cost.sh   (env: B=build REPS=9 MIB=1024
#                               WRITE_DIR=/var/tmp OUT_DIR=bench/results
#                               AGENT_CONF="more iobatchd.conf lines")
set -euo pipefail
cd "$(dirname "$0")/.."
B=${B:-build}
REPS=${REPS:-9}
MIB=${MIB:-1024}
WRITE_DIR=${WRITE_DIR:-/var/tmp}
OUT_DIR=${OUT_DIR:-bench/results}
die() { echo "dirty-cost: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (cgroups, BPF)"
for t in jq bpftool dd fio; do command -v "$t" >/dev/null || die "$t is not installed"; done
for t in iobatchd iobatchctl; do [ -x "$B/bin/$t" ] || die "build first: make $B/bin/$t"; done

CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[ -n "$CG2" ] || die "no cgroup2 mount"
BLKIO=$(awk '$0 ~ / - cgroup / && $NF ~ /(^|,)blkio(,|$)/ { print $5; exit }' /proc/self/mountinfo)
T=$(mktemp -d "$WRITE_DIR/iob-dirty.XXXXXX")
cg=iob-dirty-$$
dirs=("$CG2/$cg")
[ -z "$BLKIO" ] || dirs+=("$BLKIO/$cg")
stats_was=$(sysctl -n kernel.bpf_stats_enabled)
AGENT_PID=
cleanup() {
  [ -z "$AGENT_PID" ] || { kill "$AGENT_PID" 2>/dev/null; wait "$AGENT_PID" 2>/dev/null || true; }
  sysctl -q -w kernel.bpf_stats_enabled="$stats_was" || true
  for d in "${dirs[@]}"; do rmdir "$d" 2>/dev/null || true; done
  rm -rf "$T"
}
trap cleanup EXIT
for d in "${dirs[@]}"; do mkdir -p "$d"; done

export IOBATCH_AGENT_SOCKET=$T/agent.sock
cat >"$T/agent.conf" <<CONF
socket = $IOBATCH_AGENT_SOCKET
state_dir = $T/state
kubepods = off
${AGENT_CONF:-}
CONF
agent_up() {
  "$B/bin/iobatchd" -c "$T/agent.conf" >"$T/agent.log" 2>&1 &
  AGENT_PID=$!
  for _ in $(seq 1 100); do
    [ -S "$IOBATCH_AGENT_SOCKET" ] && "$B/bin/iobatchctl" status >/dev/null 2>&1 && break
    sleep 0.05
  done
  if ! "$B/bin/iobatchctl" register w --cgroup "/$cg" >/dev/null || ! "$B/bin/iobatchctl" admit w >/dev/null; then
    die "iobatchd did not start: $(tail -3 "$T/agent.log")"
  fi
}
agent_down() {
  kill "$AGENT_PID"
  wait "$AGENT_PID" 2>/dev/null || true
  AGENT_PID=
}
# one_run seq|rand4k: microseconds of that writer in the cgroup
one_run() {
  rm -f "$T/f"
  sync
  local cmd
  case $1 in
  seq) cmd="dd if=/dev/zero of=$T/f bs=1M count=$MIB" ;;
  rand4k) cmd="fio --name=w --rw=randwrite --bs=4k --size=$((MIB / 4))M --filename=$T/f --ioengine=psync --randrepeat=0" ;;
  esac
  sh -c 'cmd=$1; shift; for d in "$@"; do echo $$ >"$d/cgroup.procs" || exit 1; done
    s=$(date +%s%N); $cmd >/dev/null 2>&1 || exit 1
    e=$(date +%s%N); echo $(( (e - s) / 1000 ))' sh "$cmd" "${dirs[@]}"
}
# prog_count: [calls, ns] of blklat_dirty so far
prog_count() { bpftool -j prog show | jq -c '[.[] | select(.name == "blklat_dirty")][0] | [.run_cnt // 0, .run_time_ns // 0]'; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

load0=$(cut -d' ' -f1-3 /proc/loadavg)
agent_up
sampler=$("$B/bin/iobatchctl" status --json | jq -r .sampler)
prog=$(bpftool -j prog show | jq -r '[.[] | select(.name == "blklat_dirty")][0].id // empty')
[ -n "$prog" ] || echo "dirty-cost: the agent did not load blklat_dirty (sampler: $sampler); the 'with' runs measure no counter" >&2
agent_down
# One writer's runs after the other's: a sequential write right after a
# random one is slow on this machine's disk without any agent (the freed
# fragmented file), which would fall on one side.  Within a writer the
# side that goes first alternates (ABBA).
declare -A with without
with_run() { # W
  agent_up
  with[$1]+="$(one_run "$1") "
  agent_down
}
for w in seq rand4k; do
  for ((i = 0; i < REPS; i++)); do
    if ((i % 2 == 0)); then
      with_run "$w"
      without[$w]+="$(one_run "$w") "
    else
      without[$w]+="$(one_run "$w") "
      with_run "$w"
    fi
  done
done
sysctl -q -w kernel.bpf_stats_enabled=1
agent_up
for w in seq rand4k; do
  c0=$(prog_count)
  one_run "$w" >/dev/null
  c1=$(prog_count)
  jq -rn --arg w "$w" --argjson a "$c0" --argjson b "$c1" '"\($w) \($b[0] - $a[0]) \($b[1] - $a[1])"' >>"$T/prog"
done
agent_down
sysctl -q -w kernel.bpf_stats_enabled="$stats_was"
load1=$(cut -d' ' -f1-3 /proc/loadavg)
# writer_json W: that writer's runs, medians, ratio and the program's calls
writer_json() {
  local mw mo
  local -a a b
  read -ra a <<<"${with[$1]}"
  read -ra b <<<"${without[$1]}"
  mw=$(printf '%s\n' "${a[@]}" | median)
  mo=$(printf '%s\n' "${b[@]}" | median)
  jq -n --argjson w "$(printf '%s\n' "${a[@]}" | jq -s .)" --argjson o "$(printf '%s\n' "${b[@]}" | jq -s .)" \
    --argjson mw "$mw" --argjson mo "$mo" \
    --argjson calls "$(awk -v w="$1" '$1 == w { c += $2 } END { print c + 0 }' "$T/prog")" \
    --argjson ns "$(awk -v w="$1" '$1 == w { n += $3 } END { print n + 0 }' "$T/prog")" \
    '{us: {with_agent: $w, without_agent: $o}, median_us: {with_agent: $mw, without_agent: $mo},
      ratio: ($mw / $mo),
      program: {calls: $calls, ns: $ns, ns_per_call: (if $calls > 0 then $ns / $calls else null end),
                share_of_median: ($ns / 1000 / $mw)}}'
}
mkdir -p "$OUT_DIR"
jq -n --arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --arg commit "$(git rev-parse --short HEAD)" \
  --arg kernel "$(uname -r)" --arg load "start $load0, end $load1" --arg sampler "$sampler" \
  --arg cmd "REPS=\"$REPS\" MIB=\"$MIB\" WRITE_DIR=\"$WRITE_DIR\" AGENT_CONF=\"${AGENT_CONF:-}\" bench/dirty-cost.sh" \
  --argjson reps "$REPS" --argjson mib "$MIB" \
  --argjson seq "$(writer_json seq)" --argjson rand "$(writer_json rand4k)" \
  '{benchmark: "dirty-cost", command: $cmd, date: $date, commit: $commit, kernel: $kernel,
    loadavg: $load, sampler: $sampler, reps: $reps, mib: $mib,
    writers: {seq: ({bytes_mib: $mib} + $seq), rand4k: ({bytes_mib: ($mib / 4)} + $rand)}}' \
  >"$OUT_DIR/dirty-cost.json"
jq -r '.loadavg as $l | .writers | to_entries[] | "dirty-cost: \(.key) (\(.value.bytes_mib) MiB): median \(.value.median_us.with_agent) us with the agent, \(.value.median_us.without_agent) us without (\(.value.ratio * 1000 | round / 1000)x); blklat_dirty \(.value.program.calls) calls, \(.value.program.ns_per_call // "-" | tostring | .[0:6]) ns each, \(.value.program.share_of_median * 10000 | round / 100)% of the median run; load \($l)"' \
  "$OUT_DIR/dirty-cost.json"
