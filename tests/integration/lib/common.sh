# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Shared helpers for integration tests (bash).  Source it, then:
#   tap_plan N; ok "name" cmd...; is "$got" "$want" "name"; tap_done
#   iob_containerd_start   # private containerd in $IOB_T, ctr via $CTR
#   iob_rootfs_busybox DIR # a rootfs with busybox-static
# Everything the test started is torn down by the EXIT trap.
set -u
IOB_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
IOB_B=${B:-build}
case "$IOB_B" in /*) ;; *) IOB_B=$IOB_TOP/$IOB_B ;; esac
export PATH="$IOB_B/bin:$PATH"

_tap_n=0
_tap_failed=0
tap_plan() { echo "1..$1"; }
_tap_report() { # status name
  _tap_n=$((_tap_n + 1))
  if [ "$1" -eq 0 ]; then echo "ok $_tap_n - $2"; else echo "not ok $_tap_n - $2"; _tap_failed=$((_tap_failed + 1)); fi
}
# ok NAME CMD...: passes when CMD exits 0
ok() { local n=$1; shift; "$@"; _tap_report $? "$n"; }
# is GOT WANT NAME
is() {
  if [ "$1" == "$2" ]; then _tap_report 0 "$3"; else
    echo "# $3: got '$1', want '$2'"; _tap_report 1 "$3"; fi
}
# like GOT REGEX NAME
like() {
  if [[ "$1" =~ $2 ]]; then _tap_report 0 "$3"; else
    echo "# $3: '$1' does not match /$2/"; _tap_report 1 "$3"; fi
}
# skip NAME REASON: only where the README says why it may be skipped
skip() { _tap_n=$((_tap_n + 1)); echo "ok $_tap_n - $1 # SKIP $2"; }
diag() { echo "# $*"; }
bail() { echo "Bail out! $*"; exit 1; }
# iob_need TOOL...: bail out naming the first one that is not installed
iob_need() {
  local c
  for c in "$@"; do
    command -v "$c" >/dev/null || bail "$c is not installed (scripts/install-deps.sh)"
  done
}
tap_done() { [ "$_tap_failed" -eq 0 ]; }

_cleanups=()
at_exit() { _cleanups+=("$*"); }
_run_cleanups() {
  local i
  for ((i = ${#_cleanups[@]} - 1; i >= 0; i--)); do eval "${_cleanups[$i]}" >/dev/null 2>&1 || true; done
}
trap _run_cleanups EXIT

# A private work dir under /tmp (short paths: unix sockets are limited to 108).
IOB_T=$(mktemp -d /tmp/iobt.XXXXXX)
at_exit "rm -rf '$IOB_T'"
# The shims (ours and runc's) keep runc's state of a namespace under
# /run/containerd/runc/NS, and nobody removes it: each namespace a ctr of
# iob_ctr served, once empty, goes after everything else is torn down.
at_exit 'for f in "$IOB_T"/ctr-*; do [ -e "$f" ] && rmdir "/run/containerd/runc/${f##*/ctr-}"; done'

# iob_ctr NS: the path of a ctr for the private containerd ($IOB_SOCK) and
# namespace NS that gives every run, task start and task exec this test's
# own FIFO directory ($IOB_T/fifo).  ctr's default, /run/containerd/fifo,
# is the host's, and ctr never removes the FIFOs of what it started
# detached (bench/soak.sh's header); these go with $IOB_T.
iob_ctr() {
  local w=$IOB_T/ctr-$1 c
  c="ctr --address $(printf %q "$IOB_SOCK") --namespace $(printf %q "$1")"
  cat >"$w" <<SH
#!/bin/sh
case "\$1" in
run) shift; exec $c run --fifo-dir $(printf %q "$IOB_T/fifo") "\$@" ;;
task | t | tasks)
  case "\$2" in start | exec) s=\$2; shift 2; exec $c task "\$s" --fifo-dir $(printf %q "$IOB_T/fifo") "\$@" ;; esac ;;
esac
exec $c "\$@"
SH
  chmod 755 "$w"
  echo "$w"
}

