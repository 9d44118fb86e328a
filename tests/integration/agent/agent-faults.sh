#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Faults of the agent seen from `ctr run` through io.containerd.iobatch.v2
# (issue #14): an agent that is there but silent must not hold a Start for
# ever.
#   - SIGSTOPped agent (connections succeed through the listen backlog,
#     nothing answers): with the default IobatchAgentTimeoutMs the run
#     goes on (fail open) and the shim log says why, in one line naming
#     the socket; with IobatchFailClosed, Start fails naming the agent;
#   - a full listen backlog (a listener that never accepts, its backlog
#     filled: a blocking connect would wait for ever): the same;
#   - SIGCONT: the agent answers again;
#   - kill -9 of the agent while it holds a Start, not restarted: the
#     held `ctr run` completes (fail open once the agent stays away);
#   - kill -9 of the shim while the agent holds its Start: `ctr run`
#     returns (an error: its shim is gone), the agent drops the pending
#     container, and it can be deleted;
#   - kill -9 of containerd while the agent holds a Start: the Start's
#     caller is gone, the shim cancels the hold (the agent forgets it), the
#     task stays created; restarted, containerd finds it created and a new
#     Start is held and admitted as any other.
# Timeouts here only catch a hang (the 60 s watchdog); nothing is timed.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 45

iob_need containerd ctr runc jq python3
[ -x "$IOB_B/bin/iobatch-hook" ] || bail "build first: $IOB_B/bin/iobatch-hook"
[ -x "$IOB_B/tests/shim-start" ] || bail "build first: $IOB_B/tests/shim-start"

agent_start || bail "iobatchd did not start"
unset IOBATCH_AGENT_SOCKET
iob_stack_ctr
SHIM_LOG=$IOB_T/containerd.log

toml() { # FILE SOCKET [EXTRA LINE]...
  local f=$1 s=$2
  shift 2
  { echo "IobatchAgentSocket = \"$s\""; for l in "$@"; do echo "$l"; done; } >"$f"
}
FULL=$IOB_T/full.sock
toml "$IOB_T/live.toml" "$AGENT_SOCK"
toml "$IOB_T/closed.toml" "$AGENT_SOCK" "IobatchFailClosed = true" "IobatchAgentTimeoutMs = 2000"
toml "$IOB_T/full.toml" "$FULL" "IobatchAgentTimeoutMs = 1000"
toml "$IOB_T/fullclosed.toml" "$FULL" "IobatchAgentTimeoutMs = 1000" "IobatchFailClosed = true"

# run ID TOML: `ctr run --rm` under the watchdog; output in $OUT, status in $RC
run() {
  OUT=$(timeout -k 5 60 $CTR run --rm --runtime $RT --runtime-config-path "$2" --rootfs "$R" "$1" \
    /bin/sh -c 'echo started' 2>&1)
  RC=$?
}
# run_closed ID TOML: `ctr run -d` (a failed Start leaves the task CREATED)
run_closed() {
  OUT=$(timeout -k 5 60 $CTR run -d --runtime $RT --runtime-config-path "$2" --rootfs "$R" "$1" \
    /bin/true 2>&1)
  RC=$?
}
lines() { grep -c -- "$1" "$SHIM_LOG"; }

# 0. the agent answers: a control run.
run c0 "$IOB_T/live.toml"
is "$RC:$OUT" "0:started" "control: with the agent running, a container runs"
grep -q "admitted 'c0'" "$AGENT_LOG"
is "$?" 0 "and the agent admitted it"

# 1. SIGSTOP: the agent's loop does not run; the kernel still queues
# connections on its backlog.
kill -STOP "$AGENT_PID"
at_exit "kill -CONT $AGENT_PID 2>/dev/null"
run s1 "$IOB_T/live.toml"
is "$RC" 0 "stopped agent: ctr run --rm returned (before the 60 s watchdog) with status 0"
is "$OUT" "started" "and the container ran (fail open)"
W="agent at '$AGENT_SOCK' not asked about 's1': no answer to a liveness ping within 5000 ms (the agent is stopped or hung); starting it now (fail open)"
is "$(lines "$W")" 1 "the shim log says why in one warning naming the socket (default IobatchAgentTimeoutMs 5000)"
grep -F -- "$W" "$SHIM_LOG" | grep -q "level=warn"
is "$?" 0 "at level warning"

run_closed s2 "$IOB_T/closed.toml"
isnt_zero() { [ "$1" -ne 0 ]; }
ok "stopped agent, fail closed: ctr run fails (before the watchdog)" isnt_zero $RC
like "$OUT" "'s2' not started: agent at '$AGENT_SOCK' not asked: no answer to a liveness ping within 2000 ms \(the agent is stopped or hung\) \(fail closed\)" \
  "the error names the agent's socket, the cause and fail closed"
