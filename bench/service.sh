#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A latency-sensitive service beside batch jobs (issue #12): PostgreSQL 15 in
# a container through a private containerd, pgbench on the host against it
# over a unix socket, and batch fio containers (bench/sched/jobs.sh's classes)
# arriving ARRIVE seconds into the pgbench run.  Modes, interleaved within
# each repeat so that drift hits them alike:
#   solo     the service alone (runc shim)
#   all      service + every batch job at once (runc shim)
#   serial   the batch jobs one after another beside the service (runc shim):
#            never more than one batch job beside it
#   iobatch  everything through io.containerd.iobatch.v2 with iobatchd on its
#            default config; the service annotated io.iobatch.class=latency
#            and io.iobatch.kind=service (when the shim refuses class
#            `latency`, which a quick probe finds out, without the class
#            annotation; the output says so)
#
# Service metrics over the window [batch arrival, end of pgbench]: TPS and
# the p50/p99 of per-transaction latency (pgbench --log); in solo the same
# window of the run.  Batch: makespan (arrival -> last exit) and mean
# turnaround (arrival -> each exit; all jobs count as submitted at the
# arrival, serial included).  Medians over REPEATS.  Each repetition runs
# initdb and pgbench -i once into a template data directory; every mode
# starts from a fresh copy of it.  The service container is stopped when
# pgbench ends; batch jobs still running (or held) go on alone.
#
# `bench/service.sh slo` runs the rate-limited service (issue #22): one
# unthrottled pgbench run first measures the service's maximum TPS (same
# scale and clients); every run then asks for RATE_FRACTION of it (-R) with
# a latency limit of LAT_LIMIT_MS (-L).  A transaction misses when pgbench
# skipped it or it ended more than the limit after its scheduled start
# (pg.sh pgb_slo); each mode reports its misses over the whole run
# (late_pct), p50/p99/p99.9 with the schedule lag, and the batch makespan.
# Its default modes add the static levers and the budgets: iobatch.f256 and
# iobatch.f512 (protection's caps fixed at 256 and 512 MiB/s), ioprio (the
# batch at once under runc, each fio in the idle I/O class: fio
# --prioclass=3, ionice -c 3, nothing else), and iobatch.b1.1, .b1.5, .b2,
# .b3 (iobatch with protect_batch_budget = 1.1, 1.5, 2, 3).  Its results
# go to bench/results/service-slo, with frontier.png: excess misses against
# batch makespan, a point per mode (median, range over the repetitions).
#
# Writes OUT_DIR/summary.json, summary.md, tps.png (TPS over time per mode,
# repetition 1) and raw.jsonl.
# Usage: bench/service.sh [slo]
#   env (slo): RATE_FRACTION=0.5 LAT_LIMIT_MS=10 RATE=N (skips the maximum's run)
#        SVC_LAT_TARGET=5ms (the service's io.iobatch.latency-target; "": none)
#   env: REPEATS=3 DURATION=30 ARRIVE=5 PG_SCALE=10 PG_CLIENTS=4
#        BATCH="seq-write seq-write seq-read rand-write rand-read" SCALE=0.25
#        MODES="all serial iobatch" (solo always runs) WARMUP=1
#        SCRATCH_PARENT=/var/tmp OUT_DIR=bench/results/service B=build
#        IOB_MATRIX=FILE (the agent's matrix) AGENT_LOG_DIR=DIR
#        IOB_AGENT_CONF="key = value; ..." (more iobatchd.conf lines)
#   Variants of the iobatch mode, for experiments: a mode iobatch.X (X in
#   [a-z0-9.]) runs like iobatch with the lines of IOB_AGENT_CONF_X (dots
#   as underscores) added to the agent's config, e.g. MODES="all iobatch
#   iobatch.s" IOB_AGENT_CONF_s="protect_scope = all"; iobatch.bN without
#   one sets protect_batch_budget = N.
set -euo pipefail
cd "$(dirname "$0")/.."
TOP=$PWD
CMDLINE=$(for v in DISK REPEATS DURATION ARRIVE PG_SCALE PG_CLIENTS BATCH SCALE MODES WARMUP IOB_MATRIX IOB_AGENT_CONF RATE_FRACTION LAT_LIMIT_MS RATE SVC_LAT_TARGET; do
  # SVC_LAT_TARGET set and empty means none (not the default): said too
  [ -z "${!v:-}" ] && { [ "$v" != SVC_LAT_TARGET ] || [ -z "${!v+set}" ]; } || printf '%s="%s" ' "$v" "${!v:-}"
done)"bench/service.sh $*"
SERVICE=saturate
case ${1:-} in
'') ;;
slo) SERVICE=slo ;;
*) echo "service: unknown argument '$1' (none: the saturating service; slo: the rate-limited one)" >&2; exit 2 ;;
esac
REPEATS=${REPEATS:-3}
DURATION=${DURATION:-30}
ARRIVE=${ARRIVE:-5}
B=${B:-build}
SCRATCH_PARENT=${SCRATCH_PARENT:-/var/tmp}
if [ "$SERVICE" = slo ]; then
  OUT_DIR=${OUT_DIR:-bench/results/service-slo}
  MODES=${MODES:-"all serial ioprio iobatch iobatch.f256 iobatch.f512 iobatch.b1.1 iobatch.b1.5 iobatch.b2 iobatch.b3"}
  RATE_FRACTION=${RATE_FRACTION:-0.5}
  LAT_LIMIT_MS=${LAT_LIMIT_MS:-10}
  # fixed caps: protection's cap starts and stays at N (never raised, never
  # cut, never short of a 0.05 share, so never holding)
  for f in 256 512; do
    v=IOB_AGENT_CONF_f$f
    [ -n "${!v:-}" ] || printf -v "$v" '%s' "protect_cap_start = ${f}M; protect_cap_floor = ${f}M; protect_raise = 1; protect_cut = 1; protect_share = 0.05"
  done
