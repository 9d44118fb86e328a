#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The emulated NVMe drive: a block device with BFQ on offer, holding /data.
. "$(dirname "$0")/vmlib.sh"
tap_plan 5

ok "/dev/$NVME is a block device" test -b /dev/$NVME
is "$NVME_DEV" "259:0" "/dev/$NVME is 259:0"
sched=$(cat /sys/block/$NVME/queue/scheduler)
diag "schedulers: $sched"
like "$sched" '(^| |\[)bfq(\]| |$)' "bfq is in the scheduler list (module loaded)"
ok "the scheduler can be set to bfq" vm_set_scheduler bfq
is "$(awk '$2 == "/data" { print $1, $3 }' /proc/mounts)" "/dev/$NVME ext4" "/data is ext4 on /dev/$NVME"
tap_done
