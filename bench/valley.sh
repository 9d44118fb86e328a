#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The throughput valley (the paper's rule for read-heavy containers):
# buffered random readers (fio, no O_DIRECT) in containers that share one
# memory limit, set on a parent memory cgroup that every reader's cgroup sits
# under (ctr --cgroup PARENT/ID).  Each reader has its own file of
# LIMIT_MIB/3 and reads it PASSES times over in random order, so alone (or
# a few together) the file stays in the page cache after the first pass;
# once the readers' combined working set passes the limit the cache thrashes
# and every pass goes to the disk.  READERS (default 2 3 4) sweeps the
# combined working set across the limit (2/3, 3/3, 4/3 of it).
#
# Modes per reader count, interleaved within each repeat:
#   all      every reader at once (runc shim)
#   serial   one after another (runc shim)
#   iobatch  all submitted at once through io.containerd.iobatch.v2 with
#            iobatchd on its default config (readers declare rand-read)
# Metrics: makespan (submit -> last exit), throughput = bytes read by all
# readers / makespan, the parent's peak memory usage and its limit-hit
# count (v1 memory.failcnt).  Medians over REPEATS.
#
# The memory limit: the v1 memory controller when it is mounted (this
# hybrid host: /sys/fs/cgroup/memory), else cgroup v2 with the memory
# controller (memory.max); without either the benchmark says so and stops.
#
# Writes OUT_DIR/valley.json and valley.md.
# Usage: bench/valley.sh
#   env: REPEATS=2 LIMIT_MIB=768 READERS="2 3 4" PASSES=4 BS=16k
#        MODES="all serial iobatch" SCRATCH_PARENT=/var/tmp OUT_DIR=bench/results B=build
set -euo pipefail
cd "$(dirname "$0")/.."
TOP=$PWD
CMDLINE=$(for v in REPEATS LIMIT_MIB READERS PASSES BS MODES; do
  [ -z "${!v:-}" ] || printf '%s="%s" ' "$v" "${!v}"
done)"bench/valley.sh $*"
REPEATS=${REPEATS:-2}
LIMIT_MIB=${LIMIT_MIB:-768}
READERS=${READERS:-"2 3 4"}
PASSES=${PASSES:-4}
BS=${BS:-16k}
MODES=${MODES:-"all serial iobatch"}
B=${B:-build}
OUT_DIR=${OUT_DIR:-bench/results}
SCRATCH_PARENT=${SCRATCH_PARENT:-/var/tmp}
FILE_MIB=$((LIMIT_MIB / 3))
for t in fio ctr containerd jq; do
  command -v "$t" >/dev/null || { echo "valley: '$t' not found" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "valley: must run as root" >&2; exit 1; }

source tests/integration/lib/common.sh
trap 'exit 130' INT TERM
source bench/sched/iobatch.sh
source bench/disk-lib.sh
bench_disk_up 12G

mkdir -p "$OUT_DIR"
START=$(date -u +%FT%TZ)
not_possible() { # REASON: write it as the result and stop
  echo "valley: cannot run on this host: $1" >&2
  jq -n --arg cmd "$CMDLINE" --arg date "$START" --arg why "$1" \
    '{benchmark: "valley", command: $cmd, date: $date, not_run: $why}' >"$OUT_DIR/valley.json"
  printf '# Throughput valley\n\nNot run on this host (%s): %s\n' "$START" "$1" >"$OUT_DIR/valley.md"
  exit 0
}

# ---- the parent memory cgroup -------------------------------------------
PARENT=iobvalley-$$
if grep -qs ' /sys/fs/cgroup/memory cgroup .*memory' /proc/mounts; then
  MEMCG=v1
  MEMDIR=/sys/fs/cgroup/memory/$PARENT
  mkdir "$MEMDIR" || not_possible "cannot create $MEMDIR"
  echo $((LIMIT_MIB * 1048576)) >"$MEMDIR/memory.limit_in_bytes" || not_possible "cannot set memory.limit_in_bytes on the v1 memory controller"
  mem_peak() { cat "$MEMDIR/memory.max_usage_in_bytes"; }
  mem_hits() { cat "$MEMDIR/memory.failcnt"; }
  mem_reset() {
    echo 0 >"$MEMDIR/memory.force_empty" 2>/dev/null || true
    echo 0 >"$MEMDIR/memory.max_usage_in_bytes" 2>/dev/null || true
    echo 0 >"$MEMDIR/memory.failcnt" 2>/dev/null || true
  }
