#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# ctr run --rm through containerd-shim-iobatch-v2: stdout, exit codes, the
# binary contract (start/delete/-info/-v), and nothing left behind.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/shim.sh"
tap_plan 18

shim_containerd_start || bail "containerd did not start"
R=$IOB_T/rootfs
iob_rootfs_busybox "$R"

out=$(timeout 30 $CTR run --runtime $RT $SHIM_RUNOPTS --rm --rootfs "$R" r0 /bin/sh -c 'echo hello from iobatch' 2>&1)
rc=$?
is "$out" "hello from iobatch" "run --rm prints the container's stdout"
is "$rc" 0 "exit code 0"

timeout 30 $CTR run --runtime $RT $SHIM_RUNOPTS --rm --rootfs "$R" r3 /bin/sh -c 'exit 3' >/dev/null 2>&1
is "$?" 3 "exit code 3"

# A container's init ignores SIGKILL sent from inside: kill it from outside.
timeout 30 $CTR run --runtime $RT $SHIM_RUNOPTS --rm --rootfs "$R" r9 /bin/sleep 60 >/dev/null 2>&1 &
runpid=$!
for i in $(seq 1 50); do $CTR task ls 2>/dev/null | grep -q '^r9 .*RUNNING' && break; sleep 0.1; done
$CTR task kill -s SIGKILL r9
wait $runpid
is "$?" 137 "exit code 137 after SIGKILL"

out=$(timeout 30 $CTR run --runtime $RT $SHIM_RUNOPTS --rm --rootfs "$R" rerr /bin/sh -c 'echo to-stderr >&2' 2>&1 >/dev/null)
is "$out" "to-stderr" "stderr reaches the client's stderr"

# The shim keeps a writer on the stdin FIFO until CloseIO (as the runc shim
# does), so the container reads a line rather than waiting for EOF.
out=$(echo "piped input" | timeout 30 $CTR run --runtime $RT $SHIM_RUNOPTS --rm --rootfs "$R" rin /bin/sh -c 'read x; echo "got $x"' 2>&1)
is "$out" "got piped input" "stdin reaches the container"

out=$(timeout 30 $CTR run --runtime $RT $SHIM_RUNOPTS --rm --rootfs "$R" rbig /bin/sh -c 'seq 1 20000' 2>&1 | tail -1)
is "$out" "20000" "large output is copied completely"

out=$(timeout 30 $CTR run --runtime $RT $SHIM_RUNOPTS --rm --rootfs "$R" rnx /bin/does-not-exist 2>&1)
like "$out" "does-not-exist" "a failing runc create reports runc's error"

is "$(shim_wait_gone)" 0 "no shim process left"
ok "no sockets, bundles or mounts left" shim_no_leftovers r0 r3 r9 rerr rin rbig rnx

like "$($SHIM -v)" "Version: " "-v prints a version"
like "$($SHIM -info | tr -c '[:print:]' ' ')" "io.containerd.iobatch.v2" "-info prints RuntimeInfo"

# `delete` on a bundle whose container is gone: DeleteResponse with 137.
B=$IOB_T/bundle-del
mkdir -p "$B/rootfs" && echo 4242 >"$B/init.pid"
resp=$(cd "$B" && $SHIM -namespace $SHIM_NS -address "$IOB_SOCK" -id nosuch -bundle "$B" delete 2>/dev/null | od -An -tx1 | tr -d ' \n')
like "$resp" "^0892211089011a" "delete prints DeleteResponse{pid 4242, status 137}"

# containerd 2.3's `start`: BootstrapParams on stdin (instance_id and
# namespace match the flags), socket_dir honoured; a second start for the
# same group reuses the live shim; SIGTERM makes it remove its socket.
B2=$IOB_T/bundle-23
SD=$IOB_T/sockdir
mkdir -p "$B2/rootfs"
echo '{"ociVersion":"1.0.2","annotations":{"io.containerd.runc.v2.group":"grp23"}}' >"$B2/config.json"
# Protobuf by hand, with bash's printf only (no python3 in the test VM).
pb_byte() { printf "\\$(printf %03o "$1")"; }
pb_string() { # FIELD STRING: tag, varint length, bytes
  local LC_ALL=C
  local s=$2 len=${#2}
  pb_byte $(($1 << 3 | 2))
  while [ "$len" -ge 128 ]; do pb_byte $((len & 127 | 128)); len=$((len >> 7)); done
  pb_byte "$len"
  printf %s "$s"
}
bp() { # BootstrapParams{1 instance_id, 2 namespace, 5 ttrpc address, 9 socket_dir}
  pb_string 1 "$1"; pb_string 2 "$2"; pb_string 5 "$3"; pb_string 9 "$4"
}
a1=$(cd "$B2" && bp s23 "$SHIM_NS" "$IOB_SOCK.ttrpc" "$SD" | $SHIM -namespace "$SHIM_NS" -id s23 -address "$IOB_SOCK" -publish-binary /usr/bin/containerd start 2>&1)
like "$a1" "^unix://$SD/[0-9a-f]{64}$" "start with BootstrapParams binds under socket_dir and prints only the address"
a2=$(cd "$B2" && bp s24 "$SHIM_NS" "$IOB_SOCK.ttrpc" "$SD" | $SHIM -namespace "$SHIM_NS" -id s24 -address "$IOB_SOCK" start 2>&1)
is "$a2" "$a1" "a second start for the same group reuses the running shim"
is "$(cat "$B2/address")" "$a1" "start writes the address file"
spid=$(pgrep -f "$SHIM -namespace $SHIM_NS -id s23 ")
kill -TERM $spid 2>/dev/null
for _ in $(seq 1 30); do [ -e "${a1#unix://}" ] || break; sleep 0.1; done
ok "the shim removes its socket on SIGTERM" test ! -e "${a1#unix://}"

err=$($SHIM -namespace $SHIM_NS -id 'bad/id' -address "$IOB_SOCK" start 2>&1 </dev/null)
like "$err" "must match" "start refuses an invalid id"

tap_done
