#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What a rate-limited PostgreSQL's block I/O looks like to the agent (issue
# #22): PostgreSQL in a container through io.containerd.iobatch.v2
# (class latency, kind service), pgbench -R at a fixed rate with -L, and a
# sequential O_DIRECT fio writer container beside it for the middle third.
# Each agent window (iobatchctl status, deduplicated by io_lat_windows) is
# recorded beside what the kernel says of the service's cgroup and of the
# root cgroup over the same interval:
#   agent:  io_lat_count, io_lat_p99_us, io_stall_share, read/write_bps, lat_target
#   kernel: the service's v1 blkio.throttle.io_serviced (requests its blkcg
#           was charged), the root blkio cgroup's, the disk's completed
#           writes (/proc/diskstats), the service's processes' write_bytes
#           (/proc/PID/io: what they caused to be written) and its unified
#           io.pressure "some" stall share;
# and pgbench's own latency log (misses per second: later than LAT_LIMIT_MS
# after the scheduled start, or skipped).
# Output: OUT_DIR/windows.jsonl, summary.json, summary.md.
# Usage: bench/service-attrib.sh   env: RATE=600 DURATION=45 LAT_LIMIT_MS=10
#   PG_SCALE=10 PG_CLIENTS=4 SAMPLE=1s OUT_DIR=bench/results/service-attrib B=build
set -euo pipefail
cd "$(dirname "$0")/.."
RATE=${RATE:-600}
DURATION=${DURATION:-45}
LAT_LIMIT_MS=${LAT_LIMIT_MS:-10}
SAMPLE=${SAMPLE:-1s}
OUT_DIR=${OUT_DIR:-bench/results/service-attrib}
SCRATCH_PARENT=${SCRATCH_PARENT:-/var/tmp}
[ "$(id -u)" = 0 ] || { echo "service-attrib: must run as root" >&2; exit 1; }
source tests/integration/lib/common.sh
source tests/integration/lib/agent.sh
source bench/service/pg.sh
pg_find
SCR=$(mktemp -d "$SCRATCH_PARENT/iob-attr.XXXXXX")
chmod 755 "$SCR"
at_exit "rm -rf '$SCR'"
AGENT_SAMPLE_PERIOD=$SAMPLE agent_start "latency_source = bpf" || { echo "no agent" >&2; exit 1; }
export IOBATCH_AGENT_SOCKET=$AGENT_SOCK
iob_containerd_start || exit 1
PG_ROOTFS=$IOB_T/pg-rootfs
pg_rootfs "$PG_ROOTFS"
FIO_ROOTFS=$IOB_T/fio-rootfs
iob_rootfs_busybox "$FIO_ROOTFS"
iob_rootfs_add_binary "$FIO_ROOTFS" "$(command -v fio)"
fio --name=layout --filename="$SCR/w.dat" --rw=write --bs=1M --direct=1 --size=2048M >/dev/null
pg_initdb "$SCR/pgdata"
SOCK=$IOB_T/pgsock
RT=io.containerd.iobatch.v2
pg_start $RT pg "$SCR/pgdata" "$SOCK" "$IOB_T/pg.log" --annotation io.iobatch.class=latency \
  --annotation io.iobatch.kind=service