elif [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
  MEMCG=v2
  MEMDIR=/sys/fs/cgroup/$PARENT
  mkdir "$MEMDIR" || not_possible "cannot create $MEMDIR"
  echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
  echo $((LIMIT_MIB * 1048576)) >"$MEMDIR/memory.max" || not_possible "cannot set memory.max"
  echo +memory >"$MEMDIR/cgroup.subtree_control" 2>/dev/null || true
  mem_peak() { cat "$MEMDIR/memory.peak" 2>/dev/null || echo 0; }
  mem_hits() { awk '$1 == "max" { print $2 }' "$MEMDIR/memory.events"; }
  mem_reset() { echo 0 >"$MEMDIR/memory.reclaim" 2>/dev/null || true; }
else
  not_possible "no memory controller: neither /sys/fs/cgroup/memory (v1) nor memory in the cgroup v2 root's cgroup.controllers"
fi
at_exit "rmdir '$MEMDIR'; iob_cgroup_rmdir_empty '$PARENT'" # ctr --cgroup made it in every hierarchy

mkdir -p "$SCRATCH_PARENT"
case $(stat -f -c %T "$SCRATCH_PARENT") in tmpfs | ramfs) not_possible "'$SCRATCH_PARENT' is on tmpfs" ;; esac
SCR=$(mktemp -d "$SCRATCH_PARENT/iob-valley.XXXXXX")
at_exit "rm -rf '$SCR'"
MAXN=$(tr ' ' '\n' <<<"$READERS" | sort -n | tail -1)
DISK_SRC=$(df --output=source "$SCR" | tail -1)
echo "valley: $MEMCG memory limit ${LIMIT_MIB} MiB on $MEMDIR; $MAXN files of ${FILE_MIB} MiB in $SCR on $DISK_SRC ($DISK_DESC); load $(cut -d' ' -f1-3 /proc/loadavg)"

iob_containerd_start "$(iobatch_containerd_toml)"
ROOTFS=$IOB_T/rootfs
iob_rootfs_busybox "$ROOTFS"
iob_rootfs_add_binary "$ROOTFS" "$(command -v fio)"
OUT=$IOB_T/out
mkdir -p "$OUT"
RAW=$IOB_T/raw.jsonl
: >"$RAW"
for k in $(seq 1 "$MAXN"); do
  fio --name=layout --filename="$SCR/r$k.dat" --rw=write --bs=1M --direct=1 --ioengine=libaio \
    --iodepth=8 --size="${FILE_MIB}M" >/dev/null
done
sync

# a quick check that the limit holds a container under the parent: reading
# every file once (MAXN x limit/3) charges the page cache to the parent,
# whose peak must stay at the limit
check_limit() {
  mem_reset
  $CTR run --rm --null-io --cgroup "/$PARENT/check" \
    --mount "type=bind,src=$SCR,dst=/data,options=rbind:ro" --rootfs "$ROOTFS" valley-check \
    /bin/sh -c 'cat /data/r*.dat >/dev/null' >/dev/null 2>&1 || return 1
  local peak
  peak=$(mem_peak)
  echo "valley: check: reading $((MAXN * FILE_MIB)) MiB in a container under the parent peaked it at $((peak / 1048576)) MiB (limit ${LIMIT_MIB} MiB, hit $(mem_hits) times)"
  [ "$peak" -gt 0 ] && [ "$peak" -le $(((LIMIT_MIB + 8) * 1048576)) ]
}
check_limit || not_possible "the $MEMCG memory limit on $MEMDIR was not applied to a container under it (ctr --cgroup /$PARENT/ID)"

