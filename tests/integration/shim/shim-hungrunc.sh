#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A runc that hangs (issue #14): a wrapper named by the runtime option
# BinaryName sleeps for ever on `create` (or on `start`), in a child of its
# own, as a hook that never returns would.  The shim sets no time limit of
# its own (containerd's runc shim does not either): the bound is the
# caller's.
#   - the other containers of the pod's shim are answered meanwhile;
#   - create: when the caller gives up (ctr killed), containerd deletes
#     the task; the shim kills the hung runc with its whole process group
#     (the sleeping child too) and the shim goes on serving the pod; the
#     name can be used again;
#   - start: `ctr task kill -s KILL` kills the hung `runc start` and then
#     the container; the held ctr run returns, the task deletes;
#   - nothing left: no runc, no sleeper, no shim, no mount.
# Proved by order and by process ids, not by a clock.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/shim.sh"
tap_plan 17

CALL=$IOB_B/tests/shim-call
[ -x "$CALL" ] || bail "build tests/shim-call first (make)"
M=$IOB_T/marks
mkdir -p "$M"
# No agent: containers start at once (fail open).
export IOBATCH_AGENT_SOCKET=$IOB_T/no-agent.sock
shim_containerd_start || bail "containerd did not start"
R=$IOB_T/rootfs
iob_rootfs_busybox "$R"
POD="--annotation io.kubernetes.cri.sandbox-id=pod1"

# hang VERB: a runc wrapper that hangs on VERB (its sleeping child's pid in
# $M/VERB.pid), and options naming it.
hang() {
  cat >"$IOB_T/runc-hang-$1" <<SH
#!/bin/sh
case " \$* " in *" $1 "*)
  sleep 1000000 &
  echo \$! >"$M/$1.pid.tmp" && mv "$M/$1.pid.tmp" "$M/$1.pid"
  wait ;;
esac
exec runc "\$@"
SH
  chmod +x "$IOB_T/runc-hang-$1"
  printf 'BinaryName = "%s"\n' "$IOB_T/runc-hang-$1" >"$IOB_T/hang-$1.toml"
}
hang create
hang start
gone_pid() { ! kill -0 "$1" 2>/dev/null; }
state_of() { $CTR task ls 2>/dev/null | awk -v id="$1" '$1 == id { print $3 }'; }
now_ms() { awk '{ printf "%d\n", $1 * 1000 }' /proc/uptime; }
wait_for() { # SECONDS 'CONDITION': a watchdog, not a measurement
  local end=$(($(now_ms) + $1 * 1000))
  until eval "$2"; do
    [ "$(now_ms)" -lt "$end" ] || return 1
    sleep 0.05
  done
}

ok "container A of the pod runs" timeout 30 $CTR run --runtime $RT -d $POD --rootfs "$R" a /bin/sleep 600
SOCK=$(shim_socket_of pod1)
# Shim daemons of this containerd (argv[0] may be /proc/self/exe).
ours() { pgrep -f -- "-address $IOB_SOCK( |\$)" | tr '\n' ' '; }
SHIM=$(ours)

# 1. create hangs
timeout -s KILL 120 $CTR run --runtime $RT --runtime-config-path "$IOB_T/hang-create.toml" -d $POD \
  --rootfs "$R" b /bin/sleep 600 >"$IOB_T/b.out" 2>&1 &
CTRB=$!
ok "B's runc create hangs" wait_for 30 '[ -e "$M/create.pid" ]'
SLEEPER=$(cat "$M/create.pid")
like "$($CALL "$SOCK" state a)" "^status 2 " "State on A is answered while B's create hangs"
like "$($CALL "$SOCK" state b)" "code=5 container not created" "State on B: not created yet (NotFound)"
kill -TERM $CTRB 2>/dev/null
wait $CTRB 2>/dev/null
ok "the caller gives up (ctr killed): containerd deletes the task, the hung runc is killed with its child" \
  wait_for 30 'gone_pid "$SLEEPER"'
ok "the shim says so" wait_for 10 'grep -q "'"'b': the runc of its create still runs; killing it for a Delete"'" "$IOB_T/containerd.log"'
is "$(ours)" "$SHIM" "the pod's shim still runs (A is there), the only one"
like "$($CALL "$SOCK" state a)" "^status 2 " "and answers for A"
$CTR container delete b >/dev/null 2>&1
ok "the name is free again: B runs with plain runc" timeout 30 $CTR run --runtime $RT -d $POD \
  --rootfs "$R" b /bin/sleep 600

# 2. start hangs
timeout -s KILL 120 $CTR run --runtime $RT --runtime-config-path "$IOB_T/hang-start.toml" -d $POD \
  --rootfs "$R" c /bin/sleep 600 >"$IOB_T/c.out" 2>&1 &
CTRC=$!
ok "C's runc start hangs" wait_for 30 '[ -e "$M/start.pid" ]'
# shellcheck disable=SC2034  # read in a wait_for string below
SLEEPER=$(cat "$M/start.pid")
is "$(state_of c)" "CREATED" "C is created, its start in flight"
ok "ctr task kill -s KILL returns" timeout 60 $CTR task kill -s KILL c
ok "the hung runc start is killed with its child" wait_for 30 'gone_pid "$SLEEPER"'
wait $CTRC
rc=$?
like "$rc $(cat "$IOB_T/c.out")" "^[1-9][0-9]* .*start of 'c' cut short: its runc was killed by a Delete or SIGKILL" \
  "the held ctr run returns an error: its start was cut short"
ok "C stops" wait_for 30 '[ "$(state_of c)" = STOPPED ]'
for id in c b a; do
  $CTR task kill -s KILL $id >/dev/null 2>&1
  wait_for 20 '[ "$(state_of '$id')" != RUNNING ]'
  $CTR task delete $id >/dev/null 2>&1
  $CTR container delete $id >/dev/null 2>&1
done
ok "the shim exits with the pod's last container" wait_for 20 '[ -z "$(ours)" ]' 
ok "nothing left: sockets, bundles, mounts" shim_no_leftovers a b c pod1
tap_done
