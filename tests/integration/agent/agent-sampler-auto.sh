#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# sampler = auto (the default): bytes and requests from the BPF program's
# map wherever it sees every write of a container.  Where the cgroup2 root
# has the io and memory controllers (pure cgroup v2: the VM), the kernel
# charges buffered writeback to the cgroup that dirtied the pages, and the
# map counts what io.stat does (bench/results/sampler-v2.md).  Where it
# does not (this hybrid host: writeback is charged to the root), the
# program also counts the pages each container's tasks dirty
# (writeback_dirty_folio), and auto takes the map too.
#   - status names auto's choice, and the log says it and why;
#   - a buffered writer (no fsync: the kernel's flusher writes its pages
#     back) shows a write rate in status, from the map: on v2 through the
#     writeback charged to its cgroup, on hybrid through its dirtied pages;
#   - with the program not loaded (latency_source = pressure) auto falls
#     back to the files and says why (on v2 in status too, and a warning);
#   - the agent exits cleanly.
# The writer's rate is waited for in the agent's windows (a bound on a
# hang, not a threshold).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 8

CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[ -n "$CG2" ] || bail "no cgroup2 mount"
V2=0
grep -qw io "$CG2/cgroup.controllers" && grep -qw memory "$CG2/cgroup.controllers" && V2=1
diag "cgroup2 at $CG2: $(cat "$CG2/cgroup.controllers"); writeback charged to the writer: $V2"
MSOCK=$IOB_T/metrics.sock
agent_start "metrics = unix:$MSOCK" || bail "iobatchd did not start"
sampler=$(ctl status --json | jq -r .sampler)
if [ $V2 = 1 ]; then
  like "$sampler" "^bpf \(.*auto: cgroup v2 charges buffered writeback to the writer's cgroup" \
    "v2: status names bpf, auto's choice, and why"
  like "$(grep 'sampler = auto' "$AGENT_LOG")" \
    "sampler = auto: bpf, bytes and requests from the BPF program's map \(cgroup v2 charges" \
    "v2: the log says auto chose bpf, and why"
else
  like "$sampler" "^bpf \(.*auto: a v1 or hybrid host charges buffered writeback to the root cgroup: the program counts the pages each container dirties" \
    "hybrid/v1: status names bpf, auto's choice, and why (the program counts dirtied pages)"
  like "$(grep 'sampler = auto' "$AGENT_LOG")" \
    "sampler = auto: bpf, bytes and requests from the BPF program's map \(a v1 or hybrid host" \
    "hybrid/v1: the log says auto chose bpf, and why"
fi
diag "sampler: $sampler"

DATA=$IOB_T/data
mkdir -p "$DATA"
cg=iobt-agent-auto-$$
# As runc makes a container's cgroup on a hybrid host: the same path in
# the v1 blkio hierarchy, which the block layer charges its requests to.
BLKIO=$(awk '$0 ~ / - cgroup / && $NF ~ /(^|,)blkio(,|$)/ { print $5; exit }' /proc/self/mountinfo)
dirs=("$CG2/$cg")
[ $V2 = 1 ] || [ -z "$BLKIO" ] || dirs+=("$BLKIO/$cg")
for d in "${dirs[@]}"; do
  mkdir -p "$d"
  at_exit "cg_remove '$d'"
done
ctl register wb --cgroup "/$cg" >/dev/null
ctl admit wb >/dev/null
# Buffered, no fsync: 256 MiB rewritten over and over; the kernel's
# flusher writes the pages back (balance_dirty_pages throttles the writer
# to it).
sh -c 'f=$1; shift; for d in "$@"; do echo $$ >"$d/cgroup.procs" || exit 1; done
  while :; do dd if=/dev/zero of="$f" bs=1M count=256 2>/dev/null; done' \
  sh "$DATA/wb" "${dirs[@]}" >/dev/null 2>&1 &
p=$!
at_exit "kill $p 2>/dev/null"
wait_for 60 'awk -v w="$(agent_field wb write_bps)" "BEGIN { exit !(w > 65536) }"'
is "$?" "0" "a buffered writer's write rate shows in status ($(agent_field wb write_bps) B/s, $sampler)"
kill "$p"
wait "$p" 2>/dev/null
cg_empty "${dirs[0]}" # its last dd too
# One buffered 64 MiB, the writer gone before the agent reads it: counted
# once, from the map (a process's /proc/PID/io goes with it).  A cgroup of
# its own: on cgroup v2 the first writer's pages, written back later, are
# charged to the first one's.
dirs2=()
for d in "${dirs[@]}"; do
  mkdir -p "$d-2"
  at_exit "cg_remove '$d-2'"
  dirs2+=("$d-2")
done
counts_64m wb2 "$MSOCK" "$DATA/wb2" "${dirs2[@]}" -- \
  "a buffered writer's 64 MiB counted once, its process gone"
for d in "${dirs2[@]}"; do cg_remove "$d"; done
for d in "${dirs[@]}"; do cg_remove "$d"; done
rm -f "$DATA/wb"
agent_stop
is "$AGENT_RC" "0" "clean exit"

# The program not loaded: auto falls back.
: >"$AGENT_LOG"
agent_start "latency_source = pressure" || bail "iobatchd did not start"
sampler=$(ctl status --json | jq -r .sampler)
if [ $V2 = 1 ]; then
  is "$sampler" "io.stat (auto: not bpf: the BPF program is not loaded: latency_source = pressure)" \
    "v2 without the program: status says io.stat, and why not bpf"
  like "$(grep 'sampler = auto' "$AGENT_LOG")" \
    "level=warning msg=.sampler = auto: io.stat, not bpf: the BPF program is not loaded: latency_source = pressure" \
    "v2 without the program: a warning in the log says so"
else
  like "$sampler" "^(blkio-v1|procfs|io\.stat)" "hybrid/v1 without the program: a file sampler"
  like "$(grep 'sampler = auto' "$AGENT_LOG")" "not bpf: the BPF program is not loaded: latency_source = pressure" \
    "hybrid/v1 without the program: the log says why not bpf"
fi
agent_stop
is "$AGENT_RC" "0" "clean exit"
tap_done
