#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Scheduling quality (issue 7, section 2): real fio containers on the host
# disk through a private containerd, each job mix run
#   all     all at once with the runc shim (io.containerd.runc.v2)
#   serial  one after another with the runc shim, in the mix's order
#   iobatch through containerd-shim-iobatch-v2 + iobatchd, default policy
#   paper   the same with `policy = paper`
#   calibrated  (only when asked for in MODES) the default policy with the
#           matrix measured by bench/calibrate.sh, its sequential pairs
#           included (`seq_pairs = matrix`)
# plus every job class alone (solo) for the slowdowns.  Modes are interleaved
# within each repeat so that drift hits them alike.
#
# Per mix and mode: makespan (submit of the mix -> last container exited),
# each job's slowdown = its turnaround (submit -> its container exited,
# waiting included) / the same job's solo turnaround, the worst slowdown,
# Jain's fairness index over the normalised throughputs solo/turnaround, and
# the slowdown of the fio run alone (waiting excluded).  Medians over REPEATS.
#
# Writes bench/results/sched.json, sched.md and sched.png (gnuplot).
# Usage: bench/sched.sh
#   env: REPEATS=3 SCALE=1 (job sizes) MIXES="hetero-writers ..."
#        MODES="all serial iobatch paper" SCRATCH_PARENT=/var/tmp B=build
#        DISK=host|hdd|ssd|pass (bench/disk-lib.sh: off the host, an emulated
#        disk, and each class's work fitted to JOB_S (5) seconds alone there,
#        times SCALE, on a file of BENCH_SPAN)
#        OUT_DIR=bench/results WARMUP=1 (iobatch learns solo profiles first)
#        IOB_MATRIX=FILE (the agent's `matrix`, e.g. a calibrated one)
#        AGENT_LOG_DIR=DIR (keep the agent logs of the iobatch modes)
#        IOB_AGENT_SOCK (default: private, passed to the shim as
#        IOBATCH_AGENT_SOCKET through containerd's environment)
set -euo pipefail
cd "$(dirname "$0")/.."
TOP=$PWD
# the command as run, with the settings that change what is measured
CMDLINE=$(for v in REPEATS SCALE MIXES MODES WARMUP IOB_MATRIX IOB_CAL_MATRIX; do
  [ -z "${!v:-}" ] || printf '%s="%s" ' "$v" "${!v}"
done)"bench/sched.sh $*"
REPEATS=${REPEATS:-3}
B=${B:-build}
OUT_DIR=${OUT_DIR:-bench/results}
SCRATCH_PARENT=${SCRATCH_PARENT:-/var/tmp}
MODES=${MODES:-"all serial iobatch paper"}
source bench/sched/jobs.sh
read -r -a MIXES <<<"${MIXES:-${MIXES_ALL[*]}}"
for m in "${MIXES[@]}"; do
  [ -n "${MIX_JOBS[$m]:-}" ] || { echo "sched: unknown mix '$m' (known: ${MIXES_ALL[*]})" >&2; exit 2; }
done
for t in fio ctr containerd jq; do
  command -v "$t" >/dev/null || { echo "sched: '$t' not found" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "sched: must run as root (containerd, runc)" >&2; exit 1; }

source tests/integration/lib/common.sh # EXIT trap runs every at_exit in reverse
trap 'exit 130' INT TERM
source bench/sched/iobatch.sh
source bench/disk-lib.sh
bench_disk_up 12G
bench_size_jobs "${JOB_S:-5}"

# ---- scratch dir on the host disk (not tmpfs), enough free space --------
mkdir -p "$SCRATCH_PARENT"
fstype=$(stat -f -c %T "$SCRATCH_PARENT")
case $fstype in tmpfs | ramfs) echo "sched: '$SCRATCH_PARENT' is $fstype; fio files must be on a disk" >&2; exit 1 ;; esac
SCR=$(mktemp -d "$SCRATCH_PARENT/iob-sched.XXXXXX")
at_exit "rm -rf '$SCR'"
# one file per concurrent instance of a class: the most any mix runs
declare -A NINST=()
for c in "${CLASSES[@]}"; do NINST[$c]=1; done
for m in "${MIXES[@]}"; do
  for c in "${CLASSES[@]}"; do
    n=$(tr ' ' '\n' <<<"${MIX_JOBS[$m]}" | grep -cx "$c" || true)
    [ "$n" -le "${NINST[$c]}" ] || NINST[$c]=$n
  done
done
need_mib=0
for c in "${CLASSES[@]}"; do need_mib=$((need_mib + NINST[$c] * $(LAYOUT_MIB "$c"))); done
avail_mib=$(($(stat -f -c '%a * %S' "$SCR") / 1048576))
if [ "$avail_mib" -lt $((need_mib + 4096)) ]; then
  echo "sched: need $((need_mib + 4096)) MiB free under '$SCRATCH_PARENT', have $avail_mib" >&2
  exit 1
fi
DISK_SRC=$(df --output=source "$SCR" | tail -1)
echo "sched: scratch $SCR on $DISK_SRC ($fstype, $DISK_DESC), $need_mib MiB of fio files"

