#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Does holding pay for any pair on this disk?  For each pair of fio jobs
# (fixed work on both sides, not time-based): A alone, B alone, then A and B
# started together; the ratio co-run makespan / (solo A + solo B) is what
# serialising the pair would save (< 1: co-running wins, as all-at-once
# does; > 1: running them one after the other finishes sooner, so holding
# pays).  Direct fio on the host, no containers: this isolates the disk
# (and the CPU fio itself needs) from container start costs.  Repeats are
# interleaved; medians of same-repeat ratios.
#
# DISK=hdd|ssd|pass runs it on an emulated disk (bench/disk-lib.sh) and
# sizes each job to FIT_S (3) seconds alone there, on a file of BENCH_SPAN.
#
# Usage: bench/pairs.sh            env: REPEATS=3 PAIRS="name ..." (default all)
#        DISK=host SCRATCH_PARENT=/var/tmp
#        OUT_DIR=bench/results (writes pairs.{json,md}; pairs-DISK.* off host)
set -euo pipefail
cd "$(dirname "$0")/.."
TOP=$PWD
REPEATS=${REPEATS:-3}
OUT_DIR=${OUT_DIR:-bench/results}
command -v fio >/dev/null || { echo "pairs: fio not found" >&2; exit 1; }
command -v jq >/dev/null || { echo "pairs: jq not found" >&2; exit 1; }
source tests/integration/lib/common.sh # at_exit, IOB_T
trap 'exit 130' INT TERM
source bench/disk-lib.sh
bench_disk_up 8G
OUT=pairs
[ "$DISK" = host ] || OUT=pairs-$DISK

# job name -> fio arguments (each a fixed amount of work, ~2-5 s alone here)
declare -A JOB=(
  [seq-write]="--rw=write --bs=1M --iodepth=8 --direct=1 --ioengine=libaio --size=3072M"
  [rand-write]="--rw=randwrite --bs=4k --iodepth=32 --direct=1 --ioengine=libaio --size=384M"
  [seq-read]="--rw=read --bs=1M --iodepth=8 --direct=1 --ioengine=libaio --size=3072M"
  [rand-read]="--rw=randread --bs=4k --iodepth=32 --direct=1 --ioengine=libaio --size=480M"
  # page-cache writer: dirties memory fast, then writeback (and the final
  # fsync) compete for the disk
  [buf-seq-write]="--rw=write --bs=1M --ioengine=psync --direct=0 --end_fsync=1 --size=3072M"
  # small synchronous writer: one 4 KiB O_DIRECT write + fsync at a time
  # (a database log): latency-bound, so queueing behind big I/O hurts it
  [sync-rand-write]="--rw=randwrite --bs=4k --ioengine=psync --direct=1 --fsync=1 --size=24M"
  # single-stream random reader (iodepth 1): latency-bound too
  [qd1-rand-read]="--rw=randread --bs=4k --ioengine=psync --direct=1 --size=64M"
)
# pair name -> "A B"
PAIR_NAMES=(sw+sw sw+rw rw+rw sr+rw sr+sw bsw+srw sw+srw sr+qd1 bsw+qd1 bsw+bsw)
declare -A PAIR=(
  [sw+sw]="seq-write seq-write"
  [sw+rw]="seq-write rand-write"
  [rw+rw]="rand-write rand-write"
  [sr+rw]="seq-read rand-write"
  [sr+sw]="seq-read seq-write"
  [bsw+srw]="buf-seq-write sync-rand-write"
  [sw+srw]="seq-write sync-rand-write"
  [sr+qd1]="seq-read qd1-rand-read"
  [bsw+qd1]="buf-seq-write qd1-rand-read"
  [bsw+bsw]="buf-seq-write buf-seq-write"
)
read -r -a PAIRS <<<"${PAIRS:-${PAIR_NAMES[*]}}"
for p in "${PAIRS[@]}"; do
  [ -n "${PAIR[$p]:-}" ] || { echo "pairs: unknown pair '$p' (known: ${PAIR_NAMES[*]})" >&2; exit 2; }
done

SCR=$(mktemp -d "$SCRATCH_PARENT/iob-pairs.XXXXXX")
at_exit "rm -rf '$SCR'"
RAW=$SCR/raw.jsonl
# Off the host disk: each job's work fitted to the disk (--size=SPAN
# --io_size=what it moves alone in FIT_S seconds).
if [ "$DISK" != host ]; then
  for j in "${!JOB[@]}"; do
    a=${JOB[$j]/--size=*M/}
    # a buffered writer's pace is its writeback's: fitted as a direct one
    fit=${a/--direct=0/--direct=1 --iodepth=8}
    fit=${fit/--ioengine=psync --direct=1 --iodepth=8/--ioengine=libaio --direct=1 --iodepth=8}
    fit=${fit/--end_fsync=1/}
    read -r -a fit_args <<<"$fit"
    m=$(bench_fit_mib "${FIT_S:-3}" "${fit_args[@]}")
    JOB[$j]="$a --size=$BENCH_SPAN --io_size=${m}M"
    echo "pairs: $j: ${JOB[$j]}"
  done
fi
: >"$RAW"

# run_fio NAME FILE OUT: one job in the foreground, fio's JSON to OUT
run_fio() {
  # shellcheck disable=SC2086
  fio --name="$1" --filename="$2" ${JOB[$1]} --output-format=json --output="$3" >/dev/null
}
# lay every file out once so that writers overwrite in place
for j in "${!JOB[@]}"; do
  for k in 1 2; do
    sz=$(grep -o -- '--size=[0-9]*[MG]' <<<"${JOB[$j]}" | cut -d= -f2)
    fio --name=layout --filename="$SCR/$j-$k.dat" --rw=write --bs=1M --direct=1 \
      --ioengine=libaio --iodepth=8 --size="$sz" >/dev/null
  done
