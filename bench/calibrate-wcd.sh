#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Calibrate the workload character detector with real fio: each of the four
# pure classes at two block sizes (psync, queue depth 1; plus libaio at
# depth 16 where io.stat is the source), the latency-sensitive workloads
# of issue #12 (a queue-depth-1 synchronous writer, a pgbench-like fio job,
# a queue-depth-1 reader that thinks between reads, and a real PostgreSQL
# under pgbench where one is installed), REPS times, each run in its own
# cgroup sampled by wcd-probe; then the known traps.  Prints markdown: every
# run, the confusion matrix (truth x detected, where a run flagged
# latency-sensitive counts as `latency`, whatever its I/O class), and the
# trap runs.
#
#   bench/calibrate-wcd.sh > /tmp/cal.md          # this host (procfs source)
#   bench/calibrate-wcd-vm.sh > /tmp/cal-vm.md    # the same in the cgroup v2 VM
#
# Environment: WCD_DIR (where fio's file goes; default build/.calibrate, on the
# disk under test), WCD_RUNTIME (s per run, 3), WCD_SIZE (file, 512M), REPS
# (2), WCD_PROBE (default $B/bin/wcd-probe or wcd-probe in PATH), WCD_SOURCE
# (procfs|io.stat, default: io.stat when the v2 io controller exists),
# WCD_CONFIG (a detector config file for the probe; default: its defaults),
# PG_SCALE (pgbench -i -s, 10), WCD_ONLY (a regex: only the cases whose
# label matches), WCD_KEEP (a directory: each run's probe.json and fio or
# pgbench output are copied there).
# Needs root (cgroups), fio, bash, awk.  No jq, so it also runs in the VM.
# The pgbench case needs PostgreSQL under /usr/lib/postgresql (postgresql-15,
# as bench/service.sh) and a `postgres` user; without them its rows say
# "not run" and it is left out of the matrix.
set -euo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$TOP/bench/calibrate-wcd-lib.sh" 2>/dev/null || . "$(dirname "${BASH_SOURCE[0]}")/calibrate-wcd-lib.sh"
B=${B:-build}
case "$B" in /*) ;; *) B=$TOP/$B ;; esac
WCD_PROBE=${WCD_PROBE:-$B/bin/wcd-probe}
[ -x "$WCD_PROBE" ] || WCD_PROBE=$(command -v wcd-probe) || { echo "no wcd-probe (make build/bin/wcd-probe)" >&2; exit 1; }
RT=${WCD_RUNTIME:-3}
SIZE=${WCD_SIZE:-512M}
REPS=${REPS:-2}
wcd_env
DIR=${WCD_DIR:-$(wcd_data_dir "$TOP/build/.calibrate" /tmp/.wcd-calibrate)} ||
  { echo "calibrate-wcd: no directory on a block device" >&2; exit 1; }
mkdir -p "$DIR"
WORK=$(mktemp -d /tmp/wcdcal.XXXXXX)
PGD=
trap 'pg_cleanup; rm -rf "$WORK" "$DIR/f"' EXIT
FILE=$DIR/f

# the data file, laid out outside any measured cgroup, with O_DIRECT so it
# is not left in the page cache
fio --name=layout --filename="$FILE" --rw=write --bs=1M --size="$SIZE" --direct=1 \
  --ioengine=psync --output=/dev/null >/dev/null

jfield() { sed -n "s/.*\"$2\":\"\{0,1\}\([^\",}]*\).*/\1/p" "$1"; }

# ---- the real database: PostgreSQL under pgbench --------------------------
# The server (Debian's defaults: fsync and synchronous_commit on, so every
# commit waits for its WAL flush; 128 MB shared buffers) runs in the
# measured cgroup, as in a container; pgbench runs outside it (the client
# does no disk I/O).  The data (pgbench -i -s $PG_SCALE) is made once, outside
# any measured cgroup, and copied for each run; the probe samples RT seconds
# once pgbench has run for a second, as the agent samples a running service.
PG_SCALE=${PG_SCALE:-10}
PG_BIN=
for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
  if [ -x "$d/postgres" ] && [ -x "$d/initdb" ] && [ -x "$d/pgbench" ] && [ -x "$d/pg_ctl" ]; then
    PG_BIN=$d
    break
  fi
