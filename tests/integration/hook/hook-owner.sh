#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# iobatch-hook talks only to an agent socket whose listener is root's or
# its own (issue #23, item 14): a socket another uid listens on (someone
# who could write the socket's directory, or took the path first) is
# refused before anything is sent: the hook fails open, saying why.
source "$(dirname "$0")/../lib/common.sh"
tap_plan 4
iob_need socat setpriv
# a directory nobody (65534) can write, reachable by everyone
E=$(mktemp -d /tmp/iobe.XXXXXX)
at_exit "rm -rf '$E'"
chmod 755 "$E"
mkdir "$E/run"
chown 65534:65534 "$E/run"
setpriv --reuid 65534 --regid 65534 --clear-groups \
  socat UNIX-LISTEN:"$E/run/a.sock",fork OPEN:"$E/run/got",creat,append >"$IOB_T/socat.log" 2>&1 &
FAKE=$!
at_exit "kill $FAKE 2>/dev/null"
for _ in $(seq 50); do [ -S "$E/run/a.sock" ] && break; sleep 0.1; done
[ -S "$E/run/a.sock" ] || bail "the fake agent did not listen: $(cat "$IOB_T/socat.log")"
BD=$IOB_T/io.containerd.runtime.v2.task/hookns/hk1
mkdir -p "$BD"
echo '{"ociVersion":"1.0.2","process":{"args":["sleep","30"]},"annotations":{}}' >"$BD/config.json"
sleep 30 &
SP=$!
at_exit "kill $SP"
state='{"ociVersion":"1.0.2","id":"hk1","status":"creating","pid":'$SP',"bundle":"'$BD'","annotations":{}}'
out=$(echo "$state" | "$IOB_B/bin/iobatch-hook" --socket "$E/run/a.sock" 2>&1)
is "$?" 0 "the hook exits 0 (fail open)"
like "$out" "agent socket '$E/run/a.sock': the server listening there is not root's nor ours \(uid 65534, pid [0-9]+; we are uid 0\): not talking to it.*\(fail open\)" \
  "it says why in one line"
sleep 0.3 # socat writes what it got as it gets it
is "$(stat -c %s "$E/run/got" 2>/dev/null || echo 0)" 0 "the fake agent received nothing"
# the same hook against root's agent on the same path still talks
kill $FAKE; wait $FAKE 2>/dev/null
rm -f "$E/run/a.sock"
"$IOB_B/bin/iobatchd" --socket "$IOB_T/a.sock" --state-dir "$IOB_T/state" >"$IOB_T/agent.log" 2>&1 &
AGENT=$!
at_exit "kill $AGENT"
for _ in $(seq 50); do [ -S "$IOB_T/a.sock" ] && break; sleep 0.1; done
echo "$state" | "$IOB_B/bin/iobatch-hook" --socket "$IOB_T/a.sock" >/dev/null 2>&1
like "$(iobatchctl --socket "$IOB_T/a.sock" status --json)" '"id": *"hk1"' "root's agent is still talked to"
tap_done
