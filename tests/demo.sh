#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# make demo: iobatch on a private containerd, in three parts.
#
# Part 1, a latency-sensitive service beside batch jobs (issue #22):
# PostgreSQL 15 in a container (bench/service/pg.sh) serving a fixed rate:
# one unthrottled pgbench run measures its maximum, then pgbench on the host
# asks for half of it (-R) with a 10 ms latency limit (-L) for
# DEMO_SVC_SECONDS (20); a transaction misses when it ends more than 10 ms
# after its scheduled start or pgbench skips it.  Batch fio containers (two
# sequential writers, a sequential reader, a random writer and a random
# reader, O_DIRECT, bench/sched/jobs.sh's classes at DEMO_SVC_SCALE 0.25)
# arriving DEMO_SVC_ARRIVE (4) seconds in.  Three runs: the service alone
# (runc), everything through io.containerd.iobatch.v2 with iobatchd (default
# policy; the service annotated io.iobatch.kind=service and, when the shim
# takes it, io.iobatch.class=latency), and the same set all at once through
# io.containerd.runc.v2.  The iobatch run prints a timeline, one line a
# second: the service's TPS, which batch jobs run and which the agent holds
# and why; then the agent's admission log.  DEMO_PART1=0 skips it.
#
# Part 2, the host disk, where mixing costs nothing: two sequential writers
# and two random writers (fio in busybox containers, classes declared with
# the io.iobatch.class annotation) are started at once through
# io.containerd.iobatch.v2 with iobatchd on its defaults (no penalty matrix,
# nothing learned), then through io.containerd.runc.v2.  On this disk every
# pair of jobs runs faster together than one after the other, so the agent
# has no evidence of a penalty and holds nothing; the demo says how many
# starts it held and what it learned.
#
# Part 3, a disk that punishes mixing: the paper-shaped mix (bench/mix.sh,
# eight fio containers, one request at a time) on the emulated 7200 rpm
# drive (simdisk/, model "hdd"): all at once through runc, then a fresh
# agent that sees each class once alone and then runs the mix
# DEMO_MIX_RUNS (3) times, learning the penalties as it goes.  The last
# run's makespan against all at once is the result.  DEMO_PART3=0 skips it.
# Everything (containerd, agent, shims, mounts, loop devices, files) is
# removed at the end.
#
# DEMO_SEQ_SIZE / DEMO_RAND_SIZE change part 2's job sizes (fio --size);
# DEMO_ROUNDS=1 skips its second round (the same comparison in reverse order).
#
# The last line is
#   demo-result: late_pct=A (all at once B, alone C) makespan_ratio=Y host_held=H simdisk_makespan_ratio=S
# A, B, C = the share of the service's scheduled transactions that missed
# (percent, over its whole run) under iobatch, all at once through runc and
# alone; Y = the batch makespan under iobatch / all at once through runc
# ("na" when part 1 did not run); H = the starts the agent held on the host
# disk in part 2; S = the mix's makespan on the emulated HDD under iobatch
# (last run) / all at once ("na" when part 3 did not run).
set -u
cd "$(dirname "$0")/.." || exit 1
. tests/integration/lib/common.sh
. tests/integration/lib/agent.sh

SEQ_SIZE=${DEMO_SEQ_SIZE:-2G}
RAND_SIZE=${DEMO_RAND_SIZE:-96M}
ROUNDS=${DEMO_ROUNDS:-2}
JOBS=(seq1 seq2 rand1 rand2)

SVC_RESULT="late_pct=na (all at once na, alone na) makespan_ratio=na"
HOST_RESULT="host_held=na"
SIM_RESULT="simdisk_makespan_ratio=na"
result() { echo "demo-result: $SVC_RESULT $HOST_RESULT $SIM_RESULT"; }
# die MESSAGE: the last line is still the demo-result line
die() { echo "demo: $*" >&2; result; exit 1; }
for c in containerd ctr runc fio jq; do
  command -v $c >/dev/null || die "$c is not installed (scripts/install-deps.sh)"
