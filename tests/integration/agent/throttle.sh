#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cgroupv2/throttle.h on a real container (runc through a private
# containerd): the library finds the mechanism (v1 blkio.throttle on a
# hybrid host, io.max with the v2 io controller) and the disk under the
# container's root, caps a direct writer at 50 MiB/s and lifts the cap.
# Rates come from the mechanism's own counters (blkio.throttle.
# io_service_bytes or io.stat), and the checks are ratios within this run:
# capped below 1.5x the cap, uncapped above the cap.
. "$(dirname "$0")/../lib/common.sh"
tap_plan 8
TOOL=$IOB_B/tests/cg-throttle
[ -x "$TOOL" ] || bail "build first: $TOOL"
iob_need containerd ctr runc jq fio
[ "$(id -u)" -eq 0 ] || bail "needs root"
iob_containerd_start || bail "containerd did not start"
. "$IOB_TOP/bench/calibrate-wcd-lib.sh"
# the rootfs on a disk (in the VM /tmp and the build are in the initramfs)
ROOTFS=$(wcd_data_dir "$IOB_T/rootfs" "/data/.throttle.$$/rootfs") ||
  bail "no directory on a block device for the container's rootfs"
[ "$ROOTFS" = "$IOB_T/rootfs" ] || at_exit "rm -rf '/data/.throttle.$$'"
iob_rootfs_busybox "$ROOTFS"
iob_rootfs_add_binary "$ROOTFS" "$(command -v fio)"
CAP=$((50 * 1024 * 1024))
ID=thr-$$

ctr oci spec >"$IOB_T/base.json"
jq --arg r "$ROOTFS" --arg id "$ID" '
  .root = {"path": $r, "readonly": false}
  | .process.args = ["/usr/bin/fio", "--name=w", "--filename=/tmp/f", "--rw=write", "--bs=1M",
      "--size=256M", "--direct=1", "--ioengine=psync", "--time_based", "--runtime=600"]
  | .process.terminal = false | .process.cwd = "/"
  | .linux.cgroupsPath = ("/iobtest/" + $id)' "$IOB_T/base.json" >"$IOB_T/spec.json"
$CTR run -d --runtime io.containerd.runc.v2 --config "$IOB_T/spec.json" "$ID" >"$IOB_T/run.out" 2>&1 ||
  bail "ctr run failed: $(cat "$IOB_T/run.out")"
at_exit "$CTR task kill -s KILL $ID; sleep 0.3; $CTR task delete -f $ID; $CTR container delete $ID"
pid=$($CTR task ls | awk -v id="$ID" '$1 == id { print $2 }')
[ -n "$pid" ] && [ "$pid" -gt 0 ] || bail "no pid for $ID"

read -r mech cgdir devs <<<"$("$TOOL" resolve "$pid")"
diag "target: $mech $cgdir $devs"
like "$mech" '^(blkio\.throttle|io\.max)$' "a mechanism can cap the container here ($mech)"
V2=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
if grep -qw io "$V2/cgroup.controllers" 2>/dev/null; then want=io.max; else want=blkio.throttle; fi
is "$mech" "$want" "the one this host offers"
# v1 counts only on disks where blk-throttle is active (cgroupv2/blkio.h);
# the agent does this at start, setting a cap would too, but the uncapped
# rate is measured first
[ "$mech" = blkio.throttle ] && diag "disks counting v1 blkio statistics: $("$TOOL" activate)"
rootdev=$(stat -c '%Hd:%Ld' "$ROOTFS")
# the disk of the rootfs directory (a partition maps to its disk)
disk=$rootdev
[ -e "/sys/dev/block/$rootdev/partition" ] && disk=$(cat "/sys/dev/block/$rootdev/../dev")
like " $devs " " $disk " "the disk under the container's root ($disk) is a target"

now_ms() { awk '{ printf "%.0f\n", $1 * 1000 }' /proc/uptime; }
# rate SECONDS: bytes/s written by the container over that long
rate() {
  local b0 b1 t0 t1
  b0=$("$TOOL" wbytes "$pid") t0=$(now_ms)
  sleep "$1"
  b1=$("$TOOL" wbytes "$pid") t1=$(now_ms)
  awk -v b="$((b1 - b0))" -v t="$((t1 - t0))" 'BEGIN { printf "%.0f\n", (t > 0 ? b / (t / 1e3) : 0) }'
}
# fio lays its file out first (buffered); wait until direct writes show
wait_for() {
  local end=$(($(now_ms) + $1 * 1000))
  while :; do eval "$2" && return 0; [ "$(now_ms)" -lt "$end" ] || return 1; sleep 0.1; done
}
wait_for 30 '[ "$("$TOOL" wbytes "$pid")" -gt $((64 * 1024 * 1024)) ]'
free1=$(rate 2)
"$TOOL" set "$pid" 0 "$CAP" 0 0
is "$?" "0" "write cap of 50 MiB/s set"
is "$("$TOOL" get "$pid" "$disk")" "0 $CAP 0 0" "and read back from the cgroup's files"
sleep 0.5 # bios already past the throttle drain
capped=$(rate 3)
"$TOOL" clear "$pid"
is "$("$TOOL" get "$pid" "$disk")" "0 0 0 0" "cap cleared"
free2=$(rate 2)
diag "uncapped $free1 B/s, capped $capped B/s (cap $CAP), uncapped again $free2 B/s"
awk -v c="$capped" -v cap="$CAP" 'BEGIN { exit !(c > 0 && c < 1.5 * cap) }'
_tap_report $? "capped rate below 1.5x the cap ($capped B/s)"
awk -v f1="$free1" -v f2="$free2" -v cap="$CAP" 'BEGIN { exit !((f1 > f2 ? f1 : f2) > cap) }'
_tap_report $? "uncapped rate above the cap ($free1, $free2 B/s)"
tap_done
