#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Penalty matrix of this machine (issue 5, `iobatchctl calibrate`): runs the
# calibration on the host disk and writes
#   bench/results/penalty-matrix.conf  the batcher config file (matrix.* rows,
#                                      seq_slowdown, slowdown_scale) with the
#                                      date and host in its header
#   bench/results/calibration.json     every measurement
#   bench/results/calibration.md       the tables
# Uses `iobatchctl calibrate` when the CLI dispatches it, else the standalone
# driver $B/bench/iobctl-calibrate (make build/bench/iobctl-calibrate).
# Usage: bench/calibrate.sh [extra calibrate options, e.g. --repeats 5]
#   env: SCRATCH_PARENT=/var/tmp B=build OUT_DIR=bench/results
set -euo pipefail
cd "$(dirname "$0")/.."
B=${B:-build}
OUT_DIR=${OUT_DIR:-bench/results}
SCRATCH_PARENT=${SCRATCH_PARENT:-/var/tmp}
if [ -x "$B/bin/iobatchctl" ] && "$B/bin/iobatchctl" calibrate --help >/dev/null 2>&1; then
  CAL=("$B/bin/iobatchctl" calibrate)
elif [ -x "$B/bench/iobctl-calibrate" ]; then
  CAL=("$B/bench/iobctl-calibrate")
else
  echo "calibrate: build it first: make $B/bench/iobctl-calibrate" >&2
  exit 1
fi
command -v fio >/dev/null || { echo "calibrate: 'fio' not found" >&2; exit 1; }
mkdir -p "$OUT_DIR"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
START=$(date -u +%FT%TZ)
T0=$(date +%s)
# the calibration removes its own scratch directory, also when interrupted
"${CAL[@]}" --dir "$SCRATCH_PARENT" --output "$tmp/matrix.conf" --json "$tmp/cal.json" "$@"
ELAPSED=$(($(date +%s) - T0))
DISK=$(df --output=source "$SCRATCH_PARENT" | tail -1)
SCHED=$(xargs <"/sys/block/$(basename "$DISK")/queue/scheduler" 2>/dev/null || echo unknown)
CMD="bench/calibrate.sh $* (runs: ${CAL[*]} --dir $SCRATCH_PARENT ...)"
jq --arg cmd "$CMD" --arg start "$START" --argjson elapsed "$ELAPSED" --arg disk "$DISK" \
  --arg sched "$SCHED" --arg kernel "$(uname -r)" \
  '{benchmark: "calibrate", command: $cmd, started: $start, elapsed_s: $elapsed, disk: $disk,
    io_scheduler: $sched, kernel: $kernel} + .' "$tmp/cal.json" >"$OUT_DIR/calibration.json"
cp "$tmp/matrix.conf" "$OUT_DIR/penalty-matrix.conf"
jq -r -f bench/calibrate/report-md.jq "$OUT_DIR/calibration.json" >"$OUT_DIR/calibration.md"
echo "calibrate: wrote $OUT_DIR/penalty-matrix.conf, calibration.json, calibration.md in ${ELAPSED}s"
