#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# iobatchctl as an operator uses it: --help everywhere (usage on stdout,
# exit 0; the command list parseable), unknown arguments (exit 2, named),
# the agent socket from IOBATCH_AGENT_SOCKET (the old IOBATCH_SOCKET is not read),
# -o json|table|wide and --json, status with pod/container names, full
# IDs (cut with an ellipsis only on a terminal too narrow), how long a
# container is held, when it is admitted at the latest and what it waits
# for, and `status ID` by id or unique prefix.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
iob_need jq script
tap_plan 53
CTL=$IOB_B/bin/iobatchctl # the binary itself: the tests set the environment

# --- help and usage errors (no agent needed) --------------------------------
out=$("$CTL" --help 2>"$IOB_T/err"); rc=$?
is "$rc:$(wc -c <"$IOB_T/err")" "0:0" "iobatchctl --help: exit 0, nothing on stderr"
cmds=$(awk '/^Commands:/ { f = 1; next } /^$/ { f = 0 } f { print $1 }' <<<"$out" | tr '\n' ' ')
is "$cmds" "status plan profiles calibrate register admit cancel exited check annotations help " \
  "--help lists the commands one per line after 'Commands:' (what completion reads)"
bad=""
for c in $cmds; do
  o=$("$CTL" "$c" --help 2>"$IOB_T/err"); rc=$?
  if [ "$c" = help ]; then # help --help is the global usage
    [[ $rc == 0 && $o == "$out" && ! -s $IOB_T/err ]] || bad+=" $c(help rc=$rc)"
    continue
  fi
  [[ $rc == 0 && $o == "usage: iobatchctl $c"* && ! -s $IOB_T/err ]] || bad+=" $c(help rc=$rc)"
  [ "$("$CTL" help "$c")" == "$o" ] || bad+=" $c(help CMD differs)"
  "$CTL" "$c" --no-such-flag >/dev/null 2>"$IOB_T/err"; rc=$?
  [[ $rc == 2 ]] && grep -q -- "'--no-such-flag'" "$IOB_T/err" || bad+=" $c(bad arg rc=$rc: $(head -c 200 "$IOB_T/err"))"
done
is "$bad" "" "every command: --help and 'help CMD' print its usage on stdout, exit 0; an unknown argument exits 2 naming it"
"$CTL" --frobnicate >/dev/null 2>"$IOB_T/err"; rc=$?
is "$rc:$(grep -c "unknown option '--frobnicate'" "$IOB_T/err")" "2:1" "an unknown global option exits 2 naming it"
"$CTL" frobnicate >/dev/null 2>"$IOB_T/err"; rc=$?
is "$rc:$(grep -c "unknown command 'frobnicate'" "$IOB_T/err")" "2:1" "an unknown command exits 2 naming it"
"$CTL" status -o yaml >/dev/null 2>"$IOB_T/err"; rc=$?
is "$rc:$(grep -c "unknown output format 'yaml'" "$IOB_T/err")" "2:1" "-o yaml exits 2 naming it"
"$CTL" status -o >/dev/null 2>"$IOB_T/err"; rc=$?
is "$rc:$(grep -c "'-o' needs a value" "$IOB_T/err")" "2:1" "-o without a value exits 2"
"$CTL" status a b >/dev/null 2>"$IOB_T/err"; rc=$?
is "$rc:$(grep -c "unexpected argument 'b'" "$IOB_T/err")" "2:1" "status takes one ID at most"
"$CTL" admit >/dev/null 2>"$IOB_T/err"; rc=$?
is "$rc:$(grep -c "expected one container id" "$IOB_T/err")" "2:1" "admit without an id exits 2"
like "$("$CTL" --help)" 'IOBATCH_AGENT_SOCKET' "--help names IOBATCH_AGENT_SOCKET"

# --- the socket -----------------------------------------------------------------
agent_start "policy = paper
alpha = 0.6" || bail "iobatchd did not start"
env IOBATCH_AGENT_SOCKET="$AGENT_SOCK" "$CTL" status >/dev/null 2>&1
is "$?" "0" "IOBATCH_AGENT_SOCKET names the agent's socket"
env -u IOBATCH_AGENT_SOCKET IOBATCH_SOCKET="$AGENT_SOCK" "$CTL" status >/dev/null 2>"$IOB_T/err"
is "$(grep -c "$AGENT_SOCK" "$IOB_T/err")" "0" "the old IOBATCH_SOCKET is not read (removed before any release)"
env IOBATCH_AGENT_SOCKET=/nonexistent/x.sock "$CTL" --socket "$AGENT_SOCK" status >/dev/null 2>&1
is "$?" "0" "--socket wins over the environment"
env IOBATCH_AGENT_SOCKET=/nonexistent/x.sock "$CTL" status >/dev/null 2>"$IOB_T/err"; rc=$?
is "$rc:$(grep -c '/nonexistent/x.sock' "$IOB_T/err")" "1:1" "a wrong IOBATCH_AGENT_SOCKET fails naming the socket"

