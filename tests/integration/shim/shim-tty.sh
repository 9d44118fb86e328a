#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Terminals through containerd-shim-iobatch-v2: ctr run -t under script(1),
# output through the pty, the initial size and a resize (ResizePty), and a
# terminal exec.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/shim.sh"
tap_plan 7

iob_need script
shim_containerd_start || bail "containerd did not start"
R=$IOB_T/rootfs
iob_rootfs_busybox "$R"

# busybox stty prints the size only to a terminal, so the two sides take
# turns through a file in the rootfs: the resize happens once "is-a-tty" is
# out, and the container looks again once the resize was done.
rm -f "$R/tmp/resized"
cat >"$IOB_T/tty.sh" <<SH
stty cols 100 rows 30
( for i in \$(seq 1 200); do grep -q is-a-tty "$IOB_T/tty.out" 2>/dev/null && break; sleep 0.1; done
  stty cols 77 rows 22 </dev/tty; pkill -WINCH -f 'ctr .*run .*tty1'; sleep 0.5; touch "$R/tmp/resized" ) &
exec $CTR run --runtime $RT $SHIM_RUNOPTS -t --rm --rootfs "$R" tty1 /bin/sh -c 'sleep 1; stty size; [ -t 0 ] && echo is-a-tty; i=0; while [ ! -e /tmp/resized ] && [ \$i -lt 200 ]; do sleep 0.1; i=\$((i+1)); done; stty size; exit 5'
SH
timeout 60 script -qec "bash $IOB_T/tty.sh" /dev/null </dev/null >"$IOB_T/tty.out"
rc=$?
out=$(tr -d '\r' <"$IOB_T/tty.out")
diag "$(echo "$out" | tr '\n' '|')"
like "$out" "is-a-tty" "the container's stdin is a terminal"
like "$out" "30 100" "the initial size reaches the pty"
like "$out" "22 77" "a resize reaches the pty (ResizePty)"
is "$rc" 5 "exit code through a terminal run"

# ctr wants a console even for -d -t.
run_dt() { timeout 30 script -qec "$CTR run --runtime $RT $SHIM_RUNOPTS -d -t --rootfs $R tty2 /bin/sleep 600" /dev/null >/dev/null; }
ok "run -d -t" run_dt
cat >"$IOB_T/exec.sh" <<SH
exec $CTR task exec -t --exec-id te d1x /bin/sh -c '[ -t 1 ] && echo exec-tty'
SH
sed -i "s/d1x/tty2/" "$IOB_T/exec.sh"
out=$(timeout 30 script -qec "bash $IOB_T/exec.sh" /dev/null </dev/null | tr -d '\r')
like "$out" "exec-tty" "a terminal exec gets a pty"
$CTR task kill -s SIGKILL tty2 >/dev/null 2>&1
sleep 0.5
$CTR task delete tty2 >/dev/null 2>&1
$CTR container delete tty2 >/dev/null 2>&1
is "$(shim_wait_gone)" 0 "no shim left"

tap_done