done
PG_WHY=
if [ -z "$PG_BIN" ]; then
  PG_WHY="no PostgreSQL server under /usr/lib/postgresql"
elif ! id -u postgres >/dev/null 2>&1; then
  PG_WHY="no postgres user"
elif ! command -v runuser >/dev/null; then
  PG_WHY="no runuser"
fi
PG_PID=
pg_cleanup() {
  [ -n "$PG_PID" ] && kill -INT "$PG_PID" 2>/dev/null && wait "$PG_PID" 2>/dev/null
  PG_PID=
  [ -n "$PGD" ] && rm -rf "$PGD"
  return 0
}
pg_server() { # DATADIR LOG [CGROUP]: start the server (in CGROUP), wait until ready
  local data=$1 log=$2 cg=${3:-}
  (
    [ -z "$cg" ] || echo $BASHPID >"$cg/cgroup.procs"
    exec runuser -u postgres -- "$PG_BIN/postgres" -D "$data" -c listen_addresses= \
      -c unix_socket_directories="$PGD/sock" -c max_connections=20
  ) </dev/null >"$log" 2>&1 &
  PG_PID=$!
  for _ in $(seq 1 300); do
    "$PG_BIN/pg_isready" -q -h "$PGD/sock" -U postgres 2>/dev/null && return 0
    kill -0 "$PG_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "postgres did not start: $(tail -3 "$log")" >&2
  return 1
}
pg_server_stop() {
  runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$1" -m fast -w stop >/dev/null 2>&1 || kill -INT "$PG_PID" 2>/dev/null
  wait "$PG_PID" 2>/dev/null
  PG_PID=
}
pg_template() { # once: initdb and pgbench -i into $PGD/tmpl
  [ -z "$PGD" ] || return 0
  PGD=$DIR/pg.$$
  mkdir -p "$PGD/sock"
  chmod 755 "$DIR"
  chown -R postgres: "$PGD"
  runuser -u postgres -- "$PG_BIN/initdb" -D "$PGD/tmpl" --auth=trust -E UTF8 --locale=C >"$WORK/initdb.log" 2>&1 ||
    { echo "initdb failed: $(tail -3 "$WORK/initdb.log")" >&2; return 1; }
  pg_server "$PGD/tmpl" "$WORK/pg-tmpl.log" || return 1
  "$PG_BIN/pgbench" -h "$PGD/sock" -U postgres -i -s "$PG_SCALE" -q postgres >"$WORK/pgbench-i.log" 2>&1 ||
    { echo "pgbench -i failed: $(tail -3 "$WORK/pgbench-i.log")" >&2; pg_server_stop "$PGD/tmpl"; return 1; }
  pg_server_stop "$PGD/tmpl"
}
# wcd_pgbench NAME OUTDIR: as wcd_fio, for the database
wcd_pgbench() {
  local name=$1 out=$2 cg=$WCD_V2/$1 rc=0
  pg_template || return 1
  mkdir -p "$out" "$cg"
  rm -rf "$PGD/data"
  cp -a "$PGD/tmpl" "$PGD/data"
  sync # the copy's writeback is not the server's
  pg_server "$PGD/data" "$out/pg.log" "$cg" || { rmdir "$cg" 2>/dev/null; return 1; }
  "$PG_BIN/pgbench" -h "$PGD/sock" -U postgres -c 4 -j 2 -T $((RT + 2)) postgres >"$out/pgbench.txt" 2>&1 &
  local pgb=$!
  sleep 1
  "$WCD_PROBE" --cgdir "$cg" --source "$WCD_SOURCE" ${WCD_CONFIG:+--config "$WCD_CONFIG"} \
    --interval-ms 100 --duration-ms $((RT * 1000)) \
    >"$out/probe.json" 2>"$out/probe.err" || rc=1
  wait "$pgb" || rc=1
  pg_server_stop "$PGD/data"
  rmdir "$cg" 2>/dev/null
  [ $rc = 0 ] || { echo "wcd_pgbench: $(tail -2 "$out/pgbench.txt" "$out/probe.err")" >&2; return 1; }
  grep -m1 '^tps' "$out/pgbench.txt" >"$out/tps" || true
}