done
sync

now_ms() { echo $(($(date +%s%N) / 1000000)); }
for rep in $(seq 1 "$REPEATS"); do
  for p in "${PAIRS[@]}"; do
    read -r a b <<<"${PAIR[$p]}"
    sync; sleep 1
    t=$(now_ms); run_fio "$a" "$SCR/$a-1.dat" "$SCR/solo-a.json"; sa=$(($(now_ms) - t))
    sync; sleep 1
    t=$(now_ms); run_fio "$b" "$SCR/$b-2.dat" "$SCR/solo-b.json"; sb=$(($(now_ms) - t))
    sync; sleep 1
    t=$(now_ms)
    run_fio "$a" "$SCR/$a-1.dat" "$SCR/co-a.json" & pa=$!
    run_fio "$b" "$SCR/$b-2.dat" "$SCR/co-b.json" & pb=$!
    wait "$pa"; ea=$(($(now_ms) - t))
    wait "$pb"; eb=$(($(now_ms) - t))
    co=$((ea > eb ? ea : eb))
    # fio's own CPU use (usr + sys, % of one CPU) alone and together
    cpu() { jq '.jobs[0].usr_cpu + .jobs[0].sys_cpu' "$1"; }
    jq -nc --argjson ca "$(cpu "$SCR/solo-a.json")" --argjson cb "$(cpu "$SCR/solo-b.json")" \
      --argjson cca "$(cpu "$SCR/co-a.json")" --argjson ccb "$(cpu "$SCR/co-b.json")" \
      '{cpu_solo_a: $ca, cpu_solo_b: $cb, cpu_co_a: $cca, cpu_co_b: $ccb}' >"$SCR/cpu.json"
    jq -nc --slurpfile cpu "$SCR/cpu.json" --argjson rep "$rep" --arg pair "$p" --arg a "$a" --arg b "$b" \
      --argjson sa "$sa" --argjson sb "$sb" --argjson ea "$ea" --argjson eb "$eb" --argjson co "$co" \
      '{rep: $rep, pair: $pair, a: $a, b: $b, solo_a_ms: $sa, solo_b_ms: $sb,
        co_a_ms: $ea, co_b_ms: $eb, co_ms: $co, ratio: ($co / ($sa + $sb)),
        slow_a: ($ea / $sa), slow_b: ($eb / $sb)} + $cpu[0]' | tee -a "$RAW"
  done
done

mkdir -p "$OUT_DIR"
jq -s --arg date "$(date -u +%FT%TZ)" --arg host "$(hostname)" --arg kernel "$(uname -r)" \
  --arg disk "$DISK_DESC" --arg load "$(cut -d' ' -f1-3 /proc/loadavg)" \
  --argjson repeats "$REPEATS" --argjson jobs "$(for j in "${!JOB[@]}"; do jq -nc --arg j "$j" --arg a "${JOB[$j]}" '{($j): $a}'; done | jq -sc add)" '
  def median: sort | if length == 0 then null elif length % 2 == 1 then .[length / 2 | floor]
    else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  {date: $date, host: $host, kernel: $kernel, disk: $disk, load_average: $load,
   repeats: $repeats, jobs: $jobs, raw: .,
   pairs: (group_by(.pair) | map({pair: .[0].pair, a: .[0].a, b: .[0].b,
     solo_a_s: (map(.solo_a_ms) | median / 1000), solo_b_s: (map(.solo_b_ms) | median / 1000),
     co_s: (map(.co_ms) | median / 1000), ratio: (map(.ratio) | median),
     slow_a: (map(.slow_a) | median), slow_b: (map(.slow_b) | median),
     cpu_solo_a: (map(.cpu_solo_a) | median), cpu_solo_b: (map(.cpu_solo_b) | median)}))}' "$RAW" >"$OUT_DIR/$OUT.json"
{
  echo "# Pair probe: does serialising a pair pay on this disk? (\`bench/pairs.sh\`)"
  echo
  jq -r '"Run \(.date) on \(.host), kernel \(.kernel), disk \(.disk), load average \(.load_average), median of \(.repeats) repeats. ratio = co-run makespan / (solo A + solo B): < 1 co-running is faster, > 1 holding one of them (running them one after the other) is faster."' "$OUT_DIR/$OUT.json"
  echo
  echo "| pair | A | B | solo A s | solo B s | together s | ratio | A slowed | B slowed | fio CPU % alone A / B |"
  echo "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"
  jq -r '.pairs[] | "| \(.pair) | \(.a) | \(.b) | \(.solo_a_s) | \(.solo_b_s) | \(.co_s) | \(.ratio * 100 | round / 100) | \(.slow_a * 100 | round / 100) | \(.slow_b * 100 | round / 100) | \(.cpu_solo_a | round) / \(.cpu_solo_b | round) |"' "$OUT_DIR/$OUT.json"
  echo
  echo "Jobs (fio arguments):"
  echo
  jq -r '.jobs | to_entries[] | "- \(.key): `\(.value)`"' "$OUT_DIR/$OUT.json"
} >"$OUT_DIR/$OUT.md"
echo "pairs: wrote $OUT_DIR/$OUT.json and $OUT.md"
