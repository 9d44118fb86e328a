#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Run each libFuzzer target for a bounded time on its corpus; fail on a crash.
set -eu
secs=$1; shift
rc=0
for f in "$@"; do
  name=$(basename "$f")
  corpus=tests/fuzz/corpus/$name
  work=$(mktemp -d)
  [ -d "$corpus" ] && cp -r "$corpus"/. "$work"/ 2>/dev/null || true
  echo "# fuzzing $name for ${secs}s"
  if "$f" -max_total_time="$secs" -rss_limit_mb=2048 -print_final_stats=1 "$work" >"$work.log" 2>&1; then
    echo "ok - $name: $(grep -m1 -oE 'stat::number_of_executed_units: *[0-9]+' "$work.log" | grep -oE '[0-9]+$') runs, no crash"
  else
    echo "not ok - $name crashed"; tail -40 "$work.log"; rc=1
  fi
  rm -rf "$work" "$work.log"
done
exit $rc
