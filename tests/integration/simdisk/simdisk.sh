#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The emulated disk (simdisk/): simdisk.sh brings up a 512 MiB disk with
# ext4 on it and takes it down without leaving a loop device, a mount or a
# daemon behind, also after an up that failed.  The models are checked by
# ratios within this run, never by wall-clock thresholds: two sequential
# 128 KiB readers at distant offsets, each alone one after the other
# ("serial", the sum of fio's runtimes) and both at once ("together", the
# longer of the two runtimes).  On hdd every switch between the readers
# costs a seek and a rotation (about 15 ms against 0.6 ms for a 128 KiB
# transfer), so together takes ten times serial or more: the check asks
# for 1.5.  On pass the two share the daemon and take about as long as one
# after the other: the check allows 1.3, the margin for a loaded machine
# (together below serial is the usual outcome).
. "$(dirname "$0")/../lib/common.sh"
tap_plan 14
SD=$IOB_TOP/simdisk/simdisk.sh
[ -x "$IOB_B/bin/simdisk" ] || bail "build first: $IOB_B/bin/simdisk"
iob_need fio losetup mkfs.ext4 awk
[ "$(id -u)" -eq 0 ] || bail "needs root"
[ -c /dev/fuse ] || bail "no /dev/fuse: this kernel has no FUSE"

# nothing_left DIR PID: no loop device on DIR's file, no mount under DIR,
# no process PID
nothing_left() {
  local loops mounts
  loops=$(losetup -a | grep -F "$1/" || true)
  mounts=$(awk -v d="$1/" 'index($2, d) == 1' /proc/mounts)
  [ -z "$loops" ] && [ -z "$mounts" ] && ! [ -e "/proc/$2" ] && return 0
  diag "left behind: loops '$loops' mounts '$mounts' pid $2 $(cat "/proc/$2/comm" 2>/dev/null)"
  return 1
}

# reads SECONDS DEV OFFSET...: one sequential O_DIRECT 128 KiB reader per
# OFFSET, all at once for SECONDS; a line "KiB ms" per reader (fio's
# counts: each reader's own runtime, so a reader that started late under
# load does not count the time it did not run)
reads() {
  local secs=$1 dev=$2 off args=()
  shift 2
  for off in "$@"; do
    args+=(--name="r$off" --filename="$dev" --rw=read --bs=128k --direct=1 --ioengine=psync
      --offset="$off" --size=64M --time_based --runtime="$secs")
  done
  fio --output-format=terse --terse-version=3 "${args[@]}" | awk -F';' '{ print $6, $9 }'
}

# ratio MODEL DEV: how much longer the data the two readers at 0 and
# 256 MiB moved together takes together than one after the other (at the
# rates each reached alone)
ratio() {
  local a b t
  a=$(reads 1 "$2" 0)
  b=$(reads 1 "$2" 256M)
  t=$(reads 2 "$2" 0 256M | tr '\n' ' ')
  diag "$1: alone $a and $b, together $t (KiB ms)" >&2
  awk -v a="$a" -v b="$b" -v t="$t" 'BEGIN {
    split(a, x, " "); split(b, y, " "); split(t, z, " ")
    if (x[1] <= 0 || y[1] <= 0 || z[2] <= 0 || z[4] <= 0) { print 0; exit }
    serial = z[1] / (x[1] / x[2]) + z[3] / (y[1] / y[2])
    printf "%.2f\n", (z[2] > z[4] ? z[2] : z[4]) / serial }'
}

D=$IOB_T/hdd
at_exit "'$SD' down '$D'"
out=$("$SD" up hdd "$D" -s 512M 2>&1)
like "$out" "device=/dev/loop[0-9]+"$'\n'"majmin=7:[0-9]+" "up hdd prints the device and its MAJ:MIN"
dev=$(sed -n 's/^device=//p' <<<"$out")
pid=$(sed -n 's/^pid=//p' <<<"$out")
sysb=/sys/block/${dev#/dev/}
is "$(cat "$sysb/dev" 2>/dev/null)" "$(sed -n 's/^majmin=//p' <<<"$out")" "MAJ:MIN is the device's"
is "$(cat "$sysb/loop/dio" 2>/dev/null)" 1 "the loop device does direct I/O"
like "$(cat "$sysb/queue/scheduler" 2>/dev/null)" '\[mq-deadline\]' "mq-deadline is selected"
ok "ext4 on it takes a file" sh -c "dd if=/dev/zero of='$D/mnt/f' bs=1M count=4 oflag=direct status=none && sync"
r=$(ratio hdd "$dev")
awk -v r="$r" 'BEGIN { exit !(r > 1.5) }'
_tap_report $? "hdd: two sequential readers together take $r x one after the other (> 1.5)"
is "$(cat "$D/simdisk.log")" "" "the daemon prints nothing on success"
"$SD" down "$D"
is "$?" 0 "down hdd"
ok "nothing left behind by hdd" nothing_left "$D" "$pid"

D=$IOB_T/pass
at_exit "'$SD' down '$D'"
out=$("$SD" up pass "$D" -s 512M --no-fs 2>&1)
dev=$(sed -n 's/^device=//p' <<<"$out")
pid=$(sed -n 's/^pid=//p' <<<"$out")
[ -b "$dev" ] || diag "up pass: $out"
r=$(ratio pass "$dev")
awk -v r="$r" 'BEGIN { exit !(r > 0 && r < 1.3) }'
_tap_report $? "pass: two sequential readers together take $r x one after the other (< 1.3)"
"$SD" down "$D"
ok "nothing left behind by pass" nothing_left "$D" "$pid"

# a daemon that refuses its options: up fails, says why, leaves nothing
D=$IOB_T/bad
at_exit "'$SD' down '$D'"
out=$("$SD" up hdd "$D" -x 0 2>&1)
is "$?" 1 "up with a bad option fails"
like "$out" "invalid scale '0'" "and says why"
ok "nothing left behind by a failed up" nothing_left "$D" 0
tap_done
