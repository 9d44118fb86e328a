#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Interoperability of our ttrpc client with a real peer: publish TaskExit to
# a private containerd's .ttrpc socket the way a shim does (Events/Forward)
# and see it in `ctr events`; check containerd's status codes for unknown
# services and methods arrive intact.
. "$(dirname "$0")/../lib/common.sh"

PUB=$IOB_B/tests/ttrpc-publish
tap_plan 8
[ -x "$PUB" ] || bail "$PUB not built"
iob_need containerd
iob_containerd_start || bail "cannot start containerd"
TT=$IOB_SOCK.ttrpc
diag "containerd $(containerd --version | awk '{print $3}'), ttrpc socket $TT"

ctr --address "$IOB_SOCK" events >"$IOB_T/events.log" 2>&1 &
EV_PID=$!
at_exit "kill $EV_PID"
# ctr subscribes asynchronously: publish a probe until it shows up.
for i in $(seq 1 50); do
  "$PUB" "$TT" exit iobtest probe 1 0 >/dev/null 2>&1
  grep -q probe "$IOB_T/events.log" && break
  sleep 0.1
done

wait_event() { # PATTERN
  local i
  for _ in $(seq 1 50); do
    grep -q "$1" "$IOB_T/events.log" && return 0
    sleep 0.1
  done
  return 1
}

ok "blocking client publishes TaskExit via Events/Forward" "$PUB" "$TT" exit iobtest ttrpc-c1 4242 7
ok "ctr events shows it on /tasks/exit" wait_event 'iobtest /tasks/exit.*ttrpc-c1'
line=$(grep 'ttrpc-c1' "$IOB_T/events.log" | head -1)
diag "$line"
like "$line" '"pid":4242' "event carries pid"
like "$line" '"exit_status":7' "event carries exit status"

ok "async client publishes TaskExit" "$PUB" "unix://$TT" exit iobtest ttrpc-c2 4343 0 async
ok "ctr events shows the async one" wait_event 'iobtest /tasks/exit.*ttrpc-c2'

out=$("$PUB" "$TT" call containerd.services.events.ttrpc.v1.Events NoSuchMethod)
is "$out" "code=12 message=method NoSuchMethod" "containerd answers an unknown method with 12"
out=$("$PUB" "$TT" call iobatch.NoSuchService Forward)
is "$out" "code=12 message=service iobatch.NoSuchService" "containerd answers an unknown service with 12"
tap_done
