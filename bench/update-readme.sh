#!/usr/bin/env bash
# Copy the latest committed-style results into bench/README.md, between the
# "<!-- results -->" and "<!-- /results -->" markers (run after benchmarks;
# `make bench` does).  Only summarises what the result files hold.
set -euo pipefail
cd "$(dirname "$0")/.."
R=bench/results
readme=bench/README.md
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.new"' EXIT
{
  if [ -f $R/sched.json ]; then
    jq -r '
      def f2: if . == null then "–" else (. * 100 | round / 100 | tostring) end;
      def lbl: {all: "all at once", serial: "serial", iobatch: "iobatch (default)", paper: "iobatch (paper)", calibrated: "iobatch (calibrated matrix)"}[.] // .;
      "### Scheduling quality (`\(.command)`, \(.date), median of \(.repeats))\n",
      "![makespan and per-job slowdown](results/sched.png)\n",
      "Makespan in seconds, ratio to all-at-once, worst slowdown and Jain index per mix (full tables: [results/sched.md](results/sched.md)):\n",
      "| mix | " + ([.modes | keys_unsorted[] | lbl] | join(" | ")) + " |",
      "|---|" + ([.modes | keys_unsorted[] | "---"] | join("|")) + "|",
      (.modes as $modes | .mixes[] | . as $mx | "| \(.name) | " + ([$modes | keys_unsorted[] as $m | $mx.results[$m]
        | if . == null then "no result" elif .not_run then "not run" elif .makespan_s == null then "failed"
          else "\(.makespan_s | f2) s (×\($mx.ratios[$m].makespan_vs_all | f2)), worst \(.worst_slowdown | f2), J \(.jain | f2)" end] | join(" | ")) + " |"),
      "",
      (.modes | to_entries[] | select(.value != "run") | "- \(.key | lbl): \(.value)"),
      ""' $R/sched.json
  fi
  if [ -f $R/sched-hetero-writers/sched.json ]; then
    jq -r '
      def f2: if . == null then "–" else (. * 100 | round / 100 | tostring) end;
      def lbl: {all: "all at once", serial: "serial", iobatch: "iobatch (default)", paper: "iobatch (paper)", calibrated: "iobatch (calibrated matrix)"}[.] // .;
      .mixes[0] as $mx
      | "Focused check of the issue-7 result (two sequential + two random writers), `\(.command)`, \(.date), median of \(.repeats) ([details](results/sched-hetero-writers/sched.md)):\n",
        "| mode | makespan s | vs all at once | vs serial | worst slowdown | Jain |", "|---|---:|---:|---:|---:|---:|",
        (.modes | keys_unsorted[] as $m | $mx.results[$m]
         | if . == null or .makespan_s == null then "| \($m | lbl) | no result | | | | |"
           else "| \($m | lbl) | \(.makespan_s | f2) | \($mx.ratios[$m].makespan_vs_all | f2) | \($mx.ratios[$m].makespan_vs_serial | f2) | \(.worst_slowdown | f2) | \(.jain | f2) |" end),
        ""' $R/sched-hetero-writers/sched.json
  fi
  if [ -f $R/calibration.json ]; then
    jq -r '
      def f2: if . == null then "–" else (. * 100 | round / 100 | tostring) end;
      ["seq-read", "rand-read", "seq-write", "rand-write"] as $c | .measurements.slowdown as $d
      | "### Penalty matrix of this host (`\(.command | split(" (")[0])`, \(.started))\n",
        "Measured slowdown d = solo rate / rate beside the neighbour − 1 (row suffers; full: [results/calibration.md](results/calibration.md), file: [results/penalty-matrix.conf](results/penalty-matrix.conf)):\n",
        "| victim \\ neighbour | " + ($c | join(" | ")) + " |", "|---|---:|---:|---:|---:|",
        ($c[] as $v | "| \($v) | " + ([$c[] as $n | $d[$v][$n] | f2] | join(" | ")) + " |"), ""' $R/calibration.json
  fi
  if [ -f $R/agent-overhead.json ]; then
    jq -r '
      def f2: if . == null then "–" else (. * 100 | round / 100 | tostring) end;
      "### Agent overhead (`\(.command)`, \(.date))\n",
      (if .sampling.status == "run" then
        "| registered cgroups | iobatchd CPU % of a core (1 Hz) | µs per cgroup sample | RSS KiB | sampler |", "|---:|---:|---:|---:|---|",
        (.sampling.runs[] | "| \(.cgroups) | \(.cpu_percent | f2) | \(.cpu_us_per_cgroup_sample | f2) | \(.rss_kib) | \(.sampler) |"), ""
       else "Sampling: \(.sampling.status)\n" end),
      (if .admission.status == "run" then
        "Uncontended admission (`ctr run --rm /bin/true`, median of \(.admission.reps)): runc shim \(.admission.median_ms.runc_shim | f2) ms, iobatch shim without agent \(.admission.median_ms.iobatch_no_agent | f2) ms, with agent \(.admission.median_ms.iobatch_with_agent | f2) ms (+\(.admission.added_by_agent_ms | f2) ms with the default batch_window), with `batch_window = 0` \(.admission.median_ms.iobatch_with_agent_no_batch_window | f2) ms (+\(.admission.added_by_agent_no_window_ms | f2) ms).\n"
       else "Admission latency: \(.admission.status)\n" end),
      "Details: [results/agent-overhead.md](results/agent-overhead.md).\n"' $R/agent-overhead.json
  fi
  if [ -f $R/pairs.json ]; then
    jq -r '
      def f2: if . == null then "–" else (. * 100 | round / 100 | tostring) end;
      "### Does holding pay for any pair here? (`bench/pairs.sh`, \(.date), median of \(.repeats))\n",
      "Co-run makespan / (solo A + solo B); above 1 running the pair one after the other would be faster (details: [results/pairs.md](results/pairs.md)):\n",
      "| pair | ratio | A slowed | B slowed |", "|---|---:|---:|---:|",
      (.pairs[] | "| \(.a) + \(.b) | \(.ratio | f2) | \(.slow_a | f2) | \(.slow_b | f2) |"), ""' $R/pairs.json
  fi
  for f in shim-cost solver; do
    if [ -f $R/$f.md ]; then echo "- $f: [results/$f.md](results/$f.md)"; else echo "- $f: no results yet"; fi
  done
} >"$tmp"
awk -v f="$tmp" '
  /<!-- results -->/ { print; while ((getline l < f) > 0) print l; skip = 1; next }
  /<!-- \/results -->/ { skip = 0 }
  !skip' "$readme" >"$tmp.new"
grep -q '<!-- /results -->' "$tmp.new" || { echo "update-readme: markers missing in $readme" >&2; exit 1; }
mv "$tmp.new" "$readme"
