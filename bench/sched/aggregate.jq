# SPDX-License-Identifier: Apache-2.0
# Raw job records (one per container run, slurped) -> bench/results/sched.json.
# Args: $cmd $date $host $kernel $disk $sched $repeats $scale $elapsed
#       $status $mixes $spec $agent
def median: sort | if length == 0 then null
  elif length % 2 == 1 then .[(length - 1) / 2]
  else (.[length / 2 - 1] + .[length / 2]) / 2 end;
def r3: if . == null then null else (. * 1000 | round) / 1000 end;
def secs: . / 1e9;

. as $raw
| ($raw | map(select(.mode == "solo" and .rc == 0))) as $solo_runs
| ($solo_runs | group_by(.class) | map({key: .[0].class, value: {
      turnaround_s: (map((.end_ns - .submit_ns) | secs) | median),
      fio_runtime_s: (map(.fio.runtime_ms / 1000) | median),
      runs: length}}) | from_entries) as $solo
# one repeat of one mix in one mode -> its metrics (null if a job failed)
| def one_rep($runs):
    if ($runs | any(.rc != 0)) then null else
    ($runs | map(. + {time_s: ((.end_ns - .submit_ns) | secs)}
      | . + {slowdown: (.time_s / $solo[.class].turnaround_s),
             run_slowdown: ((.fio.runtime_ms / 1000) / $solo[.class].fio_runtime_s),
             wait_s: ([((.fio.end_ms - .fio.runtime_ms) / 1000 - (.submit_ns | secs)), 0] | max)})) as $j
    | ($j | map(1 / .slowdown)) as $x
    | {makespan_s: ($j | map(.end_ns) | max - $j[0].submit_ns | secs),
       worst_slowdown: ($j | map(.slowdown) | max),
       jain: (($x | add) * ($x | add) / (($x | length) * ($x | map(. * .) | add))),
       jobs: ($j | sort_by(.idx))}
    end;
def mode_result($mix; $mode):
  ($raw | map(select(.mix == $mix and .mode == $mode))) as $runs
  | if ($runs | length) == 0 then null else
    ($runs | group_by(.rep) | map(one_rep(.))) as $reps
    | ($reps | map(select(. != null))) as $ok
    | if ($ok | length) == 0 then {failed_repeats: ($reps | length), repeats: 0} else
    {repeats: ($ok | length), failed_repeats: (($reps | length) - ($ok | length)),
     makespan_s: ($ok | map(.makespan_s) | median | r3),
     makespan_all_s: ($ok | map(.makespan_s | r3)),
     worst_slowdown: ($ok | map(.worst_slowdown) | median | r3),
     jain: ($ok | map(.jain) | median | r3),
     jobs: [range(0; $ok[0].jobs | length) as $i | {
       idx: $i, class: $ok[0].jobs[$i].class,
       time_s: ($ok | map(.jobs[$i].time_s) | median | r3),
       slowdown: ($ok | map(.jobs[$i].slowdown) | median | r3),
       run_slowdown: ($ok | map(.jobs[$i].run_slowdown) | median | r3),
       wait_s: ($ok | map(.jobs[$i].wait_s) | median | r3),
       agent_held_ms: ($ok | map(.jobs[$i].agent.held_ms // empty) | median),
       agent_reasons: ($ok | map(.jobs[$i].agent.reason // empty) | unique)}]}
    end end;
{benchmark: "sched", command: $cmd, date: $date, host: $host, kernel: $kernel,
 disk: $disk, io_scheduler: $sched, repeats: $repeats, scale: $scale,
 elapsed_s: $elapsed, agent: $agent,
 definitions: {
   makespan_s: "submit of the mix -> last of its containers exited (ctr run returned)",
   slowdown: "job turnaround (submit -> its container exited, waiting included) / its class's solo turnaround",
   run_slowdown: "fio's own runtime / solo fio runtime (waiting excluded)",
   wait_s: "submit -> fio started (fio end timestamp - fio runtime)",
   jain: "Jain's index over x_i = solo_i / turnaround_i: (sum x)^2 / (n sum x^2)",
   aggregation: "medians over repeats (per job: median of that job's values)"},
 job_spec: $spec,
 modes: $status,
 solo: ($solo | map_values(map_values(if type == "number" then r3 else . end))),
 mixes: [$mixes[] | .name as $m | . + {results: (
   [$status | keys_unsorted[] as $mode |
     {key: $mode, value: (if $status[$mode] == "run" then mode_result($m; $mode)
                          else {not_run: $status[$mode]} end)}] | from_entries)}
   | . + {ratios: (.results as $r | [$r | keys_unsorted[] as $mode
       | select($r[$mode].makespan_s != null)
       | {key: $mode, value: {
           makespan_vs_all: (if $r.all.makespan_s then ($r[$mode].makespan_s / $r.all.makespan_s | r3) else null end),
           makespan_vs_serial: (if $r.serial.makespan_s then ($r[$mode].makespan_s / $r.serial.makespan_s | r3) else null end)}}]
       | from_entries)}],
 raw: $raw}
