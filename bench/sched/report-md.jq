# SPDX-License-Identifier: Apache-2.0
# sched.json -> markdown (jq -r)
def f2: if . == null then "–" else (. * 100 | round / 100 | tostring) end;
def f1: if . == null then "–" else (. * 10 | round / 10 | tostring) end;
def mlabel: {all: "all at once (runc)", serial: "serial (runc)",
             iobatch: "iobatch, default policy", paper: "iobatch, policy = paper",
             calibrated: "iobatch, default policy, calibrated matrix"}[.] // .;
. as $d
| ([.modes | to_entries[] | select(.value == "run") | .key]) as $run
| "# Scheduling quality (issue 7 §2)\n",
  "Command: `\(.command)` (REPEATS=\(.repeats), SCALE=\(.scale)); started \(.date) on `\(.host)`, kernel \(.kernel), disk \(.disk) (\(.io_scheduler)); took \(.elapsed_s) s. Agent: \(.agent).\n",
  "Medians over \(.repeats) repeats. Slowdown = turnaround (submit → container exited, waiting included) / the class's solo turnaround; *run* slowdown = fio's runtime / solo fio runtime (waiting excluded). Jain's index over solo/turnaround (1 = perfectly fair). Ratios < 1 mean shorter makespan than the baseline.\n",
  "## Modes\n",
  "| mode | status |", "|---|---|",
  (.modes | to_entries[] | "| \(.key | mlabel) | \(.value) |"),
  "",
  "## Solo runs (one container alone)\n",
  "| class | turnaround s | fio runtime s | fio job |", "|---|---:|---:|---|",
  (.solo | to_entries[] | "| \(.key) | \(.value.turnaround_s | f2) | \(.value.fio_runtime_s | f2) | `\($d.job_spec[.key])` |"),
  "",
  (.mixes[] | . as $mx
   | "## Mix `\(.name)`: \(.jobs | join(", "))\n",
     "| mode | makespan s | vs all at once | vs serial | worst slowdown | Jain |",
     "|---|---:|---:|---:|---:|---:|",
     ($d.modes | keys_unsorted[] as $m | $mx.results[$m] as $r
      | if $r == null then "| \($m | mlabel) | no results (see the run's log) | | | | |"
        elif $r.not_run then "| \($m | mlabel) | not run (see Modes) | | | | |"
        elif $r.makespan_s == null then "| \($m | mlabel) | failed in \($r.failed_repeats) repeats | | | | |"
        else "| \($m | mlabel) | \($r.makespan_s | f2) | \($mx.ratios[$m].makespan_vs_all | f2) | \($mx.ratios[$m].makespan_vs_serial | f2) | \($r.worst_slowdown | f2) | \($r.jain | f2) |"
        end),
     "",
     "Per job: slowdown (run slowdown, wait s); iobatch modes add the agent's own account from its log: how long it held the job and why it admitted it\n",
     "| job | " + ([$run[] | mlabel] | join(" | ")) + " |",
     "|---|" + ([$run[] | "---:"] | join("|")) + "|",
     (range(0; $mx.jobs | length) as $i
      | "| \($i + 1) \($mx.jobs[$i]) | "
        + ([$run[] as $m | $mx.results[$m].jobs[$i]
            | if . == null then "–" else "\(.slowdown | f2) (\(.run_slowdown | f2), \(.wait_s | f1))"
                + (if .agent_held_ms != null then " held \(.agent_held_ms / 1000 | f1) s: \(.agent_reasons | join("; "))" else "" end) end]
           | join(" | ")) + " |"),
     "")
