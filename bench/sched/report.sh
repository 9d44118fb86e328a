#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/results/sched.json -> sched.md (tables) and sched.png (gnuplot).
# Usage: bench/sched/report.sh JSON OUT_DIR
set -euo pipefail
json=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
md=$out/sched.md

jq -r -f "$here/report-md.jq" "$json" >"$md"

if ! command -v gnuplot >/dev/null; then
  echo "sched: gnuplot not found; no plot" >&2
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
modes=$(jq -r '[.modes | to_entries[] | select(.value == "run") | .key] | join(" ")' "$json")
# makespan per mix (rows) x mode (columns)
jq -r --arg modes "$modes" '($modes | split(" ")) as $ms
  | .mixes[] | [.name] + [$ms[] as $m | (.results[$m].makespan_s // "NaN")] | @tsv' \
  "$json" >"$tmp/makespan.tsv"
# slowdown per job (rows: mix/jobN-class) x mode
jq -r --arg modes "$modes" '($modes | split(" ")) as $ms
  | .mixes[] | . as $mx | range(0; .jobs | length) as $i
  | ["\($mx.name):\($i + 1)-\($mx.jobs[$i])"]
    + [$ms[] as $m | ($mx.results[$m].jobs[$i].slowdown // "NaN")] | @tsv' \
  "$json" >"$tmp/slowdown.tsv"
title=$(jq -r '"scheduling quality, \(.host) \(.disk) \(.io_scheduler | capture("\\[(?<s>[^]]+)\\]").s // ""), \(.date), median of \(.repeats)"' "$json")
gnuplot -e "mk='$tmp/makespan.tsv'; sd='$tmp/slowdown.tsv'; out='$out/sched.png'; modes='$modes'; ttl='$title'" "$here/plot.gp"