# case lines: KIND TRUTH LABEL FIO-ARGS...   (KIND: pure | qd | lat | trap;
# FIO-ARGS @pgbench: the database above)
cases() {
  local d="--direct=1 --ioengine=psync"
  echo "pure seq-read   read-1M       --rw=read --bs=1M $d"
  echo "pure seq-read   read-128k     --rw=read --bs=128k $d"
  echo "pure rand-read  randread-4k   --rw=randread --bs=4k $d"
  echo "pure rand-read  randread-16k  --rw=randread --bs=16k $d"
  echo "pure seq-write  write-1M      --rw=write --bs=1M $d"
  echo "pure seq-write  write-128k    --rw=write --bs=128k $d"
  echo "pure rand-write randwrite-4k  --rw=randwrite --bs=4k $d"
  echo "pure rand-write randwrite-16k --rw=randwrite --bs=16k $d"
  echo "qd   rand-read  randread-4k-aio16  --rw=randread --bs=4k --direct=1 --ioengine=libaio --iodepth=16"
  echo "qd   rand-write randwrite-4k-aio16 --rw=randwrite --bs=4k --direct=1 --ioengine=libaio --iodepth=16"
  echo "qd   seq-write  write-1M-aio16     --rw=write --bs=1M --direct=1 --ioengine=libaio --iodepth=16"
  # Latency-sensitive (issue #12): each waits on its requests one at a time.
  # The reader that runs flat out (randread-4k above, and protect.sh's
  # victim) is the batch rand-read class: counters cannot tell the two
  # apart, so it counts as batch here and must be declared to be protected.
  echo "lat  latency    sync-randwrite-8k  --rw=randwrite --bs=8k --iodepth=1 --fsync=1 --direct=0 --ioengine=psync"
  echo "lat  latency    osync-randwrite-8k --rw=randwrite --bs=8k --iodepth=1 --sync=1 --direct=0 --ioengine=psync"
  echo "lat  latency    pgbench-like-fio   --rw=randrw --rwmixread=50 --bs=8k --iodepth=1 --fdatasync=1 --direct=0 --ioengine=psync"
  echo "lat  latency    qd1-randread-think --rw=randread --bs=8k --iodepth=1 --direct=1 --ioengine=psync --thinktime=500"
  echo "lat  latency    pgbench            @pgbench"
  echo "trap seq-write  write-4k-direct    --rw=write --bs=4k $d"
  echo "trap seq-read   read-4k-direct     --rw=read --bs=4k $d"
  echo "trap seq-write  write-1M-buffered  --rw=write --bs=1M --direct=0 --ioengine=psync"
  echo "trap seq-read   read-1M-cached     --rw=read --bs=1M --direct=0 --ioengine=psync --pre_read=1"
}