at_exit "pg_stop pg"
pgb_init "$SOCK" "$PG_SCALE"
PGPID=$(agent_field pg pid)
blk=$(awk -F: '$2 == "blkio" { print $3 }' "/proc/$PGPID/cgroup")
uni=$(awk -F: '$1 == "0" { print $3 }' "/proc/$PGPID/cgroup")
BLK=/sys/fs/cgroup/blkio$blk
PSI=/sys/fs/cgroup/unified$uni/io.pressure
DEV=$(df --output=source "$SCR" | tail -1)
DEV=${DEV#/dev/}
echo "service-attrib: pg pid $PGPID blkio '$blk' unified '$uni' disk $DEV; load $(cut -d' ' -f1-3 /proc/loadavg)"
serviced() { awk '$1 == "Total" { print $2 }' "$1/blkio.throttle.io_serviced" 2>/dev/null || echo 0; }
pg_wbytes() {
  local s=0 p v
  for p in $(cat "$BLK/cgroup.procs"); do
    v=$(awk '$1 == "write_bytes:" { print $2 }' "/proc/$p/io" 2>/dev/null || echo 0)
    s=$((s + ${v:-0}))
  done
  echo $s
}
stall_us() { awk '$1 == "some" { sub("total=", "", $5); print $5 }' "$PSI" 2>/dev/null || echo -1; }
disk_wios() { awk -v d="$DEV" '$3 == d { print $8 }' /proc/diskstats; }
PGB_EXTRA=(-R "$RATE" -L "$LAT_LIMIT_MS")
pgb_start "$SOCK" "$IOB_T/pgb" "$DURATION" "$PG_CLIENTS"
T0=$(date +%s%N)
third=$((DURATION / 3))
(sleep "$third"
 $CTR run --rm --null-io --runtime $RT --annotation io.iobatch.class=seq-write \
   --annotation io.iobatch.kind=job --mount "type=bind,src=$SCR,dst=/data,options=rbind:rw" \
   --rootfs "$FIO_ROOTFS" w /usr/bin/fio --name=w --filename=/data/w.dat --rw=write --bs=1M \
   --direct=1 --ioengine=libaio --iodepth=8 --size=2048M --time_based --runtime="$third" \
   >/dev/null 2>&1 || true) &
WPID=$!
mkdir -p "$OUT_DIR"
: >"$OUT_DIR/windows.jsonl"
last=-1 p_sv=$(serviced "$BLK") p_root=$(serviced /sys/fs/cgroup/blkio) p_wb=$(pg_wbytes)
p_st=$(stall_us) p_dw=$(disk_wios) p_t=$(date +%s%N)
while kill -0 "$PGB_PID" 2>/dev/null; do
  sleep 0.2
  s=$(iobatchctl status --json 2>/dev/null) || continue
  w=$(jq -r '.containers[] | select(.id == "pg") | .io_lat_windows' <<<"$s")
  [ "$w" != "$last" ] || continue
  last=$w
  t=$(date +%s%N) sv=$(serviced "$BLK") root=$(serviced /sys/fs/cgroup/blkio) wb=$(pg_wbytes)
  st=$(stall_us) dw=$(disk_wios)
  dt=$(((t - p_t) / 1000))
  jq -c --argjson t "$(((t - T0) / 1000000))" --argjson dt "$dt" --argjson sv $((sv - p_sv)) \
    --argjson root $((root - p_root)) --argjson wb $((wb - p_wb)) --argjson dw $((dw - p_dw)) \
    --argjson st "$(awk -v a="$p_st" -v b="$st" -v dt="$dt" 'BEGIN { printf "%.4f", (a < 0 || b < 0) ? -1 : (b - a) / dt }')" \
    --argjson batch "$(jq '[.containers[] | select(.id == "w" and .state == "running")] | length' <<<"$s")" \
    '.containers[] | select(.id == "pg") | {t_ms: $t, window: .io_lat_windows, batch: $batch,
      agent: {count: .io_lat_count, p99_us: .io_lat_p99_us, stall: .io_stall_share, io_lat_valid,
              read_bps, write_bps, lat_target, lat_target_source},
      kernel: {pg_blkio_serviced: $sv, root_blkio_serviced: $root, disk_writes: $dw,
               pg_write_bytes: $wb, pg_psi_some_share: $st, interval_us: $dt}}' <<<"$s" \
    >>"$OUT_DIR/windows.jsonl"
  p_sv=$sv p_root=$root p_wb=$wb p_st=$st p_dw=$dw p_t=$t
done
wait "$PGB_PID" || true
wait "$WPID" || true
cp "$IOB_T/pgb.txt" "$OUT_DIR/pgbench.txt"
# pgbench's misses per second since T0 (late or skipped)
_pgb_lines "$IOB_T/pgb" | awk -v t0="$T0" -v lim="$LAT_LIMIT_MS" '
  NF >= 7 { s = int((($5 * 1000000 + $6) * 1000 - t0) / 1e9); n[s]++
            if ($3 == "skipped" || ($3 + $7) / 1000 > lim) m[s]++; if (s > mx) mx = s }
  END { for (i = 0; i <= mx; i++) printf "{\"s\":%d,\"n\":%d,\"missed\":%d}\n", i, n[i] + 0, m[i] + 0 }' \
  >"$OUT_DIR/pgbench-seconds.jsonl"
slo=$(pgb_slo "$IOB_T/pgb" "$LAT_LIMIT_MS")
jq -s --argjson slo "$slo" --arg date "$(date -u +%FT%TZ)" --argjson rate "$RATE" \
  --arg cmd "RATE=$RATE DURATION=$DURATION bench/service-attrib.sh" \
  --arg commit "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
  --arg host "$(uname -r), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" '
  def phase(b): map(select(.batch == b and .agent.io_lat_valid));
  def sum(f): map(f) | add // 0;
  def stats(w): {windows: (w | length),
    agent_requests: (w | sum(.agent.count)), pg_blkio_serviced: (w | sum(.kernel.pg_blkio_serviced)),
    root_blkio_serviced: (w | sum(.kernel.root_blkio_serviced)), disk_writes: (w | sum(.kernel.disk_writes)),
    pg_write_mib: ((w | sum(.kernel.pg_write_bytes)) / 1048576),
    agent_p99_us_median: (w | map(.agent.p99_us) | sort | if length > 0 then .[length / 2 | floor] else null end),
    psi_some_share_mean: (if (w | length) > 0 then (w | sum(.kernel.pg_psi_some_share)) / (w | length) else null end)};
  {benchmark: "service-attrib", command: $cmd, commit: $commit, date: $date, host: $host,
   rate: $rate, pgbench: $slo,
   alone: stats(phase(0)), beside_writer: stats(phase(1))}' "$OUT_DIR/windows.jsonl" >"$OUT_DIR/summary.json"
cat "$OUT_DIR/summary.json"
