#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The paper-shaped mix on one disk (DISK=host|hdd|ssd|pass, bench/disk-lib.sh):
# eight fio containers, three sequential writers, three random writers, a
# sequential reader and a random reader (O_DIRECT, libaio, fixed work), all
# submitted at once through a private containerd, run as
#   all      all at once (io.containerd.runc.v2)
#   serial   one after another, in submission order (runc)
#   plan     a hand-made batch plan ordered by class: the sequential
#            writers together, then the random writers, then the readers
#            (runc; what an operator who knew the disk would do)
#   fresh    through io.containerd.iobatch.v2 with a fresh iobatchd (no
#            profile, no penalty learned), FRESH_RUNS runs in a row on the
#            same agent state: the learning curve
#   warm     the same agent after those runs, and after a warm-up in
#            which it saw each class once alone (SOLO_WARMUP=1, not
#            measured; 0: none): WARM_RUNS more.  In the mix a job runs
#            alone only in the tail of the last one, and a fresh agent
#            learns its co-runs from that tail's solo rate
#            (agent/sample/sampler.c); the warm-up is what a node gives it
#            whenever a job runs by itself.
# in each of REPEATS repetitions (a fresh agent each).  Job sizes come from
# a probe of each class alone on this disk (SOLO_S seconds of work each):
# the work is fitted to the disk, never the disk to the work.
#
# Writes OUT_DIR/summary.json (one object per disk, "DISK-qd1" for STYLE=qd1,
# kept across runs of the others): the medians all_s, serial_s, plan_s, iobatch_warm_s,
# iobatch_warm_vs_all, iobatch_fresh_runs_vs_all (run 1, 2, ...), held
# (containers held in the warm runs), and the date, commit and load
# average; OUT_DIR/KEY.json keeps every run, logs-KEY/ the agent logs and
# what it had learned at the end of each repetition (penalties, profiles).
#
# Usage: DISK=hdd bench/mix.sh
#   env: REPEATS=3 FRESH_RUNS=3 WARM_RUNS=3 SOLO_WARMUP=1 SOLO_S=3 DISK_SIZE=6G BENCH_SPAN=512M
#        MODES="all serial plan" (the baselines run before the agent's)
#        OUT_DIR=bench/results/simdisk B=build
#        IOB_AGENT_CONF="key = value; ..." (more iobatchd.conf lines)
#        IOB_AGENT_DEBUG=1 (the agent logs what each co-run taught)
set -euo pipefail
cd "$(dirname "$0")/.."
TOP=$PWD
REPEATS=${REPEATS:-3}
FRESH_RUNS=${FRESH_RUNS:-3}
WARM_RUNS=${WARM_RUNS:-3}
SOLO_WARMUP=${SOLO_WARMUP:-1}
MODES=${MODES-all serial plan}
SOLO_S=${SOLO_S:-3}
B=${B:-build}
OUT_DIR=${OUT_DIR:-bench/results/simdisk}
for t in fio ctr containerd jq; do
  command -v "$t" >/dev/null || { echo "mix: '$t' not found" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "mix: must run as root (containerd, runc, losetup)" >&2; exit 1; }
source tests/integration/lib/common.sh
trap 'exit 130' INT TERM
source bench/disk-lib.sh
source bench/sched/iobatch.sh
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)

# class -> fio arguments (size added per disk).  STYLE=deep (default):
# libaio at queue depth 8 (sequential, 1 MiB) and 32 (random, 4 KiB), as
# bench/sched.sh's classes; STYLE=qd1: one request at a time (psync),
# 128 KiB sequential and 4 KiB random, as a program that reads or writes a
# file in a loop does.  A drive that queues reorders deep queues stream by
# stream; one request at a time leaves it nothing to reorder.
STYLE=${STYLE:-deep}
case $STYLE in
deep)
  ENGINE="--ioengine=libaio"
  declare -A ARGS=(
    [seq-write]="--rw=write --bs=1M --iodepth=8"
    [rand-write]="--rw=randwrite --bs=4k --iodepth=32"
    [seq-read]="--rw=read --bs=1M --iodepth=8"
    [rand-read]="--rw=randread --bs=4k --iodepth=32"
  )
  ;;
qd1)
  ENGINE="--ioengine=psync"
  declare -A ARGS=(
    [seq-write]="--rw=write --bs=128k"
    [rand-write]="--rw=randwrite --bs=4k"
    [seq-read]="--rw=read --bs=128k"
    [rand-read]="--rw=randread --bs=4k"
  )
  ;;
*) echo "mix: STYLE='$STYLE': deep or qd1" >&2; exit 2 ;;
esac
CMDLINE=$(for v in DISK STYLE REPEATS FRESH_RUNS WARM_RUNS SOLO_WARMUP SOLO_S MODES; do printf '%s=%s ' "$v" "${!v:-}"; done)bench/mix.sh
CLASSES=(seq-write rand-write seq-read rand-read)
JOBS=(seq-write rand-write seq-write rand-write seq-write rand-write seq-read rand-read)
# the hand-made plan: batches of job indexes, one after another
PLAN=("0 2 4" "1 3 5" "6" "7")

