#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# More of the admission hold end to end (issue #5), with a private
# containerd whose environment does NOT name the agent: every container
# gets the agent's socket from the runtime options TOML
# (ctr --runtime-config-path: IobatchAgentSocket, IobatchFailClosed).
#   - IobatchAgentSocket reaches the shim's Register at Create and its
#     Admit at Start;
#   - iobatch-hook already in a spec's prestart hooks registers the
#     container; the shim does not register it a second time;
#   - fail closed: an agent that cannot be asked fails Start, naming the
#     socket and why; the task stays CREATED and is deleted cleanly;
#     fail open (the default) starts it;
#   - Start's own deadline (ttrpc timeout_nano, sent by tests/shim-start
#     straight to the shim): a held container is admitted by force before
#     it;
#   - an agent restart: the running containers are registered again at
#     once, a pending one stays pending, then is admitted;
#   - with the default matrix and policy, a random reader beside a running
#     random writer is admitted at once;
#   - nothing is left behind.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 39

iob_need containerd ctr runc fio jq
START=$IOB_B/tests/shim-start
[ -x "$START" ] || bail "build first: $START"
HOOK=$IOB_B/bin/iobatch-hook
[ -x "$HOOK" ] || bail "build first: $HOOK"

# The paper policy and admission-hold.sh's matrix: two seq-writes run together,
# a rand-write beside either is held.
cp "$IOB_TOP/tests/fixtures/batch/hold-matrix.conf" "$IOB_T/matrix.conf"
PAPER="policy = paper
alpha = 0.6
matrix = $IOB_T/matrix.conf
max_hold = 60s"
agent_start "$PAPER" || bail "iobatchd did not start"

unset IOBATCH_AGENT_SOCKET
iob_stack_ctr fio
SHIM_LOG=$IOB_T/containerd.log

toml() { # FILE SOCKET [FAIL_CLOSED]
  { echo "# runc options for $RT"
    echo "IobatchAgentSocket = \"$2\""
    [ -z "${3:-}" ] || echo "IobatchFailClosed = $3"; } >"$1"
}
NOWHERE=$IOB_T/nowhere.sock
toml "$IOB_T/live.toml" "$AGENT_SOCK" true
toml "$IOB_T/dead.toml" "$NOWHERE" true
toml "$IOB_T/open.toml" "$NOWHERE"
LIVE="--runtime-config-path $IOB_T/live.toml"