else
  OUT_DIR=${OUT_DIR:-bench/results/service}
  MODES=${MODES:-"all serial iobatch"}
fi
SCALE=${SCALE:-0.25}
source bench/sched/jobs.sh
iob_mode() { [[ $1 == iobatch || $1 =~ ^iobatch\.[a-z0-9.]+$ ]]; }
# the agent's extra config lines for MODE
iob_mode_conf() {
  local v='' x=''
  if [[ $1 == iobatch.* ]]; then
    v=IOB_AGENT_CONF_${1#iobatch.}
    v=${v//./_}
    x=${!v:-}
    [[ -n $x || ! $1 =~ ^iobatch\.b([0-9]+(\.[0-9]+)?)$ ]] || x="protect_batch_budget = ${BASH_REMATCH[1]}"
  fi
  echo "${IOB_AGENT_CONF:-}${x:+; $x}"
}
read -r -a BATCH_JOBS <<<"${BATCH:-seq-write seq-write seq-read rand-write rand-read}"
for c in "${BATCH_JOBS[@]}"; do
  [ -n "${JOB_ARGS[$c]:-}" ] || { echo "service: unknown batch class '$c' (known: ${CLASSES[*]})" >&2; exit 2; }
done
for t in fio ctr containerd jq awk runuser; do
  command -v "$t" >/dev/null || { echo "service: '$t' not found (scripts/install-deps.sh)" >&2; exit 1; }
done
[ "$(id -u)" = 0 ] || { echo "service: must run as root (containerd, runc)" >&2; exit 1; }

source tests/integration/lib/common.sh
trap 'exit 130' INT TERM
source bench/sched/iobatch.sh
source bench/service/pg.sh
source bench/disk-lib.sh
bench_disk_up 12G
bench_size_jobs "${JOB_S:-5}"
why=$(pg_find) || { echo "service: $why" >&2; exit 1; }
pg_find

# ---- scratch on the host disk -------------------------------------------
mkdir -p "$SCRATCH_PARENT"
fstype=$(stat -f -c %T "$SCRATCH_PARENT")
case $fstype in tmpfs | ramfs) echo "service: '$SCRATCH_PARENT' is $fstype; the data must be on a disk" >&2; exit 1 ;; esac
SCR=$(mktemp -d "$SCRATCH_PARENT/iob-svc.XXXXXX")
chmod 755 "$SCR"
at_exit "rm -rf '$SCR'"
declare -A NINST=()
for c in "${BATCH_JOBS[@]}"; do NINST[$c]=$((${NINST[$c]:-0} + 1)); done
need_mib=2048
for c in "${!NINST[@]}"; do need_mib=$((need_mib + NINST[$c] * $(LAYOUT_MIB "$c"))); done
avail_mib=$(($(stat -f -c '%a * %S' "$SCR") / 1048576))
[ "$avail_mib" -ge $((need_mib + 4096)) ] || { echo "service: need $((need_mib + 4096)) MiB free under '$SCRATCH_PARENT', have $avail_mib" >&2; exit 1; }
DISK_SRC=$(df --output=source "$SCR" | tail -1)
echo "service: scratch $SCR on $DISK_SRC ($fstype, $DISK_DESC); postgres from $PG_BIN; load $(cut -d' ' -f1-3 /proc/loadavg)"

iob_containerd_start "$(iobatch_containerd_toml)"
FIO_ROOTFS=$IOB_T/fio-rootfs
iob_rootfs_busybox "$FIO_ROOTFS"
iob_rootfs_add_binary "$FIO_ROOTFS" "$(command -v fio)"
PG_ROOTFS=$IOB_T/pg-rootfs
pg_rootfs "$PG_ROOTFS"
OUT=$IOB_T/out
mkdir -p "$OUT"
RAW=$IOB_T/raw.jsonl
: >"$RAW"
SOCK=$IOB_T/pgsock

for c in "${!NINST[@]}"; do
  for k in $(seq 1 "${NINST[$c]}"); do
    fio --name=layout --filename="$SCR/$c-$k.dat" --rw=write --bs=1M --direct=1 \
      --ioengine=libaio --iodepth=8 --size="$(LAYOUT_MIB "$c")M" >/dev/null
  done
done
sync

# ---- batch jobs (as bench/sched.sh runs them) ----------------------------
run_job() { # ID CLASS INSTANCE RUNTIME [FIO_ARG...]
  local id=$1 c=$2 k=$3 rt=$4 rc=0
  shift 4
  local -a extra=()
  if [ "$rt" != io.containerd.runc.v2 ]; then
    extra=(--annotation "io.iobatch.class=$c" --annotation "io.iobatch.workload=bench-fio-$c"
      --annotation "io.iobatch.kind=job")
  fi
  # shellcheck disable=SC2086,SC2046
  $CTR run --rm --null-io --runtime "$rt" "${extra[@]}" \
    --mount "type=bind,src=$SCR,dst=/data,options=rbind:rw" \
    --mount "type=bind,src=$OUT,dst=/out,options=rbind:rw" \
    --rootfs "$FIO_ROOTFS" "$id" \
    /usr/bin/fio --name="$c" --filename="/data/$c-$k.dat" --direct=1 --ioengine=libaio \
    ${JOB_ARGS[$c]} $(SIZE_ARGS "$c") "$@" \
    --output-format=json --output="/out/$id.json" \
    >"$OUT/$id.log" 2>&1 || rc=$?
  echo "$(date +%s%N) $rc" >"$OUT/$id.end"
}

# run_batch MODE REP: every batch job, at once or one after another; writes
# the ids to $OUT/batch-REP-MODE.ids
run_batch() {
  local mode=$1 rep=$2 rt=io.containerd.runc.v2 i c
  local -a prio=()
  ! iob_mode "$mode" || rt=io.containerd.iobatch.v2
  # the idle class, as ionice -c 3 sets it (ioprio_set on the job)
  [ "$mode" != ioprio ] || prio=(--prioclass=3)
  local -A inst=()
  local -a ids=() ks=() pids=()
  for i in "${!BATCH_JOBS[@]}"; do
    c=${BATCH_JOBS[$i]}
    inst[$c]=$((${inst[$c]:-0} + 1))
    ks+=("${inst[$c]}")
    ids+=("r$rep-$mode-b$i")
  done
  if [ "$mode" = serial ]; then
    for i in "${!BATCH_JOBS[@]}"; do run_job "${ids[$i]}" "${BATCH_JOBS[$i]}" "${ks[$i]}" "$rt"; done
  else
    for i in "${!BATCH_JOBS[@]}"; do
      run_job "${ids[$i]}" "${BATCH_JOBS[$i]}" "${ks[$i]}" "$rt" "${prio[@]}" &
      pids+=($!)
    done
    for i in "${pids[@]}"; do wait "$i" || true; done
  fi
}

# ---- the service's class: does the shim take `latency`? ------------------
SVC_ANN=(--annotation io.iobatch.kind=service --annotation io.iobatch.workload=bench-pgsql)
# The service's latency objective (the p99 of its block I/O), declared:
# SVC_LAT_TARGET (slo: 5ms by default; "" for none: learned, which takes
# ten quiet windows the runs here do not give it before the batch comes).
[ "$SERVICE" != slo ] || SVC_LAT_TARGET=${SVC_LAT_TARGET-5ms}
[ -z "${SVC_LAT_TARGET:-}" ] || SVC_ANN+=(--annotation "io.iobatch.latency-target=$SVC_LAT_TARGET")
SVC_CLASS_NOTE=""
probe_latency_class() {
  local msg
  if msg=$($CTR run --rm --runtime io.containerd.iobatch.v2 --annotation io.iobatch.class=latency \
    --annotation io.iobatch.kind=service --rootfs "$FIO_ROOTFS" probe-latency /bin/true 2>&1); then
    SVC_ANN+=(--annotation io.iobatch.class=latency)
    SVC_CLASS_NOTE="service annotated io.iobatch.class=latency, io.iobatch.kind=service"
  else
    $CTR container delete probe-latency >/dev/null 2>&1 || true
    SVC_CLASS_NOTE="the shim refused io.iobatch.class=latency ($(tr '\n' ' ' <<<"$msg" | cut -c1-200)); service annotated io.iobatch.kind=service only, no class"
  fi
  echo "service: $SVC_CLASS_NOTE"
}

# ---- one run: the service, pgbench, the batch arriving -------------------
# run_mode REP MODE (solo all serial iobatch)
run_mode() {
  local rep=$1 mode=$2 rt=io.containerd.runc.v2
  local id=r$rep-$mode-pg pre=$OUT/r$rep-$mode
  local -a ann=()
  if iob_mode "$mode"; then rt=io.containerd.iobatch.v2; ann=("${SVC_ANN[@]}"); fi
  rm -rf "$SCR/pgdata"
  cp -a "$SCR/tmpl-$rep" "$SCR/pgdata"
  sync
  local load0
  load0=$(cut -d' ' -f1 /proc/loadavg)
  pg_start "$rt" "$id" "$SCR/pgdata" "$SOCK" "$pre-pg.log" "${ann[@]}" || return 1
  pg_sql "$SOCK" "CHECKPOINT"
  sync
  sleep 1
  echo "service: rep $rep $mode: pgbench ${DURATION}s${RATE:+ at $RATE tps}, batch (${BATCH_JOBS[*]}) at ${ARRIVE}s"
  PGB_EXTRA=()
  [ "$SERVICE" != slo ] || PGB_EXTRA=(-R "$RATE" -L "$LAT_LIMIT_MS")
  pgb_start "$SOCK" "$pre-pgb" "$DURATION"
  local t0=$PGB_T0_NS ta=0 bpid='' snap_pid=''
  if [ "$mode" != solo ]; then
    sleep "$ARRIVE"
    ta=$(date +%s%N)
    run_batch "$mode" "$rep" &
    bpid=$!
    if iob_mode "$mode"; then
      # what the agent says, once a second, while the batch is around
      (while kill -0 "$bpid" 2>/dev/null; do
        echo "@ $((($(date +%s%N) - t0) / 1000000))"
        "$TOP/$B/bin/iobatchctl" --socket "$IOB_AGENT_SOCK" status 2>&1 || true
        sleep 1
      done) >"$pre-status.txt" 2>&1 &
      snap_pid=$!
    fi
  fi
  wait "$PGB_PID" || echo "service: pgbench exited non-zero (rep $rep $mode): $(tail -2 "$pre-pgb.txt")" >&2
  local tend
  tend=$(date +%s%N)
  pg_stop "$id"
  [ -z "$bpid" ] || wait "$bpid" || true
  [ -z "$snap_pid" ] || wait "$snap_pid" || true
  local load1
  load1=$(cut -d' ' -f1 /proc/loadavg)
  # the victim's window: batch arrival (solo: the same offset) -> pgbench end
  local from=$((t0 + ARRIVE * 1000000000)) last
  last=$(_pgb_lines "$pre-pgb" | awk 'BEGIN { m = 0 } { t = ($5 * 1000000 + $6) * 1000; if (t > m) m = t } END { printf "%.0f", m }')
  [ "$last" -gt "$from" ] || last=$tend
  local vict whole series jobs="[]" i bid end rc fio agent line slo=null
  [ "$SERVICE" != slo ] || slo=$(pgb_slo "$pre-pgb" "$LAT_LIMIT_MS")
  vict=$(pgb_window "$pre-pgb" "$from" "$last")
  whole=$(pgb_window "$pre-pgb" "$t0" "$last")
  series=$(pgb_series "$pre-pgb" "$t0" | jq -R -s -c 'split("\n") | map(select(length > 0) | split(" ") | map(tonumber))')
  if [ "$mode" != solo ]; then
    jobs=$(for i in "${!BATCH_JOBS[@]}"; do
      bid=r$rep-$mode-b$i
      read -r end rc <"$OUT/$bid.end"
      fio=null
      if [ "$rc" = 0 ] && jq -e '.jobs[0].error == 0' "$OUT/$bid.json" >/dev/null 2>&1; then
        fio=$(jq -c '{runtime_ms: .jobs[0].job_runtime, end_ms: .timestamp_ms}' "$OUT/$bid.json")
      else
        echo "service: batch job $bid failed (rc $rc): $(tail -3 "$OUT/$bid.log" | tr '\n' ' ')" >&2
        [ "$rc" != 0 ] || rc=1
      fi
      agent=null
      if iob_mode "$mode"; then
        line=$(grep -o "admitted '$bid' ([^)]*) after [0-9]* ms: [^\"]*" "$IOB_AGENT_DIR/agent.log" 2>/dev/null | tail -1 || true)
        [ -z "$line" ] || agent=$(jq -nc --arg l "$line" '$l | capture("after (?<ms>[0-9]+) ms: (?<reason>.*)$") | {held_ms: (.ms | tonumber), reason: .reason}')
      fi
      jq -nc --arg id "$bid" --arg class "${BATCH_JOBS[$i]}" --argjson endns "$end" --argjson rc "$rc" \
        --argjson fio "$fio" --argjson agent "$agent" \
        '{id: $id, class: $class, end_ns: $endns, rc: $rc, fio: $fio, agent: $agent}'
    done | jq -s -c .)
  fi
  jq -nc --argjson rep "$rep" --arg mode "$mode" --argjson t0 "$t0" --argjson ta "$ta" \
    --argjson tend "$tend" --argjson victim "$vict" --argjson whole "$whole" \
    --argjson series "$series" --argjson jobs "$jobs" --arg load0 "$load0" --arg load1 "$load1" \
    --argjson slo "$slo" \
    '{rep: $rep, mode: $mode, t0_ns: $t0, arrive_ns: $ta, pgbench_end_ns: $tend,
      victim: $victim, whole: $whole, slo: $slo, load: [($load0 | tonumber), ($load1 | tonumber)],
      batch: (if ($jobs | length) == 0 then null else
        {makespan_s: ((($jobs | map(.end_ns) | max) - $ta) / 1e9),
         mean_turnaround_s: (($jobs | map(.end_ns - $ta) | add) / ($jobs | length) / 1e9),
         after_service_s: ([(($jobs | map(.end_ns) | max) - $tend) / 1e9, 0] | max),
         failed: ($jobs | map(select(.rc != 0)) | length),
         jobs: $jobs} end),
      tps_series: $series}' >>"$RAW"
  jq -r 'select(.rep == '"$rep"' and .mode == "'"$mode"'")
    | "service: rep \(.rep) \(.mode): \(.victim.tps) tps, p50 \(.victim.p50_ms) ms, p99 \(.victim.p99_ms) ms"
      + (if .slo then ", missed \(.slo.late_pct)% (p99 \(.slo.p99_ms) ms)" else "" end)
      + (if .batch then ", batch makespan \(.batch.makespan_s * 100 | round / 100) s, mean turnaround \(.batch.mean_turnaround_s * 100 | round / 100) s" else "" end)
      + ", load \(.load[0])->\(.load[1])"' "$RAW"
  sync
  sleep "${SETTLE_SECONDS:-2}"
}