bench_disk_up "${DISK_SIZE:-6G}"
SCR=$(mktemp -d "$SCRATCH_PARENT/iob-mix.XXXXXX")
at_exit "rm -rf '$SCR'"
echo "mix: disk $DISK_DESC, load average $LOAD0"

# ---- job sizes: each class alone for SOLO_S seconds on this disk ----------
declare -A MIB=()
for c in "${CLASSES[@]}"; do
  # shellcheck disable=SC2086
  MIB[$c]=$(bench_fit_mib "$SOLO_S" ${ARGS[$c]} --direct=1 $ENGINE)
  echo "mix: $c alone moves ${MIB[$c]} MiB in ${SOLO_S}s: its --size"
done
# Lay out one file per job (BENCH_SPAN each); writers overwrite in place,
# so every run does the same work and none pays for block allocation.
for i in "${!JOBS[@]}"; do
  fio --name=layout --filename="$SCR/job$i.dat" --rw=write --bs=1M --direct=1 \
    --ioengine=libaio --iodepth=8 --size="$BENCH_SPAN" >/dev/null
done
sync

iob_containerd_start "$(iobatch_containerd_toml)"
ROOTFS=$IOB_T/rootfs
iob_rootfs_busybox "$ROOTFS"
iob_rootfs_add_binary "$ROOTFS" "$(command -v fio)"
mkdir -p "$IOB_T/out"
RAW=$IOB_T/raw.jsonl
: >"$RAW"

# run_job ID INDEX RUNTIME: one fio container in the foreground
run_job() {
  local id=$1 i=$2 rt=$3 c=${JOBS[$2]} rc=0
  local -a extra=()
  [ "$rt" = io.containerd.runc.v2 ] ||
    extra=(--annotation "io.iobatch.class=$c" --annotation "io.iobatch.workload=mix-$c")
  # shellcheck disable=SC2086
  $CTR run --rm --null-io --runtime "$rt" "${extra[@]}" \
    --mount "type=bind,src=$SCR,dst=/data,options=rbind:rw" \
    --rootfs "$ROOTFS" "$id" \
    /usr/bin/fio --name="$c" --filename="/data/job$i.dat" --direct=1 $ENGINE \
    ${ARGS[$c]} --size="$BENCH_SPAN" --io_size="${MIB[$c]}M" >"$IOB_T/out/$id.log" 2>&1 || rc=$?
  [ "$rc" = 0 ] || { echo "mix: job $id ($c) failed (rc $rc):" >&2; tail -3 "$IOB_T/out/$id.log" >&2; }
  date +%s%N >"$IOB_T/out/$id.end"
  return "$rc"
}

# run_set RUNTIME PREFIX INDEX...: those jobs at once; returns when all ended
run_set() {
  local rt=$1 pre=$2 i rc=0
  shift 2
  local -a pids=()
  for i in "$@"; do
    run_job "$pre-$i" "$i" "$rt" &
    pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i" || rc=1; done
  return "$rc"
}

# run_mode REP MODE [RUN]: one run of the mix; appends a line to RAW
run_mode() {
  local rep=$1 mode=$2 run=${3:-0} pre t0 t1 rc=0 held=null b
  pre=r$rep-$mode$run
  local -a all=("${!JOBS[@]}")
  t0=$(date +%s%N)
  case $mode in
  all) run_set io.containerd.runc.v2 "$pre" "${all[@]}" || rc=1 ;;
  serial) for b in "${all[@]}"; do run_set io.containerd.runc.v2 "$pre" "$b" || rc=1; done ;;
  plan)
    for b in "${PLAN[@]}"; do
      # shellcheck disable=SC2086
      run_set io.containerd.runc.v2 "$pre" $b || rc=1
    done
    ;;
  fresh | warm) run_set io.containerd.iobatch.v2 "$pre" "${all[@]}" || rc=1 ;;
  esac
  t1=$(date +%s%N)
  # each job's turnaround, submit of the mix to its end (s), in job order
  local ends
  ends=$(for b in "${all[@]}"; do cat "$IOB_T/out/$pre-$b.end"; done |
    awk -v a="$t0" '{ printf "%s%.3f", (NR > 1 ? "," : ""), ($1 - a) / 1e9 }')
  if [ "$mode" = fresh ] || [ "$mode" = warm ]; then
    # the agent's own account: "admitted 'ID' (CLASS) after N ms: REASON"
    held=$(grep -o "admitted '$pre-[0-9]*' ([^)]*) after [0-9]* ms" "$IOB_AGENT_DIR/agent.log" |
      awk '{ ms = $(NF - 1) } ms >= 500 { n++ } END { print n + 0 }')
  fi
  jq -nc --argjson rep "$rep" --arg mode "$mode" --argjson run "$run" --argjson rc "$rc" \
    --argjson s "$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')" \
    --argjson held "$held" --argjson ends "[$ends]" \
    '{rep: $rep, mode: $mode, run: $run, rc: $rc, makespan_s: $s, held: $held, job_end_s: $ends}' >>"$RAW"
  echo "mix: rep $rep $mode${run/#0/}: $(tail -1 "$RAW" | jq -r '"\(.makespan_s) s, held \(.held)"')"
  sync
  sleep "${SETTLE_SECONDS:-2}"
}

