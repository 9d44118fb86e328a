#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The agent's own faults and inputs (issue #14), with the real iobatchd and
# iobatch-hook (the hooks.d flow: prestart registers and waits for Admit,
# poststop reports the exit):
#   - a socket directory another user could write, owns, or a symlink: the
#     agent refuses to start and says what is wrong; a directory of its own
#     that others can only read (0755) is made 0700 with one notice; one
#     it creates is 0700;
#   - a dangling symlink planted at "<socket>.live": not written through;
#   - the socket is 0600;
#   - a full state_dir (a tiny tmpfs): the failed save is logged and the
#     old profiles.json is kept whole;
#   - a corrupted profiles.json: kept aside as profiles.json.bad-<time>,
#     the agent starts with no profiles.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 24
iob_need jq
HOOK=$IOB_B/bin/iobatch-hook
[ -x "$HOOK" ] || bail "build first: $HOOK"

# 1. The socket directory.
mkdir -m 0775 "$IOB_T/open"
out=$(timeout 20 iobatchd --socket "$IOB_T/open/a.sock" --state-dir "$IOB_T/st1" 2>&1)
rc=$?
like "$rc:$out" "^1:.*socket directory '$IOB_T/open' is writable by other users \(owner uid 0, mode 0775\): it must be a directory owned by uid 0 with mode 0700" \
  "a socket directory of mode 0775: the agent refuses to start, saying what is wrong"
mkdir -m 0700 "$IOB_T/theirs" && chown 65534 "$IOB_T/theirs"
out=$(timeout 20 iobatchd --socket "$IOB_T/theirs/a.sock" --state-dir "$IOB_T/st1" 2>&1)
like "$?:$out" "^1:.*socket directory '$IOB_T/theirs' is owned by another user \(owner uid 65534" \
  "one owned by another user: refused too"
ok "no socket was made in either" test ! -e "$IOB_T/open/a.sock" -a ! -e "$IOB_T/theirs/a.sock"
is "$(stat -c '%a' "$IOB_T/open" "$IOB_T/theirs" | tr '\n' ' ')" "775 700 " "and neither mode was changed"
ln -s "$IOB_T/open" "$IOB_T/link"
out=$(timeout 20 iobatchd --socket "$IOB_T/link/a.sock" --state-dir "$IOB_T/st1" 2>&1)
like "$?:$out" "^1:.*socket directory '$IOB_T/link' is a symbolic link" "a symlink to a directory: refused"
# What systemd's RuntimeDirectoryMode=0755 or a kubelet's hostPath
# DirectoryOrCreate make: ours, others may read but not write.
mkdir -m 0755 "$IOB_T/read"
timeout 20 iobatchd --socket "$IOB_T/read/a.sock" --state-dir "$IOB_T/st1" >"$IOB_T/read.log" 2>&1 &
RDPID=$!
at_exit "kill $RDPID 2>/dev/null"
wait_for 20 '[ -S "$IOB_T/read/a.sock" ] || ! kill -0 $RDPID 2>/dev/null'
is "$(stat -c '%a' "$IOB_T/read" 2>&1)" "700" "a socket directory of ours with mode 0755: the agent makes it 0700"
is "$(grep -c "socket directory '$IOB_T/read' had mode 0755.*changed it to 0700" "$IOB_T/read.log")" "1" \
  "and says so once, naming the directory and its old mode"
ok "and listens" test -S "$IOB_T/read/a.sock"
kill $RDPID; wait $RDPID 2>/dev/null
timeout 20 iobatchd --socket "$IOB_T/new/a.sock" --state-dir "$IOB_T/st1" >"$IOB_T/new.log" 2>&1 &
NEWPID=$!
at_exit "kill $NEWPID 2>/dev/null"
wait_for 20 '[ -S "$IOB_T/new/a.sock" ]'
is "$(stat -c '%a %u' "$IOB_T/new" 2>&1)" "700 0" "a socket directory the agent creates is 0700, root's"
is "$(stat -c '%a' "$IOB_T/new/a.sock" 2>&1)" "600" "the socket is 0600"
kill $NEWPID; wait $NEWPID 2>/dev/null