done
for p in iobatchd iobatchctl containerd-shim-iobatch-v2 iobatch-hook; do
  [ -x "$IOB_B/bin/$p" ] || die "$IOB_B/bin/$p is missing: run make first"
done
[ "$(id -u)" -eq 0 ] || die "must run as root (containerd, runc)"

# containerd finds the agent's socket through IOBATCH_AGENT_SOCKET,
# whichever agent (part 1's, part 2's) serves it.
export IOBATCH_AGENT_SOCKET=$AGENT_SOCK
iob_containerd_start >/dev/null || die "containerd did not start"
NS=demo${IOB_T##*.}
CTR=$(iob_ctr "$NS")
R=$IOB_T/rootfs
iob_rootfs_busybox "$R"
iob_rootfs_add_binary "$R" "$(command -v fio)"

now_ms() { echo $(($(date +%s%N) / 1000000)); }
calc() { awk "BEGIN { print $1 }"; }
secs() { printf '%.1f' "$(calc "$1 / 1000")"; }
T0=0
stamp() { printf '%6.1fs' "$(calc "($(now_ms) - $T0) / 1000")"; }

fio_args() { # JOB
  case $1 in
  seq*) echo "--name=$1 --filename=/data/$1 --rw=write --bs=1M --size=$SEQ_SIZE" ;;
  rand*) echo "--name=$1 --filename=/data/$1 --rw=randwrite --bs=4k --size=$RAND_SIZE" ;;
  esac
}
class_of() { case $1 in seq*) echo seq-write ;; rand*) echo rand-write ;; esac; }

# launch RUNTIME JOB ID: ctr run -d in the background (it returns when the
# task has started, so later than usual when the agent holds it).
launch() {
  local rt=$1 job=$2 id=$3
  # shellcheck disable=SC2046
  $CTR run -d --runtime "$rt" --annotation io.iobatch.class="$(class_of "$job")" \
    --rootfs "$R" "$id" /usr/bin/fio $(fio_args "$job") --direct=1 --ioengine=psync \
    >"$IOB_T/$id.out" 2>&1 &
  LAUNCHED+=($!)
}
LAUNCHED=()