START=$(date -u +%FT%TZ)
# the summary's key: the disk, with the style when it is not the default
KEY=$DISK
[ "$STYLE" = deep ] || KEY=$DISK-$STYLE
for rep in $(seq 1 "$REPEATS"); do
  for m in $MODES; do run_mode "$rep" "$m"; done
  # a fresh agent: its own empty state directory each repetition
  rm -rf "$IOB_T/agent-iobatch"
  iobatch_agent_start iobatch || { echo "mix: iobatchd did not start" >&2; exit 1; }
  for r in $(seq 1 "$FRESH_RUNS"); do run_mode "$rep" fresh "$r"; done
  if [ "$SOLO_WARMUP" = 1 ]; then
    for c in "${CLASSES[@]}"; do
      for i in "${!JOBS[@]}"; do [ "${JOBS[$i]}" != "$c" ] || break; done
      run_job "r$rep-solo-$c" "$i" io.containerd.iobatch.v2 || true
    done
  fi
  for r in $(seq 1 "$WARM_RUNS"); do run_mode "$rep" warm "$r"; done
  cp "$IOB_AGENT_DIR/agent.log" "$IOB_T/out/agent-rep$rep.log"
  cp "$IOB_AGENT_DIR/state/penalties.json" "$IOB_T/out/penalties-rep$rep.json" 2>/dev/null || true
  cp "$IOB_AGENT_DIR/state/profiles.json" "$IOB_T/out/profiles-rep$rep.json" 2>/dev/null || true
  iobatch_agent_stop
done

mkdir -p "$OUT_DIR"
mkdir -p "$OUT_DIR/logs-$KEY"
cp "$IOB_T"/out/agent-rep*.log "$IOB_T"/out/penalties-rep*.json "$IOB_T"/out/profiles-rep*.json \
  "$OUT_DIR/logs-$KEY/" 2>/dev/null || true
sizes=$(for c in "${CLASSES[@]}"; do jq -nc --arg c "$c" --argjson m "${MIB[$c]}" '{($c): $m}'; done | jq -sc add)
jq -s --arg disk "$DISK" --arg desc "$DISK_DESC" --arg date "$START" --arg style "$STYLE" \
  --arg commit "$(git log -1 --format=%h)" --arg load0 "$LOAD0" \
  --arg load1 "$(cut -d' ' -f1-3 /proc/loadavg)" --argjson sizes "$sizes" \
  --argjson fresh_runs "$FRESH_RUNS" --argjson warm_runs "$WARM_RUNS" --arg solo_warmup "$SOLO_WARMUP" --arg cmd "$CMDLINE" \
  --arg jobs "${JOBS[*]}" '
  def med: sort | if length == 0 then null
    elif length % 2 == 1 then .[length / 2 | floor]
    else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  def r3: if . == null then null else (. * 1000 | round) / 1000 end;
  def ratio($d): if . == null or $d == null or $d == 0 then null else . / $d | r3 end;
  . as $runs
  | ([$runs[] | select(.mode == "all") | .makespan_s] | med) as $all
  | {disk: $disk, style: $style, device: $desc, date: $date, commit: $commit,
     command: $cmd, load_average_start: $load0, load_average_end: $load1,
     jobs: ($jobs | split(" ")), size_mib: $sizes, repeats: ([$runs[].rep] | max),
     all_s: ($all | r3),
     serial_s: ([$runs[] | select(.mode == "serial") | .makespan_s] | med | r3),
     plan_s: ([$runs[] | select(.mode == "plan") | .makespan_s] | med | r3),
     iobatch_warm_s: ([$runs[] | select(.mode == "warm" and .run == $warm_runs) | .makespan_s] | med | r3),
     iobatch_warm_vs_all: ([$runs[] | select(.mode == "warm" and .run == $warm_runs) | .makespan_s] | med | ratio($all)),
     iobatch_fresh_runs_vs_all: [range(1; $fresh_runs + 1) as $k
       | [$runs[] | select(.mode == "fresh" and .run == $k) | .makespan_s] | med | ratio($all)],
     iobatch_warm_runs_vs_all: [range(1; $warm_runs + 1) as $k
       | [$runs[] | select(.mode == "warm" and .run == $k) | .makespan_s] | med | ratio($all)],
     solo_warmup: ($solo_warmup == "1"),
     held: ([$runs[] | select(.mode == "warm" and .run == $warm_runs) | .held] | med),
     failed_runs: ([$runs[] | select(.rc != 0)] | length),
     runs: $runs}' "$RAW" >"$OUT_DIR/$KEY.json"
summary=$OUT_DIR/summary.json
[ -s "$summary" ] || echo '{}' >"$summary"
jq --arg d "$KEY" --slurpfile r "$OUT_DIR/$KEY.json" '.[$d] = ($r[0] | del(.runs))' "$summary" >"$summary.tmp"
mv "$summary.tmp" "$summary"
jq -c --arg d "$KEY" '.[$d] | del(.size_mib, .jobs)' "$summary"
