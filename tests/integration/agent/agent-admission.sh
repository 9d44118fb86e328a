#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# iobatchd end to end over its socket, driven by iobatchctl as a shim would:
# a rand-write is held beside a running seq-write (policy = paper) and
# admitted when the seq-write exits; a deadline forces admission; Cancel and
# a caller that goes away release a pending container; learnt profiles
# survive a restart; SIGHUP reloads the configuration (and keeps it when
# the file is broken); a corrupt profile file is kept aside; bad config is
# refused with file and line; SIGTERM removes the socket.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 33

# Two jobs tie under the paper objective at alpha = 0.5 (the batcher then
# admits); 0.6 puts the weight on the penalty.
agent_start "policy = paper
alpha = 0.6" || bail "iobatchd did not start"

is "$(stat -c %a "$AGENT_SOCK")" "600" "socket is 0600"

ctl register sw --class seq-write --key wk-seq >/dev/null
out=$(ctl admit sw)
like "$out" "^sw admitted after" "seq-write alone is admitted"

ctl register rw --class rand-write --key wk-rand >/dev/null
iobatchctl admit rw >"$IOB_T/rw.out" 2>&1 &
rw_pid=$!
wait_for 5 '[ "$(agent_field rw state)" == pending ]'
# pending from the Admit on; the batcher decides after the batch window
wait_for 5 '[ -n "$(agent_field rw conflict)" ]'
is "$(agent_field rw state)" "pending" "rand-write beside seq-write is pending"
is "$(agent_field rw conflict)" "sw" "status names the container it conflicts with"
table=$(ctl status)
like "$table" "rw +pending +rand-write \(declared\)" "status table shows it pending"
sleep 0.5
kill -0 $rw_pid 2>/dev/null
is "$?" "0" "its Admit is still waiting"

ctl exited sw
wait $rw_pid
is "$?" "0" "Admit returns once the seq-write exits"
like "$(cat "$IOB_T/rw.out")" "^rw admitted after [0-9]+ ms" "and says admitted"
held=$(grep -oE 'after [0-9]+' "$IOB_T/rw.out" | grep -oE '[0-9]+')
[ "${held:-0}" -ge 500 ] && [ "${held:-0}" -lt 10000 ]
is "$?" "0" "it was held (${held} ms)"
is "$(agent_field rw state)" "running" "status shows it running"

# Deadline: a seq-write arrives beside the running rand-write with a 1 s hold.
ctl register sw2 --class seq-write --key wk-seq >/dev/null
start=$(now_ms)
out=$(ctl admit sw2 --max-hold 1000)
rc=$?
el=$(($(now_ms) - start))
is "$rc" "0" "held seq-write is admitted at its deadline"
[ "$el" -ge 900 ] && [ "$el" -lt 10000 ]
is "$?" "0" "after about its max hold (${el} ms)"
like "$out" "max hold" "the reason says its max hold was reached"
is "$(ctl status --json | jq .forced_admissions)" "1" "status counts one forced admission"

# A pending container is bound to the caller that waits for it: another
# caller's Cancel is refused while it waits (agent-owner.sh has the rest);
# a container whose caller has gone (iobatchctl register returned) is
# anyone's to cancel.
ctl register rw3 --class rand-write >/dev/null
ctl exited rw
ctl register rw3b --class rand-write >/dev/null
iobatchctl admit rw3 >"$IOB_T/rw3.out" 2>&1 &
rw3_pid=$!
wait_for 5 '[ "$(agent_field rw3 state)" == pending ]'
is "$(agent_field rw3 state)" "pending" "rand-write beside seq-write sw2 is pending"
like "$(ctl cancel rw3 2>&1)" "cancel of 'rw3' .*refused: it was registered by another connection" \
  "another caller's Cancel is refused while its Admit waits"
kill $rw3_pid
wait $rw3_pid 2>/dev/null
wait_for 5 '[ -z "$(agent_field rw3 state)" ]'
is "$(agent_field rw3 state)" "" "its caller gone, the pending container is gone from status"
out=$(ctl cancel rw3b 2>&1)
is "$?:$out" "0:" "the admin's Cancel of a container whose caller has gone is taken"
is "$(agent_field rw3b state)" "" "a cancelled container is gone from status"

# A caller that goes away: its pending container is dropped.
ctl register rw4 --class rand-write >/dev/null
iobatchctl admit rw4 >/dev/null 2>&1 &
rw4_pid=$!
wait_for 5 '[ "$(agent_field rw4 state)" == pending ]'
kill $rw4_pid; wait $rw4_pid 2>/dev/null
wait_for 5 '[ -z "$(agent_field rw4 state)" ]'
is "$(agent_field rw4 state)" "" "pending container dropped when its caller disconnects"
grep -q "dropped: its caller closed the connection" "$AGENT_LOG"
is "$?" "0" "and the log says why"

ctl exited sw2
agent_stop
is "$AGENT_RC" "0" "SIGTERM: clean exit"
[ ! -e "$AGENT_SOCK" ]
is "$?" "0" "socket removed"

# Restart: learnt profiles classify a known workload before it starts.
agent_start "policy = paper
alpha = 0.6" || bail "iobatchd did not restart"
out=$(ctl register again --key wk-rand)
is "$out" "registered again: class rand-write" "profile class known at registration after restart"
is "$(agent_field again class_source)" "profile" "status says it comes from the profile"
out=$(ctl profiles --state-dir "$AGENT_STATE")
like "$out" "wk-seq +seq-write" "iobatchctl profiles lists the learnt workload"

# SIGHUP: the configuration is read again; a broken one changes nothing.
sed -i 's/^policy = paper/policy = predictive/' "$IOB_T/agent.conf"
kill -HUP "$AGENT_PID"
wait_for 5 '[ "$(ctl status --json | jq -r .policy)" == predictive ]'
is "$(ctl status --json | jq -r .policy)" "predictive" "SIGHUP reloads the configuration"
echo "max_concurrency = lots" >>"$IOB_T/agent.conf"
kill -HUP "$AGENT_PID"
wait_for 5 'grep -q "reload failed" "$AGENT_LOG"'
like "$(grep 'reload failed' "$AGENT_LOG")" "line [0-9]+: invalid value 'lots' for 'max_concurrency'" \
  "a broken file on SIGHUP is refused with its line"
is "$(ctl status --json | jq -r .policy)" "predictive" "and the running configuration stays"
agent_stop

# A corrupt profile file is kept aside and the agent runs on.
echo '{"version": 1, "profiles": {"x": ' >"$AGENT_STATE/profiles.json"
agent_start || bail "iobatchd did not start with a corrupt profile file"
ls "$AGENT_STATE"/profiles.json.bad-* >/dev/null 2>&1
is "$?" "0" "corrupt profile file kept aside"
grep -q "kept aside as '.*profiles.json.bad-" "$AGENT_LOG"
is "$?" "0" "the log names where it went"
agent_stop

# Bad configuration: refused, with the file and line.
printf 'socket = %s\npolicy = fifo\n' "$AGENT_SOCK" >"$IOB_T/bad.conf"
err=$(iobatchd -c "$IOB_T/bad.conf" 2>&1)
rc=$?
is "$rc" "2" "bad config: exit status 2"
is "$err" "iobatchd: '$IOB_T/bad.conf' line 2: invalid value 'fifo' for 'policy': expected 'predictive' or 'paper'" "bad config: error names file and line"
tap_done
