#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# No circle of C files: no set of object files under $B (each directory
# on its own, then the tree) calls each other's functions
# (scripts/file-cycles.py reads them with nm).  The agent is a hub with
# narrow parts that reach their owner only through the ops they are given
# (docs/ARCHITECTURE.md, "The agent's parts"); a part that calls back into
# the daemon directly makes a circle, and this test names its files.
# Then the agent's folders: a file calls only into its own folder or one
# below it in the table of docs/ARCHITECTURE.md ("The agent's folders"),
# and each folder's README.md names only folders below it as callable.
# The last test turns that table upside down and must see the check fail,
# so a check that finds nothing is known to be able to find something.
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
echo "1..3"
if ! command -v python3 >/dev/null || ! command -v nm >/dev/null; then
  echo "not ok 1 - python3 and nm are needed (scripts/install-deps.sh)"
  echo "not ok 2 - python3 and nm are needed (scripts/install-deps.sh)"
  echo "not ok 3 - python3 and nm are needed (scripts/install-deps.sh)"
  exit 0
fi
if out=$(python3 scripts/file-cycles.py "$B" 2>&1); then
  echo "ok 1 - ${out##*$'\n'}"
else
  printf '%s\n' "$out" | sed 's/^/# /'
  echo "not ok 1 - circles of files under '$B' (see above; break them with an ops table)"
fi
if out=$(python3 scripts/file-cycles.py --folders "$B" 2>&1); then
  echo "ok 2 - ${out##*$'\n'}"
else
  printf '%s\n' "$out" | sed 's/^/# /'
  echo "not ok 2 - calls up between the agent's folders under '$B' (see above; docs/ARCHITECTURE.md has the order)"
fi
upside=$(mktemp)
trap 'rm -f "$upside"' EXIT
# The table's rows in the opposite order, everything else as it is.
awk '/<!-- agent-folders -->/ { t = 1 } /<!-- \/agent-folders -->/ { for (i = n; i > 0; i--) print r[i]; t = 0 }
  t && /^\| `agent/ { r[++n] = $0; next } { print }' docs/ARCHITECTURE.md >"$upside"
if out=$(python3 scripts/file-cycles.py --folders "$B" "$upside" 2>&1); then
  printf '%s\n' "$out" | sed 's/^/# /'
  echo "not ok 3 - the order upside down passes: the check cannot fail"
elif grep -q '^call up: agent/' <<<"$out"; then
  echo "ok 3 - the order upside down fails (${out##*$'\n'})"
else
  printf '%s\n' "$out" | sed 's/^/# /'
  echo "not ok 3 - the order upside down fails, but names no call up"
fi
