#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Solver benchmark (issue 7, section 3): exact and heuristic vs brute force
# for N = 6..12, N = 25 / 100 / 1000, and the exact/heuristic boundary.
# Writes bench/results/solver.json and bench/results/solver.md.
#   bench/solver.sh [--quick]
set -eu
cd "$(dirname "$0")/.."
B=${B:-build}
make -s B="$B" "$B/bench/solver/batch-bench"
mkdir -p bench/results
"$B/bench/solver/batch-bench" bench/results/solver.json bench/results/solver.md "$@"
cat bench/results/solver.md
