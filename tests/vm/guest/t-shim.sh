#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Our shim (io.containerd.iobatch.v2) on a pure cgroup v2 machine: run --rm,
# exit codes, a fio container in its own cgroup whose io.stat matches fio,
# exec, metrics from cgroup v2, kill and delete leaving nothing behind.
. "$(dirname "$0")/vmlib.sh"
RT=io.containerd.iobatch.v2
SHIM=containerd-shim-iobatch-v2
command -v $SHIM >/dev/null || bail "$SHIM was not built"
tap_plan 13

rootfs=$(vm_rootfs busybox)
run_rm() { timeout 60 $CTR run --rm --runtime $RT --env "PATH=$VM_PATH" --rootfs "$rootfs" "$@"; }

out=$(run_rm "rm-$$" sh -c 'echo hello from iobatch' 2>&1)
is "$out" "hello from iobatch" "ctr run --rm through $RT prints the container's stdout"
run_rm "rc-$$" sh -c 'exit 3' >/dev/null 2>&1
is "$?" 3 "the container's exit code 3 comes back"

MIB=32
id=shim-$$
work=/data/work/$id
ok "a detached fio container starts through $RT" vm_start $RT "$id" "$rootfs" sh -c \
  "fio --name=w --filename=/work/fio.dat --rw=write --bs=256k --size=${MIB}m --direct=1 \
     --ioengine=psync --output-format=terse --terse-version=3 >/work/fio.out 2>&1;
   echo \$? >/work/fio.rc; exec sleep 600"
pid=$(vm_task_pid "$id")
cg=$(vm_cgroup_of "${pid:-0}")
diag "cgroup of $id: ${cg:-none}"
like "$cg" "^$CG/.+/$id\$" "the container has its own cgroup, named after it"
ok "fio finishes with status 0" vm_wait 150 grep -qsx 0 "$work/fio.rc"
grep -qsx 0 "$work/fio.rc" || sed 's/^/# fio: /' "$work/fio.out" 2>/dev/null
fio_bytes=$(($(awk -F';' '{ print $47 + 0 }' "$work/fio.out" 2>/dev/null || echo 0) * 1024))
wbytes=$(vm_iostat_field "$cg" "$NVME_DEV" wbytes)
diag "fio wrote $fio_bytes bytes; io.stat $NVME_DEV wbytes=$wbytes"
within() { [ "$fio_bytes" -gt 0 ] && [ $((10 * (wbytes - fio_bytes))) -le "$fio_bytes" ] &&
  [ $((10 * (fio_bytes - wbytes))) -le "$fio_bytes" ]; }
ok "io.stat $NVME_DEV wbytes is within 10% of fio's count" within

out=$(timeout 60 $CTR task exec --exec-id e1 "$id" sh -c 'echo exec in $(hostname)' 2>&1)
like "$out" "^exec in " "ctr task exec runs a process in the container"
metrics=$(timeout 60 $CTR task metrics "$id" 2>&1)
diag "$(echo "$metrics" | grep -E 'pids|memory.usage ' | tr -s ' ' | tr '\n' ';')"
like "$metrics" $'pids.current[ \t]+[1-9]' "ctr task metrics reports pids from cgroup v2"
like "$metrics" $'memory.usage[ \t]+[1-9]' "ctr task metrics reports memory from cgroup v2"

ok "ctr task kill -s KILL" timeout 60 $CTR task kill -s KILL "$id"
stopped() { [ "$($CTR task ls 2>/dev/null | awk -v id="$id" '$1 == id { print $3 }')" = STOPPED ]; }
ok "the task is reported STOPPED" vm_wait 20 stopped
ok "ctr task delete and container delete succeed" \
  sh -c "timeout 60 $CTR task delete $id >/dev/null && timeout 60 $CTR container delete $id"
gone() { [ ! -d "$cg" ] && { pgrep -f "$SHIM.*-id $id" >/dev/null; [ $? -eq 1 ]; }; }
ok "its cgroup and its shim are gone" vm_wait 10 gone
tap_done
