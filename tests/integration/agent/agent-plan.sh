#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# iobatchctl plan: offline batches from a job file (text and JSON), the same
# answer from the agent's Plan RPC, and clear errors for bad input.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 15

cat >"$IOB_T/jobs.txt" <<'JOBS'
# name   class       solo seconds
a        seq-write   30
b        seq-write   30
c        rand-write  10
d        rand-write  10
JOBS
out=$(ctl plan "$IOB_T/jobs.txt")
is "$?" "0" "plan from a text file"
like "$out" "batch 1: a\(seq-write\) b\(seq-write\) +penalty" "sequential writers batched together"
like "$out" "batch 2: c\(rand-write\) d\(rand-write\) +penalty 0.00" "random writers together, apart from them"
like "$out" "exact \(proven optimal\)" "exact solver, proven optimal"

json=$(ctl plan --json --cap 1 "$IOB_T/jobs.txt")
is "$(echo "$json" | jq '.batches | length')" "4" "--cap 1: one job per batch (JSON output)"

echo '{"jobs": [{"name": "x", "class": "seq-read"}, {"name": "y", "class": "rand-read", "solo_seconds": 3}]}' >"$IOB_T/jobs.json"
is "$(ctl plan --json "$IOB_T/jobs.json" | jq -r .solver)" "exact" "plan from a JSON file"

agent_start || bail "iobatchd did not start"
off=$(ctl plan --json "$IOB_T/jobs.txt" | jq -c .batches)
on=$(ctl plan --agent --json "$IOB_T/jobs.txt" | jq -c .batches)
is "$on" "$off" "the agent's Plan RPC gives the same batches"
agent_stop

printf 'a seq-write\nb fast\n' >"$IOB_T/bad1.txt"
err=$(ctl plan "$IOB_T/bad1.txt" 2>&1)
is "$?" "1" "unknown class: failure"
like "$err" "'$IOB_T/bad1.txt' line 2: unknown class 'fast'" "error names file and line"
printf 'a seq-write 1 extra\n' >"$IOB_T/bad2.txt"
like "$(ctl plan "$IOB_T/bad2.txt" 2>&1)" "line 1: expected 'name class \[solo_seconds\]'" "extra field refused"
printf 'a seq-write\na rand-write\n' >"$IOB_T/bad3.txt"
like "$(ctl plan "$IOB_T/bad3.txt" 2>&1)" "job name 'a' given twice" "duplicate name refused"
echo '[{"name": "a", "class": "seq-write", "oops": 1}]' >"$IOB_T/bad4.json"
like "$(ctl plan "$IOB_T/bad4.json" 2>&1)" "job 1: .*oops" "unknown JSON key refused"

# A Plan RPC of 4096 jobs (seconds of heuristic) is solved off the agent's
# loop: Status is answered while it runs, by order, not by the clock.
mv "$AGENT_LOG" "$AGENT_LOG.1"
agent_start || bail "iobatchd did not start again"
awk 'BEGIN { split("seq-read rand-read seq-write rand-write mixed", c, " ");
  for (i = 0; i < 4096; i++) printf "j%d %s %d\n", i, c[i % 5 + 1], 5 + i % 40 }' >"$IOB_T/big.txt"
ctl plan --agent --json "$IOB_T/big.txt" >"$IOB_T/big.out" 2>&1 &
big=$!
sleep 0.3
ctl status --json >/dev/null
st=$?
kill -0 $big 2>/dev/null && [ ! -s "$IOB_T/big.out" ]
is "$st $?" "0 0" "status answered while the big plan is still being computed"
wait $big
is "$?" "0" "the big plan completes"
is "$(jq '[.batches[].names | length] | add' "$IOB_T/big.out")" "4096" "with every job in a batch"
agent_stop
tap_done
