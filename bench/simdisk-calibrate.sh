#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Calibration of the emulated disk (simdisk/README.md): for each model, fio
# alone on the raw block device (O_DIRECT, libaio): sequential 1 MiB and
# 128 KiB and random 4 KiB, read and write, at QD1 and QD32; then pairs:
# two sequential 128 KiB readers at 0 and half the device, and a
# sequential 128 KiB writer beside a random 4 KiB writer, each alone and
# together.  A pair's ratio is the time the data moved together took over
# the time it would take one after the other at the rates each reached
# alone (> 1: mixing is punished).  Writes
#   bench/results/simdisk/calibration-MODEL.json
# with the date, the commit, /proc/loadavg around every run, the daemon's
# CPU use (utime + stime from /proc/PID/stat over the run's wall time, in
# % of one core), the model's expected numbers from its cited parameters
# beside the measured ones, and the daemon's counters (simdisk --stats:
# the most reads and writes it had in flight, how late it replied).
#
# Run it on a quiet machine (load average below 1); it says so when not.
# The ssd model is filled sequentially first, so random writes meet a
# full FTL (GC starts once the over-provisioned blocks are used).
#
#   bench/simdisk-calibrate.sh [MODEL...]      (default: hdd ssd pass)
#   env: B=build RUNTIME=5 (seconds per run) SIZE=4G SCALE=1 (simdisk -x)
#        OUT_DIR=bench/results/simdisk
set -euo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
export B=${B:-build}
RUNTIME=${RUNTIME:-5}
SIZE=${SIZE:-4G}
SCALE=${SCALE:-1}
OUT_DIR=${OUT_DIR:-bench/results/simdisk}
SD=$top/simdisk/simdisk.sh
[ "$(id -u)" -eq 0 ] || { echo "simdisk-calibrate: needs root" >&2; exit 1; }
for c in fio jq losetup; do
  command -v "$c" >/dev/null || { echo "simdisk-calibrate: '$c' not found" >&2; exit 1; }
done
[ -x "$B/bin/simdisk" ] || { echo "simdisk-calibrate: build it first: make" >&2; exit 1; }
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(hdd ssd pass)

work=$(mktemp -d /tmp/sdcal.XXXXXX)
cleanup() {
  local m
  for m in "${models[@]}"; do "$SD" down "$work/$m" >/dev/null 2>&1 || true; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

load1() { cut -d' ' -f1 /proc/loadavg; }
quiet=true
if awk -v l="$(load1)" 'BEGIN { exit !(l >= 1) }'; then
  quiet=false
  echo "simdisk-calibrate: load average $(load1) is not below 1: the numbers will show the load" >&2
fi

# cpu_ticks PID: utime + stime of the daemon, in clock ticks
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
now_ms() { awk '{ printf "%.0f\n", $1 * 1000 }' /proc/uptime; }

# measure NAME JSONARGS FIO-ARGS...: run fio, print one JSON object with
# fio's per-job results and the context
measure() {
  local name=$1 extra=$2 l0 l1 c0 c1 t0 t1
  shift 2
  l0=$(cat /proc/loadavg) c0=$(cpu_ticks "$pid") t0=$(now_ms)
  fio --output-format=json "$@" >"$work/fio.json" ||
    { echo "simdisk-calibrate: fio failed: $*" >&2; exit 1; }
  t1=$(now_ms) c1=$(cpu_ticks "$pid") l1=$(cat /proc/loadavg)
  jq -c --arg name "$name" --argjson extra "$extra" --arg l0 "$l0" --arg l1 "$l1" \
    --argjson cpu "$(awk -v c="$((c1 - c0))" -v hz="$(getconf CLK_TCK)" -v ms="$((t1 - t0))" \
      'BEGIN { printf "%.1f", (ms > 0 ? 100 * c / hz / (ms / 1000) : 0) }')" '
    {name: $name, loadavg_before: $l0, loadavg_after: $l1, daemon_cpu_percent: $cpu,
     jobs: [.jobs[] | {job: .jobname,
       read: {MBps: (.read.bw_bytes / 1e6), iops: .read.iops, lat_mean_us: (.read.lat_ns.mean / 1e3),
              kib: .read.io_kbytes, runtime_ms: .read.runtime},
       write: {MBps: (.write.bw_bytes / 1e6), iops: .write.iops, lat_mean_us: (.write.lat_ns.mean / 1e3),
               kib: .write.io_kbytes, runtime_ms: .write.runtime}}]} + $extra' "$work/fio.json"
}

# job NAME RW BS QD OFFSET SIZE: fio arguments for one job
job() {
  echo "--name=$1" "--filename=$dev" "--rw=$2" "--bs=$3" "--iodepth=$4" --direct=1 \
    --ioengine=libaio "--offset=$5" "--size=$6" --time_based "--runtime=$RUNTIME" \
    --randrepeat=1 --random_generator=tausworthe64
}

# pair NAME "RW BS OFF" "RW BS OFF": each alone at QD1, then together
pair() {
  local name=$1 a b t rw1 bs1 off1 rw2 bs2 off2
  read -r rw1 bs1 off1 <<<"$2"
  read -r rw2 bs2 off2 <<<"$3"
  # shellcheck disable=SC2046 # job prints separate words on purpose
  {
    a=$(measure "$name-alone-a" '{}' $(job a "$rw1" "$bs1" 1 "$off1" "$half"))
    b=$(measure "$name-alone-b" '{}' $(job b "$rw2" "$bs2" 1 "$off2" "$half"))
    t=$(measure "$name-together" '{}' $(job a "$rw1" "$bs1" 1 "$off1" "$half") \
      $(job b "$rw2" "$bs2" 1 "$off2" "$half"))
  }
  jq -c -n --arg name "$name" --argjson a "$a" --argjson b "$b" --argjson t "$t" '
    def kib(j): j.read.kib + j.write.kib;
    def ms(j): [j.read.runtime_ms, j.write.runtime_ms] | max;
    def rate(r): kib(r.jobs[0]) / ms(r.jobs[0]);
    ($t.jobs | map(ms(.)) | max) as $together
    | (kib($t.jobs[0]) / rate($a) + kib($t.jobs[1]) / rate($b)) as $serial
    | {name: $name, alone: [$a, $b], together: $t,
       ratio_together_over_serial: (if $serial > 0 then $together / $serial else null end)}'
}

# The model's own numbers from its cited parameters (simdisk/hdd.h, ssd.h)
expected() {
  case $1 in
  hdd) jq -n '{source: "Seagate Barracuda 7200.14 (ST2000DM001) data sheet; Hitachi 7K320 OEM spec (track-to-track, full stroke)",
      rpm: 7200, avg_seek_read_ms: 8.5, avg_seek_write_ms: 9.5, track_to_track_ms: 1.0, full_stroke_ms: 20.0,
      od_sustained_MBps: 210, id_sustained_MBps: 105, cache_MB: 64,
      seq_read_at_0_MBps: 210, rand_4k_qd1_iops: (1000 / (8.5 + 4.1667 + 0.02))}' ;;
  ssd) jq -n '{source: "MQSim ssdconfig.xml (CMU-SAFARI/MQSim 0d76b1d)",
      channels: 8, chips_per_channel: 4, dies_per_chip: 2, page_bytes: 8192, pages_per_block: 256,
      read_us: 75, program_us: 75, erase_ms: 3.8, overprovisioning: 0.07, channel_MBps: 333,
      host_link_MBps: 400, write_buffer_MB: 256,
      seq_MBps_bound: 400, rand_4k_read_qd1_iops: (1e6 / (75 + 24.6 + 10.2))}' ;;
  *) jq -n '{note: "no model: every request completes on arrival"}' ;;
  esac
}