# 2. A tiny state_dir, and a dangling symlink at the live mark.
mkdir -p "$AGENT_STATE"
mount -t tmpfs -o size=64k,mode=0700 tmpfs "$AGENT_STATE" || bail "cannot mount a tmpfs"
at_exit "umount -l '$AGENT_STATE' 2>/dev/null"
ln -s "$IOB_T/victim" "$AGENT_SOCK.live"
agent_start || bail "iobatchd did not start"
ok "a dangling symlink at the .live mark is not written through" test ! -e "$IOB_T/victim"

# The hooks.d flow, by hand: a container is a sleep; prestart registers and
# waits for Admit, poststop says it exited.
BD=$IOB_T/bundle
mkdir -p "$BD"
echo '{"ociVersion":"1.0.2","process":{"args":["sleep","30"]}}' >"$BD/config.json"
prestart() { # ID KEY PID
  printf '{"ociVersion":"1.0.2","id":"%s","status":"created","pid":%s,"bundle":"%s","annotations":{"io.iobatch.class":"seq-write","io.iobatch.workload":"%s"}}' \
    "$1" "$3" "$BD" "$2" | "$HOOK" --socket "$AGENT_SOCK" --max-wait-ms 10000 2>&1
}
poststop() { # ID
  printf '{"ociVersion":"1.0.2","id":"%s","status":"stopped","bundle":"%s"}' "$1" "$BD" \
    | "$HOOK" --socket "$AGENT_SOCK" 2>&1
}
run_one() { # ID KEY
  sleep 30 &
  local sp=$!
  OUT=$(prestart "$1" "$2" $sp)
  RC=$?
  STATE=$(agent_field "$1" state)
  OUT2=$(poststop "$1")
  RC2=$?
  kill $sp; wait $sp 2>/dev/null
}
run_one k1 key-one
is "$RC:$OUT" "0:" "prestart: registered and admitted, nothing printed"
is "$STATE" "running" "the agent lists it running after prestart"
is "$RC2:$OUT2" "0:" "poststop: exit reported"
is "$(agent_field k1 state)" "" "and the agent no longer lists it"
ok "the profile of key-one is saved" wait_for 20 'jq -e ".namespaces.default[\"key-one\"]" "$AGENT_STATE/profiles.json" >/dev/null 2>&1'
cp "$AGENT_STATE/profiles.json" "$IOB_T/profiles.before"

# 3. Fill the state_dir: the next save fails, the old file stays.
dd if=/dev/zero of="$AGENT_STATE/fill" bs=4k 2>/dev/null
run_one k2 key-two
ok "with the state_dir full the agent logs the failed save" \
  wait_for 20 'grep -q "profiles not saved: .*No space left on device" "$AGENT_LOG"'
cmp -s "$AGENT_STATE/profiles.json" "$IOB_T/profiles.before"
is "$?" 0 "and the old profiles.json is kept whole"
ok "no temporary file is left" test ! -e "$AGENT_STATE/profiles.json.tmp"
ok "the agent still answers" sh -c "iobatchctl status >/dev/null"
rm -f "$AGENT_STATE/fill"

# 4. A corrupted profiles.json: kept aside, the agent starts without it.
agent_stop
is "$AGENT_RC" 0 "the agent stops cleanly"
echo '{"version": 1, "profiles": {"x": ' >"$AGENT_STATE/profiles.json"
agent_start || bail "iobatchd did not restart"
grep -q "kept aside as '$AGENT_STATE/profiles.json.bad-[0-9]*', starting with no profiles" "$AGENT_LOG"
is "$?" 0 "a corrupted profiles.json is kept aside, the log says where"
is "$(find "$AGENT_STATE" -maxdepth 1 -name 'profiles.json.bad-*' | wc -l)" 1 "profiles.json.bad-<time> is there"
is "$(iobatchctl status --json | jq .profiles)" 0 "the agent runs with no profiles"
tap_done
