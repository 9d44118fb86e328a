#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# iobatch-hook's confinement (security review, finding 14): after a real
# registration, what a parser bug could try next (the hidden
# --selftest-escape and --selftest-connect) is refused: opening a root-owned
# file outside its paths for writing or reading (Landlock: EACCES), and
# connecting to another unix socket (seccomp allows no socket: SIGSYS).
# A kernel without Landlock fails the file tests: the hook's --debug line
# then says "no landlock".
source "$(dirname "$0")/../lib/common.sh"
tap_plan 12
HOOK=$IOB_B/bin/iobatch-hook
[ -x "$HOOK" ] || bail "no $HOOK (build first)"
iob_need python3
"$IOB_B/bin/iobatchd" --socket "$IOB_T/a.sock" --state-dir "$IOB_T/state" >"$IOB_T/agent.log" 2>&1 &
AGENT=$!
at_exit "kill $AGENT"
# another unix socket, standing for containerd's
python3 -c 'import socket,sys,time; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(); time.sleep(60)' \
  "$IOB_T/other.sock" &
OTHER=$!
at_exit "kill $OTHER"
for _ in $(seq 50); do [ -S "$IOB_T/a.sock" ] && [ -S "$IOB_T/other.sock" ] && break; sleep 0.1; done
# a root-owned file standing for /etc/shadow
mkdir -p "$IOB_T/etc" "$IOB_T/rec"
echo secret >"$IOB_T/etc/shadow"
chmod 0640 "$IOB_T/etc/shadow"
BD=$IOB_T/io.containerd.runtime.v2.task/confns/c1
mkdir -p "$BD"
echo '{"ociVersion":"1.0.2","process":{"args":["sleep","30"]}}' >"$BD/config.json"
sleep 30 &
SP=$!
at_exit "kill $SP"
state() { echo "{\"ociVersion\":\"1.0.2\",\"id\":\"$1\",\"status\":\"creating\",\"pid\":$SP,\"bundle\":\"$BD\"}"; }

state c1 | "$HOOK" --debug --socket "$IOB_T/a.sock" --record-dir "$IOB_T/rec" \
  --selftest-escape "$IOB_T/etc/shadow" >/dev/null 2>"$IOB_T/err"
is "$?" 0 "the hook exits 0 under its confinement"
err=$(cat "$IOB_T/err")
like "$err" "confinement: landlock ABI [0-9]+: writes only beneath '[^']+' and $IOB_T/rec" \
  "--debug says which confinement is in force"
like "$err" "selftest: open '$IOB_T/etc/shadow' for writing: Permission denied" \
  "a root-owned file outside its paths: not opened for writing (EACCES)"
like "$err" "for reading: Permission denied" "nor for reading"
is "$(cat "$IOB_T/etc/shadow")" secret "the file is as it was"
st=$(iobatchctl --socket "$IOB_T/a.sock" status --json)
like "$st" '"id": *"c1"' "the registration went through: the agent lists the container"
like "$st" '"namespace": *"confns"' "in the namespace of the bundle path"
like "$(cat "$IOB_T/rec/c1.json" 2>/dev/null)" '"workload":"sleep 30"' \
  "config.json read in the bundle, the record written and renamed in its directory"

{ (state c2 | exec "$HOOK" --socket "$IOB_T/a.sock" --selftest-connect "$IOB_T/other.sock" \
  2>"$IOB_T/err"); rc=$?; } 2>/dev/null
is "$rc" "$((128 + 31))" "connecting to another unix socket: killed by SIGSYS (exit $rc)"
is "$(grep -c 'selftest: connect' "$IOB_T/err")" 0 "before it could say it connected"
like "$(iobatchctl --socket "$IOB_T/a.sock" status --json)" '"id": *"c2"' \
  "the agent's socket, connected before confinement, still served the registration"
state c3 | "$HOOK" --socket "$IOB_T/a.sock" --record-dir "$IOB_T/rec" \
  --selftest-escape "$BD/config.json" >/dev/null 2>"$IOB_T/err"
like "$(cat "$IOB_T/err")" "selftest: open '$BD/config.json' for writing: Permission denied; for reading: allowed" \
  "the bundle: read only"
tap_done
