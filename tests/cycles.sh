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
cd "$(dirname "$0")/.." || exit 1
B=${B:-build}
echo "1..2"
if ! command -v python3 >/dev/null || ! command -v nm >/dev/null; then
  echo "not ok 1 - python3 and nm are needed (scripts/install-deps.sh)"
  echo "not ok 2 - python3 and nm are needed (scripts/install-deps.sh)"
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