# --- status -----------------------------------------------------------------------
LONG=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
export IOBATCH_AGENT_SOCKET=$AGENT_SOCK
ctl register "$LONG" --ns k8s.io --class seq-write --pod web-0 --pod-ns prod --name writer >/dev/null
out=$(ctl admit "$LONG" --ns k8s.io)
like "$out" "admitted" "a seq-write in a pod is admitted"
ctl register rw --class rand-write >/dev/null
iobatchctl admit rw --max-hold 600000 >"$IOB_T/rw.out" 2>&1 &
rw_pid=$!
wait_for 10 '[ "$(agent_field rw state)" == pending ] && [ -n "$(agent_field rw conflict)" ]'
is "$(agent_field rw state)" "pending" "a rand-write beside it is held"
ctl register idle1 --class seq-read >/dev/null # registered, never asks to start

j=$(ctl status -o json)
is "$(jq -r --arg id "$LONG" '.containers[] | select(.id == $id) | .id' <<<"$j")" "$LONG" "-o json: the full 64-character id"
is "$(jq -r --arg id "$LONG" '.containers[] | select(.id == $id) | "\(.pod_namespace) \(.pod_name) \(.container_name)"' <<<"$j")" \
  "prod web-0 writer" "-o json: pod namespace, pod and container names"
# What moves between two calls is left out: times, rates, and the
# protection budget (it grows with each window the job runs).
stable='[keys, [.containers[] | del(.held_ms, .age_ms, .admit_by_ms, .read_bps, .write_bps, .read_iops, .write_iops, .work_left_s, .frozen_ms, .lat_quiet_windows, .budget_spent) | with_entries(select(.key | test("^(protection_|io_lat_|io_stall_)") | not))]]'
is "$(jq -c "$stable" <<<"$j")" "$(ctl status --json | jq -c "$stable")" "--json is -o json"
by=$(jq '.containers[] | select(.id == "rw") | .admit_by_ms' <<<"$j")
[ "$by" -gt 0 ] && [ "$by" -le 600000 ]
is "$?" "0" "admit_by_ms of the pending one is within its max hold ($by ms)"
w=$(jq -r '.containers[] | select(.id == "rw") | .waits_for' <<<"$j")
like "$w" "prod/web-0/writer \('0123456789ab'\)" "waits_for names what it waits for, by its pod and container ($w)"
is "$(jq -r '.containers[] | select(.id == "idle1") | "\(.waits_for)|\(.admit_by_ms)"' <<<"$j")" "|0" \
  "a container that has not asked to start waits for nothing"
is "$(jq -r --arg id "$LONG" '.containers[] | select(.id == $id) | "\(.waits_for)|\(.admit_by_ms)"' <<<"$j")" "|0" \
  "a running container waits for nothing"

t=$(ctl status)
hdr=$(grep '^NAMESPACE' <<<"$t" | tr -s ' ')
is "$hdr" "NAMESPACE POD CONTAINER ID STATE CLASS HELD ADMIT-BY READ/s WRITE/s WEIGHT REASON" "the table's columns"
like "$(grep -- "$LONG" <<<"$t")" "^prod +web-0 +writer +$LONG +running " "the pod's row: namespace, pod, container, the full id (not a terminal)"
like "$(grep ' rw ' <<<"$t")" "^default +- +rw +rw +pending +rand-write \(declared\) +[0-9.]+m?s +in [0-9]+m[0-9]{2}s .* waits for .*prod/web-0/writer " \
  "the pending row: containerd namespace, no pod, id as name, held, admit-by, what it waits for"
like "$(grep ' idle1 ' <<<"$t")" " idle1 +created .* - +- " "a created one: no held time, no admit-by"
tw=$(ctl status -o wide)
is "$(grep '^NAMESPACE' <<<"$tw" | tr -s ' ')" \
  "NAMESPACE POD CONTAINER ID STATE CLASS HELD ADMIT-BY READ/s WRITE/s WEIGHT KIND CONF R-IOPS W-IOPS LAT-P99 PID REASON" "-o wide adds columns"
