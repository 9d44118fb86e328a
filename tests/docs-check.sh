#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The generated pages are what their script would write from the files they
# come from (bench/RESULTS.md from bench/results/), and the agent's config
# keys are the ones its documents list (scripts/config-keys-check.py):
# `make docs-check` as a TAP test, so that CI fails on a stale page (`make
# docs` rewrites it) or on a key the documents lost or kept.
cd "$(dirname "$0")/.." || exit 1
echo "1..1"
if out=$(make -s docs-check 2>&1); then
  echo "ok 1 - ${out##*$'\n'}"
else
  printf '%s\n' "$out" | sed 's/^/# /'
  echo "not ok 1 - docs disagree with their sources (make docs; scripts/config-keys-check.py)"
fi
