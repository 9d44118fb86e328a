#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/results/service/summary.json (+ raw.jsonl) -> summary.md and tps.png.
# Usage: bench/service/report.sh SUMMARY_JSON OUT_DIR
set -euo pipefail
json=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
jq -r '
  def f(d): if . == null then "–" else (. * d | round / d | tostring) end;
  def lbl: {solo: "solo (service alone)", all: "all at once (runc)", serial: "serial (runc)", iobatch: "iobatch (default config)"}[.] // .;
  . as $s
  | "# Service beside batch jobs (`\(.command)`)\n",
    "\(.date), \(.host), \(.kernel), \(.disk); \(.postgres); pgbench -s \(.pgbench.scale) -c \(.pgbench.clients) -j \(.pgbench.threads), \(.duration_s) s, batch (\(.batch.jobs | join(", ")), fio sizes x\(.batch.scale)) arriving at \(.arrive_s) s; median of \(.repeats); load average \(.load_avg_median) (range \(.load_avg_range[0])-\(.load_avg_range[1])) on 2 cores.\n",
    "iobatch: \(.service_class). Agent: \(.agent).\n",
    (if .slo then
      "The rate-limited service: pgbench -R \(.slo.rate) (x\(.slo.rate_fraction) of its unthrottled \(.slo.max_tps) TPS) -L \(.slo.latency_limit_ms); a miss is \(.slo.miss). Over the whole run, medians:\n",
      "| mode | missed % | p50 ms | p99 ms | p99.9 ms | excess misses vs all at once | batch makespan s | vs all | repetitions dropped |",
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
      "| \("solo" | lbl) | \(.solo.late_pct | f(100)) | \(.solo.p50_ms | f(100)) | \(.solo.p99_ms | f(100)) | \(.solo.p999_ms | f(100)) | | | | |",
      (.modes | to_entries[] | select(.value.not_run | not) | .key as $m | .value
       | "| \($m | lbl) | \(.late_pct | f(100)) | \(.p50_ms | f(100)) | \(.p99_ms | f(100)) | \(.p999_ms | f(100)) | \(.excess_late_vs_all | f(100)) | \(.batch_makespan_s | f(100)) | \(.makespan_vs_all | f(100)) | \(.dropped_repeats) |"),
      "\nGoal (reported, not asserted): \(.slo.goal).\n",
      (if (.frontier // []) | length > 0 then
        "At each budget, the static levers (serial, ioprio, fixed caps) whose makespan stays within it and that missed fewer:\n",
        "| budget | excess misses vs all at once | makespan vs all | static levers within the budget that missed fewer |",
        "|---:|---:|---:|---|",
        (.frontier[] | "| \(.budget) | \(.excess_late_vs_all | f(100)) | \(.makespan_vs_all | f(100)) | \(if (.beaten_by | length) == 0 then "none" else .beaten_by | join(", ") end) |"),
        "\n![excess misses against batch makespan, a point per mode](frontier.png)\n"
       else empty end),
      "The saturating figures below are over the window from the batch arrival to the end of pgbench.\n"
     else empty end),
    "| mode | TPS | vs solo | p50 ms | p99 ms | p99 vs solo | batch makespan s | vs all | batch mean turnaround s | batch ran on after pgbench s |",
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    "| \("solo" | lbl) | \(.solo.victim_tps | f(10)) | 1 | \(.solo.victim_p50_ms | f(100)) | \(.solo.victim_p99_ms | f(100)) | 1 | | | | |",
    (.modes | to_entries[] | .key as $m | .value
     | if .not_run then "| \($m | lbl) | not run: \(.not_run) | | | | | | | | |"
       else "| \($m | lbl) | \(.victim_tps | f(10)) | \(.victim_tps_vs_solo | f(100)) | \(.victim_p50_ms | f(100)) | \(.victim_p99_ms | f(100)) | \(.victim_p99_vs_solo | f(100)) | \(.batch_makespan_s | f(100)) | \(.makespan_vs_all | f(100)) | \(.batch_mean_turnaround_s | f(100)) | \(.batch_after_service_s | f(100)) |" end),
    "",
    "TPS and latency over the window from the batch arrival to the end of pgbench. Goal (reported, not asserted): \(.goal).",
    (if .modes.iobatch.victim_tps_vs_solo then
      "\nUnder iobatch: TPS \(.modes.iobatch.victim_tps_vs_solo | f(100)) x solo (goal >= 0.85: \(if .modes.iobatch.victim_tps_vs_solo >= 0.85 then "met" else "not met" end)), p99 \(.modes.iobatch.victim_p99_vs_solo | f(100)) x solo (goal <= 1.5: \(if .modes.iobatch.victim_p99_vs_solo <= 1.5 then "met" else "not met" end)), makespan \(.modes.iobatch.makespan_vs_all | f(100)) x all at once (goal <= 1.15: \(if (.modes.iobatch.makespan_vs_all // 99) <= 1.15 then "met" else "not met" end))."
     else empty end),
    (if .modes.iobatch.agent_held_ms then
      "\nWhat iobatchd held (median over repetitions): " + ([.modes.iobatch.agent_held_ms[] | "\(.class) \(.held_ms // "–") ms (\(.reasons | join("; ")))"] | join(", ")) + "."
     else empty end),
    "\nWhat the batch cost the service: transactions lost in the window against solo (sum over its seconds of solo TPS - TPS), and per GiB of batch I/O done inside the window (each job'"'"'s bytes spread evenly over its runtime; an estimate that overcounts in-window bytes for jobs capped until the service ended).\n",
    "| mode | worst seconds: p10 of per-second TPS vs solo | lost transactions | batch MiB in window | lost per GiB |",
    "|---|---:|---:|---:|---:|",
    (.modes | to_entries[] | select(.value.not_run | not) | "| \(.key | lbl) | \(.value.victim_tps_p10_1s_vs_solo // null | f(100)) | \(.value.victim_lost_tx // null | f(1)) | \(.value.batch_mib_in_window // null | f(1)) | \(.value.victim_lost_tx_per_gib // null | f(1)) |"),
    "\n![TPS over time](tps.png)\n",
    "Per repetition:\n",
    "| rep | mode | TPS | p50 ms | p99 ms | makespan s | mean turnaround s | load |",
    "|---:|---|---:|---:|---:|---:|---:|---|",
    (.raw | sort_by(.rep, .mode)[] | "| \(.rep) | \(.mode) | \(.victim.tps | f(10)) | \(.victim.p50_ms | f(100)) | \(.victim.p99_ms | f(100)) | \(.batch.makespan_s // null | f(100)) | \(.batch.mean_turnaround_s // null | f(100)) | \(.load | map(tostring) | join(" -> ")) |")