# make_template REP: initdb and pgbench -i once per repetition
make_template() {
  local rep=$1 d=$SCR/tmpl-$1
  rm -rf "$d"
  pg_initdb "$d"
  pg_start io.containerd.runc.v2 "tmpl-$rep" "$d" "$SOCK" "$OUT/tmpl-$rep.log" || return 1
  pgb_init "$SOCK" "$PG_SCALE" || { echo "service: pgbench -i failed" >&2; pg_stop "tmpl-$rep"; return 1; }
  pg_sql "$SOCK" "CHECKPOINT"
  pg_stop "tmpl-$rep"
}

# ---- which modes can run -------------------------------------------------
RUN_MODES=()
declare -A MODE_STATUS=([solo]=run)
for mode in $MODES; do
  case $mode in
  all | serial | ioprio) MODE_STATUS[$mode]=run; RUN_MODES+=("$mode") ;;
  iobatch | iobatch.*)
    iob_mode "$mode" || { echo "service: mode '$mode': a variant is iobatch.X, X in [a-z0-9.]" >&2; exit 2; }
    if why=$(iobatch_unavailable iobatch); then
      MODE_STATUS[$mode]="not run: $why"
      echo "service: mode $mode not run: $why"
    else
      MODE_STATUS[$mode]=run; RUN_MODES+=("$mode")
    fi
    ;;
  *) echo "service: unknown mode '$mode' (all serial ioprio iobatch iobatch.X)" >&2; exit 2 ;;
  esac
