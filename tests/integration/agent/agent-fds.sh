#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The agent's file descriptors (agent/serve/fdlimit.h): a container costs a pidfd
# and its shim a connection, so the agent raises its soft RLIMIT_NOFILE to
# the hard one at start.  Started with 64:8192 (a soft limit far below
# what 100 containers need, a hard one below what AGENT_MAX_CONTAINERS
# needs):
#   - /proc/PID/limits shows the soft limit raised to 8192;
#   - the log says the hard limit is short of the maximum;
#   - 100 containers registered with pids of their own are all watched
#     (no "Too many open files");
#   - status (table and JSON) and the metrics show the fds in use and the
#     limit.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 8
iob_need jq prlimit curl
N=100

# iobatchd through prlimit, which execs it: AGENT_PID is the agent's.
mkdir -p "$IOB_T/fd-bin"
printf '#!/bin/sh\nexec prlimit --nofile=64:8192 "%s" "$@"\n' "$IOB_B/bin/iobatchd" \
  >"$IOB_T/fd-bin/iobatchd"
chmod 755 "$IOB_T/fd-bin/iobatchd"
PATH=$IOB_T/fd-bin:$PATH
agent_start "metrics = unix:$IOB_T/metrics.sock" || bail "iobatchd did not start"

is "$(awk '/^Max open files/ { print $4, $5 }' "/proc/$AGENT_PID/limits")" "8192 8192" \
  "the soft limit of 64 was raised to the hard one"
like "$(cat "$AGENT_LOG")" "open file limit 8192 is below the 8448 that 4096 containers need" \
  "and the log says the hard limit is short of the maximum"

for i in $(seq 1 $N); do
  sleep 600 &
  at_exit "kill $! 2>/dev/null"
  ctl register "fd$i" --pid $! --running >/dev/null || diag "register fd$i failed"
done
is "$(iobatchctl status --json | jq '[.containers[] | select(.id | startswith("fd"))] | length')" \
  "$N" "$N containers registered"
ok "each pid watched: no 'Too many open files' in the log" \
  test "$(grep -c 'Too many open files' "$AGENT_LOG")" -eq 0
fds=$(iobatchctl status --json | jq .open_fds)
have=$(find "/proc/$AGENT_PID/fd" -mindepth 1 | wc -l)
ok "status --json shows the fds in use ($fds; /proc has $have)" \
  test "${fds:-0}" -ge "$N" -a "${fds:-0}" -le $((have + 4)) -a "${fds:-0}" -ge $((have - 4))
is "$(iobatchctl status --json | jq .fd_limit)" "8192" "and the limit"
like "$(iobatchctl status)" "open fds [0-9]+ of 8192" "the table's summary shows them"
like "$(curl -s --unix-socket "$IOB_T/metrics.sock" http://x/metrics)" \
  "iobatch_agent_open_fds [1-9][0-9]+" "the metrics have iobatch_agent_open_fds"
agent_stop
tap_done