# On a terminal narrower than the table the ids are cut, crictl-style, and
# the cut id still finds the container.
tty=$(script -qec "stty cols 100; IOBATCH_AGENT_SOCKET=$AGENT_SOCK $CTL status" /dev/null | tr -d '\r')
cut=$(grep -oE "0123456789abc…" <<<"$tty" | head -n1)
is "$cut" "0123456789abc…" "on a narrow terminal a long id is cut to 13 characters and an ellipsis"
is "$(grep -c "$LONG" <<<"$tty")" "0" "and not printed whole"
tty=$(script -qec "stty cols 100; IOBATCH_AGENT_SOCKET=$AGENT_SOCK $CTL status --no-trunc" /dev/null | tr -d '\r')
is "$(grep -c "$LONG" <<<"$tty")" "1" "--no-trunc prints it whole"
tty=$(script -qec "stty cols 400; IOBATCH_AGENT_SOCKET=$AGENT_SOCK $CTL status" /dev/null | tr -d '\r')
is "$(grep -c "$LONG" <<<"$tty")" "1" "a terminal wide enough gets it whole"

# --- status ID ---------------------------------------------------------------------
d=$(ctl status rw); rc=$?
is "$rc" "0" "status ID"
like "$(grep '^State:' <<<"$d")" "pending" "the detail: state"
like "$(grep '^Admit by:' <<<"$d")" "[0-9]{2}:[0-9]{2}:[0-9]{2} \(in [0-9]+m[0-9]{2}s\) at the latest" "the detail: admitted at the latest by a clock time"
like "$(grep '^Waits for:' <<<"$d")" "prod/web-0/writer" "the detail: what it waits for"
like "$(grep '^Held:' <<<"$d")" "so far" "the detail: how long it has been held"
d=$(ctl status 0123456789); rc=$?
is "$rc:$(grep '^ID:' <<<"$d" | awk '{print $2}')" "0:$LONG" "a unique prefix finds the container"
is "$(ctl status "0123456789abc…" | grep '^Pod:' | tr -s ' ')" "Pod: prod/web-0" "so does a cut id copied from the table"
is "$(ctl status "k8s.io/$LONG" -o json | jq -r .container_name)" "writer" "NAMESPACE/ID, -o json: one container's object"
ctl register rw2 --class rand-write >/dev/null
ctl status r >/dev/null 2>"$IOB_T/err"; rc=$?
is "$rc:$(grep -c "'r' matches 2 containers: default/rw default/rw2" "$IOB_T/err")" "1:1" "an ambiguous prefix fails naming the candidates"
ctl status nosuch >/dev/null 2>"$IOB_T/err"; rc=$?
is "$rc:$(grep -c "no container 'nosuch'" "$IOB_T/err")" "1:1" "an unknown id fails naming it"

# --- admitted: nothing to wait for -------------------------------------------------
ctl exited "$LONG" --ns k8s.io
wait $rw_pid
is "$?" "0" "the rand-write is admitted when the seq-write exits"
is "$(agent_field rw state):$(agent_field rw waits_for):$(agent_field rw admit_by_ms)" "running::0" \
  "once running it waits for nothing"
like "$(ctl status rw | grep '^Held:')" "before it started" "the detail says how long it was held"
like "$(ctl status | grep ' rw ')" " running .* - +.* admitted" "the table: admit-by '-', the admission reason"
"$CTL" --socket "$AGENT_SOCK" status -o json | jq -e '.penalties | type == "array"' >/dev/null
is "$?" "0" "-o json carries the learned penalties (an array)"

agent_stop
is "$AGENT_RC:$(grep -c Sanitizer "$AGENT_LOG")" "0:0" "the agent exits cleanly, no sanitizer report in its log"

# --- held for capacity: waits for a free slot -------------------------------------
agent_start || bail "iobatchd did not start again"
like "$(ctl status | head -1)" "^policy predictive, no concurrency cap," \
  "status says the predictive policy holds nothing for capacity by default, as the log does"
agent_stop
agent_start "max_concurrency = 1" || bail "iobatchd did not start again"
like "$(ctl status | head -1)" "^policy predictive, max concurrency 1," "and the cap when one is set"
ctl register a1 --class seq-read >/dev/null
ctl admit a1 >/dev/null
ctl register a2 --class seq-read >/dev/null
iobatchctl admit a2 >/dev/null 2>&1 &
a2_pid=$!
wait_for 10 '[ "$(agent_field a2 reason)" == "pending: max concurrency reached" ]'
is "$(agent_field a2 waits_for)" "a free slot (max concurrency 1 reached)" "held for capacity: it waits for a free slot"
ctl exited a1
wait $a2_pid
is "$?:$(agent_field a2 state)" "0:running" "and starts when a slot frees"
agent_stop
# Under B=build-asan a leak or a sanitizer report shows in the log.
is "$AGENT_RC:$(grep -c Sanitizer "$AGENT_LOG")" "0:0" "the agent exits cleanly, no sanitizer report in its log"
tap_done