' "$json" >"$out/summary.md"

command -v gnuplot >/dev/null || { echo "service: gnuplot not found; no plot" >&2; exit 0; }
raw=$out/raw.jsonl
[ -f "$raw" ] || { echo "service: no $raw; no plot" >&2; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
modes=""
: >"$tmp/arrows.gp"
i=0
for m in solo all serial iobatch; do
  jq -r --arg m "$m" 'select(.rep == 1 and .mode == $m) | .tps_series[] | "\(.[0]) \(.[1])"' "$raw" >"$tmp/$m.dat"
  [ -s "$tmp/$m.dat" ] || continue
  modes="$modes $m"
  i=$((i + 1))
  # the batch: arrival -> last exit, seconds after pgbench started
  jq -r --arg m "$m" --argjson i "$i" 'select(.rep == 1 and .mode == $m and .batch != null)
    | "set arrow \($i) from \((.arrive_ns - .t0_ns) / 1e9), graph \(0.02 + 0.03 * $i) to \(((.batch.jobs | map(.end_ns) | max) - .t0_ns) / 1e9), graph \(0.02 + 0.03 * $i) nohead lw 6 lc rgb colour(\"\($m)\")"' \
    "$raw" >>"$tmp/arrows.gp"
done
# x range: the whole run and the batch's last exit
xmax=$(jq -r 'select(.rep == 1) | [(.tps_series | length), (if .batch then ((.batch.jobs | map(.end_ns) | max) - .t0_ns) / 1e9 else 0 end)] | max' "$raw" | sort -n | tail -1)
title=$(jq -r '"pgbench TPS in a postgres container, batch fio containers arriving at \(.arrive_s) s (repetition 1; \(.date), load \(.load_avg_median))"' "$json")
gnuplot -e "xmax=${xmax:-60} + 1; dir='$tmp'; arrows='$tmp/arrows.gp'; out='$out/tps.png'; modes='${modes# }'; ttl='$title'" "$here/plot.gp"
# the rate-limited service: the frontier, a point per mode
if jq -e '.slo' "$json" >/dev/null; then
  jq -r '.modes | to_entries[] | select(.value.not_run | not)
    | select(.value.makespan_vs_all != null and .value.excess_late_vs_all != null)
    | .value as $v
    | "\(.key) \($v.makespan_vs_all) \(($v.makespan_vs_all_range // [$v.makespan_vs_all, $v.makespan_vs_all]) | join(" ")) \($v.excess_late_vs_all) \(($v.excess_late_vs_all_range // [$v.excess_late_vs_all, $v.excess_late_vs_all]) | join(" "))"' \
    "$json" >"$tmp/frontier.dat"
  title=$(jq -r '"What protection buys and costs: \(.slo.rate) tps asked, \(.slo.latency_limit_ms) ms limit, median of \(.repeats) (\(.date), load \(.load_avg_median), \(.disk))"' "$json")
  [ ! -s "$tmp/frontier.dat" ] || gnuplot -e "dat='$tmp/frontier.dat'; out='$out/frontier.png'; ttl='$title'" "$here/frontier.gp"
fi
