#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every source file carries its licence as an SPDX line (CONTRIBUTING.md):
# scripts/spdx.sh --check as a TAP test; scripts/spdx.sh adds what is missing.
cd "$(dirname "$0")/.." || exit 1
echo "1..1"
if out=$(scripts/spdx.sh --check 2>&1); then
  echo "ok 1 - ${out##*$'\n'}"
else
  printf '%s\n' "$out" | sed 's/^/# /'
  echo "not ok 1 - files without an SPDX line (scripts/spdx.sh adds them)"
fi
