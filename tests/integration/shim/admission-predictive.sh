#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Admission that never holds up a node (issue #11), end to end through a
# private containerd, our shim and iobatchd on the
# predictive (default) policy with a matrix file, so that holds rest on
# evidence:
#   - an unknown container (no class, no profile) beside a running
#     sequential writer is admitted at once, as a probe;
#   - a declared service (io.iobatch.kind=service) writing sequentially
#     never finishes in a forecast: a random writer arriving beside it (a
#     learned 10 s job) is not held behind it;
#   - no overtaking: a random writer held behind a finite sequential writer
#     goes before a younger sequential writer, which waits behind it;
#   - with the shipped defaults (no matrix file, nothing measured) nothing
#     is held at all.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 11
iob_need containerd ctr runc fio jq
cp "$IOB_TOP/tests/fixtures/batch/hold-matrix.conf" "$IOB_T/matrix.conf"
# Learned profiles, as a node that ran these workloads before knows them:
# a 10 s random writer, 8 s and 20 s sequential writers.
mkdir -p "$AGENT_STATE"
# Profiles are kept by namespace (issue #14): these are the test's own.
now=$(date +%s)
NS=iob${IOB_T##*.}
cat >"$AGENT_STATE/profiles.json" <<EOF2
{"version": 1, "profiles": {}, "namespaces": {"$NS": {
 "rw10": {"class": "rand-write", "confidence": 1, "solo_s": 10, "solo_bps": 0, "runs": 3, "updated": $now},
 "sw8": {"class": "seq-write", "confidence": 1, "solo_s": 8, "solo_bps": 0, "runs": 3, "updated": $now},
 "sw20": {"class": "seq-write", "confidence": 1, "solo_s": 20, "solo_bps": 0, "runs": 3, "updated": $now}}}}
EOF2
iob_stack_up "matrix = $IOB_T/matrix.conf
max_hold = 120s"

# writer ID RW SECONDS [ANNOTATION...]: a time-based fio writer started with
# ctr run -d in the background (Start blocks while the agent holds it).
writer() {
  local id=$1 rw=$2 secs=$3 a=() x bs=1M
  shift 3
  [ "$rw" == randwrite ] && bs=4k
  for x in "$@"; do a+=(--annotation "$x"); done
  (
    $CTR run -d --runtime $RT "${a[@]}" --rootfs "$R" "$id" /usr/bin/fio --name=w \
      --filename="/data/$id" --rw="$rw" --bs=$bs --size=128M --time_based --runtime="$secs" \
      --direct=1 --ioengine=psync >"$IOB_T/$id.out" 2>&1
    echo $? >"$IOB_T/$id.rc.tmp" && mv "$IOB_T/$id.rc.tmp" "$IOB_T/$id.rc"
  ) &
}
admitted_reason() { grep -oE "admitted '$1' \([a-z-]+\) after [0-9]+ ms: .*" "$AGENT_LOG" | head -1; }

# 1. An unknown container is a probe.
writer sw1 write 30 io.iobatch.class=seq-write
wait_for 20 '[ "$(state sw1)" == RUNNING ]'
writer u1 randwrite 2
wait_for 30 '[ -e "$IOB_T/u1.rc" ]'
is "$(cat "$IOB_T/u1.rc" 2>/dev/null)" "0" "an unknown container beside a running seq-write starts"
like "$(admitted_reason u1)" "\(unknown\) after [0-9]+ ms: admitted: unknown class, admitted as a probe" \
  "the agent admitted it as a probe"
cleanup_ctr u1
cleanup_ctr sw1

# 2. A service never finishes in a forecast: nothing waits behind it.
writer db write 60 io.iobatch.class=seq-write io.iobatch.kind=service
wait_for 20 '[ "$(state db)" == RUNNING ]'
is "$(agent_field db kind)" "service" "status shows the service's kind"
is "$(agent_field db open_ended)" "true" "and that the forecast treats it as open-ended"
writer rw1 randwrite 3 io.iobatch.class=rand-write io.iobatch.workload=rw10
wait_for 30 '[ -e "$IOB_T/rw1.rc" ]'
is "$(cat "$IOB_T/rw1.rc" 2>/dev/null)" "0" "a 10 s random writer arriving beside it starts"
like "$(admitted_reason rw1)" "admitted: holding would not finish sooner" \
  "not held: holding behind a service cannot finish sooner"
cleanup_ctr rw1
cleanup_ctr db

# 3. No overtaking: a finite seq writer runs; a random writer is held behind
# it; a younger seq writer waits behind the random writer.
# (20 s: under load, creating the next two containers takes seconds)
writer sw2 write 20 io.iobatch.class=seq-write io.iobatch.workload=sw20
wait_for 20 '[ "$(state sw2)" == RUNNING ]'
writer rw2 randwrite 3 io.iobatch.class=rand-write io.iobatch.workload=rw10
wait_for 20 '[ "$(agent_field rw2 state)" == pending ]'
is "$(agent_field rw2 state)" "pending" "a random writer beside a finite seq writer is held (evidence: the matrix file)"
writer sw3 write 3 io.iobatch.class=seq-write io.iobatch.workload=sw8
# pending first, then (after the batch window) the plan's reason
wait_for 20 '[[ "$(agent_field sw3 reason)" == *"goes first"* ]]'
like "$(agent_field sw3 reason)" "an older held container it conflicts with goes first" \
  "a younger seq writer waits behind the held random writer"
wait_for 90 '[ -e "$IOB_T/rw2.rc" ] && [ -e "$IOB_T/sw3.rc" ]'
order=$(grep -oE "admitted '(rw2|sw3)'" "$AGENT_LOG" | tr -d "'" | awk '{print $2}' | tr '\n' ' ')
is "$order" "rw2 sw3 " "the older random writer went first"
for id in sw2 rw2 sw3; do cleanup_ctr $id; done

# 4. The shipped defaults: no evidence, nothing held.
agent_stop
mv "$AGENT_LOG" "$AGENT_LOG.1"
agent_start "max_hold = 120s" || bail "iobatchd did not restart"
writer sw4 write 30 io.iobatch.class=seq-write io.iobatch.workload=sw8
wait_for 20 '[ "$(state sw4)" == RUNNING ]'
writer rw4 randwrite 3 io.iobatch.class=rand-write io.iobatch.workload=rw10
wait_for 30 '[ -e "$IOB_T/rw4.rc" ]'
like "$(admitted_reason rw4)" "admitted: no conflict" "defaults: the same random writer is admitted at once (no evidence)"
for id in sw4 rw4; do cleanup_ctr $id; done
ok "nothing left behind" no_leftovers u1 sw1 db rw1 sw2 rw2 sw3 sw4 rw4
tap_done
