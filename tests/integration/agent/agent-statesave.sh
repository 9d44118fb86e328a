#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The agent's state files are fsynced, but never on its main loop: an
# fsync waits behind every dirty page of the disk, and the loop answers
# admissions and samples.  iobatchd runs under strace (fsync, fdatasync,
# sync_file_range, counted by thread); a container registered and exited
# through iobatch-hook (the hooks.d flow) teaches a profile, saved to
# STATE_DIR/profiles.json soon after the exit.  The save is fsynced (by
# some thread), and none of those calls is the main thread's.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 6
iob_need jq strace
HOOK=$IOB_B/bin/iobatch-hook
[ -x "$HOOK" ] || bail "build first: $HOOK"

cat >"$IOB_T/agent.conf" <<CONF
socket = $AGENT_SOCK
state_dir = $AGENT_STATE
sample_period = 250ms
batch_window = 100ms
kubepods = off
CONF
TRACE=$IOB_T/strace.out
strace -f -qq -e trace=fsync,fdatasync,sync_file_range -o "$TRACE" \
  "$IOB_B/bin/iobatchd" -c "$IOB_T/agent.conf" -d >>"$AGENT_LOG" 2>&1 &
STRACE_PID=$!
at_exit "kill $STRACE_PID 2>/dev/null; wait $STRACE_PID 2>/dev/null"
wait_for 30 '[ -S "$AGENT_SOCK" ] && iobatchctl status >/dev/null 2>&1' || bail "iobatchd did not start"
MAIN=$(pgrep -P "$STRACE_PID" -x iobatchd)
ok "iobatchd runs under strace (main thread $MAIN)" test -n "$MAIN"
at_exit "kill $MAIN 2>/dev/null"

BD=$IOB_T/bundle
mkdir -p "$BD"
echo '{"ociVersion":"1.0.2","process":{"args":["sleep","30"]}}' >"$BD/config.json"
sleep 30 &
SP=$!
at_exit "kill $SP 2>/dev/null"
out=$(printf '{"ociVersion":"1.0.2","id":"s1","status":"created","pid":%s,"bundle":"%s","annotations":{"io.iobatch.class":"seq-write","io.iobatch.workload":"key-one"}}' \
  "$SP" "$BD" | "$HOOK" --socket "$AGENT_SOCK" --max-wait-ms 10000 2>&1)
is "$?:$out" "0:" "prestart: registered and admitted"
out=$(printf '{"ociVersion":"1.0.2","id":"s1","status":"stopped","bundle":"%s"}' "$BD" \
  | "$HOOK" --socket "$AGENT_SOCK" 2>&1)
is "$?:$out" "0:" "poststop: exit reported"
kill $SP; wait $SP 2>/dev/null
ok "the profile of key-one is saved while the agent runs" \
  wait_for 20 'jq -e ".namespaces.default[\"key-one\"]" "$AGENT_STATE/profiles.json" >/dev/null 2>&1'
# The lines of the fsync family: "TID fsync(FD) = 0".
syncs() { grep -E '^[0-9]+ +(fsync|fdatasync|sync_file_range)\(' "$TRACE"; }
wait_for 10 '[ "$(syncs | wc -l)" -ge 2 ]'
ok "the save was fsynced (file and directory: $(syncs | wc -l) calls)" \
  test "$(syncs | wc -l)" -ge 2
on_main=$(syncs | awk -v m="$MAIN" '$1 == m' | wc -l)
[ "$on_main" -eq 0 ] || syncs | sed 's/^/# /'
is "$on_main" "0" "no fsync on the agent's main thread"
