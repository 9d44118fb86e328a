#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# iobatch under podman through hooks.d (the build's rendering of
# packaging/hooks.d/iobatch.json.in, $B/hooks/iobatch.json),
# with a private iobatchd and a private podman store, real runc, no
# registry (--rootfs with busybox):
#   - prestart registers the container and asks Admit: the agent lists it
#     running while it runs (not `created`), and holds a conflicting one
#     pending until the first exits;
#   - poststop reports the exit: nothing stays listed;
#   - a user who cannot reach the root-only socket (a rootless engine): the
#     hook exits 0 and prints nothing;
#   - the agent gone: the container still runs (fail open), the hook's one
#     line says why.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 15
iob_need podman runc jq setpriv
HOOK=$IOB_B/bin/iobatch-hook
[ -x "$HOOK" ] || bail "build first: $HOOK"

# The paper policy and admission-hold.sh's matrix: a rand-write beside a running
# seq-write is held.
cp "$IOB_TOP/tests/fixtures/batch/hold-matrix.conf" "$IOB_T/matrix.conf"
agent_start "policy = paper
alpha = 0.6
matrix = $IOB_T/matrix.conf
max_hold = 60s" || bail "iobatchd did not start"

# The hooks.d file as the build renders it (packaging/hooks.d/iobatch.json.in
# with this build's hook; make install and the .deb render the same file
# with their paths), with one change: --socket names this test's agent.
RENDERED=$IOB_B/hooks/iobatch.json
[ -f "$RENDERED" ] || bail "build first: $RENDERED"
is "$(jq -r .hook.path "$RENDERED")" "$HOOK" "the rendered hooks.d file names this build's hook"
mkdir -p "$IOB_T/hooks.d"
jq --arg s "$AGENT_SOCK" '.hook.args = (.hook.args[0:1] + ["--socket", $s] + .hook.args[1:])' \
  "$RENDERED" >"$IOB_T/hooks.d/iobatch.json" || bail "cannot read $RENDERED"
R=$IOB_T/rootfs
iob_rootfs_busybox "$R"
# crun refuses this cgroup v1/v2 hybrid host; podman's default ulimits are
# above what runc may set here.
PODMAN="podman --root $IOB_T/pm/storage --runroot $IOB_T/pm/run --tmpdir $IOB_T/pm/tmp
  --runtime runc --hooks-dir $IOB_T/hooks.d --cgroup-manager cgroupfs --events-backend file"
at_exit "$PODMAN rm -af -t 0 >/dev/null 2>&1"
prun() { # NAME CLASS SECONDS: a detached-in-the-background `podman run --rm`
  (timeout -k 5 90 $PODMAN run --rm --name "$1" --network none \
    --cidfile "$IOB_T/$1.cid" --ulimit nofile=1024:1024 --ulimit nproc=1024:1024 \
    --annotation io.iobatch.class="$2" \
    --rootfs "$R" /bin/sleep "$3" >"$IOB_T/$1.out" 2>&1; echo $? >"$IOB_T/$1.rc.tmp" && mv "$IOB_T/$1.rc.tmp" "$IOB_T/$1.rc") &
}
# The id from --cidfile: written at create, before the prestart hook (podman
# inspect would wait for the container's lock, which run holds meanwhile).
id_of() { cat "$IOB_T/$1.cid" 2>/dev/null; }
listed() { # NAME: its state in the agent, or nothing
  local id
  id=$(id_of "$1")
  [ -n "$id" ] && agent_field "$id" state
}

prun w1 seq-write 6
ok "podman: the first container runs" wait_for 30 '[ "$(listed w1)" = running ]'
ID1=$(id_of w1)
is "$(agent_field "$ID1" namespace)" "default" "the agent knows it in namespace default"
prun r1 rand-write 1
ok "a conflicting one is held: the agent lists it pending" wait_for 30 '[ "$(listed r1)" = pending ]'
ID2=$(id_of r1)
ok "podman run of it has not returned (its prestart hook waits)" test ! -e "$IOB_T/r1.rc"
ok "the first exits" wait_for 30 '[ -e "$IOB_T/w1.rc" ]'
is "$(cat "$IOB_T/w1.rc")" 0 "with status 0"
ok "poststop: the agent no longer lists the first" wait_for 20 '[ -z "$(agent_field "$ID1" state)" ]'
ok "the held one is admitted and runs to its end" wait_for 30 '[ -e "$IOB_T/r1.rc" ]'
is "$(cat "$IOB_T/r1.rc")" 0 "with status 0"
ok "and is not listed either" wait_for 20 '[ -z "$(agent_field "$ID2" state)" ]'
grep -q "admitted '$ID2'" "$AGENT_LOG"
is "$?" 0 "the agent log says it admitted it"

# A rootless engine runs the same hooks.d file as its user, who cannot
# reach the root-only socket: the hook does nothing, says nothing, exits 0.
# (A rootless podman needs a user with subordinate ids, which CI's machine
# does not have: the hook is run as that user would run it.)
sleep 30 &
RLPID=$!
at_exit "kill $RLPID 2>/dev/null"
rl_args=$(jq -r '.hook.args[1:] | @sh' "$IOB_T/hooks.d/iobatch.json")
out=$(printf '{"ociVersion":"1.0.2","id":"rootless1","status":"created","pid":%s,"bundle":"/nonexistent","annotations":{"io.iobatch.class":"seq-write"}}' $RLPID |
  eval setpriv --reuid 65534 --regid 65534 --clear-groups "$HOOK" "$rl_args" 2>&1)
is "$?:$out" "0:" "a user who cannot reach the agent's socket: the hook exits 0 and prints nothing"
is "$(agent_field rootless1 state)" "" "and the agent does not hear of the container"
kill $RLPID

# The agent gone: fail open, one line from the hook.
agent_stop
out=$(timeout -k 5 60 $PODMAN run --rm --network none --ulimit nofile=1024:1024 \
  --ulimit nproc=1024:1024 --rootfs "$R" /bin/sh -c 'echo started' 2>&1)
like "$out" "started" "with the agent gone a container still runs (fail open)"
tap_done