mkdir -p "$OUT_DIR"
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
for model in "${models[@]}"; do
  echo "== $model" >&2
  out=$("$SD" up "$model" "$work/$model" --no-fs -s "$SIZE" -x "$SCALE")
  dev=$(sed -n 's/^device=//p' <<<"$out")
  pid=$(sed -n 's/^pid=//p' <<<"$out")
  bytes=$(blockdev --getsize64 "$dev")
  half=$((bytes / 2))
  : >"$work/runs.jsonl"
  precond=null
  if [ "$model" = ssd ]; then
    t0=$(now_ms)
    fio --name=fill --filename="$dev" --rw=write --bs=1m --iodepth=32 --direct=1 --ioengine=libaio \
      --size="$bytes" --output-format=terse >/dev/null
    precond="{\"sequential_fill_ms\": $(($(now_ms) - t0))}"
  fi
  for spec in "seq-read-1m read 1m" "seq-read-128k read 128k" "rand-read-4k randread 4k" \
    "seq-write-1m write 1m" "seq-write-128k write 128k" "rand-write-4k randwrite 4k"; do
    read -r name rw bs <<<"$spec"
    for qd in 1 32; do
      echo "   $name qd$qd $(date +%T)" >&2
      # shellcheck disable=SC2046
      measure "$name-qd$qd" "{\"rw\": \"$rw\", \"bs\": \"$bs\", \"iodepth\": $qd}" \
        $(job "$name" "$rw" "$bs" "$qd" 0 "$half") >>"$work/runs.jsonl"
    done
  done
  echo "   pairs" >&2
  pair two-seq-readers "read 128k 0" "read 128k $half" >"$work/pairs.jsonl"
  pair seq-writer-rand-writer "write 128k 0" "randwrite 4k $half" >>"$work/pairs.jsonl"
  "$SD" down "$work/$model"
  jq -n --arg cmd "bench/simdisk-calibrate.sh $model (RUNTIME=$RUNTIME SIZE=$SIZE SCALE=$SCALE)" \
    --arg date "$(date -u +%FT%TZ)" --arg commit "$commit" --arg model "$model" \
    --arg kernel "$(uname -r)" --argjson quiet "$quiet" --argjson scale "$SCALE" \
    --argjson expected "$(expected "$model")" --argjson precond "$precond" \
    --arg stats "$(cat "$work/$model/stats")" \
    --slurpfile runs "$work/runs.jsonl" --slurpfile pairs "$work/pairs.jsonl" '
    {command: $cmd, date: $date, commit: $commit, model: $model, kernel: $kernel,
     quiet_machine: $quiet, scale: $scale, expected_from_parameters: $expected,
     preconditioning: $precond, runs: $runs, pairs: $pairs,
     daemon_stats: ($stats | split("\n") | map(select(length > 0) | split(" ")
       | {(.[0]): (.[1] | tonumber? // .)}) | add)}' >"$OUT_DIR/calibration-$model.json"
  echo "   wrote $OUT_DIR/calibration-$model.json" >&2
done
