#!/usr/bin/env bash
# The soak of issue #14 at CI size: bench/soak.sh with LIFECYCLES=500 (a
# private containerd, the iobatch runtime and agent, restarts of both), its
# summary read back: nothing leaked, no lifecycle failed.
. "$(dirname "$0")/lib.sh"
tap_plan 10
for c in containerd ctr runc jq; do
  command -v $c >/dev/null || bail "$c is not installed (scripts/install-deps.sh)"
done
S=$IOB_T/out/soak/summary.json
LIFECYCLES=${SOAK_LIFECYCLES:-500} OUT_DIR=$IOB_T/out B=$IOB_B "$IOB_TOP/bench/soak.sh" 2>&1 | sed 's/^/# /'
ok "bench/soak.sh wrote its summary" test -s "$S"
f() { jq -r ".$1 // \"missing\"" "$S" 2>/dev/null; }
is "$(f lifecycles_done)" "${SOAK_LIFECYCLES:-500}" "every lifecycle ran"
for k in failed_lifecycles failed_checks leaked_shims leaked_mounts leaked_cgroups \
  leaked_agent_entries leaked_fds leaked_snapshots; do
  is "$(f $k)" 0 "$k"
done
if [ "$_tap_failed" != 0 ] && [ -s "$IOB_T/out/soak/failures.log" ]; then
  diag "failures.log:"
  tail -40 "$IOB_T/out/soak/failures.log" | sed 's/^/# /'
fi
tap_done
