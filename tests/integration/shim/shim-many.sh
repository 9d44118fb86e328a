#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# 50 containers at once through containerd-shim-iobatch-v2, then deleted:
# no shim processes, mounts, FIFOs, sockets or cgroups may remain.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/shim.sh"
tap_plan 8
N=${SHIM_MANY:-50}

shim_containerd_start || bail "containerd did not start"
R=$IOB_T/rootfs
iob_rootfs_busybox "$R"

ids=()
for i in $(seq 1 $N); do ids+=("m$i"); done
# (wait only for our jobs: containerd is a background job of this shell too)
jobs_=()
for id in "${ids[@]}"; do
  timeout 60 $CTR run --runtime $RT $SHIM_RUNOPTS -d --rootfs "$R" "$id" /bin/sleep 600 >/dev/null 2>&1 &
  jobs_+=($!)
done
wait "${jobs_[@]}"
running=$($CTR task ls | grep -c ' RUNNING')
is "$running" "$N" "$N containers running at once"
is "$(shim_pids | wc -l)" "$N" "one shim per container"

# Every container answers exec while all run.
bad=0
for id in "${ids[@]}"; do
  [ "$(timeout 30 $CTR task exec --exec-id x "$id" /bin/echo ok 2>&1)" = ok ] || bad=$((bad + 1))
done
is "$bad" 0 "exec works in every container"

jobs_=()
for id in "${ids[@]}"; do $CTR task kill -s SIGKILL "$id" >/dev/null 2>&1 & jobs_+=($!); done
wait "${jobs_[@]}"
for i in $(seq 1 100); do
  [ "$($CTR task ls | grep -c ' RUNNING')" -eq 0 ] && break
  sleep 0.1
done
jobs_=()
for id in "${ids[@]}"; do
  ( $CTR task delete "$id" && $CTR container delete "$id" ) >/dev/null 2>&1 &
  jobs_+=($!)
done
wait "${jobs_[@]}"
is "$($CTR container ls -q | wc -l)" 0 "all containers deleted"
is "$(shim_wait_gone)" 0 "no shim process left"
ok "no sockets, bundles or mounts left" shim_no_leftovers "${ids[@]}"
# ctr's FIFOs are in $IOB_T/fifo (iob_ctr), the shims' would be in the state dir
fifos=$(find "$IOB_T/state" "$IOB_T/fifo" -type p 2>/dev/null | grep -c . || true)
is "$fifos" 0 "no FIFOs left"
cg=0
for d in /sys/fs/cgroup/*/$SHIM_NS /sys/fs/cgroup/$SHIM_NS /sys/fs/cgroup/unified/$SHIM_NS; do
  [ -d "$d" ] || continue
  for id in "${ids[@]}"; do [ -d "$d/$id" ] && cg=$((cg + 1)); done
done
is "$cg" 0 "no container cgroups left"

tap_done
