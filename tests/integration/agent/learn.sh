#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Hold only on evidence, learnt online (issue #11): iobatchd on its shipped
# defaults (no matrix file) holds nothing at first; it learns a random
# writer's solo rate from a run alone, measures its slowdown in three
# co-runs beside a sequential writer, keeps the pair with its counts in
# STATE_DIR/penalties.json and shows it in `iobatchctl status`; from then
# on that measurement, not the built-in guess, decides (the fourth arrival
# is judged by a forecast, no longer admitted as "no conflict").
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 7
iob_need containerd ctr runc fio jq
iob_stack_up "max_hold = 60s"
# run ID RW SECONDS KEY: a time-based direct fio writer, in the background;
# its exit status lands in $IOB_T/ID.rc.
run() {
  local bs=1M
  [ "$2" == randwrite ] && bs=4k
  (
    $CTR run --rm --runtime $RT --annotation io.iobatch.workload="$4" --rootfs "$R" "$1" \
      /usr/bin/fio --name=w --filename="/data/$1" --rw="$2" --bs=$bs --size=256M --time_based \
      --runtime="$3" --direct=1 --ioengine=psync >"$IOB_T/$1.out" 2>&1
    echo $? >"$IOB_T/$1.rc.tmp" && mv "$IOB_T/$1.rc.tmp" "$IOB_T/$1.rc"
  ) &
}
reason() { grep -oE "admitted '$1' \([a-z-]+\) after [0-9]+ ms: .*" "$AGENT_LOG" | head -1; }

run solo randwrite 4 rw
wait_for 60 '[ -e "$IOB_T/solo.rc" ]'
# profiles are kept by namespace (issue #14)
# the learned solo rate of key rw in B/s, 0 until profiles.json has it
solo_bps() {
  local b
  b=$(jq -r --arg ns "$NS" '.namespaces[$ns].rw.solo_bps // 0' "$AGENT_STATE/profiles.json" 2>/dev/null)
  echo "${b:-0}"
}
wait_for 10 'bps=$(solo_bps); [ "${bps%.*}" -gt 0 ]'
bps=$(solo_bps)
ok "a run alone teaches the random writer's solo rate (${bps%.*} B/s)" \
  test "${bps%.*}" -gt 0 2>/dev/null
for i in 1 2 3; do
  run s$i write 7 sw
  wait_for 20 '[ "$(agent_field s'$i' state)" == running ]'
  sleep 1
  run r$i randwrite 4 rw
  wait_for 60 '[ -e "$IOB_T/r$i.rc" ] && [ -e "$IOB_T/s$i.rc" ]'
done
like "$(reason r1)" "admitted: no conflict" "with no evidence the first co-run is not held"
pair() { ctl status --json | jq -c '.penalties[] | select(.victim == "rand-write" and .neighbour == "seq-write")'; }
p=$(pair)
diag "measured: $p"
is "$(jq -r .coruns <<<"$p")" "3" "three co-runs measured for (rand-write beside seq-write)"
is "$(jq -r .in_use <<<"$p")" "true" "the pair is evidence now"
like "$(ctl status)" "rand-write +beside seq-write" "iobatchctl status shows the measured pair"
saved() {
  jq -r '[.pairs[] | select(.victim == "rand-write" and .neighbour == "seq-write")][0].coruns' \
    "$AGENT_STATE/penalties.json" 2>/dev/null
}
wait_for 10 '[ "$(saved)" == 3 ]'
is "$(saved)" "3" "and keeps it in penalties.json"
# The fourth arrival is judged by the measurement: a forecast ran.
sd=$(jq -r .slowdown <<<"$p")
run s4 write 7 sw
wait_for 20 '[ "$(agent_field s4 state)" == running ]'
sleep 1
run r4 randwrite 4 rw
wait_for 70 '[ -e "$IOB_T/r4.rc" ] && [ -e "$IOB_T/s4.rc" ]'
r4=$(reason r4)
diag "fourth arrival (measured slowdown ${sd}x): $r4"
if awk -v s="$sd" 'BEGIN { exit !(s > 1.000001) }'; then
  [[ "$r4" != *"admitted: no conflict"* ]]
else
  [[ "$r4" == *"admitted: no conflict"* ]]
fi
is "$?" "0" "the fourth decision follows the measured pair, not the built-in matrix"
tap_done