declare -A CREATED=() ADMITTED=() FINISHED=() STATE=() EXIT=() PENDING=()
# watch PREFIX: poll ctr task ls and the agent until every job of this run
# has stopped; print each change on the timeline.
watch_run() {
  local pre=$1 snap_pending=0 snap_admitted=0 ndone id st job
  while :; do
    ndone=0
    while read -r id _ st; do
      job=${id#"$pre"-}
      [ "$id" != "$pre-$job" ] && continue
      [ "${STATE[$id]:-}" == "$st" ] && continue
      case $st in
      CREATED)
        CREATED[$id]=$(now_ms)
        echo "  $(stamp)  $id  created"
        ;;
      RUNNING)
        ADMITTED[$id]=$(now_ms)
        [ -z "${CREATED[$id]:-}" ] && CREATED[$id]=${ADMITTED[$id]}
        if [ -n "${PENDING[$id]:-}" ]; then
          echo "  $(stamp)  $id  admitted, running (pending for $(secs $((ADMITTED[$id] - PENDING[$id])))s)"
        else
          echo "  $(stamp)  $id  running"
        fi
        ;;
      STOPPED)
        FINISHED[$id]=$(now_ms)
        [ -z "${ADMITTED[$id]:-}" ] && ADMITTED[$id]=${FINISHED[$id]}
        [ -z "${CREATED[$id]:-}" ] && CREATED[$id]=${ADMITTED[$id]}
        echo "  $(stamp)  $id  finished"
        ;;
      esac
      STATE[$id]=$st
    done < <($CTR task ls 2>/dev/null | tail -n +2 | sort -k3,3r) # exits first
    for job in "${JOBS[@]}"; do [ "${STATE[$pre-$job]:-}" == STOPPED ] && ndone=$((ndone + 1)); done
    if [[ $pre == iob* ]]; then
      while read -r id why; do
        [ -n "${PENDING[$id]:-}" ] && continue
        PENDING[$id]=$(now_ms)
        echo "  $(stamp)  $id  pending in iobatchd (${why#pending: })"
      done < <(ctl status --json | jq -r '.containers[] | select(.state == "pending") | .id + " " + .reason + (if .conflict != "" then ", conflicts with " + .conflict else "" end)')
      if [ "$pre" == iob ] && [ $snap_pending -eq 0 ] && [ "$(ctl status --json | jq '[.containers[] | select(.state == "pending")] | length')" -ge 2 ]; then
        snap_pending=1
        echo "  $(stamp)  iobatchctl status:"
        ctl status | sed -n '4,$p' | grep -v '^$' | grep -v '^\*' | sed 's/^/             | /'
        echo "  $(stamp)  ctr task ls (a held task is CREATED):"
        $CTR task ls | sed 's/^/             | /'
      fi
      if [ "$pre" == iob ] && [ $snap_admitted -eq 0 ] && [ "${STATE[iob-rand1]:-}" == RUNNING ] && [ "${STATE[iob-rand2]:-}" == RUNNING ]; then
        snap_admitted=1
        echo "  $(stamp)  iobatchctl status:"
        ctl status | sed -n '4,$p' | grep -v '^$' | grep -v '^\*' | sed 's/^/             | /'
      fi
    fi
    [ $ndone -eq ${#JOBS[@]} ] && break
    [ $(($(now_ms) - T0)) -gt 150000 ] && { echo "demo: jobs did not finish in 150 s" >&2; return 1; }
    sleep 0.2
  done
}

# run RUNTIME PREFIX: all jobs at once (sequential writers first).
run() {
  local rt=$1 pre=$2 job
  rm -f "$R"/data/*
  sync
  T0=$(now_ms)
  for job in "${JOBS[@]}"; do
    launch "$rt" "$job" "$pre-$job"
    sleep 0.1
  done
  watch_run "$pre" || return 1
  wait "${LAUNCHED[@]}"
  LAUNCHED=()
  for job in "${JOBS[@]}"; do
    $CTR task delete "$pre-$job" >/dev/null 2>&1
    EXIT[$pre-$job]=$?
    $CTR container delete "$pre-$job" >/dev/null 2>&1
  done
  local first=0 last=0 id
  for job in "${JOBS[@]}"; do
    id=$pre-$job
    [ $first -eq 0 ] || [ "${CREATED[$id]}" -lt $first ] && first=${CREATED[$id]}
    [ "${FINISHED[$id]}" -gt $last ] && last=${FINISHED[$id]}
  done
  MAKESPAN[$pre]=$((last - T0))
}
declare -A MAKESPAN

# ---- part 1: a service beside batch jobs ---------------------------------
SVC_SECONDS=${DEMO_SVC_SECONDS:-20}
SVC_ARRIVE=${DEMO_SVC_ARRIVE:-4}
SVC_SCALE=${DEMO_SVC_SCALE:-0.25}
SVC_FRACTION=${DEMO_SVC_FRACTION:-0.5}
SVC_LIMIT_MS=${DEMO_SVC_LIMIT_MS:-10}
part1() {
  local why
  why=$(pg_find) || { echo "part 1 skipped: $why"; return 1; }
  pg_find
  SCALE=$SVC_SCALE
  . bench/sched/jobs.sh
  local -a batch=(seq-write seq-write seq-read rand-write rand-read)
  local scr c i
  scr=$(mktemp -d "${DEMO_SCRATCH:-/var/tmp}/iob-demo.XXXXXX")
  chmod 755 "$scr"
  at_exit "rm -rf '$scr'"
  PG_ROOTFS=$IOB_T/pg-rootfs
  pg_rootfs "$PG_ROOTFS"
  local sock=$IOB_T/pgsock out=$IOB_T/svc
  mkdir -p "$out"
  # the batch's files, laid out once (the writers overwrite in place)
  local -A inst=()
  local -a file=()
  for c in "${batch[@]}"; do
    inst[$c]=$((${inst[$c]:-0} + 1))
    file+=("$c-${inst[$c]}.dat")
    fio --name=layout --filename="$scr/$c-${inst[$c]}.dat" --rw=write --bs=1M --direct=1 \
      --ioengine=libaio --iodepth=8 --size="$(job_mib "$c")M" >/dev/null
  done
  # the database: initdb + pgbench -i once, each run starts from a copy
  pg_initdb "$scr/tmpl"
  pg_start io.containerd.runc.v2 svc-init "$scr/tmpl" "$sock" "$out/init.log" >/dev/null || return 1
  pgb_init "$sock" "$PG_SCALE" || { pg_stop svc-init; echo "pgbench -i failed"; return 1; }
  pg_sql "$sock" CHECKPOINT
  pg_stop svc-init
  sync
  # the service's maximum: one unthrottled run on a copy
  rm -rf "$scr/pgdata"
  cp -a "$scr/tmpl" "$scr/pgdata"
  pg_start io.containerd.runc.v2 svc-max "$scr/pgdata" "$sock" "$out/max-pg.log" >/dev/null || return 1
  local max
  max=$(pgb_max "$sock" "$out/max-pgb" 10) || { pg_stop svc-max; return 1; }
  pg_stop svc-max
  SVC_RATE=$(awk -v m="$max" -v f="$SVC_FRACTION" 'BEGIN { r = int(m * f + 0.5); print (r < 1) ? 1 : r }')
  PGB_EXTRA=(-R "$SVC_RATE" -L "$SVC_LIMIT_MS")

  # the agent, default policy (its own state, not shared with part 2)
  local state_save=$AGENT_STATE
  AGENT_STATE=$IOB_T/agentstate-svc
  agent_start "" >/dev/null || { AGENT_STATE=$state_save; echo "iobatchd did not start (log: $AGENT_LOG)"; return 1; }
  local -a svc_ann=(--annotation io.iobatch.kind=service --annotation io.iobatch.workload=demo-pgsql)
  local msg
  if msg=$($CTR run --rm --runtime io.containerd.iobatch.v2 --annotation io.iobatch.class=latency \
    --rootfs "$R" probe-latency /bin/true 2>&1); then
    svc_ann+=(--annotation io.iobatch.class=latency)
    echo "The service is declared latency-sensitive: io.iobatch.class=latency, io.iobatch.kind=service."
  else
    $CTR container delete probe-latency >/dev/null 2>&1
    echo "This iobatch does not know class 'latency' yet (the shim says: ${msg##*invalid annotation }),"
    echo "so the service is annotated io.iobatch.kind=service only."
  fi
  echo "Service: $("$PG_BIN/postgres" --version | sed 's/^postgres (PostgreSQL)/PostgreSQL/') in a container; pgbench -s $PG_SCALE -c $PG_CLIENTS"
  echo "managed ${max%.*} tps unthrottled, so it now asks for $SVC_RATE tps (-R, x$SVC_FRACTION) for ${SVC_SECONDS} s; a transaction"
  echo "misses when it ends more than ${SVC_LIMIT_MS} ms after its scheduled start (-L ${SVC_LIMIT_MS})."
  echo "At ${SVC_ARRIVE} s five batch fio containers arrive: ${batch[*]}"
  echo "(O_DIRECT; $(for c in seq-write seq-read rand-write rand-read; do printf '%s %s MiB, ' "$c" "$(job_mib "$c")"; done | sed 's/, $//'))."
  echo

  # svc_run MODE (solo iobatch runc): one run; sets TPS[MODE] MK[MODE]
  svc_run() {
    local mode=$1 rt=io.containerd.runc.v2 id=svc-$1 t0 ta i
    local -a ann=() pids=()
    if [ "$mode" = iobatch ]; then rt=io.containerd.iobatch.v2; ann=("${svc_ann[@]}"); fi
    rm -rf "$scr/pgdata"
    cp -a "$scr/tmpl" "$scr/pgdata"
    sync
    pg_start "$rt" "$id" "$scr/pgdata" "$sock" "$out/$mode-pg.log" "${ann[@]}" || return 1
    pg_sql "$sock" CHECKPOINT
    pgb_start "$sock" "$out/$mode-pgb" "$SVC_SECONDS"
    t0=$PGB_T0_NS
    T0=$((t0 / 1000000))
    if [ "$mode" != solo ]; then
      sleep "$SVC_ARRIVE"
      ta=$(date +%s%N)
      [ "$mode" != iobatch ] || echo "  $(stamp)  batch arrives: ${#batch[@]} containers through $rt"
      for i in "${!batch[@]}"; do
        c=${batch[$i]}
        local -a bann=()
        [ "$mode" != iobatch ] || bann=(--annotation "io.iobatch.class=$c" --annotation "io.iobatch.workload=demo-fio-$c")
        # shellcheck disable=SC2086
        ( $CTR run --rm --null-io --runtime "$rt" "${bann[@]}" \
          --mount "type=bind,src=$scr,dst=/data,options=rbind:rw" --rootfs "$R" "$mode-b$i-$c" \
          /usr/bin/fio --name="$c" --filename="/data/${file[$i]}" --direct=1 --ioengine=libaio \
          ${JOB_ARGS[$c]} --size="$(job_mib "$c")M" >"$out/$mode-b$i.log" 2>&1
          echo "$? $(date +%s%N)" >"$out/$mode-b$i.end.tmp" && mv "$out/$mode-b$i.end.tmp" "$out/$mode-b$i.end" ) &
        pids+=($!)
      done
    fi
    if [ "$mode" = iobatch ]; then
      # the timeline: once a second until pgbench and the batch are done
      local running pending prog st prot
      batch_left() { local j; for j in "${!batch[@]}"; do [ -f "$out/$mode-b$j.end" ] || return 0; done; return 1; }
      local pg_up=1
      while kill -0 "$PGB_PID" 2>/dev/null || batch_left; do
        # the service stops when pgbench is done; a batch still held goes on alone
        if [ $pg_up = 1 ] && ! kill -0 "$PGB_PID" 2>/dev/null; then
          pg_stop "$id"
          pg_up=0
          echo "  $(stamp)  pgbench done, service stopped"
        fi
        prog=$(grep -o 'progress: [0-9.]* s, [0-9.]* tps, lat [0-9.]* ms' "$out/$mode-pgb.txt" 2>/dev/null | tail -1 |
          awk '{ printf "%5.0f tps, lat %6.1f ms", $4, $7 }')
        [ $pg_up = 1 ] || prog="done"
        st=$(ctl status --json 2>/dev/null)
        running=$(jq -r '[.containers[] | select(.state == "running" and (.id | test("-b[0-9]"))) | .id | sub("^iobatch-"; "")] | join(" ")' <<<"$st" 2>/dev/null)
        pending=$(jq -r '[.containers[] | select(.state == "pending") | "\(.id | sub("^iobatch-"; "")) (\(.reason)\(if .conflict != "" then ", conflicts with " + .conflict else "" end))"] | join("; ")' <<<"$st" 2>/dev/null)
        prot=$(jq -r '([.containers[] | select(.protected) | .share] | first // empty) as $s
          | (if $s == null then "" elif $s < 0 then "its rate alone not known yet" else "at \($s * 100 | round / 100) of its rate alone" end)
            + (if .protect_cap_bps > 0 then ", batch cap \(.protect_cap_bps / 1048576 | round) MiB/s" else "" end)
            + (if .protect_holding then ", holding new batch" else "" end)' <<<"$st" 2>/dev/null)
        printf '  %s  service %s%s | batch running: %s%s\n' "$(stamp)" "${prog:-starting}" \
          "${prot:+ ($prot)}" "${running:--}" "${pending:+ | held: $pending}"
        [ $(($(now_ms) - T0)) -lt $(((SVC_SECONDS + 180) * 1000)) ] || { echo "  batch not done after $((SVC_SECONDS + 180)) s"; break; }
        sleep 1
      done
    fi
    wait "$PGB_PID" || true
    pg_stop "$id" # (again: a no-op when the timeline stopped it)
    for i in "${pids[@]}"; do wait "$i" || true; done
    local from=$((t0 + SVC_ARRIVE * 1000000000)) last
    last=$(_pgb_lines "$out/$mode-pgb" | awk '{ t = ($5 * 1000000 + $6) * 1000; if (t > m) m = t } END { printf "%.0f", m }')
    TPS[$mode]=$(pgb_window "$out/$mode-pgb" "$from" "$last" | jq -r .tps)
    local slo
    slo=$(pgb_slo "$out/$mode-pgb" "$SVC_LIMIT_MS")
    LATE[$mode]=$(jq -r .late_pct <<<"$slo")
    P99[$mode]=$(jq -r .p99_ms <<<"$slo")
    if [ "$mode" != solo ]; then
      local endmax=0 rc e bad=0
      for i in "${!batch[@]}"; do
        read -r rc e <"$out/$mode-b$i.end"
        [ "$rc" = 0 ] || { bad=1; echo "  batch job $mode-b$i failed: $(tail -2 "$out/$mode-b$i.log")"; }
        [ "$e" -le "$endmax" ] || endmax=$e
      done
      MK[$mode]=$(calc "($endmax - $ta) / 1e9")
      [ $bad -eq 0 ] || return 1
    fi
    return 0
  }
  declare -gA TPS=() P99=() MK=() LATE=()
  echo "== 1a. the service alone (runc)"
  svc_run solo || return 1
  printf '  %.0f tps, missed %.1f%%, p99 %.1f ms\n\n' "${TPS[solo]}" "${LATE[solo]}" "${P99[solo]}"
  echo "== 1b. service + batch through io.containerd.iobatch.v2 (iobatchd, default policy)"
  svc_run iobatch || return 1
  echo "  what iobatchd did (its log):"
  sed -n -E 's/.*msg="([^"]*)".*/\1/p' "$AGENT_LOG" | grep -E "svc-|iobatch-b" |
    grep -E "^(admitted|protecting|has slack|cap |'[^']*' has slack)|held|throttle" |
    sed -E "s/'iobatch-(b[0-9]+-[a-z-]+)'/'\1'/g" | uniq | head -30 | sed 's/^/    | /'
  printf '  service %.0f tps, missed %.1f%%, p99 %.1f ms; batch makespan %.1f s\n\n' "${TPS[iobatch]}" "${LATE[iobatch]}" "${P99[iobatch]}" "${MK[iobatch]}"
  agent_stop
  AGENT_STATE=$state_save
  echo "== 1c. the same, all at once through io.containerd.runc.v2"
  T0=$(now_ms)
  svc_run runc || return 1
  printf '  service %.0f tps, missed %.1f%%, p99 %.1f ms; batch makespan %.1f s\n\n' "${TPS[runc]}" "${LATE[runc]}" "${P99[runc]}" "${MK[runc]}"
  echo "== part 1 result (the service over its whole run; p99 includes the schedule lag)"
  printf '  %-22s %10s %8s %14s\n' "" "missed %" "p99 ms" "batch makespan"
  printf '  %-22s %10.1f %8.1f %14s\n' "alone" "${LATE[solo]}" "${P99[solo]}" "-"
  printf '  %-22s %10.1f %8.1f %13.1fs\n' "iobatch" "${LATE[iobatch]}" "${P99[iobatch]}" "${MK[iobatch]}"
  printf '  %-22s %10.1f %8.1f %13.1fs\n' "all at once (runc)" "${LATE[runc]}" "${P99[runc]}" "${MK[runc]}"
  SVC_RESULT=$(printf 'late_pct=%.1f (all at once %.1f, alone %.1f) makespan_ratio=%.2f' "${LATE[iobatch]}" \
    "${LATE[runc]}" "${LATE[solo]}" "$(calc "${MK[iobatch]} / ${MK[runc]}")")
  echo
  return 0
}
if [ "${DEMO_PART1:-1}" = 1 ]; then
  echo "=================== part 1: a service beside batch jobs"
  echo
  . bench/service/pg.sh
  part1 || echo "demo: part 1 did not complete (see above)" >&2
  agent_stop 2>/dev/null
  AGENT_STATE=$IOB_T/agentstate
fi

agent_start "" >/dev/null || die "iobatchd did not start (log: $AGENT_LOG)"
echo "=================== part 2: the host disk, where mixing costs nothing"
echo
echo "2 sequential writers (fio write, bs 1M, $SEQ_SIZE each) and 2 random writers"
echo "(fio randwrite, bs 4k, $RAND_SIZE each), O_DIRECT, started at once."
echo "Agent: iobatchd on its defaults (no penalty matrix, nothing learned);"
echo "sampler: $(ctl status --json | jq -r .sampler)."
echo
echo "== 1. through io.containerd.iobatch.v2"
run io.containerd.iobatch.v2 iob || die "the iobatch run failed"
echo
echo "== 2. the same jobs through io.containerd.runc.v2 (all at once)"
run io.containerd.runc.v2 runc || die "the runc run failed"
echo
# A second round in the reverse order, so that a disk that gets slower (or
# faster) during the demo does not favour one side.
if [ "$ROUNDS" -ge 2 ]; then
  echo "== 3. round two, reverse order: runc first"
  run io.containerd.runc.v2 runc2 || die "the runc run failed"
  echo
  echo "== 4. round two: iobatch"
  run io.containerd.iobatch.v2 iob2 || die "the iobatch run failed"
  echo
fi

echo "== result (seconds; wait = created until running, run = running until finished)"
printf '  %-6s %22s   %22s\n' "" "iobatch" "runc (all at once)"
printf '  %-6s %6s %6s %6s %6s   %6s %6s\n' job wait run total exit run exit
fail=0
for job in "${JOBS[@]}"; do
  a=iob-$job b=runc-$job
  printf '  %-6s %6s %6s %6s %6s   %6s %6s\n' "$job" \
    "$(secs $((ADMITTED[$a] - CREATED[$a])))" "$(secs $((FINISHED[$a] - ADMITTED[$a])))" \
    "$(secs $((FINISHED[$a] - CREATED[$a])))" "${EXIT[$a]}" \
    "$(secs $((FINISHED[$b] - ADMITTED[$b])))" "${EXIT[$b]}"
  [ "${EXIT[$a]}" -eq 0 ] && [ "${EXIT[$b]}" -eq 0 ] || fail=1
done
echo
printf '  makespan: iobatch %ss, runc %ss, ratio iobatch/runc %.2f\n' \
  "$(secs "${MAKESPAN[iob]}")" "$(secs "${MAKESPAN[runc]}")" \
  "$(calc "${MAKESPAN[iob]} / ${MAKESPAN[runc]}")"
if [ "$ROUNDS" -ge 2 ]; then
  printf '  round two: iobatch %ss, runc %ss, ratio %.2f; both rounds: ratio %.2f\n' \
    "$(secs "${MAKESPAN[iob2]}")" "$(secs "${MAKESPAN[runc2]}")" \
    "$(calc "${MAKESPAN[iob2]} / ${MAKESPAN[runc2]}")" \
    "$(calc "(${MAKESPAN[iob]} + ${MAKESPAN[iob2]}) / (${MAKESPAN[runc]} + ${MAKESPAN[runc2]})")"
  for pre in runc2 iob2; do
    for job in "${JOBS[@]}"; do [ "${EXIT[$pre-$job]}" -eq 0 ] || fail=1; done
  done
fi
[ $fail -eq 0 ] || die "a job did not exit with status 0"
held=${#PENDING[@]}
HOST_RESULT="host_held=$held"
if [ "$held" -eq 0 ]; then
  echo "  iobatch held nothing: on this disk every pair of jobs runs faster together"
  echo "  than one after the other, so the agent has no evidence that mixing costs"
  echo "  anything here, and with no evidence it admits."
else
  echo "  iobatch held $held start(s) on a disk where mixing costs nothing; the agent's"
  echo "  reasons are in its log ($AGENT_LOG)."
fi
pen=$AGENT_STATE/penalties.json
if [ -s "$pen" ]; then
  echo "  What it learned of this disk (slowdown of each class beside another):"
  jq -r '.pairs[] | "    \(.victim) beside \(.neighbour): x\(.slowdown * 100 | round / 100) (\(.samples) samples)"' "$pen" 2>/dev/null
fi
echo
agent_stop 2>/dev/null

if [ "${DEMO_PART3:-1}" = 1 ]; then
  echo "=================== part 3: a disk that punishes mixing (emulated HDD)"
  echo
  echo "simdisk (simdisk/README.md) serves a RAM-backed file as a block device whose"
  echo "requests complete when a model of a 7200 rpm drive says: seeks, rotation, zones,"
  echo "a segmented cache.  On it, streams that share the disk make its head travel:"
  echo "mixing costs time.  The paper-shaped mix (bench/mix.sh: 3 sequential writers,"
  echo "3 random writers, a sequential and a random reader, one request at a time)"
  echo "runs all at once through runc, then through iobatch with a fresh agent: it sees"
  echo "each class once alone, then learns from each run of the mix what beside what costs."
  echo
  mix_out=$IOB_T/mix
  mkdir -p "$mix_out"
  (
    DISK=hdd STYLE=qd1 REPEATS=1 FRESH_RUNS=0 SOLO_WARMUP=1 WARM_RUNS="${DEMO_MIX_RUNS:-3}" \
      MODES=all OUT_DIR="$mix_out" B="$IOB_B" bench/mix.sh >"$mix_out/log" 2>&1
    echo $? >"$mix_out/rc"
  ) &
  # its progress, as it goes
  tail -n +1 -F --pid=$! "$mix_out/log" 2>/dev/null | grep --line-buffered -E '^mix: (disk|rep)' | sed -u 's/^mix: /  /'
  if [ "$(cat "$mix_out/rc" 2>/dev/null)" = 0 ]; then
    r=$(jq -r '.iobatch_warm_vs_all // "na"' "$mix_out/hdd-qd1.json" 2>/dev/null)
    runs=$(jq -r '.iobatch_warm_runs_vs_all | map(tostring) | join(", ")' "$mix_out/hdd-qd1.json" 2>/dev/null)
    SIM_RESULT="simdisk_makespan_ratio=${r:-na}"
    echo
    echo "  makespan under iobatch / all at once, runs 1.. of the agent: ${runs:-na}"
    echo "  containers it held in the last run: $(jq -r '.held // "na"' "$mix_out/hdd-qd1.json" 2>/dev/null)"
    echo "  (bench/results/simdisk/ has the same mix with serial and a hand-made plan)"
  else
    echo "demo: part 3 did not complete:" >&2
    tail -5 "$mix_out/log" >&2
  fi
  echo
fi
result
