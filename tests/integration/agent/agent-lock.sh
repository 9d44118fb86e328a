#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One agent per state directory (issue #23, item 7): two agents sharing one
# would each overwrite restore.json with only their own entries and take
# the other's caps for "originals".
#   - a second iobatchd on the same state directory, on another socket,
#     exits non-zero naming the first one's pid, before it loads or writes
#     anything there and without a socket of its own;
#   - so does one on the same socket;
#   - the first one keeps serving;
#   - once the first has stopped, the state directory is free again.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 7
iob_need jq
agent_start || bail "iobatchd did not start"
is "$(cat "$AGENT_STATE/iobatchd.lock")" "$AGENT_PID" "the first agent writes its pid into the lock file"
ls -l --time-style=+%s.%N "$AGENT_STATE" >"$IOB_T/before"
# second SOCKET: a second iobatchd on the same state directory; its exit
# code in $IOB_T/2.rc, what it said in $IOB_T/2.log
second() {
  cat >"$IOB_T/2.conf" <<CONF
socket = $1
state_dir = $AGENT_STATE
CONF
  timeout 20 iobatchd -c "$IOB_T/2.conf" >"$IOB_T/2.log" 2>&1
  echo $? >"$IOB_T/2.rc"
}
second "$IOB_T/other.sock"
is "$(cat "$IOB_T/2.rc")" 1 "a second agent on another socket exits with 1"
like "$(cat "$IOB_T/2.log")" "state directory '$AGENT_STATE' is in use: another iobatchd \(pid $AGENT_PID\) holds '$AGENT_STATE/iobatchd.lock'" \
  "and names the first one's pid"
[ ! -e "$IOB_T/other.sock" ] && ls -l --time-style=+%s.%N "$AGENT_STATE" | diff "$IOB_T/before" -
is "$?" 0 "it left no socket and touched nothing in the state directory"
second "$AGENT_SOCK"
is "$(cat "$IOB_T/2.rc"):$(grep -c "is in use: another iobatchd (pid $AGENT_PID)" "$IOB_T/2.log")" "1:1" \
  "so does one on the same socket"
ok "the first agent still answers" eval 'ctl status >/dev/null'
agent_stop
iobatchd -c "$IOB_T/2.conf" >"$IOB_T/3.log" 2>&1 &
P3=$!
at_exit "kill $P3 2>/dev/null; wait $P3 2>/dev/null"
ok "once it has stopped, another agent can take the state directory" \
  wait_for 10 '[ -S "$AGENT_SOCK" ] && [ "$(cat "$AGENT_STATE/iobatchd.lock")" == "$P3" ]'
kill -TERM $P3
wait $P3
tap_done
