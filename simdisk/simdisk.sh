#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Bring an emulated disk up or down (simdisk/README.md):
#
#   simdisk/simdisk.sh up MODEL DIR [--no-fs] [simdisk options]
#   simdisk/simdisk.sh down DIR
#
# up starts simdisk on DIR/fuse, puts a loop device with direct I/O on
# DIR/fuse/disk, selects mq-deadline, makes ext4 on it and mounts it at
# DIR/mnt (--no-fs: the raw device only), then prints "device=/dev/loopN",
# "majmin=7:N", "mnt=DIR/mnt" and "pid=PID".  Every step it completes goes
# into DIR/simdisk.state before the next, so down tears down whatever up
# got to, in order: the ext4 mount, the loop device, the FUSE mount, the
# daemon.  A failed up tears itself down.  The binary is $SIMDISK, else
# $B/bin/simdisk (B defaults to build, relative to the repository).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
b=${B:-build}
case "$b" in /*) ;; *) b=$top/$b ;; esac
SIMDISK=${SIMDISK:-$b/bin/simdisk}

die() { echo "simdisk.sh: $*" >&2; exit 1; }
usage() { die "usage: simdisk.sh up MODEL DIR [--no-fs] [simdisk options] | down DIR"; }

# state_get DIR KEY: the value up recorded, or nothing
state_get() { sed -n "s/^$2=//p" "$1/simdisk.state" 2>/dev/null | tail -1; }
is_mounted() { awk -v m="$1" '$2 == m { f = 1 } END { exit !f }' /proc/mounts; }

down() {
  local dir=$1 mnt loop fuse pid rc=0
  [ -e "$dir/simdisk.state" ] || return 0
  mnt=$(state_get "$dir" mnt)
  loop=$(state_get "$dir" loop)
  fuse=$(state_get "$dir" fuse)
  pid=$(state_get "$dir" pid)
  if [ -n "$mnt" ] && is_mounted "$mnt"; then
    umount "$mnt" || { echo "simdisk.sh: cannot unmount '$mnt'" >&2; rc=1; }
  fi
  # only the loop device that is still on our file (a number is reused)
  if [ -n "$loop" ] && [ -n "$fuse" ] &&
    [ "$(losetup -n -O BACK-FILE "$loop" 2>/dev/null | sed 's/ *$//')" = "$fuse/disk" ]; then
    losetup -d "$loop" || { echo "simdisk.sh: cannot detach '$loop'" >&2; rc=1; }
    # the detach waits for the last opener of the device (autoclear)
    for _ in $(seq 1 50); do
      losetup -n -O BACK-FILE "$loop" 2>/dev/null | grep -q . || break
      sleep 0.1
    done
    if losetup -n -O BACK-FILE "$loop" 2>/dev/null | grep -q .; then
      rc=1
      # a mount namespace made while the ext4 was mounted (a container
      # started meanwhile) keeps a copy of that mount, and the device
      if [ -e "/sys/fs/ext4/${loop#/dev/}" ]; then
        echo "simdisk.sh: '$loop' stays until its ext4, still mounted in another mount namespace, is unmounted there (it then detaches itself)" >&2
      else
        echo "simdisk.sh: '$loop' is still open; it detaches itself when closed" >&2
      fi
    fi
  fi
  if [ -n "$fuse" ] && is_mounted "$fuse"; then
    for _ in $(seq 1 20); do
      umount "$fuse" 2>/dev/null && break
      sleep 0.1
    done
    # still busy: the loop device above; detach the mount, the daemon goes
    if is_mounted "$fuse"; then
      umount -l "$fuse" || { echo "simdisk.sh: cannot unmount '$fuse'" >&2; rc=1; }
    fi
  fi
  # the daemon ends by itself when its mount goes; a stuck one is stopped
  if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = simdisk ]; then
    for _ in $(seq 1 50); do
      [ -e "/proc/$pid" ] || break
      sleep 0.1
    done
    if [ -e "/proc/$pid" ]; then
      kill -TERM "$pid" 2>/dev/null || true
      sleep 1
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  [ "$rc" -eq 0 ] && rm -f "$dir/simdisk.state"
  return "$rc"
}

up() {
  local model=$1 dir=$2 fs=1 pid loop sysb a opts=()
  shift 2
  for a in "$@"; do
    if [ "$a" = --no-fs ]; then fs=0; else opts+=("$a"); fi
  done
  [ -x "$SIMDISK" ] || die "cannot run '$SIMDISK': build it first (make)"
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  [ -s "$dir/simdisk.state" ] && die "'$dir' is up already (simdisk.sh down '$dir')"
  mkdir -p "$dir/fuse" "$dir/mnt"
  : >"$dir/simdisk.state"
  trap 'down "$dir" >/dev/null 2>&1 || true' ERR
  trap 'down "$dir" >/dev/null 2>&1 || true; exit 1' INT TERM
  "$SIMDISK" -f -m "$model" --stats "$dir/stats" "${opts[@]}" "$dir/fuse" </dev/null >"$dir/simdisk.log" 2>&1 &
  pid=$!
  echo "pid=$pid" >>"$dir/simdisk.state"
  echo "fuse=$dir/fuse" >>"$dir/simdisk.state"
  for _ in $(seq 1 100); do
    is_mounted "$dir/fuse" && break
    if ! [ -e "/proc/$pid" ] || [ "$(cat "/proc/$pid/stat" 2>/dev/null | awk '{print $3}')" = Z ]; then
      wait "$pid" 2>/dev/null || true
      down "$dir" >/dev/null 2>&1 || true
      die "simdisk did not start: $(cat "$dir/simdisk.log")"
    fi
    sleep 0.1
  done
  is_mounted "$dir/fuse" || { down "$dir" || true; die "simdisk did not mount '$dir/fuse' in 10 s"; }
  loop=$(losetup -f --show --direct-io=on "$dir/fuse/disk") || { down "$dir" || true; die "cannot set up a loop device on '$dir/fuse/disk'"; }
  echo "loop=$loop" >>"$dir/simdisk.state"
  sysb=/sys/block/${loop#/dev/}
  [ "$(cat "$sysb/loop/dio")" = 1 ] || { down "$dir" || true; die "'$loop' does not do direct I/O"; }
  if grep -qw mq-deadline "$sysb/queue/scheduler"; then
    echo mq-deadline >"$sysb/queue/scheduler"
  else
    echo "simdisk.sh: '$loop' does not offer mq-deadline (it offers: $(cat "$sysb/queue/scheduler")); left as is" >&2
  fi
  # one block request, one FUSE request (simdisk takes up to 1 MiB)
  echo 1024 >"$sysb/queue/max_sectors_kb" 2>/dev/null || true
  if [ "$fs" -eq 1 ]; then
    # no lazy init: ext4's background zeroing would run beside the measurements
    mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$loop" ||
      { down "$dir" || true; die "mkfs.ext4 on '$loop' failed"; }
    mount "$loop" "$dir/mnt" || { down "$dir" || true; die "cannot mount '$loop' on '$dir/mnt'"; }
    echo "mnt=$dir/mnt" >>"$dir/simdisk.state"
  fi
  trap - ERR INT TERM
  echo "device=$loop"
  echo "majmin=$(cat "$sysb/dev")"
  [ "$fs" -eq 1 ] && echo "mnt=$dir/mnt"
  echo "pid=$pid"
}

case "${1:-}" in
up)
  [ $# -ge 3 ] || usage
  shift
  up "$@"
  ;;
down)
  [ $# -eq 2 ] || usage
  [ -d "$2" ] || die "cannot open '$2': No such directory"
  down "$(cd "$2" && pwd)"
  ;;
*) usage ;;
esac
