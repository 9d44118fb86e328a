#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A fio container that writes a known amount with O_DIRECT shows it in its own
# cgroup's io.stat, on the NVMe drive's line, within 10% of fio's count.
. "$(dirname "$0")/vmlib.sh"
tap_plan 7

MIB=${VM_FIO_MIB:-64}
rootfs=$(vm_rootfs busybox)
id=fio-$$
work=/data/work/$id
# fio's terse v3 output: field 47 is the KiB written.
ok "a fio container starts" vm_start io.containerd.runc.v2 "$id" "$rootfs" sh -c \
  "fio --name=w --filename=/work/fio.dat --rw=write --bs=256k --size=${MIB}m --direct=1 \
     --ioengine=psync --output-format=terse --terse-version=3 >/work/fio.out 2>&1;
   echo \$? >/work/fio.rc; exec sleep 600"
pid=$(vm_task_pid "$id")
cg=$(vm_cgroup_of "${pid:-0}")
like "$cg" "^$CG/.+/$id\$" "the fio container has its own cgroup"
ok "fio finishes" vm_wait 150 test -s "$work/fio.rc"
is "$(cat "$work/fio.rc" 2>/dev/null)" 0 "fio exits 0"
[ "$(cat "$work/fio.rc" 2>/dev/null)" = 0 ] || sed 's/^/# fio: /' "$work/fio.out"
fio_bytes=$(($(awk -F';' '{ print $47 + 0 }' "$work/fio.out" 2>/dev/null || echo 0) * 1024))
diag "io.stat of $cg:"
sed 's/^/#   /' "$cg/io.stat" 2>/dev/null
wbytes=$(vm_iostat_field "$cg" "$NVME_DEV" wbytes)
wios=$(vm_iostat_field "$cg" "$NVME_DEV" wios)
diag "fio wrote $fio_bytes bytes; io.stat $NVME_DEV wbytes=$wbytes wios=$wios"
is "$fio_bytes" $((MIB * 1048576)) "fio reports ${MIB} MiB written"
within() { [ "$wbytes" -gt 0 ] && [ $((10 * (wbytes - fio_bytes))) -le "$fio_bytes" ] &&
  [ $((10 * (fio_bytes - wbytes))) -le "$fio_bytes" ]; }
ok "io.stat $NVME_DEV wbytes is within 10% of fio's count" within
like "$(cat "$cg/io.pressure" 2>/dev/null)" '^some avg10=' "the container's io.pressure reads"
tap_done
