#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A container's calls are bound to the connection that registered or
# admitted it: every peer of the agent's socket is root, so the uid cannot
# tell a shim from another root process that mounts /run.  While that
# connection is open (an `iobatchctl admit` waiting here, a shim's own
# connection in production) another caller's Cancel, Exited, Admit and
# Register are refused with PERMISSION_DENIED naming the container and
# why, and the container stays pending.  Once it has closed, the next
# caller takes it over (the hook's poststop, a reconnected shim).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 11
iob_need jq
agent_start "policy = paper
alpha = 0.6" || bail "iobatchd did not start"

ctl register sw --class seq-write >/dev/null
like "$(ctl admit sw)" "^sw admitted after" "a seq-write runs (registered and admitted on connections now closed)"
ctl register rw --class rand-write >/dev/null
iobatchctl admit rw >"$IOB_T/rw.out" 2>&1 &
rw_pid=$!
at_exit "kill $rw_pid 2>/dev/null"
wait_for 5 '[ "$(agent_field rw state)" == pending ]'
is "$(agent_field rw state)" "pending" "a rand-write beside it waits, its Admit's connection open"

out=$(ctl cancel rw 2>&1)
like "$?:$out" "^1:.*cancel of 'rw' \(namespace 'default'\) refused: it was registered by another connection \(pid [0-9]+\), which is still open" \
  "another caller's Cancel is refused, saying why"
out=$(ctl exited rw 2>&1)
like "$?:$out" "^1:.*exit report of 'rw' .* refused" "another caller's Exited is refused"
out=$(timeout 20 iobatchctl admit rw 2>&1)
like "$?:$out" "^1:.*admit of 'rw' .* refused" "another caller's Admit does not supersede the waiting one"
out=$(ctl register rw --class idle 2>&1)
like "$?:$out" "^1:.*register of 'rw' .* refused" "nor does its Register"
is "$(agent_field rw state)" "pending" "the container is still pending"
ok "and its Admit still waits" kill -0 $rw_pid
like "$(grep -c "cancel of 'rw' (namespace 'default') refused" "$AGENT_LOG")" "^1$" "the agent logs the refusal"

# The caller that waits is the one that is answered when the seq-write goes
# (its registration's connection closed: anyone may report its exit).
ctl exited sw
wait $rw_pid
like "$?:$(cat "$IOB_T/rw.out")" "^0:rw admitted after" \
  "the seq-write's exit, from a new connection, is taken; the waiting Admit is answered"
out=$(ctl cancel rw 2>&1)
is "$?:$out" "0:" "with the Admit's connection closed, a Cancel from another is taken"
agent_stop