# ---- containerd, rootfs with fio --------------------------------------
iob_containerd_start "$(iobatch_containerd_toml)"
ROOTFS=$IOB_T/rootfs
iob_rootfs_busybox "$ROOTFS"
iob_rootfs_add_binary "$ROOTFS" "$(command -v fio)"
mkdir -p "$IOB_T/out"
RAW=$IOB_T/raw.jsonl
: >"$RAW"

# Lay out every file once; writers then overwrite in place, so no run pays
# for block allocation and every run does the same work.
for c in "${CLASSES[@]}"; do
  for k in $(seq 1 "${NINST[$c]}"); do
    fio --name=layout --filename="$SCR/$c-$k.dat" --rw=write --bs=1M --direct=1 \
      --ioengine=libaio --iodepth=8 --size="$(LAYOUT_MIB "$c")M" >/dev/null
  done
done
sync

# ---- running jobs ------------------------------------------------------
# run_job ID CLASS INSTANCE RUNTIME: one fio container in the foreground;
# writes "end_ns rc" to $IOB_T/out/ID.end.
run_job() {
  local id=$1 c=$2 k=$3 rt=$4 rc=0
  local -a extra=()
  if [ "$rt" != io.containerd.runc.v2 ]; then
    extra=(--annotation "io.iobatch.class=$c" --annotation "io.iobatch.workload=bench-fio-$c")
  fi
  # shellcheck disable=SC2086,SC2046
  $CTR run --rm --null-io --runtime "$rt" "${extra[@]}" \
    --mount "type=bind,src=$SCR,dst=/data,options=rbind:rw" \
    --mount "type=bind,src=$IOB_T/out,dst=/out,options=rbind:rw" \
    --rootfs "$ROOTFS" "$id" \
    /usr/bin/fio --name="$c" --filename="/data/$c-$k.dat" --direct=1 --ioengine=libaio \
    ${JOB_ARGS[$c]} $(SIZE_ARGS "$c") \
    --output-format=json --output="/out/$id.json" \
    >"$IOB_T/out/$id.log" 2>&1 || rc=$?
  echo "$(date +%s%N) $rc" >"$IOB_T/out/$id.end"
}

# record REP MIX MODE IDX CLASS ID SUBMIT_NS: one line of raw results
record() {
  local rep=$1 mix=$2 mode=$3 idx=$4 c=$5 id=$6 t0=$7 end rc fio=null
  read -r end rc <"$IOB_T/out/$id.end"
  if [ "$rc" = 0 ] && jq -e '.jobs[0].error == 0' "$IOB_T/out/$id.json" >/dev/null 2>&1; then
    fio=$(jq -c '{runtime_ms: .jobs[0].job_runtime, end_ms: .timestamp_ms,
      read_iops: .jobs[0].read.iops, write_iops: .jobs[0].write.iops,
      read_bw_kib: .jobs[0].read.bw, write_bw_kib: .jobs[0].write.bw}' "$IOB_T/out/$id.json")
  else
    echo "sched: job $id failed (rc $rc):" >&2
    tail -5 "$IOB_T/out/$id.log" >&2 || true
    [ "$rc" != 0 ] || rc=1
  fi
  # what the agent says it did: "admitted 'ID' (CLASS) after N ms: REASON"
  local agent=null line
  if [ -n "${IOB_AGENT_DIR:-}" ] && [[ $mode =~ ^(iobatch|paper|calibrated)$ ]]; then
    line=$(grep -o "admitted '$id' ([^)]*) after [0-9]* ms: [^\"]*" "$IOB_AGENT_DIR/agent.log" 2>/dev/null | tail -1 || true)
    if [ -n "$line" ]; then
      agent=$(jq -nc --arg l "$line" '$l | capture("after (?<ms>[0-9]+) ms: (?<reason>.*)$") | {held_ms: (.ms | tonumber), reason: .reason}')
    fi
  fi
  jq -nc --argjson rep "$rep" --arg mix "$mix" --arg mode "$mode" --argjson idx "$idx" \
    --arg class "$c" --arg id "$id" --argjson t0 "$t0" --argjson endns "$end" \
    --argjson rc "$rc" --argjson fio "$fio" --argjson agent "$agent" \
    '{rep: $rep, mix: $mix, mode: $mode, idx: $idx, class: $class, id: $id,
      submit_ns: $t0, end_ns: $endns, rc: $rc, fio: $fio, agent: $agent}' >>"$RAW"
}

settle() { sync; sleep "${SETTLE_SECONDS:-2}"; }

