#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# sampler = bpf (issue #22): bytes and requests from the BPF latency
# program's map, read once per window for every container (batched), and a
# container's end from the program's report of its cgroup's removal
# (cgroup_rmdir), with no system call per container and window.  A 1 MiB
# O_DIRECT dd writer in a real cgroup: its write rate shows in status; its
# cgroup removed: counted as an exit, found through the program's report
# (not the sampler's periodic look); then a buffered writer (64 MiB, no
# fsync, the pages written back by a sync from outside its cgroup) is
# counted once, 64 MiB, in the agent's metrics: on v2 the block layer
# charges the writeback to it, on a hybrid host the program counts the
# pages it dirtied (the flusher's requests go to the root); the agent
# exits cleanly.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 7

CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[ -n "$CG2" ] || bail "no cgroup2 mount"
# On a hybrid host the block layer charges a process's requests to its v1
# blkio cgroup, which the agent keys the container by (agent/sample/sampler.c,
# lat_key_dir): the test's cgroup is made in both, with the same name.
BLKIO=$(awk '$0 ~ / - cgroup / && $NF ~ /(^|,)blkio(,|$)/ { print $5; exit }' /proc/self/mountinfo)
MSOCK=$IOB_T/metrics.sock
agent_start "sampler = bpf
latency_source = bpf
metrics = unix:$MSOCK" || bail "iobatchd did not start (it needs the BPF program: see $AGENT_LOG)"
DATA=$IOB_T/data
mkdir -p "$DATA"

like "$(ctl status --json | jq -r .sampler)" "^bpf " "status names the bpf sampler"

cg=iobt-agent-bpf-$$
dirs=("$CG2/$cg")
[ -z "$BLKIO" ] || dirs+=("$BLKIO/$cg")
for d in "${dirs[@]}"; do
  mkdir -p "$d"
  at_exit "cg_remove '$d'"
done
ctl register w1 --cgroup "/$cg" >/dev/null
ctl admit w1 >/dev/null
sh -c 'for d in "$@"; do echo $$ >"$d/cgroup.procs"; done; exec dd if=/dev/zero of='"$DATA/w"' bs=1M count=100000 oflag=direct' \
  sh "${dirs[@]}" >/dev/null 2>&1 &
p=$!
at_exit "kill $p 2>/dev/null"
wait_for 15 'awk -v w="$(agent_field w1 write_bps)" "BEGIN { exit !(w > 65536) }"'
is "$?" "0" "its write rate, from the map, shows in status ($(agent_field w1 write_bps) B/s)"
like "$(agent_field w1 io_lat_count)" "^[0-9]+$" "and its requests' latency ($(agent_field w1 io_lat_count) in the last window)"

kill "$p"
wait "$p" 2>/dev/null
for d in "${dirs[@]}"; do cg_remove "$d"; done
wait_for 10 '[ -z "$(agent_field w1 state)" ]'
is "$(agent_field w1 state)" "" "cgroup removed: counted as exited"
grep -q "'w1': '.*' removed (cgroup_rmdir, reported by the BPF program)" "$AGENT_LOG"
is "$?" "0" "found through the program's report of the removal, not the periodic look"
rm -f "$DATA/w"

for d in "${dirs[@]}"; do
  mkdir -p "$d"
done
counts_64m w2 "$MSOCK" "$DATA/b" "${dirs[@]}" -- "a buffered writer's 64 MiB counted once"
agent_stop
is "$AGENT_RC" "0" "clean exit"
tap_done
