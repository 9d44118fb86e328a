#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Planner cost per plan (issue #11): batch_plan with RUNNING (default 200)
# running and N = 10..1000 pending containers, shipped defaults against
# every pair counted as evidence (forecasts run), median CPU ms of REPS.
# Writes bench/results/plan-cost.json and bench/results/plan-cost.md.
#   RUNNING=200 REPS=21 bench/plan-cost.sh
set -eu
cd "$(dirname "$0")/.."
B=${B:-build}
make -s B="$B" "$B/bench/plancost/plan-cost"
mkdir -p bench/results
"$B/bench/plancost/plan-cost" bench/results/plan-cost.json bench/results/plan-cost.md \
  "${RUNNING:-200}" "${REPS:-21}"
cat bench/results/plan-cost.md
