#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Run test programs that speak TAP (cmocka with CMOCKA_MESSAGE_OUTPUT=TAP,
# or shell tests using tests/integration/lib/common.sh) and print one summary line:
#   N passed, N failed
# A program that crashes, times out or exits non-zero without a "not ok"
# line counts as one failure.  Exit status is 0 only when nothing failed.
# A word NAME=VALUE sets NAME in the environment of the next test program
# only (one script, several settings: tests/install/module.mk runs the
# install tests once per Debian suite with INST_SUITE=...).
set -u
export CMOCKA_MESSAGE_OUTPUT=TAP
TEST_TIMEOUT=${TEST_TIMEOUT:-1200}
pass=0 fail=0 skip=0
failed_names=()
envs=()
for t in "$@"; do
  case $t in
  [A-Za-z_]*=*) envs+=("$t"); continue ;;
  esac
  name="${envs[*]}${envs[*]:+ }$t"
  [ -e "$t" ] || { echo "not ok - $name: test program missing"; fail=$((fail + 1)); failed_names+=("$name"); envs=(); continue; }
  echo "# ---- $name"
  log=$(mktemp)
  t0=$(date +%s)
  env "${envs[@]}" timeout --kill-after=10 "$TEST_TIMEOUT" "$t" >"$log" 2>&1 </dev/null
  rc=$?
  envs=()
  cat "$log"
  echo "# $name: $(( $(date +%s) - t0 ))s"
  p=$(grep -cE '^ok ' "$log" | tr -d ' ')
  s=$(grep -cE '^ok .*# *(SKIP|skip)' "$log" | tr -d ' ')
  f=$(grep -cE '^not ok ' "$log" | tr -d ' ')
  plan=$(grep -m1 -oE '^1\.\.[0-9]+' "$log" | cut -d. -f3)
  rm -f "$log"
  p=$((p - s))
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
    echo "not ok - $name exited with status $rc"
    f=1
  elif [ -n "$plan" ] && [ $((p + s + f)) -lt "$plan" ]; then
    echo "not ok - $name ran $((p + s + f)) of $plan planned tests"
    f=$((f + 1))
  fi
  pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
  [ "$f" -gt 0 ] && failed_names+=("$name")
done
for n in "${failed_names[@]}"; do echo "# FAILED: $n"; done
if [ "$skip" -gt 0 ]; then
  echo "$pass passed, $fail failed, $skip skipped"
else
  echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