is "$(state s2)" "CREATED" "the task stays CREATED"
$CTR task delete -f s2 >/dev/null 2>&1 && $CTR container delete s2 >/dev/null 2>&1
is "$?" 0 "and it is deleted cleanly"

kill -CONT "$AGENT_PID"
ok "SIGCONT: the agent answers again" wait_for 20 'iobatchctl status >/dev/null 2>&1'
run c3 "$IOB_T/live.toml"
is "$RC:$OUT" "0:started" "a container runs through it afterwards"
grep -q "admitted 'c3'" "$AGENT_LOG"
is "$?" 0 "and the agent admitted it"
diag "listed after the stop: $(iobatchctl status --json | jq -c '[.containers[] | {id, state}]')"

# 2. A full backlog: a listener that never accepts, its backlog filled.
python3 - "$FULL" >"$IOB_T/full.log" 2>&1 <<'PY' &
import os, socket, sys, time
p = sys.argv[1]
l = socket.socket(socket.AF_UNIX)
l.bind(p)
l.listen(0)
held = []
while True:
    c = socket.socket(socket.AF_UNIX)
    c.setblocking(False)
    try:
        c.connect(p)
    except BlockingIOError:
        break
    held.append(c)
open(p + ".ready", "w").close()
time.sleep(600)
PY
FULLPID=$!
at_exit "kill $FULLPID 2>/dev/null"
ok "the full listener is ready" wait_for 20 '[ -e "$FULL.ready" ]'
run b1 "$IOB_T/full.toml"
is "$RC:$OUT" "0:started" "full backlog: ctr run --rm returned (before the watchdog) and the container ran"
is "$(lines "agent at '$FULL' not asked about 'b1': its listen backlog stayed full for 1000 ms (the agent is stopped, hung or overloaded); starting it now (fail open)")" 1 \
  "the shim log says why in one warning naming the socket"
run_closed b2 "$IOB_T/fullclosed.toml"
ok "full backlog, fail closed: ctr run fails (before the watchdog)" isnt_zero $RC
like "$OUT" "'b2' not started: agent at '$FULL' not asked: its listen backlog stayed full for 1000 ms .*\(fail closed\)" \
  "the error names the agent's socket and the cause"
$CTR task delete -f b2 >/dev/null 2>&1 && $CTR container delete b2 >/dev/null 2>&1
kill $FULLPID 2>/dev/null

# 3. kill -9 of the agent while it holds a Start.  The paper policy and
# admission-hold.sh's matrix: a rand-write beside a running seq-write is held.
agent_stop
cp "$IOB_TOP/tests/fixtures/batch/hold-matrix.conf" "$IOB_T/matrix.conf"
PAPER="policy = paper
alpha = 0.6
matrix = $IOB_T/matrix.conf
max_hold = 60s"
agent_start "$PAPER" || bail "iobatchd did not restart"
# sleeper ID CLASS: a detached long sleep through the live options
sleeper() {
  timeout -k 5 60 $CTR run -d --runtime $RT --runtime-config-path "$IOB_T/live.toml" \
    --annotation io.iobatch.class="$2" --rootfs "$R" "$1" /bin/sleep 600 >/dev/null 2>&1
}
# held ID: a rand-write `ctr run --rm` in the background; rc in $IOB_T/ID.rc.
# A workload key of its own: the quick runs above taught the agent a short
# solo time for `sh -c 'echo started'`, and the fairness bound (fairness-1)
# x solo would admit it within a few hundred ms.
held() {
  (timeout -k 5 90 $CTR run --rm --runtime $RT --runtime-config-path "$IOB_T/live.toml" \
    --annotation io.iobatch.class=rand-write --annotation io.iobatch.workload="held-$1" \
    --rootfs "$R" "$1" /bin/sh -c 'echo started' \
    >"$IOB_T/$1.out" 2>&1; echo $? >"$IOB_T/$1.rc.tmp" && mv "$IOB_T/$1.rc.tmp" "$IOB_T/$1.rc") &
}
gone() {
  $CTR task kill -s KILL "$1" >/dev/null 2>&1
  wait_for 20 '[ "$(state '"$1"')" != RUNNING ]'
  $CTR task delete "$1" >/dev/null 2>&1
  $CTR container delete "$1" >/dev/null 2>&1
}
sleeper w1 seq-write
is "$(state w1)" RUNNING "a seq-write runs"
held h1
ok "a rand-write beside it is held" wait_for 20 '[ "$(agent_field h1 state)" = pending ]'
{ kill -9 "$AGENT_PID"; wait "$AGENT_PID"; } 2>/dev/null
ok "agent killed (-9) mid-hold, not restarted: the held ctr run returns before the watchdog" \
  wait_for 70 '[ -e "$IOB_T/h1.rc" ]'
