#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# iobatch-hook registers a container with a real iobatchd over ttrpc (under
# its seccomp filter); an absent or dead agent does not fail the hook.
source "$(dirname "$0")/../lib/common.sh"
tap_plan 6
"$IOB_B/bin/iobatchd" --socket "$IOB_T/a.sock" --state-dir "$IOB_T/state" >"$IOB_T/agent.log" 2>&1 &
AGENT=$!
at_exit "kill $AGENT"
for _ in $(seq 50); do [ -S "$IOB_T/a.sock" ] && break; sleep 0.1; done
BD=$IOB_T/io.containerd.runtime.v2.task/hookns/hk1
mkdir -p "$BD"
echo '{"ociVersion":"1.0.2","process":{"args":["sleep","30"]},"annotations":{"io.iobatch.class":"rand-write"}}' >"$BD/config.json"
sleep 30 &
SP=$!
at_exit "kill $SP"
state() { echo "{\"ociVersion\":\"1.0.2\",\"id\":\"$1\",\"status\":\"creating\",\"pid\":$SP,\"bundle\":\"$BD\",\"annotations\":{\"io.iobatch.class\":\"rand-write\"}}"; }
ok "hook exits 0 with a live agent" sh -c "$(declare -f state); SP=$SP BD=$BD; state hk1 | '$IOB_B/bin/iobatch-hook' --socket '$IOB_T/a.sock'"
st=$(iobatchctl --socket "$IOB_T/a.sock" status --json)
like "$st" '"id": *"hk1"' "the agent lists the container"
like "$st" '"namespace": *"hookns"' "the namespace comes from the bundle path"
like "$st" '"class": *"rand-write"' "the declared class reached the agent"
kill "$AGENT"; wait "$AGENT" 2>/dev/null
ok "hook exits 0 when the agent is gone (stale socket or none)" sh -c "$(declare -f state); SP=$SP BD=$BD; state hk2 | '$IOB_B/bin/iobatch-hook' --socket '$IOB_T/a.sock'"
out=$(state hk3 | "$IOB_B/bin/iobatch-hook" --socket "$IOB_T/a.sock" 2>&1)
like "$out" "^iobatch-hook: container 'hk3': (no agent at|agent not reached: cannot connect to) '$IOB_T/a.sock'.*\(fail open\)$" \
  "the hook says in one line why it fails open"
tap_done