echo "## Run on $(uname -n), kernel $(uname -r), source: $WCD_SOURCE$([ "$WCD_SOURCE" = procfs ] && echo ' (lower fidelity)')"
echo
echo "Generated by \`bench/calibrate-wcd.sh\` (WCD_RUNTIME=$RT WCD_SIZE=$SIZE REPS=$REPS) on $(date -u '+%Y-%m-%d %H:%M UTC'); data file in \`$DIR\` ($(df -P "$DIR" | awk 'NR == 2 { print $1 }'))."
echo
echo "Latency thresholds: $(if [ -n "${WCD_CONFIG:-}" ]; then echo "\`$WCD_CONFIG\`: $(grep -v '^#' "$WCD_CONFIG" | tr '\n' ' ')"; else echo "the defaults (\`wcd_config_default\`)"; fi). Load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "| kind | run | truth | class | latency | confidence | read share | avg read | avg write | MiB/s | req/s | stall % |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
: >"$WORK/results"
cases | awk -v only="${WCD_ONLY:-}" 'only == "" || $3 ~ only' >"$WORK/cases" # a file, not <(...): the VM has no /dev/fd
n=0
while read -r kind truth label args; do
  for rep in $(seq 1 "$REPS"); do
    n=$((n + 1))
    out=$WORK/run$n
    if [ "$args" = @pgbench ] && [ -n "$PG_WHY" ]; then
      echo "| $kind | $label #$rep | $truth | (not run: $PG_WHY) | | | | | | | | |"
      echo "$kind $truth notrun false" >>"$WORK/results"
      continue
    fi
    if [ "$args" = @pgbench ]; then
      wcd_pgbench "wcdcal$$-$n" "$out"
    else
      # shellcheck disable=SC2086
      wcd_fio "wcdcal$$-$n" "$out" --name="$label" --filename="$FILE" --size="$SIZE" \
        --time_based --runtime="$RT" --randrepeat=0 $args
    fi || {
      echo "| $kind | $label #$rep | $truth | (run failed) | | | | | | | | |"
      echo "$kind $truth failed false" >>"$WORK/results"
      continue
    }
    p=$out/probe.json
    cls=$(jfield "$p" class)
    lat=$(jfield "$p" latency)
    printf '| %s | %s #%d | %s | %s | %s | %.2f | %.2f | %s | %s | %.0f | %.0f | %.0f |\n' "$kind" "$label" "$rep" "$truth" \
      "$cls" "$([ "$lat" = true ] && echo '**yes**' || echo no)" "$(jfield "$p" confidence)" "$(jfield "$p" read_share)" \
      "$(awk -v v="$(jfield "$p" ravg)" 'BEGIN { printf "%.0f KiB", v / 1024 }')" \
      "$(awk -v v="$(jfield "$p" wavg)" 'BEGIN { printf "%.0f KiB", v / 1024 }')" \
      "$(awk -v r="$(jfield "$p" rbytes)" -v w="$(jfield "$p" wbytes)" -v s="$(jfield "$p" seconds)" 'BEGIN { print (s > 0 ? (r + w) / s / 1048576 : 0) }')" \
      "$(awk -v r="$(jfield "$p" riops)" -v w="$(jfield "$p" wiops)" 'BEGIN { print r + w }')" \
      "$(jfield "$p" stall_some)"
    [ -s "$out/tps" ] && echo "$label #$rep: pgbench $(cat "$out/tps")" >>"$WORK/notes"
    echo "$kind $truth $cls $lat" >>"$WORK/results"
    [ -z "${WCD_KEEP:-}" ] || { mkdir -p "$WCD_KEEP/$label-$rep" && cp -r "$out"/. "$WCD_KEEP/$label-$rep/"; }
  done
done <"$WORK/cases"

echo
echo "### Confusion matrix (rows: truth, columns: predicted)"
echo
qd_in=0
[ "$WCD_SOURCE" = io.stat ] && qd_in=1
echo "Pure psync runs$([ $qd_in = 1 ] && echo ' and libaio depth-16 runs')$([ $qd_in = 0 ] && echo '; the libaio runs are left out because the procfs source cannot see their requests (see traps)'), and the latency-sensitive runs. A run flagged latency-sensitive (\`wcd_result.latency\`) is counted as \`latency\` whatever its I/O class; a batch run is right only with its class and no flag."
echo
awk -v qd="$qd_in" '
  BEGIN { nc = split("seq-read rand-read seq-write rand-write mixed idle unknown latency failed", C, " ") }
  $1 == "pure" || ($1 == "qd" && qd == 1) || ($1 == "lat" && $3 != "notrun") {
    p = $4 == "true" ? "latency" : $3
    m[$2, p]++; rows[$2] = 1; tot++; if ($2 == p) good++
    if ($2 == "latency") { nl++; fl += $4 == "true" } else { nb++; fb += $4 == "true" }
  }
  $3 == "notrun" { skipped++ }
  END {
    h = "| truth \\ detected |"; s = "|---|"
    for (i = 1; i <= nc; i++) { h = h " " C[i] " |"; s = s "---|" }
    print h; print s
    split("seq-read rand-read seq-write rand-write latency", R, " ")
    for (i = 1; i <= 5; i++) {
      r = R[i]; if (!(r in rows)) continue
      l = "| " r " |"
      for (j = 1; j <= nc; j++) l = l " " ((r, C[j]) in m ? m[r, C[j]] : 0) " |"
      print l
    }
    printf "\nCorrect: %d of %d (%.0f%%). Latency flag: %d of %d latency-sensitive runs, %d of %d batch runs.\n",
      good, tot, tot ? 100 * good / tot : 0, fl, nl, fb, nb
    if (skipped) printf "Not run (left out above): %d.\n", skipped
  }' "$WORK/results"
if [ -s "$WORK/notes" ]; then
  echo
  sed 's/^/- /' "$WORK/notes"
fi