is "$(cat "$IOB_T/h1.rc"):$(cat "$IOB_T/h1.out")" "0:started" "and its container ran (fail open)"
is "$(lines "agent at '$AGENT_SOCK' not asked about 'h1': ")" 1 "the shim log says why, once"
gone w1

# 4. kill -9 of the shim while the agent holds its Start.
rm -f "$AGENT_SOCK"
agent_start "$PAPER" || bail "iobatchd did not restart"
sleeper w2 seq-write
held h2
ok "another rand-write is held" wait_for 20 '[ "$(agent_field h2 state)" = pending ]'
SHIM=$(pgrep -f -- "-id h2 .*-address $IOB_SOCK( |\$)|-address $IOB_SOCK .*-id h2( |\$)" | head -1)
ok "its shim is found" test -n "$SHIM"
kill -9 $SHIM
ok "shim killed (-9) mid-hold: ctr run returns before the watchdog" wait_for 70 '[ -e "$IOB_T/h2.rc" ]'
isnt_zero "$(cat "$IOB_T/h2.rc")"
is "$?" 0 "with an error (its shim is gone)"
ok "the agent drops the pending container (its caller went away)" \
  wait_for 20 '[ -z "$(agent_field h2 state)" ]'
$CTR task delete -f h2 >/dev/null 2>&1
$CTR container delete h2 >/dev/null 2>&1
is "$($CTR container ls -q | grep -c '^h2$')" 0 "and it can be deleted"
gone w2

# 5. kill -9 of containerd while the agent holds a Start.  The shim and the
# agent outlive it; the Start's caller is gone, so the shim cancels the
# hold (the agent forgets the container) and the task stays created; the
# restarted containerd finds it so, and a new Start is held and admitted
# as any other.
sleeper w3 seq-write
held h3
ok "containerd case: a rand-write is held" wait_for 20 '[ "$(agent_field h3 state)" = pending ]'
SHIM3=$(pgrep -f -- "-id h3 .*-address $IOB_SOCK( |\$)|-address $IOB_SOCK .*-id h3( |\$)" | head -1)
kill -9 "$IOB_CONTAINERD_PID"
wait "$IOB_CONTAINERD_PID" 2>/dev/null
ok "containerd killed (-9) mid-hold: the held ctr run returns" wait_for 70 '[ -e "$IOB_T/h3.rc" ]'
isnt_zero "$(cat "$IOB_T/h3.rc")"
is "$?" 0 "with an error (containerd is gone)"
ok "the shim cancels the hold: the agent forgets the container" \
  wait_for 20 '[ -z "$(agent_field h3 state)" ]'
is "$(grep -c "cancelled 'h3' (pending)" "$AGENT_LOG")" 1 "the agent log says it was cancelled while pending"
ok "the shim still runs" kill -0 "$SHIM3"
ok "containerd restarts" iob_containerd_restart
is "$(state h3)" "CREATED" "the restarted containerd finds the task created"
is "$(state w3)" "RUNNING" "and the seq-write running"
# ctr cannot start a created task (`ctr task start` creates one): the
# Start goes straight to its shim, as containerd's would.
addr=$(cat "$IOB_T/state/io.containerd.runtime.v2.task/$NS/h3/address" 2>/dev/null)
(timeout -k 5 90 "$IOB_B/tests/shim-start" "$addr" h3 80000 >"$IOB_T/h3s.out" 2>&1
  echo $? >"$IOB_T/h3s.rc.tmp" && mv "$IOB_T/h3s.rc.tmp" "$IOB_T/h3s.rc") &
ok "started again, it is held again" wait_for 20 '[ "$(agent_field h3 state)" = pending ]'
gone w3
ok "the seq-write gone, it is admitted and started" wait_for 70 '[ -e "$IOB_T/h3s.rc" ]'
is "$(cat "$IOB_T/h3s.rc"):$(cut -c1-4 "$IOB_T/h3s.out")" "0:pid " "the Start is answered with the pid"
grep -q "admitted 'h3'" "$AGENT_LOG"
is "$?" 0 "the agent admitted it"
wait_for 20 '[ "$(state h3)" = STOPPED ]'
$CTR task delete h3 >/dev/null 2>&1
$CTR container delete h3 >/dev/null 2>&1
is "$($CTR container ls -q | grep -c '^h3$')" 0 "and it deletes"
ok "no bundle, socket or runc state left" no_leftovers c0 s1 s2 c3 b1 b2 h1 w1 w2 h3 w3
# The killed shim's socket stays, as containerd-shim-runc-v2's does after a
# kill -9 (containerd 1.6.20): nothing but the shim removes it.  Bundle
# and runc state must be gone.
H2SOCK=/run/containerd/s/$(printf '%s' "$IOB_SOCK/$NS/h2" | sha256sum | cut -d' ' -f1)
rm -f "$H2SOCK"
ok "no bundle or runc state left for the container of the killed shim" no_leftovers h2
tap_done
