#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The soak of issue #14 at CI size: bench/soak.sh with LIFECYCLES=500 (a
# private containerd, the iobatch runtime and agent, restarts of both), its
# summary read back: nothing leaked, no lifecycle failed.
#
# FIFOs: ctr makes and removes the stdio FIFOs of what it runs, once it has
# deleted the process; a detached exec (`ctr task exec -d`, kind 9) it
# never deletes, so its three FIFOs stay, with the runc shim as with ours
# (bench/soak.sh's header).  Those are client_fifos, at most three per
# kind-9 lifecycle; any other FIFO left (leaked_fifos) means a process ctr
# could not delete: a shim that refused or lost it.
. "$(dirname "$0")/../lib/common.sh"
tap_plan 14
iob_need containerd ctr runc jq
S=$IOB_T/out/soak/summary.json
LIFECYCLES=${SOAK_LIFECYCLES:-500} OUT_DIR=$IOB_T/out B=$IOB_B "$IOB_TOP/bench/soak.sh" 2>&1 | sed 's/^/# /'
ok "bench/soak.sh wrote its summary" test -s "$S"
f() { jq -r ".$1 // \"missing\"" "$S" 2>/dev/null; }
is "$(f lifecycles_done)" "${SOAK_LIFECYCLES:-500}" "every lifecycle ran"
for k in failed_lifecycles failed_checks leaked_shims leaked_mounts leaked_cgroups \
  leaked_agent_entries leaked_fds leaked_snapshots leaked_fifos; do
  is "$(f $k)" 0 "$k"
done
n9=$(f kinds.kind_9.n)
c9=$(f client_fifos)
ok "client_fifos ($c9): only ctr's, of the $n9 detached execs" test "$c9" -le $((3 * ${n9//[^0-9]/0}))
# the agent's RSS and saved profiles after each of the ten phases: the
# profiles are what a restarted agent loads, capped (agent/store/profiles.h)
is "$(jq '[.agent_rss_kb_per_phase[] | select(. > 0)] | length' "$S" 2>/dev/null)" 10 \
  "agent_rss_kb_per_phase: the agent's RSS after each of the 10 phases"
np=$(jq '.agent_profiles_per_phase | if length == 10 then max else -1 end' "$S" 2>/dev/null)
ok "agent_profiles_per_phase: 10 phases, learned profiles (at most $np) within the cap of 4096" \
  test "${np:--1}" -gt 0 -a "${np:--1}" -le 4096
if [ "$_tap_failed" != 0 ] && [ -s "$IOB_T/out/soak/failures.log" ]; then
  diag "failures.log:"
  tail -40 "$IOB_T/out/soak/failures.log" | sed 's/^/# /'
fi
tap_done
