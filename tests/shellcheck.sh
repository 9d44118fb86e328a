#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every shell script in the tree passes shellcheck at severity "warning"
# (.shellcheckrc: sourced files followed, the few codes disabled there say
# why).  One TAP line per script, so a failure names the file.
cd "$(dirname "$0")/.." || exit 1
command -v shellcheck >/dev/null || { echo "1..1"; echo "not ok 1 - shellcheck is not installed (scripts/install-deps.sh installs it)"; exit 0; }
mapfile -t files < <(
  { git ls-files '*.sh' '*.bash'
    git ls-files | while read -r f; do
      [ -f "$f" ] && head -c 64 "$f" | head -1 | grep -qE '^#!.*/(env )?(ba)?sh( |$)' && echo "$f"
    done; } | sort -u)
echo "1..${#files[@]}"
n=0
for f in "${files[@]}"; do
  n=$((n + 1))
  if out=$(shellcheck -x -S warning -f gcc "$f" 2>&1); then
    echo "ok $n - $f"
  else
    printf '%s\n' "$out" | sed 's/^/# /'
    echo "not ok $n - $f: shellcheck"
  fi
done