run_reader() { # ID K RUNTIME
  local id=$1 k=$2 rt=$3 rc=0
  local -a extra=()
  [ "$rt" = io.containerd.runc.v2 ] ||
    extra=(--annotation io.iobatch.class=rand-read --annotation io.iobatch.workload=bench-valley-reader)
  $CTR run --rm --null-io --runtime "$rt" "${extra[@]}" --cgroup "/$PARENT/$id" \
    --mount "type=bind,src=$SCR,dst=/data,options=rbind:ro" \
    --mount "type=bind,src=$OUT,dst=/out,options=rbind:rw" --rootfs "$ROOTFS" "$id" \
    /usr/bin/fio --name=reader --filename="/data/r$k.dat" --rw=randread --bs="$BS" \
    --ioengine=psync --direct=0 --invalidate=1 --size="${FILE_MIB}M" \
    --io_size=$((FILE_MIB * PASSES))M --output-format=json --output="/out/$id.json" \
    >"$OUT/$id.log" 2>&1 || rc=$?
  echo "$(date +%s%N) $rc" >"$OUT/$id.end"
}

run_set() { # REP N MODE
  local rep=$1 n=$2 mode=$3 rt=io.containerd.runc.v2 t0 k
  local -a pids=()
  [ "$mode" != iobatch ] || rt=io.containerd.iobatch.v2
  mem_reset
  sync
  t0=$(date +%s%N)
  if [ "$mode" = serial ]; then
    for k in $(seq 1 "$n"); do run_reader "v$rep-$n-$mode-$k" "$k" "$rt"; done
  else
    for k in $(seq 1 "$n"); do
      run_reader "v$rep-$n-$mode-$k" "$k" "$rt" &
      pids+=($!)
    done
    for k in "${pids[@]}"; do wait "$k" || true; done
  fi
  local peak hits jobs
  peak=$(mem_peak)
  hits=$(mem_hits)
  jobs=$(for k in $(seq 1 "$n"); do
    id=v$rep-$n-$mode-$k
    read -r end rc <"$OUT/$id.end"
    bw=null
    if [ "$rc" = 0 ]; then bw=$(jq '.jobs[0].read.bw' "$OUT/$id.json" 2>/dev/null || echo null); else
      echo "valley: $id failed: $(tail -2 "$OUT/$id.log" | tr '\n' ' ')" >&2; fi
    jq -nc --argjson e "$end" --argjson rc "$rc" --argjson bw "${bw:-null}" '{end_ns: $e, rc: $rc, bw_kib: $bw}'
  done | jq -sc .)
  jq -nc --argjson rep "$rep" --argjson n "$n" --arg mode "$mode" --argjson t0 "$t0" \
    --argjson jobs "$jobs" --argjson peak "$peak" --argjson hits "${hits:-0}" \
    --argjson mib "$((FILE_MIB * PASSES))" --arg load "$(cut -d' ' -f1 /proc/loadavg)" \
    '{rep: $rep, readers: $n, mode: $mode, failed: ($jobs | map(select(.rc != 0)) | length),
      makespan_s: ((($jobs | map(.end_ns) | max) - $t0) / 1e9),
      peak_mib: ($peak / 1048576 | floor), limit_hits: $hits, load: ($load | tonumber), jobs: $jobs}
     | . + {mib_s: ($n * $mib / .makespan_s)}' >>"$RAW"
  tail -1 "$RAW" | jq -r '"valley: rep \(.rep) \(.readers) readers \(.mode): \(.makespan_s * 100 | round / 100) s, \(.mib_s * 10 | round / 10) MiB/s, peak \(.peak_mib) MiB, limit hit \(.limit_hits) times, load \(.load)"'
  sleep "${SETTLE_SECONDS:-1}"
}

declare -A MODE_STATUS=()
RUN_MODES=()
for mode in $MODES; do
  case $mode in
  all | serial) MODE_STATUS[$mode]=run; RUN_MODES+=("$mode") ;;
  iobatch)
    if why=$(iobatch_unavailable iobatch); then MODE_STATUS[$mode]="not run: $why"; else
      MODE_STATUS[$mode]=run; RUN_MODES+=("$mode"); fi ;;
  *) echo "valley: unknown mode '$mode'" >&2; exit 2 ;;
  esac
done
T_START=$(date +%s)
for rep in $(seq 1 "$REPEATS"); do
  for n in $READERS; do
    for mode in "${RUN_MODES[@]}"; do
      if [ "$mode" = iobatch ]; then
        iobatch_agent_start iobatch || { echo "valley: iobatchd did not start" >&2; continue; }
        run_set "$rep" "$n" "$mode"
        iobatch_agent_stop
      else
        run_set "$rep" "$n" "$mode"
      fi
    done
  done
done
ELAPSED=$(($(date +%s) - T_START))

