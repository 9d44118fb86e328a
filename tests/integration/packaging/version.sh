#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# --version of the four programs: one line "NAME VERSION (git REV)" on
# stdout, exit 0, the release from VERSION, and the same revision in all
# four: a commit of this repository (with -dirty when built from a changed
# tree) or "unknown".  The shim's -v keeps the runc shim's Version/Revision
# block after that line.  The Makefile's revision: git describe's in this
# checkout, "unknown" outside any git tree and inside someone else's.
source "$(dirname "$0")/../lib/common.sh"
tap_plan 15

want_ver=$(cat "$IOB_TOP/VERSION")
makerev() { make -s --no-print-directory -f "$IOB_TOP/Makefile" -C "$1" --eval 'iob-print-rev: ; @echo $(IOB_GIT_REV)' iob-print-rev 2>/dev/null; }
here=$(makerev "$IOB_TOP")
like "$here" '^([0-9a-f]{7,40}(-dirty)?|unknown)$' "the Makefile's revision here looks like git describe's: $here"
if git -C "$IOB_TOP" rev-parse --git-dir >/dev/null 2>&1; then
  is "$here" "$(cd "$IOB_TOP" && git describe --always --dirty)" "in this checkout it is git describe --always --dirty"
else
  is "$here" "unknown" "outside a git checkout it is unknown"
fi
mkdir -p "$IOB_T/plain" "$IOB_T/outer/src"
is "$(makerev "$IOB_T/plain")" "unknown" "in a directory outside any git tree: unknown"
git -C "$IOB_T/outer" init -q
is "$(makerev "$IOB_T/outer/src")" "unknown" "inside another repository (a tarball unpacked there): unknown, not that repository's"

revs=()
for p in containerd-shim-iobatch-v2 iobatchd iobatch-hook iobatchctl; do
  out=$("$IOB_B/bin/$p" --version 2>"$IOB_T/err")
  rc=$?
  first=$(head -n1 <<<"$out")
  rev=$(sed -nE "s/^$p $want_ver \(git ([^ )]+)\)\$/\1/p" <<<"$first")
  revs+=("$rev")
  is "$rc:$([ -n "$rev" ] && echo ok)" "0:ok" "$p --version: exit 0, '$p $want_ver (git REV)' ($first)"
  if [ "$p" = containerd-shim-iobatch-v2 ]; then
    is "$(tail -n +2 <<<"$out")" "$(printf '  Version: %s\n  Revision: %s' "$want_ver" "$rev")" "$p --version: then the runc shim's Version/Revision lines"
  else
    is "$(wc -l <<<"$out") $(wc -c <"$IOB_T/err")" "1 0" "$p --version: one line, nothing on stderr"
  fi
done
[ "${revs[0]}" = "${revs[1]}" ] && [ "${revs[1]}" = "${revs[2]}" ] && [ "${revs[2]}" = "${revs[3]}" ]
is "$?" "0" "the four agree on the revision (${revs[*]})"
r=${revs[0]%-dirty}
[ "$r" = unknown ] || git -C "$IOB_TOP" cat-file -e "$r^{commit}" 2>/dev/null
is "$?" "0" "it is a commit of this repository, or unknown ($r)"
is "$("$IOB_B/bin/containerd-shim-iobatch-v2" -v)" "$("$IOB_B/bin/containerd-shim-iobatch-v2" --version)" "the shim's -v is its --version"

tap_done
