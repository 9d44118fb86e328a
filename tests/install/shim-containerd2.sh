#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The shim's protocol suites (create, start, exec, kill, delete, events,
# the held Start, OOM, containerd restarted) against the containerd of the
# install tests' Debian INST_SUITE root (default sid: unstable's 2.x), run on
# this host with that root's containerd and ctr first on PATH
# (containerd-bin.sh; runc is the host's).  One TAP stream: each check is
# named after its suite and the containerd it ran against,
# "shim-task.sh[containerd 2.1.9]: ...".  make check-shim-containerd2, and
# part of make check-install.
INST_SUITE=${INST_SUITE:-sid}
SUITES="shim-run.sh shim-task.sh ttrpc-events.sh admission-hold.sh shim-restart.sh shim-group.sh"
. "$(dirname "$0")/lib.sh"

dir=$IOB_B/containerd-$INST_SUITE
"$IOB_TOP/tests/install/containerd-bin.sh" "$INST_SUITE" "$dir" >"$IOB_T/containerd-bin.log" 2>&1 || {
  sed 's/^/# /' "$IOB_T/containerd-bin.log"
  bail "no containerd of $INST_SUITE for this host (tests/install/containerd-bin.sh)"
}
export PATH="$dir/bin:$PATH" B="$IOB_B"
ver=$(containerd --version | awk '{ sub(/^v/, "", $3); sub(/[+~].*/, "", $3); print $3 }')
[ "$(command -v containerd)" = "$dir/bin/containerd" ] && [ "$(command -v ctr)" = "$dir/bin/ctr" ] ||
  bail "containerd and ctr on PATH are not $INST_SUITE's"
diag "containerd $ver and ctr from $dir/bin, runc $(runc --version | awk 'NR == 1 { print $3 }')"

n=0
for s in $SUITES; do
  name="${s}[containerd $ver]"
  timeout --kill-after=10 600 "$IOB_TOP/tests/integration/shim/$s" >"$IOB_T/out" 2>&1 </dev/null
  rc=$?
  plan=0 ran=0 failed=0
  while IFS= read -r line; do
    if [[ $line =~ ^(not\ )?ok\ [0-9]+\ -\ (.*)$ ]]; then
      n=$((n + 1)) ran=$((ran + 1))
      [ -n "${BASH_REMATCH[1]}" ] && failed=$((failed + 1))
      echo "${BASH_REMATCH[1]}ok $n - $name: ${BASH_REMATCH[2]}"
    elif [[ $line =~ ^1\.\.([0-9]+)$ ]]; then
      plan=${BASH_REMATCH[1]}
    else
      echo "# ${line#\# }"
    fi
  done <"$IOB_T/out"
  if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
    n=$((n + 1))
    echo "not ok $n - $name exited with status $rc"
  elif [ "$ran" -lt "$plan" ]; then
    n=$((n + 1))
    echo "not ok $n - $name ran $ran of $plan planned checks"
  fi
done
echo "1..$n"