status_json=$(for m in $MODES; do jq -nc --arg m "$m" --arg s "${MODE_STATUS[$m]}" '{($m): $s}'; done | jq -sc 'add')
jq -s --arg cmd "$CMDLINE" --arg date "$START" --arg host "$(hostname)" --arg kernel "$(uname -r)" \
  --arg disk "$DISK_SRC ($DISK_DESC)" --arg memcg "$MEMCG" --argjson limit "$LIMIT_MIB" --argjson file "$FILE_MIB" \
  --argjson passes "$PASSES" --arg bs "$BS" --argjson repeats "$REPEATS" --argjson elapsed "$ELAPSED" \
  --argjson status "$status_json" '
  def median: map(select(. != null)) | sort | if length == 0 then null
    elif length % 2 == 1 then .[(length - 1) / 2] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  def r2: if . == null then null else (. * 100 | round) / 100 end;
  . as $raw
  | {benchmark: "valley", command: $cmd, date: $date, host: $host, kernel: $kernel, disk: $disk,
     memcg: $memcg, limit_mib: $limit, file_mib: $file, passes: $passes, bs: $bs, repeats: $repeats,
     elapsed_s: $elapsed, modes: $status,
     load_avg_median: ($raw | map(.load) | median | r2),
     definitions: {
       reader: "fio randread, buffered (direct=0, psync), its own file of limit/3, read passes x over; every reader in a container whose cgroup is under one parent with the memory limit",
       throughput_mib_s: "readers x file x passes / makespan",
       makespan_s: "submit -> last reader exited", aggregation: "medians over repeats"},
     results: [$raw | group_by(.readers)[] | .[0].readers as $n | {readers: $n,
       working_set_vs_limit: ($n * $file / $limit | r2),
       modes: (group_by(.mode) | map({key: .[0].mode, value: {
         throughput_mib_s: (map(select(.failed == 0) | .mib_s) | median | r2),
         makespan_s: (map(select(.failed == 0) | .makespan_s) | median | r2),
         peak_mib: (map(.peak_mib) | median), limit_hits: (map(.limit_hits) | median),
         failed_repeats: (map(select(.failed > 0)) | length)}}) | from_entries)}],
     raw: $raw}
  | .results |= map(. + {all_vs_serial: (if .modes.all.throughput_mib_s and .modes.serial.throughput_mib_s then (.modes.all.throughput_mib_s / .modes.serial.throughput_mib_s | r2) else null end),
                         iobatch_vs_all: (if .modes.iobatch.throughput_mib_s and .modes.all.throughput_mib_s then (.modes.iobatch.throughput_mib_s / .modes.all.throughput_mib_s | r2) else null end)})
  ' "$RAW" >"$OUT_DIR/valley.json"
jq -r '
  def f: if . == null then "–" else tostring end;
  "# Throughput valley (`\(.command)`)\n",
  "\(.date), \(.host), \(.disk); \(.memcg) memory limit \(.limit_mib) MiB on a parent cgroup of every reader; each reader: buffered fio randread bs \(.bs), psync, its own \(.file_mib) MiB file read \(.passes)x over; median of \(.repeats); load average \(.load_avg_median) on 2 cores.\n",
  "| readers | working set / limit | all at once MiB/s | serial MiB/s | iobatch MiB/s | all / serial | iobatch / all | peak MiB (all) | limit hits (all) |",
  "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  (.results[] | "| \(.readers) | \(.working_set_vs_limit) | \(.modes.all.throughput_mib_s | f) | \(.modes.serial.throughput_mib_s | f) | \(.modes.iobatch.throughput_mib_s | f) | \(.all_vs_serial | f) | \(.iobatch_vs_all | f) | \(.modes.all.peak_mib | f) | \(.modes.all.limit_hits | f) |"),
  "",
  (.modes | to_entries[] | select(.value != "run") | "- \(.key): \(.value)"),
  "Makespans (s): " + ([.results[] | "\(.readers) readers: " + ([.modes | to_entries[] | "\(.key) \(.value.makespan_s | f)"] | join(", "))] | join("; ")) + "."
' "$OUT_DIR/valley.json" >"$OUT_DIR/valley.md"
cat "$OUT_DIR/valley.md"
echo "valley: wrote $OUT_DIR/valley.json, valley.md in ${ELAPSED}s"
