# SPDX-License-Identifier: Apache-2.0
# Raw runs of bench/service.sh (one per repetition and mode, slurped) ->
# summary.json.  Medians over repetitions; ratios are medians of the
# same-repetition ratios (mode / solo, mode / all).
def median: map(select(. != null)) | sort | if length == 0 then null
  elif length % 2 == 1 then .[(length - 1) / 2]
  else (.[length / 2 - 1] + .[length / 2]) / 2 end;
def r3: if . == null then null else (. * 1000 | round) / 1000 end;
def r2: if . == null then null else (. * 100 | round) / 100 end;

. as $raw
| def runs($m): $raw | map(select(.mode == $m));
  def by_rep($m; $rep): $raw | map(select(.mode == $m and .rep == $rep)) | .[0];
  def ok_batch: .batch != null and .batch.failed == 0;
  # transactions the service lost in the window against its solo rate of the
  # same repetition: the sum over the window's whole seconds of (solo TPS -
  # that second's TPS); seconds above solo count against it, so noise cancels
  def lost_tx($x): by_rep("solo"; $x.rep) as $s
    | if $s == null or $x.tps_series == null then null else
      ((($x.arrive_ns - $x.t0_ns) / 1e9) | ceil) as $a
      | ($x.tps_series | map(select(.[0] >= $a)) | .[:-1]) as $w
      | if ($w | length) == 0 then null else $w | map($s.victim.tps - .[1]) | add end end;
  # the 10th percentile of the window's per-second TPS against solo: how
  # deep the service falls while the batch runs, not only on average
  def p10_vs_solo($x): by_rep("solo"; $x.rep) as $s
    | if $s == null or $s.victim.tps == 0 or $x.tps_series == null then null else
      ((($x.arrive_ns - $x.t0_ns) / 1e9) | ceil) as $a
      | ($x.tps_series | map(select(.[0] >= $a)) | .[:-1] | map(.[1]) | sort) as $w
      | if ($w | length) == 0 then null else $w[(($w | length) * 0.1 | floor)] / $s.victim.tps end end;
  # MiB of batch I/O done inside the window, each job's bytes spread evenly
  # over its fio runtime
  def mib_in_window($x): $x.arrive_ns as $a | $x.pgbench_end_ns as $e
    | [$x.batch.jobs[] | select(.fio != null and .fio.runtime_ms > 0)
       | (.fio.end_ms * 1e6) as $je | ($je - .fio.runtime_ms * 1e6) as $js
       | ([([$je, $e] | min) - ([$js, $a] | max), 0] | max) / (.fio.runtime_ms * 1e6)
         * ($jobmib[.class] // 0)] | add;
  def mode_summary($m):
    runs($m) as $r
    | ($r | map(select(ok_batch))) as $ok
    | {repeats: ($r | length),
       failed_repeats: ($r | map(select(ok_batch | not)) | length),
       victim_tps: ($r | map(.victim.tps) | median | r2),
       victim_p50_ms: ($r | map(.victim.p50_ms) | median | r3),
       victim_p99_ms: ($r | map(.victim.p99_ms) | median | r3),
       victim_tps_whole_run: ($r | map(.whole.tps) | median | r2),
       batch_makespan_s: ($ok | map(.batch.makespan_s) | median | r3),
       batch_mean_turnaround_s: ($ok | map(.batch.mean_turnaround_s) | median | r3),
       batch_after_service_s: ($ok | map(.batch.after_service_s) | median | r3),
       victim_tps_vs_solo: ($r | map(. as $x | by_rep("solo"; $x.rep) as $s
         | if $s == null or $s.victim.tps == 0 then null else $x.victim.tps / $s.victim.tps end) | median | r3),
       victim_p99_vs_solo: ($r | map(. as $x | by_rep("solo"; $x.rep) as $s
         | if $s == null or $s.victim.p99_ms == null or $x.victim.p99_ms == null then null else $x.victim.p99_ms / $s.victim.p99_ms end) | median | r3),
       makespan_vs_all: ($ok | map(. as $x | by_rep("all"; $x.rep) as $a
         | if $a == null or ($a | ok_batch | not) then null else $x.batch.makespan_s / $a.batch.makespan_s end) | median | r3),
       mean_turnaround_vs_all: ($ok | map(. as $x | by_rep("all"; $x.rep) as $a
         | if $a == null or ($a | ok_batch | not) then null else $x.batch.mean_turnaround_s / $a.batch.mean_turnaround_s end) | median | r3),
       victim_tps_p10_1s_vs_solo: ($r | map(p10_vs_solo(.)) | median | r3),
       victim_lost_tx: ($r | map(lost_tx(.)) | median | r2 | if . == null then null else round end),
       batch_mib_in_window: ($ok | map(mib_in_window(.)) | median | r2 | if . == null then null else round end),
       victim_lost_tx_per_gib: ($ok | map(lost_tx(.) as $l | mib_in_window(.) as $m
         | if $l == null or $m == null or $m < 64 then null else $l / ($m / 1024) end) | median
         | if . == null then null else round end),
       agent_held_ms: (if ($m | startswith("iobatch")) then
         [range(0; ($r[0].batch.jobs // []) | length) as $i
          | {class: $r[0].batch.jobs[$i].class,
             held_ms: ($r | map(.batch.jobs[$i].agent.held_ms // null) | median),
             reasons: ($r | map(.batch.jobs[$i].agent.reason // empty) | unique)}]
         else null end),
       load_avg: ($r | map(.load[]) | median | r2)};
{benchmark: "service", command: $cmd, date: $date, host: $host, kernel: $kernel, disk: $disk,
 postgres: $pg, repeats: $repeats, duration_s: $duration, arrive_s: $arrive,
 pgbench: {scale: $pgscale, clients: $clients, threads: 2},
 batch: {jobs: ($batch | split(" ")), scale: ($scale | tonumber)},
 service_class: $svcclass, agent: $agent, elapsed_s: $elapsed, mode_status: $status,
 load_avg_median: ($raw | map(.load[]) | median | r2),
 load_avg_range: [($raw | map(.load[]) | min), ($raw | map(.load[]) | max)],
 definitions: {
   victim_window: "batch arrival (ARRIVE s after pgbench started; the same offset in solo) -> last transaction of pgbench",
   victim_tps: "transactions completed in the window / its length",
   victim_p50_ms: "median per-transaction latency (pgbench --log) in the window",
   victim_p99_ms: "99th percentile per-transaction latency in the window",
   batch_makespan_s: "batch arrival -> last batch container exited (ctr run returned)",
   batch_mean_turnaround_s: "mean over batch jobs of arrival -> its container exited (serial: every job counts as submitted at the arrival)",
   victim_tps_p10_1s_vs_solo: "10th percentile of the window's per-second TPS / solo TPS of the same repetition: how far the service falls in its worst seconds",
   victim_lost_tx: "transactions the service lost in the window: sum over its whole seconds of (solo TPS of the same repetition - that second's TPS)",
   batch_mib_in_window: "MiB of batch I/O done inside the window (each job's bytes spread evenly over its fio runtime)",
   victim_lost_tx_per_gib: "victim_lost_tx / (batch_mib_in_window / 1024), per repetition (null under 64 MiB): what each GiB of batch I/O beside the service cost it",
   batch_after_service_s: "how long the batch ran on after pgbench ended (the service container is stopped then)",
   aggregation: "medians over repetitions; *_vs_* are medians of same-repetition ratios"},
 solo: (runs("solo") as $r | {repeats: ($r | length),
   victim_tps: ($r | map(.victim.tps) | median | r2),
   victim_p50_ms: ($r | map(.victim.p50_ms) | median | r3),
   victim_p99_ms: ($r | map(.victim.p99_ms) | median | r3),
   victim_tps_whole_run: ($r | map(.whole.tps) | median | r2)}),
 modes: ([$status | keys_unsorted[] | select(. != "solo") as $m
   | {key: $m, value: (if $status[$m] == "run" then mode_summary($m) else {not_run: $status[$m]} end)}]
   | from_entries),
 goal: "under iobatch: victim_tps >= 0.85 x solo, p99 <= 1.5 x solo, batch makespan <= 1.15 x all-at-once (reported, not asserted)",
 raw: ($raw | map(del(.tps_series)))}
