#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Replay every seed corpus (tests/fuzz/corpus/NAME) through its fuzz target
# built with the normal compiler and tests/fuzz/driver.c: in $B (build/ by
# default) and, when the runner sets it (make check-all), in $ASAN_B
# (build-asan/, ASan + UBSan).  No clang or libFuzzer needed; a crash, a
# sanitizer report or a target without a corpus (or a corpus without a
# target) fails.  `make check-asan` covers ASan on its own via B.
set -u
. "$(dirname "$0")/../integration/lib/common.sh"
cd "$IOB_TOP" || exit 1
dirs=("$IOB_B")
if [ -n "${ASAN_B:-}" ]; then
  case "$ASAN_B" in /*) a=$ASAN_B ;; *) a=$IOB_TOP/$ASAN_B ;; esac
  [ "$a" != "$IOB_B" ] && dirs+=("$a")
fi
corpora=(tests/fuzz/corpus/*/)
[ "${#corpora[@]}" -gt 0 ] && [ -d "${corpora[0]}" ] || bail "no corpus under tests/fuzz/corpus"
tap_plan $(( ${#dirs[@]} * (${#corpora[@]} + 1) ))
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
for d in "${dirs[@]}"; do
  short=${d#"$IOB_TOP"/}
  for c in "${corpora[@]}"; do
    name=$(basename "$c")
    bin=$d/tests/fuzz/$name
    if [ ! -x "$bin" ]; then
      diag "$bin is missing (make all builds it)"
      _tap_report 1 "$short: $name replays its corpus"
      continue
    fi
    out=$(timeout 120 "$bin" "$c" 2>&1)
    rc=$?
    [ "$rc" -ne 0 ] && printf '%s\n' "$out" | tail -40 | sed 's/^/# /'
    _tap_report "$rc" "$short: $name replays its corpus ($(ls "$c" | wc -l) inputs)"
  done
  # Every target built has seeds, so none is left out of the replay.
  missing=()
  for bin in "$d"/tests/fuzz/fuzz_*; do
    [ -x "$bin" ] && [ -f "$bin" ] || continue
    [ -d "tests/fuzz/corpus/$(basename "$bin")" ] || missing+=("$(basename "$bin")")
  done
  [ "${#missing[@]}" -eq 0 ] || diag "targets without a corpus: ${missing[*]}"
  _tap_report "${#missing[@]}" "$short: every fuzz target has a seed corpus"
done
tap_done
