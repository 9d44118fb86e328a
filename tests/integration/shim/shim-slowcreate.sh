#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# runc runs beside the shim's loop: two containers of one pod in one shim;
# B's `runc create` is slow (a runc wrapper named by B's runtime options
# sleeps first).  While it is in flight, State, Kill and Wait on A are
# answered at once.
# Then B's `runc delete` is slow (a runc wrapper sleeps first): A is still
# answered at once, while a Kill on B waits behind B's Delete and then gets
# containerd's answer for a deleted process.  Proved by order, not by a
# clock: the sleeper writes a marker when it is done, and the marker must
# (or must not) be there when an answer arrives.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/shim.sh"
tap_plan 22

CALL=$IOB_B/tests/shim-call
[ -x "$CALL" ] || bail "build tests/shim-call first (make)"
M=$IOB_T/marks
mkdir -p "$M"
# B's runc sleeps before it creates.  No agent: containers start at once.
cat >"$IOB_T/runc-slowcreate" <<SH
#!/bin/sh
case " \$* " in *" create "*)
  touch "$M/started"
  sleep 5
  touch "$M/done" ;;
esac
exec runc "\$@"
SH
chmod +x "$IOB_T/runc-slowcreate"
printf 'BinaryName = "%s"\n' "$IOB_T/runc-slowcreate" >"$IOB_T/slowcreate.toml"
export IOBATCH_AGENT_SOCKET=$IOB_T/no-agent.sock

shim_containerd_start || bail "containerd did not start"
R=$IOB_T/rootfs
iob_rootfs_busybox "$R"
POD="--annotation io.kubernetes.cri.sandbox-id=pod1"

ok "container A of the pod runs" timeout 30 $CTR run --runtime $RT $SHIM_RUNOPTS -d $POD \
  --rootfs "$R" fasta /bin/sleep 600
SOCK=$(shim_socket_of pod1)
timeout 60 $CTR run --runtime $RT --runtime-config-path "$IOB_T/slowcreate.toml" -d $POD \
  --rootfs "$R" slowb /bin/sleep 600 >"$IOB_T/slowb.out" 2>&1 &
SLOWB=$!
for i in $(seq 1 300); do [ -e "$M/started" ] && break; sleep 0.1; done
ok "B's create is in its runc" test -e "$M/started"

# Each answer below must come while B's runc still sleeps.
create_sleeps() { [ ! -e "$M/done" ]; }
state=$($CALL "$SOCK" state fasta)
create_sleeps; st=$?
is "$state" "status 2 pid $(sed -n 's/.*pid \([0-9]*\).*/\1/p' <<<"$state")" "State on A: running"
is "$st" 0 "State on A answered while B's create sleeps"
nb=$($CALL "$SOCK" state slowb)
create_sleeps; st=$?
like "$nb" "code=5 container not created" "State on B while its create runs: NotFound, as containerd's shim answers"
is "$st" 0 "... answered while B's create sleeps"
$CALL "$SOCK" wait fasta >"$IOB_T/wait.out" 2>&1 &
WAITA=$!
sleep 0.2
is "$($CALL "$SOCK" kill fasta 9)" "ok" "Kill on A"
create_sleeps; is $? 0 "Kill on A answered while B's create sleeps"
wait $WAITA
create_sleeps; st=$?
is "$(cat "$IOB_T/wait.out")" "exit 137" "Wait on A returns A's exit"
is "$st" 0 "Wait on A answered while B's create sleeps"

wait $SLOWB
is $? 0 "B is created and started once its runc create returned"
ok "its runc had finished by then" test -e "$M/done"
like "$($CALL "$SOCK" state slowb)" "status 2 " "State on B: running"

# B's delete is slow: runc (through a wrapper named by B's runtime options)
# sleeps before it deletes.
cat >"$IOB_T/runc-slowdelete" <<SH
#!/bin/sh
case " \$* " in *" delete "*)
  touch "$M/del-started"
  sleep 5
  touch "$M/del-done" ;;
esac
exec runc "\$@"
SH
chmod +x "$IOB_T/runc-slowdelete"
printf 'BinaryName = "%s"\n' "$IOB_T/runc-slowdelete" >"$IOB_T/slowdelete.toml"
ok "container C of the pod runs" timeout 30 $CTR run --runtime $RT $SHIM_RUNOPTS -d $POD \
  --rootfs "$R" fastc /bin/sleep 600
ok "container D of the pod (slow delete) runs" timeout 30 $CTR run --runtime $RT \
  --runtime-config-path "$IOB_T/slowdelete.toml" -d $POD --rootfs "$R" slowd /bin/sleep 600
$CTR task kill -s SIGKILL slowd >/dev/null 2>&1
for i in $(seq 1 50); do $CTR task ls | grep -q '^slowd .*STOPPED' && break; sleep 0.1; done
timeout 60 $CTR task delete slowd >"$IOB_T/deld.out" 2>&1 &
DELD=$!
for i in $(seq 1 300); do [ -e "$M/del-started" ] && break; sleep 0.1; done
ok "D's delete is in runc" test -e "$M/del-started"
$CALL "$SOCK" kill slowd 9 >"$IOB_T/killd.out" 2>&1 &
KILLD=$!
del_runs() { [ ! -e "$M/del-done" ]; }
state=$($CALL "$SOCK" state fastc)
del_runs; st=$?
like "$state" "status 2 " "State on C: running"
is "$st" 0 "State on C answered while D's delete runs"
wait $KILLD
test -e "$M/del-done"; after=$?
like "$(cat "$IOB_T/killd.out")" "code=5 cannot kill a deleted process" \
  "Kill on D while its Delete runs waits behind it, then: deleted (NotFound)"
is "$after" 0 "... answered only after D's delete finished"
wait $DELD
is $? 0 "D's delete succeeds"
$CTR container delete slowd >/dev/null 2>&1

$CTR task kill -s SIGKILL slowb >/dev/null 2>&1
$CTR task kill -s SIGKILL fastc >/dev/null 2>&1
for id in fasta slowb fastc; do
  for _ in $(seq 1 50); do $CTR task ls | grep -q "^$id .*STOPPED" && break; sleep 0.1; done
  $CTR task delete $id >/dev/null 2>&1
  $CTR container delete $id >/dev/null 2>&1
done
is "$(shim_wait_gone)" 0 "the shim exits with the pod's last container"
tap_done
