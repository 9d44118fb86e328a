#!/usr/bin/env bash
# --version of the four programs: one line "NAME VERSION (git REV)" on
# stdout, exit 0, the release from VERSION and the revision the Makefile
# computes for this tree (so a stale build fails here: rebuild first); the
# shim's -v keeps the runc shim's Version/Revision block after that line.
source "$(dirname "$0")/lib.sh"
tap_plan 12

want_ver=$(cat "$IOB_TOP/VERSION")
want_rev=$(make -s --no-print-directory -C "$IOB_TOP" --eval 'iob-print-rev: ; @echo $(IOB_GIT_REV)' iob-print-rev)
diag "want the revision of this tree, $want_rev: a build older than the last commit or edit fails here (make first)"
like "$want_rev" '^([0-9a-f]{7,40}(-dirty)?|unknown)$' "the Makefile's revision looks like git describe's: $want_rev"
for p in containerd-shim-iobatch-v2 iobatchd iobatch-hook iobatchctl; do
  out=$("$IOB_B/bin/$p" --version 2>"$IOB_T/err")
  rc=$?
  is "$rc $(head -n1 <<<"$out")" "0 $p $want_ver (git $want_rev)" "$p --version: exit 0, '$p $want_ver (git $want_rev)'"
  if [ "$p" = containerd-shim-iobatch-v2 ]; then
    is "$(tail -n +2 <<<"$out")" "$(printf '  Version: %s\n  Revision: %s' "$want_ver" "$want_rev")" "$p --version: then the runc shim's Version/Revision lines"
  else
    is "$(wc -l <<<"$out") $(wc -c <"$IOB_T/err")" "1 0" "$p --version: one line, nothing on stderr"
  fi
done
is "$("$IOB_B/bin/containerd-shim-iobatch-v2" -v)" "$("$IOB_B/bin/containerd-shim-iobatch-v2" --version)" "the shim's -v is its --version"
like "$("$IOB_B/bin/iobatchd" --help)" "--version" "iobatchd --help lists --version"
like "$("$IOB_B/bin/iobatch-hook" --help)" "--version" "iobatch-hook --help lists --version"

tap_done
