#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The knobs iobatch turns, in a container's cgroup: io.weight, io.bfq.weight
# (with BFQ as the drive's scheduler) and iocost's io.cost.qos on the root.
. "$(dirname "$0")/vmlib.sh"
tap_plan 8

rootfs=$(vm_rootfs busybox)
id=weight-$$
vm_start io.containerd.runc.v2 "$id" "$rootfs" sleep 600 >/dev/null
cg=$(vm_cgroup_of "$(vm_task_pid "$id")")
like "$cg" "^$CG/.+/$id\$" "a container with its own cgroup"

# wr FILE VALUE: write a cgroup file (errors as diagnostics)
wr() { echo "$2" >"$1" 2>"$IOB_T/wr.err" || { diag "write '$2' to $1: $(cat "$IOB_T/wr.err")"; return 1; }; }

wr "$cg/io.weight" "default 250"
is "$(head -n1 "$cg/io.weight" 2>/dev/null)" "default 250" "io.weight default reads back"

ok "the drive's scheduler is bfq" vm_set_scheduler bfq
wr "$cg/io.bfq.weight" "default 300"
is "$(head -n1 "$cg/io.bfq.weight" 2>/dev/null)" "default 300" "io.bfq.weight default reads back"
wr "$cg/io.bfq.weight" "$NVME_DEV 500"
ok "io.bfq.weight for $NVME_DEV reads back" grep -qx "$NVME_DEV 500" "$cg/io.bfq.weight"

# iocost on the drive; a per-device io.weight needs it (blkg_conf_prep wants
# the iocost policy active on the queue).
at_exit "echo '$NVME_DEV enable=0' >$CG/io.cost.qos"
ok "io.cost.qos on the root accepts '$NVME_DEV enable=1'" wr $CG/io.cost.qos "$NVME_DEV enable=1"
qos=$(grep "^$NVME_DEV " $CG/io.cost.qos)
diag "io.cost.qos: $qos"
like "$qos" "^$NVME_DEV enable=1 " "io.cost.qos reads back enabled"
wr "$cg/io.weight" "$NVME_DEV 400"
ok "io.weight for $NVME_DEV reads back with iocost on" grep -qx "$NVME_DEV 400" "$cg/io.weight"
tap_done
