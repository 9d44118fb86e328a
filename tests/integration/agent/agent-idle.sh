#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Nothing to do costs nothing: an agent with no container counts its
# sampling windows as idle and does nothing in them (no sampler pass, no
# container sampled, so no cgroup file read), in status and in the
# metrics alike; once a container registers the windows are full again
# and sample it, and when it leaves they are idle again.  Windows are
# counted by the agent's own counters, never by the clock.  A lone Admit
# on the idle agent is admitted without waiting for the batch window.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 16

iob_need curl jq
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[ -n "$CG2" ] || bail "no cgroup2 mount"
MSOCK=$IOB_T/metrics.sock
agent_start "metrics = unix:$MSOCK" || bail "iobatchd did not start"

# st FIELD: one of the agent's counters from status --json
st() { ctl status --json | jq -r ".$1"; }
# metric 'NAME{LABELS}': its value in a fresh scrape
metric() {
  curl -sS --max-time 10 --unix-socket "$MSOCK" http://x/metrics | awk -v m="$1" '$1 == m { print $2 }'
}
# windows_past N: wait until N more windows (idle or full) have passed
windows_past() {
  local want=$(($(st windows_idle) + $(st windows_full) + $1))
  wait_for 60 "[ \$((\$(st windows_idle) + \$(st windows_full))) -ge $want ]"
}

windows_past 8
is "$?" "0" "8 windows pass with nothing registered"
is "$(st windows_full)" "0" "every one of them idle"
is "$(st sampler_passes)" "0" "no sampler pass in an idle window"
is "$(st sampler_samples)" "0" "no container sampled: no cgroup file read"
idle=$(metric 'iobatch_agent_windows_total{work="idle"}')
[ "${idle:-0}" -ge 8 ]
is "$?" "0" "the metrics count them idle ($idle)"
is "$(metric 'iobatch_agent_windows_total{work="full"}')" "0" "and none full"
is "$(metric iobatch_sampler_passes_total)" "0" "the metrics count no sampler pass"
is "$(metric iobatch_sampler_samples_total)" "0" "and no sample"

# A container registers: the windows sample it.
cg=iobt-agent-idle-$$
cg_make "$CG2/$cg"
p=$(cg_run "$CG2/$cg" sleep 600)
at_exit "kill $p"
ctl register idle1 --cgroup "/$cg" >/dev/null
windows_past 4
full=$(st windows_full)
[ "$full" -ge 3 ]
is "$?" "0" "with a container registered the windows are full ($full)"
passes=$(st sampler_passes)
[ "$passes" -ge 3 ]
is "$?" "0" "and the sampler passes over it ($passes)"
samples=$(st sampler_samples)
[ "$samples" -ge 3 ]
is "$?" "0" "reading its cgroup ($samples samples)"

# It leaves: idle again, nothing sampled.
ctl exited idle1
full=$(st windows_full) passes=$(st sampler_passes) samples=$(st sampler_samples)
windows_past 6
is "$(st windows_full)" "$full" "once it left, no full window"
is "$(st sampler_passes) $(st sampler_samples)" "$passes $samples" \
  "and no sampler pass nor sample"

# An idle node starts at once: an Admit with nothing pending, starting or
# arrived within the batch window (100 ms here) waits for no window.
ctl register lone --class seq-write >/dev/null
like "$(ctl admit lone)" "^lone admitted" "a lone Admit on an idle agent is admitted"
# Planned in the loop turn it arrived in: held less than the window (a
# turn may cross a millisecond), where a wait would have held it a window.
held=$(sed -n "s/.*admitted 'lone' (seq-write) after \([0-9]*\) ms.*/\1/p" "$AGENT_LOG")
ok "in the loop turn it arrived in: held ${held:-?} ms, no batch window (100 ms)" \
  test -n "$held" -a "${held:-100}" -lt 100
agent_stop
is "$AGENT_RC" "0" "the agent stops cleanly"
tap_done
