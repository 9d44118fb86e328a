#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Real I/O in real cgroups, sampled by iobatchd: a 1 MiB O_DIRECT dd writer
# is classified seq-write and a 4 KiB random fio writer rand-write (on this
# hybrid host, where they have no v1 blkio cgroup, through procfs);
# rates show up in status; a cgroup that vanishes counts as an exit; what
# was learnt classifies the next run of the workload before it does I/O.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 17

iob_need fio
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[ -n "$CG2" ] || bail "no cgroup2 mount"
agent_start || bail "iobatchd did not start"
DATA=$IOB_T/data
mkdir -p "$DATA"

# mk_cg NAME, run_in NAME CMD...: lib/agent.sh's cg_make and cg_run under $CG2
mk_cg() { cg_make "$CG2/$1"; }
run_in() {
  local cg=$CG2/$1
  shift
  cg_run "$cg" "$@"
}

sampler=$(ctl status --json | jq -r .sampler)
if grep -qw io "$CG2/cgroup.controllers" 2>/dev/null && grep -qw memory "$CG2/cgroup.controllers"; then
  # writeback charged to the writer's cgroup: auto takes the BPF map
  # (agent-sampler-auto.sh)
  like "$sampler" "^bpf .*auto: " "sampler is auto's bpf on a cgroup v2 io and memory host"
elif grep -qw io "$CG2/cgroup.controllers" 2>/dev/null; then
  is "$sampler" "io.stat" "sampler is io.stat on a cgroup v2 io host"
elif [ -n "$(awk '$0 ~ / - cgroup / && $NF ~ /(^|,)blkio(,|$)/ { print $5; exit }' /proc/self/mountinfo)" ]; then
  # auto takes the map, the program counting dirtied pages
  # (agent-sampler-auto.sh); the containers below are registered by v2
  # path without a pid, have no v1 blkio cgroup, and are sampled with
  # procfs (sampler.c, cgroup_dir and map_counts)
  like "$sampler" "^bpf .*auto: a v1 or hybrid host" "status names auto's bpf on a hybrid host"
else
  is "$sampler" "procfs (lower fidelity)" "status names the procfs fallback sampler"
fi

# Sequential writer.
cg1=iobt-agent-seq-$$
ctl register seq1 --cgroup "/$cg1" --key test-dd-seq >/dev/null
out=$(ctl admit seq1)
like "$out" "^seq1 admitted" "seq writer admitted"
mk_cg "$cg1"
p1=$(run_in "$cg1" dd if=/dev/zero of="$DATA/seq" bs=1M count=100000 oflag=direct)
at_exit "kill $p1"
wait_for 10 '[ "$(agent_field seq1 class)" == seq-write ]'
is "$(agent_field seq1 class)" "seq-write" "dd 1 MiB O_DIRECT writer classified seq-write"
is "$(agent_field seq1 class_source)" "detected" "by the detector"
# Rates are per sampling period, and this shared disk stalls now and then.
wait_for 5 'awk -v w="$(agent_field seq1 write_bps)" "BEGIN { exit !(w > 65536) }"'
is "$?" "0" "its write rate shows in status ($(agent_field seq1 write_bps) B/s)"
cg_remove "$CG2/$cg1"
wait_for 5 '[ -z "$(agent_field seq1 state)" ]'
is "$(agent_field seq1 state)" "" "cgroup gone: counted as exited"
grep -q "'seq1' (running) is gone: its cgroup vanished" "$AGENT_LOG"
is "$?" "0" "and the log says so"

# Random writer.
cg2=iobt-agent-rand-$$
ctl register rand1 --cgroup "/$cg2" --key test-fio-rand >/dev/null
ctl admit rand1 >/dev/null
sleep 0.6 # two sampling periods before its cgroup exists
is "$(agent_field rand1 state)" "running" "a cgroup not created yet is not an exit"
# psync: the procfs fallback counts write system calls, and io_submit or
# io_uring submissions are not write system calls (cgroupv2/procio.h).
mk_cg "$cg2"
p2=$(run_in "$cg2" fio --name=r --filename="$DATA/rand" --rw=randwrite --bs=4k --direct=1 \
  --ioengine=psync --size=256M --time_based --runtime=30)
at_exit "kill $p2"
wait_for 15 '[ "$(agent_field rand1 class)" == rand-write ]'
is "$(agent_field rand1 class)" "rand-write" "fio 4 KiB random writer classified rand-write"
wait_for 5 'awk -v w="$(agent_field rand1 write_iops)" "BEGIN { exit !(w > 1) }"'
is "$?" "0" "its write IOPS show in status ($(agent_field rand1 write_iops)/s)"
# Exited from the shim's side; the process is still running, which the
# agent must not care about.
ctl exited rand1
is "$(agent_field rand1 state)" "" "Exited removes it"
cg_remove "$CG2/$cg2"

# A container deleted before it ever started (nobody tells the agent).
cg3=iobt-agent-created-$$
mk_cg "$cg3"
(run_in "$cg3" sleep 600 >/dev/null) # in a subshell: not a job of this shell
wait_for 5 '[ -n "$(cat "$CG2/$cg3/cgroup.procs")" ]'
ctl register never --cgroup "/$cg3" >/dev/null
is "$(agent_field never state)" "created" "registered, not started"
cg_remove "$CG2/$cg3"
wait_for 5 '[ -z "$(agent_field never state)" ]'
is "$(agent_field never state)" "" "its cgroup gone: dropped without being told"

# What was learnt: the next run of each workload is known before any I/O.
out=$(ctl register seq2 --key test-dd-seq)
is "$out" "registered seq2: class seq-write" "learnt seq-write before the next run"
out=$(ctl register rand2 --key test-fio-rand)
is "$out" "registered rand2: class rand-write" "learnt rand-write before the next run"
agent_stop
is "$AGENT_RC" "0" "clean exit"
jq -e '.namespaces.default["test-dd-seq"].class == "seq-write"' "$AGENT_STATE/profiles.json" >/dev/null
is "$?" "0" "the profile is on disk"
tap_done
