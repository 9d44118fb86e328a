#!/usr/bin/env bash
# The licence line of every source file tracked by git:
#   scripts/spdx.sh          add "SPDX-License-Identifier: Apache-2.0" where missing
#   scripts/spdx.sh --check  list the files without one; exit 1 if any
# Source: C, headers, protobuf, shell, Python, make, YAML, TOML, jq,
# gnuplot and the shipped configs; not generated code, fixtures, fuzz
# corpora, results or JSON (which has no comments).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
TAG='SPDX-License-Identifier: Apache-2.0'
check=0
[ "${1:-}" = --check ] && check=1
missing=0 n=0
while IFS= read -r f; do
  case "$f" in
  proto/gen/* | tests/fixtures/* | tests/fuzz/corpus/* | bench/results/* | */vendor/*) continue ;;
  esac
  case "$f" in
  *.c | *.h | *.proto) style=c ;;
  *.sh | *.bash | *.py | *.mk | Makefile | *.yaml | *.yml | *.toml | *.jq | *.gp | *.service | \
    */iobatchd.conf.example | */Dockerfile | debian/rules | tests/vm/guest/init | .ci/run | \
    packaging/bash-completion/*) style='hash' ;;
  *) continue ;;
  esac
  [ -f "$f" ] || continue
  n=$((n + 1))
  head -5 "$f" | grep -q 'SPDX-License-Identifier' && continue
  missing=$((missing + 1))
  if [ $check = 1 ]; then
    echo "$f"
    continue
  fi
  tmp=$(mktemp)
  if [ $style = c ]; then
    { echo "// $TAG"; cat "$f"; } >"$tmp"
  elif head -1 "$f" | grep -q '^#!'; then
    { head -1 "$f"; echo "# $TAG"; tail -n +2 "$f"; } >"$tmp"
  else
    { echo "# $TAG"; cat "$f"; } >"$tmp"
  fi
  cat "$tmp" >"$f"
  rm -f "$tmp"
done < <(git ls-files)
if [ $check = 1 ]; then
  [ $missing -eq 0 ] || { echo "spdx: $missing of $n source files have no SPDX line"; exit 1; }
  echo "spdx: all $n source files carry an SPDX line"
else
  echo "spdx: added to $missing of $n source files"
fi