done
START=$(date -u +%FT%TZ)
T_START=$(date +%s)
if printf '%s\n' "${RUN_MODES[@]}" | grep -q '^iobatch'; then
  iobatch_agent_start iobatch || { echo "service: iobatchd did not start" >&2; exit 1; }
  probe_latency_class
  if [ "${WARMUP:-1}" = 1 ]; then
    # each batch class once alone through iobatch, so the agent knows their
    # solo profiles before the measured runs (not measured)
    for c in "${!NINST[@]}"; do run_job "warm-$c" "$c" 1 io.containerd.iobatch.v2; done
  fi
  iobatch_agent_stop
fi

# the rate-limited service: its maximum, once, from a copy of the first
# repetition's database (solo, runc)
measure_max() {
  local id=max-pg max
  rm -rf "$SCR/pgdata"
  cp -a "$SCR/tmpl-1" "$SCR/pgdata"
  pg_start io.containerd.runc.v2 "$id" "$SCR/pgdata" "$SOCK" "$OUT/max-pg.log" || return 1
  pg_sql "$SOCK" "CHECKPOINT"
  max=$(pgb_max "$SOCK" "$OUT/max-pgb" "$DURATION") || { pg_stop "$id"; return 1; }
  pg_stop "$id"
  MAX_TPS=$max
  RATE=$(awk -v m="$max" -v f="$RATE_FRACTION" 'BEGIN { r = int(m * f + 0.5); print (r < 1) ? 1 : r }')
  echo "service: maximum ${MAX_TPS} tps unthrottled; the service asks for $RATE tps (x$RATE_FRACTION), limit ${LAT_LIMIT_MS} ms"
}
MAX_TPS=null
for rep in $(seq 1 "$REPEATS"); do
  make_template "$rep" || { echo "service: no database for repetition $rep" >&2; exit 1; }
  if [ "$SERVICE" = slo ] && [ "$rep" = 1 ] && [ -z "${RATE:-}" ]; then
    measure_max || { echo "service: could not measure the service's maximum" >&2; exit 1; }
  fi
  # rotate the order so that no mode always runs first
  order=(solo "${RUN_MODES[@]}")
  n=${#order[@]}
  k=$(((rep - 1) % n))
  order=("${order[@]:$k}" "${order[@]:0:$k}")
  for mode in "${order[@]}"; do
    if iob_mode "$mode"; then
      if IOB_AGENT_CONF=$(iob_mode_conf "$mode") iobatch_agent_start iobatch; then
        run_mode "$rep" "$mode" || echo "service: rep $rep $mode failed" >&2
        [ -z "${AGENT_LOG_DIR:-}" ] || cp "$OUT/r$rep-$mode-status.txt" "$AGENT_LOG_DIR/" 2>/dev/null || true
        iobatch_agent_stop
      else
        echo "service: rep $rep $mode: iobatchd did not start" >&2
      fi
    else
      run_mode "$rep" "$mode" || echo "service: rep $rep $mode failed" >&2
    fi
  done
  rm -rf "$SCR/tmpl-$rep"
done
ELAPSED=$(($(date +%s) - T_START))

# ---- results -------------------------------------------------------------
mkdir -p "$OUT_DIR"
cp "$RAW" "$OUT_DIR/raw.jsonl"
# what the agent said during the first iobatch repetition
[ ! -f "$OUT/r1-iobatch-status.txt" ] || cp "$OUT/r1-iobatch-status.txt" "$OUT_DIR/iobatch-status-r1.txt"
[ ! -f "$IOB_T/agent-iobatch/agent.log" ] || grep -E "admitted|held|pending|protect|throttl|latency|cap" "$IOB_T/agent-iobatch/agent.log" >"$OUT_DIR/iobatch-agent-log.txt" || true
status_json=$(for m in solo $MODES; do jq -nc --arg m "$m" --arg s "${MODE_STATUS[$m]}" '{($m): $s}'; done | jq -sc 'add')
jq -s --arg cmd "$CMDLINE" --arg date "$START" --arg host "$(hostname)" --arg kernel "$(uname -r)" \
  --arg disk "$DISK_SRC ($DISK_DESC)" --arg pg "$("$PG_BIN/postgres" --version)" --argjson repeats "$REPEATS" \
  --argjson duration "$DURATION" --argjson arrive "$ARRIVE" --argjson pgscale "$PG_SCALE" \
  --argjson clients "$PG_CLIENTS" --arg batch "${BATCH_JOBS[*]}" --arg scale "$SCALE" \
  --argjson elapsed "$ELAPSED" --argjson status "$status_json" --arg svcclass "$SVC_CLASS_NOTE" \
  --argjson jobmib "$(for c in "${!JOB_MIB[@]}"; do jq -nc --arg c "$c" --argjson m "$(job_mib "$c")" '{($c): $m}'; done | jq -sc add)" \
  --arg agent "$(iobatch_describe)$(for m in "${RUN_MODES[@]}"; do [[ $m != iobatch.* ]] || printf '; %s: "%s"' "$m" "$(iob_mode_conf "$m")"; done)" \
  -f bench/service/aggregate.jq "$RAW" >"$OUT_DIR/summary.json"
if [ "$SERVICE" = slo ]; then
  jq --slurpfile raw "$RAW" --argjson max "$MAX_TPS" --argjson rate "$RATE" \
    --argjson frac "$RATE_FRACTION" --argjson lim "$LAT_LIMIT_MS" \
    -f bench/service/aggregate-slo.jq "$OUT_DIR/summary.json" >"$OUT_DIR/summary.json.new"
  mv "$OUT_DIR/summary.json.new" "$OUT_DIR/summary.json"
fi
bench/service/report.sh "$OUT_DIR/summary.json" "$OUT_DIR"
echo "service: wrote $OUT_DIR/summary.json, summary.md, tps.png$([ "$SERVICE" != slo ] || echo ", frontier.png") in ${ELAPSED}s"