# iob_containerd_start [extra toml]: start a private containerd; sets CTR.
iob_containerd_start() {
  mkdir -p "$IOB_T/root" "$IOB_T/state"
  IOB_SOCK=$IOB_T/containerd.sock
  cat >"$IOB_T/config.toml" <<TOML
version = 2
root = "$IOB_T/root"
state = "$IOB_T/state"
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = "$IOB_SOCK"
[ttrpc]
  address = "$IOB_SOCK.ttrpc"
[debug]
  level = "debug"
${1:-}
TOML
  containerd --config "$IOB_T/config.toml" >>"$IOB_T/containerd.log" 2>&1 &
  IOB_CONTAINERD_PID=$!
  at_exit "iob_containerd_stop"
  CTR=$(iob_ctr iobtest)
  local i
  for i in $(seq 1 100); do
    ctr --address "$IOB_SOCK" version >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "# containerd did not start; log:"; sed 's/^/# /' "$IOB_T/containerd.log" | tail -20
  return 1
}

# Restart the same private containerd (after a kill -9, say).
iob_containerd_restart() {
  containerd --config "$IOB_T/config.toml" >>"$IOB_T/containerd.log" 2>&1 &
  IOB_CONTAINERD_PID=$!
  local i
  for i in $(seq 1 100); do
    ctr --address "$IOB_SOCK" version >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  return 1
}

# Stop containerd after killing every task and shim it owns.
iob_containerd_stop() {
  local t ns nss
  nss=$(ctr --address "$IOB_SOCK" namespaces ls -q 2>/dev/null)
  for t in $($CTR task ls -q 2>/dev/null); do $CTR task kill -s KILL "$t" >/dev/null 2>&1; done
  sleep 0.2
  for t in $($CTR task ls -q 2>/dev/null); do $CTR task delete -f "$t" >/dev/null 2>&1; done
  for t in $($CTR container ls -q 2>/dev/null); do $CTR container delete "$t" >/dev/null 2>&1; done
  kill "$IOB_CONTAINERD_PID" 2>/dev/null; wait "$IOB_CONTAINERD_PID" 2>/dev/null
  # shims we started that are still around (a bug, reported by the tests)
  pkill -f "containerd-shim-.*-address $IOB_SOCK" 2>/dev/null || true
  umount -R "$IOB_T/state" 2>/dev/null || true
  umount -R "$IOB_T/root" 2>/dev/null || true
  # runc removes a container's cgroup but not the parent that ctr names
  # after the namespace (/NS/ID): remove the test's empty ones.
  for ns in $nss; do
    case $ns in default | k8s.io | moby) continue ;; esac
    iob_cgroup_rmdir_empty "$ns"
  done
}

# iob_cgroup_rmdir_empty NAME: remove NAME's empty cgroup directories
# (children first) under the root of every mounted hierarchy.
iob_cgroup_rmdir_empty() {
  local h
  [ -n "$1" ] && [[ $1 != */* && $1 != .* ]] || return 0
  for h in /sys/fs/cgroup /sys/fs/cgroup/*/; do
    [ -d "$h/$1" ] && find "$h/$1" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  return 0
}

# iob_rootfs_busybox DIR: a minimal rootfs with busybox-static applets.
iob_rootfs_busybox() {
  local d=$1
  mkdir -p "$d/bin" "$d/proc" "$d/sys" "$d/dev" "$d/tmp" "$d/etc" "$d/data"
  cp /bin/busybox "$d/bin/busybox"
  local a
  for a in $("$d/bin/busybox" --list); do [ -e "$d/bin/$a" ] || ln -s busybox "$d/bin/$a"; done
  echo "root:x:0:0:root:/:/bin/sh" >"$d/etc/passwd"
  echo "root:x:0:" >"$d/etc/group"
}

# iob_rootfs_add_binary DIR /path/to/bin: copy a dynamic binary and its libs.
iob_rootfs_add_binary() {
  local d=$1 bin=$2 lib
  mkdir -p "$d/usr/bin"
  cp "$bin" "$d/usr/bin/"
  for lib in $(ldd "$bin" | grep -oE '/[^ ]+'); do
    mkdir -p "$d$(dirname "$lib")"
    cp -L "$lib" "$d$lib"
  done
}
