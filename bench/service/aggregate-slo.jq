# SPDX-License-Identifier: Apache-2.0
# The rate-limited service (bench/service.sh slo): adds to summary.json
# (aggregate.jq's output) what issue #22 asks for, from the raw runs
# ($raw, slurped raw.jsonl): under solo and each mode late_pct (misses,
# late plus skipped, of all scheduled transactions over the whole run),
# p50/p99/p99.9 (schedule lag included), and per mode excess_late_vs_all:
# (late_pct - solo's) / (all's late_pct - solo's), per repetition, then the
# median; a repetition where all at once's excess is not above 0 is
# dropped and counted in dropped_repeats.  makespan_vs_all and
# batch_makespan_s are aggregate.jq's.
def median: map(select(. != null)) | sort | if length == 0 then null
  elif length % 2 == 1 then .[(length - 1) / 2]
  else (.[length / 2 - 1] + .[length / 2]) / 2 end;
def r3: if . == null then null else (. * 1000 | round) / 1000 end;

$raw as $runs
| def runs($m): $runs | map(select(.mode == $m and .slo != null));
  def by_rep($m; $rep): $runs | map(select(.mode == $m and .rep == $rep and .slo != null)) | .[0];
  def excess($x): by_rep("solo"; $x.rep) as $s | by_rep("all"; $x.rep) as $a
    | if $s == null or $a == null then null
      else ($a.slo.late_pct - $s.slo.late_pct) as $ea
      | if $ea <= 0 then "dropped" else ($x.slo.late_pct - $s.slo.late_pct) / $ea end end;
  def slo_summary($m): runs($m) as $r
    | {late_pct: ($r | map(.slo.late_pct) | median | r3),
       p50_ms: ($r | map(.slo.p50_ms) | median | r3),
       p99_ms: ($r | map(.slo.p99_ms) | median | r3),
       p999_ms: ($r | map(.slo.p999_ms) | median | r3),
       scheduled: ($r | map(.slo.scheduled) | median)};
.slo = {max_tps: $max, rate: $rate, rate_fraction: $frac, latency_limit_ms: $lim,
        miss: "a transaction pgbench skipped (-L) or that ended more than latency_limit_ms after its scheduled start",
        goal: "at each budget b in 1.1, 1.5, 2, 3: iobatch.bB's excess_late_vs_all at most that of every static lever (iobatch.f256, iobatch.f512, ioprio, serial) whose makespan_vs_all is at most b; at b = 1.1, at most 0.75 (reported, not asserted)"}

| .solo += slo_summary("solo")
| .modes |= with_entries(
    if .value.not_run then . else
      .key as $m
      | ([runs($m)[] | excess(.)]) as $ex
      | .value += slo_summary($m)
        + {excess_late_vs_all: ($ex | map(select(type == "number")) | median | r3),
           excess_late_vs_all_range: ($ex | map(select(type == "number")) | if length == 0 then null else [min, max] | map(r3) end),
           makespan_vs_all_range: ([runs($m)[] | . as $x | by_rep("all"; $x.rep) as $a
             | if $a == null or $a.batch == null or $x.batch == null or $a.batch.makespan_s <= 0 then empty
               else $x.batch.makespan_s / $a.batch.makespan_s end]
             | if length == 0 then null else [min, max] | map(r3) end),
           dropped_repeats: ($ex | map(select(. == "dropped")) | length)}
    end)
| .modes as $modes_all
| .frontier = ([.modes | to_entries[] | select(.key | test("^iobatch\\.b[0-9.]+$")) | select(.value.not_run | not)
    | (.key | ltrimstr("iobatch.b") | tonumber) as $b | .value as $v
    | {budget: $b, mode: .key, excess_late_vs_all: $v.excess_late_vs_all, makespan_vs_all: $v.makespan_vs_all,
       beaten_by: [$modes_all | to_entries[] | select(.key == "serial" or .key == "ioprio" or (.key | test("^iobatch\\.f[0-9]+$")))
         | select(.value.not_run | not)
         | select(.value.makespan_vs_all != null and .value.makespan_vs_all <= $b and .value.excess_late_vs_all != null
                  and $v.excess_late_vs_all != null and .value.excess_late_vs_all < $v.excess_late_vs_all) | .key]}]
  | sort_by(.budget))
