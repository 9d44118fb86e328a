#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The repository's own format (.clang-format) holds for every C file outside
# tests/, bench/ and the generated proto/gen/: `make fmt-check` as a TAP test,
# so that CI fails on an unformatted file (`make fmt` fixes it).
cd "$(dirname "$0")/.." || exit 1
echo "1..1"
if out=$(make -s fmt-check 2>&1); then
  echo "ok 1 - ${out##*$'\n'}"
else
  printf '%s\n' "$out" | sed 's/^/# /'
  echo "not ok 1 - files not clang-formatted (make fmt)"
fi