# fio_run ID CLASS RW SECONDS: a time-based fio container, detached.
fio_run() {
  $CTR run -d --runtime $RT $LIVE --annotation io.iobatch.class="$2" --rootfs "$R" "$1" \
    /usr/bin/fio --name=j --filename="/data/$1" --rw="$3" --bs="$([ "${3#rand}" != "$3" ] && echo 4k || echo 1M)" \
    --size=256M --time_based --runtime="$4" --direct=1 --ioengine=psync >/dev/null
}
# held ID: a rand-write `ctr run -d` in the background (blocks while held);
# rc in $IOB_T/ID.rc, output in $IOB_T/ID.out.
held() {
  (
    $CTR run -d --runtime $RT $LIVE --annotation io.iobatch.class=rand-write --rootfs "$R" "$1" \
      /usr/bin/fio --name=r --filename="/data/$1" --rw=randwrite --bs=4k --size=16M \
      --direct=1 --ioengine=psync >"$IOB_T/$1.out" 2>&1
    echo $? >"$IOB_T/$1.rc.tmp" && mv "$IOB_T/$1.rc.tmp" "$IOB_T/$1.rc"
  ) &
}
gone() {
  $CTR task kill -s KILL "$1" >/dev/null 2>&1
  wait_for 20 '[ "$(state '"$1"')" != RUNNING ]'
  $CTR task delete "$1" >/dev/null 2>&1
  $CTR container delete "$1" >/dev/null 2>&1
}

# 1. IobatchAgentSocket: the only way this containerd's shims find the agent.
out=$(timeout 60 $CTR run --rm --runtime $RT $LIVE --rootfs "$R" o1 /bin/sh -c 'echo started' 2>&1)
is "$out" "started" "with IobatchAgentSocket (and IobatchFailClosed) a container runs"
grep -q "registered 'o1' (namespace '$NS', from shim" "$AGENT_LOG"
is "$?" "0" "the shim registered it at Create at the options' socket"
grep -q "admitted 'o1'" "$AGENT_LOG"
is "$?" "0" "the shim asked the agent at the options' socket"

# 1b. A spec that carries iobatch-hook itself (its author put it there):
# runc runs it at create and it registers the container with its birth;
# the shim, seeing it in config.json, does not register it again.  (The
# default spec's cgroupsPath is the namespace's own cgroup, the parent of
# the other containers' here: cgroup v2 puts no process in a cgroup whose
# children have controllers, so h1 gets one of its own.)
$CTR oci spec | jq --arg r "$R" --arg hook "$HOOK" --arg sock "$AGENT_SOCK" --arg rec "$IOB_T/rec" \
  --arg cg "/$NS/h1" '
  .root = {"path": $r, "readonly": false} | .linux.cgroupsPath = $cg
  | .process.args = ["/bin/sh", "-c", "echo started"] | .process.terminal = false
  | .process.cwd = "/" | .annotations = {"io.iobatch.class": "rand-read"}
  | .hooks = {"prestart": [{"path": $hook,
      "args": ["iobatch-hook", "--record-dir", $rec, "--socket", $sock]}]}' >"$IOB_T/h1.json"
mkdir -p "$IOB_T/rec"
out=$(timeout 60 $CTR run --rm --runtime $RT $LIVE --config "$IOB_T/h1.json" h1 2>&1)
is "$out" "started" "a container whose spec has iobatch-hook runs"
is "$(grep -c "registered 'h1' (namespace '$NS', from hook" "$AGENT_LOG"):$(grep -c "registered 'h1' (namespace '$NS', from shim" "$AGENT_LOG")" \
  "1:0" "registered once, by the hook in its spec, not again by the shim"
ok "the hook's record says it ran" test -f "$IOB_T/rec/h1.json"

# An unknown declared class fails Create, naming the annotation (the agent
# would refuse its Register), and leaves nothing behind.
out=$(timeout 60 $CTR run --rm --runtime $RT $LIVE --annotation io.iobatch.class=seq_write \
  --rootfs "$R" b1 /bin/true 2>&1)
like "$out" "invalid annotation 'io.iobatch.class': unknown class 'seq_write'" \
  "an unknown io.iobatch.class fails Create, naming it"
$CTR container delete b1 >/dev/null 2>&1
ok "no bundle, socket or runc state left for it" no_leftovers b1

# 2. Fail closed: nothing listens at the options' socket.
out=$(timeout 60 $CTR run -d --runtime $RT --runtime-config-path "$IOB_T/dead.toml" --rootfs "$R" \
  c1 /bin/true 2>&1)
rc=$?
isnt_zero() { [ "$1" -ne 0 ]; }
ok "fail closed: ctr run fails when the agent cannot be asked" isnt_zero $rc
like "$out" "not admitted: 'c1' not started: agent at '$NOWHERE' not asked: cannot connect to '$NOWHERE': No such file or directory \(fail closed\)" \
  "the error names the socket, the cause and fail closed"
is "$(state c1)" "CREATED" "the task stays CREATED"
grep -q "agent at '$NOWHERE' not asked about 'c1': cannot connect to '$NOWHERE': No such file or directory; not starting it (fail closed)" "$SHIM_LOG"
is "$?" "0" "the shim log says so"
# containerd wants a CREATED task forced (a Kill, then Delete).
$CTR task delete -f c1 >/dev/null 2>&1 && $CTR container delete c1 >/dev/null 2>&1
is "$?" "0" "and it is deleted cleanly (ctr task delete -f)"
ok "no bundle, socket or runc state left for it" no_leftovers c1
out=$(timeout 60 $CTR run --rm --runtime $RT --runtime-config-path "$IOB_T/open.toml" --rootfs "$R" \
  c2 /bin/sh -c 'echo started' 2>&1)
is "$out" "started" "fail open (the default) with the same dead socket starts it"
grep -q "agent at '$NOWHERE' not asked about 'c2': .*starting it now (fail open)" "$SHIM_LOG"
is "$?" "0" "and the shim log says why"

# 3. Start's deadline.  ctr cannot put one on Start, so a second Start of
# the held task goes straight to its shim with timeout_nano (containerd's
# and the kubelet's calls carry one); the agent answers the older Admit
# "superseded" and holds the new one until its deadline is near.
fio_run s1 seq-write write 120
wait_for 20 '[ "$(state s1)" == RUNNING ]'
held d1
wait_for 20 '[ "$(agent_field d1 state)" == pending ]'
is "$(agent_field d1 state)" "pending" "a random writer is held beside a sequential writer"
addr=$(cat "$IOB_T/state/io.containerd.runtime.v2.task/$NS/d1/address" 2>/dev/null)
like "$addr" "^unix://" "its shim's address is in the bundle"
out=$("$START" "$addr" d1 8000 2>&1)
like "$out" "^pid [0-9]+$" "a Start with an 8 s deadline is answered (admitted) before it"
wait_for 20 '[ -e "$IOB_T/d1.rc" ]'
like "$(cat "$IOB_T/d1.rc" 2>/dev/null) $(cat "$IOB_T/d1.out" 2>/dev/null)" "^1 .*superseded" \
  "the older held Start (ctr's) fails: superseded"
grep -qE "admitted 'd1' \(rand-write\) by force after [0-9]+ ms: its deadline came; it conflicts with s1" "$AGENT_LOG"
is "$?" "0" "the agent log says admitted by force, beside s1"
grep -qE "agent admitted 'd1' after [0-9]+ ms: admitted: max hold reached" "$SHIM_LOG"
is "$?" "0" "the shim log says forced (max hold reached)"
is "$(agent_field d1 state) $(state s1) $(state d1)" "running RUNNING RUNNING" \
  "it runs beside the sequential writer (agent status, ctr)"
is "$(ctl status --json | jq .forced_admissions)" "1" "agent status counts one forced admission"
gone d1
# A deadline shorter than the shim's 2 s margin, fail closed: the agent is
# still asked, and admits by force within half of it.
held d2
wait_for 20 '[ "$(agent_field d2 state)" == pending ]'
addr=$(cat "$IOB_T/state/io.containerd.runtime.v2.task/$NS/d2/address" 2>/dev/null)
out=$("$START" "$addr" d2 1500 2>&1)
like "$out" "^pid [0-9]+$" "fail closed, a Start with a 1.5 s deadline is still admitted before it"
grep -qE "admitted 'd2' \(rand-write\) by force after [0-9]+ ms" "$AGENT_LOG"
is "$?" "0" "by force, the agent says"
wait_for 20 '[ -e "$IOB_T/d2.rc" ]'
gone d2

# 4. An agent restart: running containers come back at once, a pending one
# stays pending.
fio_run s2 seq-write write 120
wait_for 20 '[ "$(state s2)" == RUNNING ]'
held p1
wait_for 20 '[ "$(agent_field p1 state)" == pending ]'
is "$(agent_field p1 state)" "pending" "before the restart: p1 pending beside s1 and s2"
{ kill -9 "$AGENT_PID"; wait "$AGENT_PID"; } 2>/dev/null
rm -f "$AGENT_SOCK"
mark=$(wc -l <"$SHIM_LOG")
agent_start "$PAPER" || bail "iobatchd did not restart"
wait_for 20 '[ "$(agent_field s1 state) $(agent_field s2 state)" == "running running" ]'
is "$(agent_field s1 state) $(agent_field s2 state)" "running running" \
  "after the restart status lists s1 and s2 as running again"
tail -n +"$mark" "$SHIM_LOG" | grep -c "agent at '$AGENT_SOCK' is back: told it about the running containers" |
  { read -r n; [ "$n" -ge 2 ]; }
is "$?" "0" "both of their shims reconnected on their own (no call to make)"
wait_for 20 '[ "$(agent_field p1 reason)" != "" ] && [ "$(agent_field p1 reason)" != "batch window" ]'
like "$(agent_field p1 state) $(agent_field p1 reason)" "^pending pending: " \
  "p1 is still pending, planned after them"
is "$(state p1)" "CREATED" "ctr task ls: CREATED"
gone s1
gone s2
wait_for 60 '[ -e "$IOB_T/p1.rc" ]'
is "$(cat "$IOB_T/p1.rc" 2>/dev/null)" "0" "once they are gone it is admitted and starts"
gone p1

# 5. Default matrix and policy: a random reader beside a running random
# writer starts at once (status never shows it pending).
agent_stop
agent_start "" || bail "iobatchd did not start with the defaults"
is "$(ctl status --json | jq -r '.policy + " " + .matrix')" "predictive defaults" \
  "the agent runs the default policy and matrix"
fio_run w1 rand-write randwrite 60
wait_for 20 '[ "$(state w1)" == RUNNING ]'
(while :; do ctl status --json 2>/dev/null | jq -r '.containers[] | select(.id == "rr1") | .state'; sleep 0.02; done) \
  >"$IOB_T/rr1.states" 2>&1 &
WATCH=$!
at_exit "kill $WATCH 2>/dev/null"
fio_run rr1 rand-read randread 5
is "$?" "0" "a random reader started beside it"
kill $WATCH 2>/dev/null
wait $WATCH 2>/dev/null
is "$(grep -c pending "$IOB_T/rr1.states")" "0" "iobatchctl status never showed it pending"
reason=$(grep -oE "admitted 'rr1' \(rand-read\) after [0-9]+ ms: admitted: [a-z ]+" "$AGENT_LOG")
like "$reason" "admitted: (no conflict|holding would not finish sooner)" "the agent says why: ${reason#*: }"
gone rr1
gone w1

# 6. Nothing left behind.
wait_for 20 '[ "$(our_shims)" -eq 0 ]'
is "$(our_shims)" "0" "no shim process left"
ok "no sockets, bundles, runc state or mounts left" no_leftovers o1 c1 c2 s1 s2 d1 d2 p1 w1 rr1
! grep -E "Sanitizer|runtime error:" "$SHIM_LOG"
is "$?" "0" "no sanitizer report in the shim log"
tap_done
