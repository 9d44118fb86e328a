#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# containerd + runc (io.containerd.runc.v2) run a busybox container in a
# cgroup of its own, with the io controller delegated to it.
. "$(dirname "$0")/vmlib.sh"
tap_plan 8

rootfs=$(vm_rootfs busybox)
id=runc-$$

out=$($CTR run --rm --runtime io.containerd.runc.v2 --env "PATH=$VM_PATH" --rootfs "$rootfs" "fg-$$" echo hello 2>&1)
is "$out" "hello" "ctr run --rm through io.containerd.runc.v2 prints the container's output"

ok "a detached container starts" vm_start io.containerd.runc.v2 "$id" "$rootfs" sleep 600
pid=$(vm_task_pid "$id")
like "$pid" '^[1-9][0-9]*$' "containerd reports the task's pid"
cg=$(vm_cgroup_of "${pid:-0}")
diag "cgroup of $id: ${cg:-none}"
like "$cg" "^$CG/.+/$id\$" "the container has its own cgroup, named after it"
like "$(cat "$cg/cgroup.procs" 2>/dev/null)" "(^|[[:space:]])$pid([[:space:]]|\$)" "the container's pid is in that cgroup"
ok "the cgroup has io.stat, io.weight, io.pressure" test -r "$cg/io.stat" -a -w "$cg/io.weight" -a -r "$cg/io.pressure"
ctl=$(cat "$(dirname "$cg")/cgroup.subtree_control" 2>/dev/null)
diag "parent's subtree_control: $ctl"
delegated() { local c; for c in io memory pids cpu; do [[ " $ctl " == *" $c "* ]] || return 1; done; }
ok "its parent delegates io memory pids cpu to it" delegated
vm_remove "$id"
ok "the cgroup is removed with the container" vm_wait 10 test ! -d "$cg"
tap_done