# run_mix REP MIX MODE: MODE is solo:<class>, all, serial, iobatch or paper
run_mix() {
  local rep=$1 mix=$2 mode=$3 rt=io.containerd.runc.v2 t0 i c
  local -a jobs
  read -r -a jobs <<<"${MIX_JOBS[$mix]:-}"
  case $mode in
  solo:*) jobs=("${mode#solo:}") mode=solo ;;
  iobatch | paper | calibrated) rt=io.containerd.iobatch.v2 ;;
  esac
  local -A inst=()
  local -a ids=() ks=()
  for i in "${!jobs[@]}"; do
    c=${jobs[$i]}
    inst[$c]=$((${inst[$c]:-0} + 1))
    ks+=("${inst[$c]}")
    ids+=("r$rep-$mix-$mode-$i")
  done
  echo "sched: rep $rep $mix $mode: ${jobs[*]}"
  t0=$(date +%s%N)
  if [ "$mode" = serial ] || [ "$mode" = solo ]; then
    for i in "${!jobs[@]}"; do run_job "${ids[$i]}" "${jobs[$i]}" "${ks[$i]}" "$rt"; done
  else
    local -a pids=()
    for i in "${!jobs[@]}"; do
      run_job "${ids[$i]}" "${jobs[$i]}" "${ks[$i]}" "$rt" &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || true; done
  fi
  for i in "${!jobs[@]}"; do record "$rep" "$mix" "$mode" "$i" "${jobs[$i]}" "${ids[$i]}" "$t0"; done
  settle
}

# ---- which modes can run -------------------------------------------------
declare -A MODE_STATUS=()
RUN_MODES=()
for mode in $MODES; do
  case $mode in
  all | serial) MODE_STATUS[$mode]=run; RUN_MODES+=("$mode") ;;
  iobatch | paper | calibrated)
    if why=$(iobatch_unavailable "$mode"); then
      MODE_STATUS[$mode]="not run: $why"
      echo "sched: mode $mode not run: $why"
    else
      MODE_STATUS[$mode]=run; RUN_MODES+=("$mode")
    fi
    ;;
  *) echo "sched: unknown mode '$mode'" >&2; exit 2 ;;
  esac
done

# iobatch_warmup MODE: each class once alone through iobatch, so the agent
# has learned every workload's solo profile before the measured runs (a
# known workload, as on a node that has run it before).  Not measured.
iobatch_warmup() {
  local mode=$1 c rc
  iobatch_agent_start "$mode" || return 0
  for c in "${CLASSES[@]}"; do
    run_job "warm-$mode-$c" "$c" 1 io.containerd.iobatch.v2
    read -r _ rc <"$IOB_T/out/warm-$mode-$c.end"
    [ "$rc" = 0 ] || { echo "sched: warm-up of $mode failed for $c:" >&2; tail -5 "$IOB_T/out/warm-$mode-$c.log" >&2; }
  done
  iobatch_agent_stop
  settle
}

# ---- the benchmark -------------------------------------------------------
START=$(date -u +%FT%TZ)
T_START=$(date +%s)
if [ "${WARMUP:-1}" = 1 ]; then
  for mode in "${RUN_MODES[@]}"; do
    case $mode in iobatch | paper | calibrated) iobatch_warmup "$mode" ;; esac
  done
fi
for rep in $(seq 1 "$REPEATS"); do
  for c in "${CLASSES[@]}"; do run_mix "$rep" solo "solo:$c"; done
  for mix in "${MIXES[@]}"; do
    for mode in "${RUN_MODES[@]}"; do
      case $mode in
      iobatch | paper | calibrated)
        if iobatch_agent_start "$mode"; then
          run_mix "$rep" "$mix" "$mode"
          iobatch_agent_stop
        else
          echo "sched: rep $rep $mix $mode: iobatchd did not start; no result" >&2
        fi
        ;;
      *) run_mix "$rep" "$mix" "$mode" ;;
      esac
    done
  done
done
ELAPSED=$(($(date +%s) - T_START))

# ---- results -------------------------------------------------------------
mkdir -p "$OUT_DIR"
status_json=$(for m in $MODES; do jq -nc --arg m "$m" --arg s "${MODE_STATUS[$m]}" '{($m): $s}'; done | jq -sc 'add')
mixes_json=$(for m in "${MIXES[@]}"; do jq -nc --arg m "$m" --arg j "${MIX_JOBS[$m]}" '{name: $m, jobs: ($j | split(" "))}'; done | jq -sc .)
spec_json=$(for c in "${CLASSES[@]}"; do
  jq -nc --arg c "$c" --arg a "${JOB_ARGS[$c]} $(SIZE_ARGS "$c") --direct=1 --ioengine=libaio" '{($c): $a}'
done | jq -sc 'add')
jq -s --arg cmd "$CMDLINE" --arg date "$START" --arg host "$(hostname)" \
  --arg kernel "$(uname -r)" --arg disk "$DISK_SRC ($DISK_DESC)" \
  --arg sched "$(xargs <"/sys/block/$(basename "${DISK_DEV:-$DISK_SRC}")/queue/scheduler" 2>/dev/null || echo unknown)" \
  --argjson repeats "$REPEATS" --argjson scale "$SCALE" --argjson elapsed "$ELAPSED" \
  --argjson status "$status_json" --argjson mixes "$mixes_json" --argjson spec "$spec_json" \
  --arg agent "$(iobatch_describe)" \
  -f bench/sched/aggregate.jq "$RAW" >"$OUT_DIR/sched.json"
bench/sched/report.sh "$OUT_DIR/sched.json" "$OUT_DIR"
echo "sched: wrote $OUT_DIR/sched.json, sched.md, sched.png in ${ELAPSED}s"
