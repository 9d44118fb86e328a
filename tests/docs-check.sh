#!/usr/bin/env bash
# The generated pages are what their script would write from the files they
# come from (bench/RESULTS.md from bench/results/): `make docs-check` as a
# TAP test, so that CI fails on a stale page (`make docs` rewrites it).
cd "$(dirname "$0")/.." || exit 1
echo "1..1"
if out=$(make -s docs-check 2>&1); then
  echo "ok 1 - ${out##*$'\n'}"
else
  printf '%s\n' "$out" | sed 's/^/# /'
  echo "not ok 1 - bench/RESULTS.md is stale (make docs)"
fi
