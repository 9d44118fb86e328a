#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `make static` (build-static/, STATIC_B): the four programs the DaemonSet
# copies onto nodes.  Each is statically linked (no program interpreter, no
# NEEDED library: readelf; file(1) agrees) and runs `--version` in a root
# file system that holds nothing but the binary (chroot into an empty
# directory: no libc, no ld.so, no /proc), printing what the normal build
# prints (but for the git revision).  The contrast: the normal, dynamically linked build cannot start
# there, so the empty root does show a missing library.
. "$(dirname "$0")/../lib/common.sh"
PROGS="iobatchd iobatchctl iobatch-hook containerd-shim-iobatch-v2"
tap_plan 13

SB=${STATIC_B:-$IOB_TOP/build-static}
iob_need file readelf chroot
for p in $PROGS; do
  [ -x "$SB/bin/$p" ] || bail "no $SB/bin/$p: run make static"
done

for p in $PROGS; do
  f=$SB/bin/$p
  hdr=$(readelf -lW "$f" 2>&1; readelf -dW "$f" 2>&1)
  like "$(file -b "$f")" "(statically|static-pie) linked" "$p: file says statically linked"
  [[ "$hdr" != *"INTERP"* && "$hdr" != *"(NEEDED)"* ]]
  ok "$p: readelf: no program interpreter, no NEEDED library" test $? -eq 0
  root=$IOB_T/root-$p
  mkdir -p "$root"
  cp "$f" "$root/$p"
  out=$(chroot "$root" "/$p" --version 2>&1)
  rc=$?
  # The revision is left out: build/ and build-static/ may have been
  # built at different commits.
  want=$("$IOB_B/bin/$p" --version 2>&1 | sed -E 's/\(git [^)]*\)/(git REV)/; /^  Revision: /d')
  out=$(sed -E 's/\(git [^)]*\)/(git REV)/; /^  Revision: /d' <<<"$out")
  is "$rc:$(ls -A "$root" | paste -sd' '):$out" "0:$p:$want" \
    "$p --version in a root holding nothing but the binary: exit 0, as the normal build prints"
done

root=$IOB_T/root-dynamic
mkdir -p "$root"
cp "$IOB_B/bin/iobatchctl" "$root/"
chroot "$root" /iobatchctl --version >/dev/null 2>&1
isnt=$?
ok "contrast: the normal build's iobatchctl cannot start in such a root (exit $isnt)" test "$isnt" -ne 0
# What a node's glibc no longer matters for: the oldest kernel the static
# glibc accepts is the one constraint left (the ELF note file(1) prints).
diag "$(file -b "$SB/bin/iobatchd" | grep -o 'for GNU/Linux [0-9.]*')"
tap_done
