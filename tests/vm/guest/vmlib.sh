# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# shellcheck disable=SC2034  # these are read by the scripts that source this file
# Helpers for the tests that run inside the test VM (bash).  A guest test
# sources this file; it brings tests/integration/lib/common.sh (TAP, at_exit).
# The VM's containerd is already running (started by /init); containers are
# made with ctr --rootfs from busybox rootfs directories on the NVMe disk.
# shellcheck source=../../integration/lib/common.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../integration/lib/common.sh"

CTR="ctr --namespace iobvm"
# ctr --rootfs gives the process no PATH (no image config to take it from).
VM_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
CG=/sys/fs/cgroup
NVME=nvme0n1
NVME_DEV=$(cat /sys/block/$NVME/dev 2>/dev/null || echo "?:?")

# vm_rootfs NAME: print the path of a busybox rootfs on the NVMe disk (build.sh
# puts "busybox" on the disk image; others are made here).  The guest's /usr
# is bound in read-only by vm_start (fio and its libraries); /lib and /lib64
# point into it as on Debian's merged /usr.
vm_rootfs() {
  local d=/data/rootfs/$1
  if [ ! -e "$d/.done" ]; then
    iob_rootfs_busybox "$d" || return 1
    mkdir -p "$d/usr" "$d/work"
    ln -sfn usr/lib "$d/lib"
    ln -sfn usr/lib64 "$d/lib64"
    touch "$d/.done"
  fi
  echo "$d"
}

# vm_start RUNTIME ID ROOTFS CMD...: a detached container with the guest's
# /usr and /data/work/ID (as /work) bound in; removed when the test exits.
vm_start() {
  local rt=$1 id=$2 rootfs=$3
  shift 3
  mkdir -p "/data/work/$id"
  at_exit "vm_remove $id"
  $CTR run -d --runtime "$rt" --env "PATH=$VM_PATH" \
    --mount type=bind,src=/usr,dst=/usr,options=rbind:ro \
    --mount "type=bind,src=/data/work/$id,dst=/work,options=rbind:rw" \
    --rootfs "$rootfs" "$id" "$@"
}

# vm_remove ID: kill and delete the task and the container.
vm_remove() {
  $CTR task kill -s KILL "$1" >/dev/null 2>&1
  $CTR task delete -f "$1" >/dev/null 2>&1
  $CTR container delete "$1" >/dev/null 2>&1
}

# vm_task_pid ID: the container's init pid, as containerd reports it.
vm_task_pid() { $CTR task ls 2>/dev/null | awk -v id="$1" '$1 == id { print $2 }'; }

# vm_cgroup_of PID: the cgroup directory of PID (cgroup v2 only: "0::/path").
vm_cgroup_of() {
  local p
  p=$(sed -n 's/^0:://p' "/proc/$1/cgroup" 2>/dev/null) || return 1
  [ -n "$p" ] || return 1
  echo "$CG$p"
}

# vm_wait SECONDS CMD...: poll CMD every 0.5 s until it succeeds.
vm_wait() {
  local i n=$(($1 * 2))
  shift
  for ((i = 0; i < n; i++)); do
    "$@" && return 0
    sleep 0.5
  done
  return 1
}

# vm_iostat_field CGDIR DEV KEY: one counter from io.stat (0 when the device
# line is absent: the kernel prints only non-zero lines).
vm_iostat_field() {
  local v
  v=$(awk -v dev="$2" -v key="$3" '$1 == dev {
        for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == key) print kv[2] } }' "$1/io.stat")
  echo "${v:-0}"
}

# vm_set_scheduler NAME: set the NVMe drive's I/O scheduler; restored to
# "none" when the test exits.
vm_set_scheduler() {
  at_exit "echo none >/sys/block/$NVME/queue/scheduler"
  echo "$1" >"/sys/block/$NVME/queue/scheduler" &&
    grep -q "\[$1\]" "/sys/block/$NVME/queue/scheduler"
}
