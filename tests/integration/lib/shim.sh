# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Helpers shared by the shim-*.sh tests (source after lib/common.sh).
# shellcheck disable=SC2034  # these are read by the scripts that source this file
RT=io.containerd.iobatch.v2

# A private containerd with a namespace of our own: runc's state lives in
# /run/containerd/runc/<ns>, shared by every containerd on the machine.
shim_containerd_start() {
  SHIM_NS=iob${IOB_T##*.}
  # Registered first so that it runs last, after containerd's teardown:
  # the namespace's empty runc root and cgroup parents.
  at_exit shim_cleanup_ns
  iob_containerd_start "$@" || return 1
  CTR=$(iob_ctr "$SHIM_NS")
}
shim_cleanup_ns() {
  local d
  for d in /run/containerd/runc/$SHIM_NS /sys/fs/cgroup/*/$SHIM_NS /sys/fs/cgroup/$SHIM_NS; do
    [ -d "$d" ] && rmdir "$d" 2>/dev/null
  done
  return 0
}
SHIM=containerd-shim-iobatch-v2
# Extra `ctr run`/`ctr task exec`-free options (shim-crun.sh sets
# --runtime-config-path to run the suites with crun).
SHIM_RUNOPTS=${SHIM_RUNOPTS:-}

# The socket a shim for container/group $1 listens on.
shim_socket_of() {
  local h
  h=$(printf '%s' "$IOB_SOCK/$SHIM_NS/$1" | sha256sum | cut -d' ' -f1)
  echo "/run/containerd/s/$h"
}

# Shim processes serving our private containerd.
shim_pids() { pgrep -f "$SHIM.*-address $IOB_SOCK" || true; }

# Wait until no shim of ours runs (up to ~5 s); prints how many remain.
shim_wait_gone() {
  local i n
  for _ in $(seq 1 50); do
    n=$(shim_pids | wc -l)
    [ "$n" -eq 0 ] && break
    sleep 0.1
  done
  echo "$n"
}

# Nothing left behind for the given container ids: sockets, mounts, bundles.
shim_no_leftovers() {
  local id bad=0
  for id in "$@"; do
    [ -e "$(shim_socket_of "$id")" ] && { diag "socket left for $id"; bad=1; }
    [ -d "$IOB_T/state/io.containerd.runtime.v2.task/$SHIM_NS/$id" ] && { diag "bundle left for $id"; bad=1; }
  done
  if grep -q "$IOB_T" /proc/self/mountinfo; then
    diag "mounts left: $(grep -c "$IOB_T" /proc/self/mountinfo)"; bad=1
  fi
  return $bad
}
