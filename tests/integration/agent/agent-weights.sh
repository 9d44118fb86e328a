#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# io.weight for containers that share the disk: a random writer beside a
# sequential writer gets the larger weight (it suffers more).  Where cgroup
# v2 has no io controller (this hybrid host) status says the weight is not
# in effect and why; on a cgroup v2 host (the VM) with BFQ as the disk's
# scheduler the agent writes io.bfq.weight and status says it is in effect.
# There also two "pods" (nested cgroups, as under Kubernetes): weights only
# compete among siblings, so the agent writes them on the pod cgroups.
# What the agent wrote goes back (issue #14): at SIGTERM, and on a cgroup
# where no running container competes any more.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"

iob_need fio
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/self/mounts)
[ -n "$CG2" ] || bail "no cgroup2 mount"
HAS_IO=0
grep -qw io "$CG2/cgroup.controllers" 2>/dev/null && HAS_IO=1
if [ $HAS_IO = 1 ]; then tap_plan 14; else tap_plan 6; fi
DATA=$IOB_T/data
mkdir -p "$DATA"

# mk_cg NAME, run_in NAME CMD...: lib/agent.sh's cg_make and cg_run under $CG2
mk_cg() { cg_make "$CG2/$1"; }
run_in() {
  local cg=$CG2/$1
  shift
  cg_run "$cg" "$@" >/dev/null
}
# seq_writer CGROUP FILE / rand_writer CGROUP FILE: a minute of O_DIRECT
# writes from inside that cgroup.
seq_writer() {
  run_in "$1" fio --name=s --filename="$DATA/$2" --rw=write --bs=1M --direct=1 \
    --ioengine=psync --size=256M --time_based --runtime=60
}
rand_writer() {
  run_in "$1" fio --name=r --filename="$DATA/$2" --rw=randwrite --bs=4k --direct=1 \
    --ioengine=psync --size=64M --time_based --runtime=60
}

seq_cg=iobt-agent-wseq-$$ rand_cg=iobt-agent-wrand-$$
mk_cg "$seq_cg"
mk_cg "$rand_cg"
seq_writer "$seq_cg" seq
rand_writer "$rand_cg" rand

if [ $HAS_IO = 1 ]; then
  # The disk the writers use, from io.stat, gets BFQ (restored at exit).
  wait_for 10 '[ -n "$(cut -d" " -f1 "$CG2/$seq_cg/io.stat" 2>/dev/null | head -n1)" ]'
  dev=$(cut -d' ' -f1 "$CG2/$seq_cg/io.stat" | head -n1)
  sched=/sys/dev/block/$dev/queue/scheduler
  [ -e "$sched" ] || sched=/sys/dev/block/$dev/../queue/scheduler
  old=$(grep -o '\[[^]]*\]' "$sched" | tr -d '[]')
  modprobe bfq 2>/dev/null
  at_exit "echo $old >$sched"
  echo bfq >"$sched" 2>/dev/null
  is "$(grep -o '\[[^]]*\]' "$sched")" "[bfq]" "disk $dev runs bfq"
fi

agent_start || bail "iobatchd did not start"
if [ $HAS_IO = 0 ]; then
  like "$(ctl status --json | jq -r .sampler)" "^(procfs|blkio-v1|bpf) " \
    "no io controller in cgroup v2 here: the procfs, v1 blkio or bpf (dirtied pages counted) sampler"
fi
# Both already run (as after an agent restart): no admission in the way.
ctl register wseq --cgroup "/$seq_cg" --class seq-write --running >/dev/null
ctl register wrand --cgroup "/$rand_cg" --class rand-write --running >/dev/null
wait_for 10 '[ "$(agent_field wrand io_weight)" -gt "$(agent_field wseq io_weight)" ] 2>/dev/null'
ws=$(agent_field wseq io_weight) wr=$(agent_field wrand io_weight)
[ "${wr:-0}" -gt "${ws:-0}" ]
is "$?" "0" "the random writer gets the larger weight ($wr vs $ws)"
is "$(agent_field wseq state)/$(agent_field wrand state)" "running/running" "both run"

if [ $HAS_IO = 1 ]; then
  wait_for 10 '[ "$(agent_field wrand weight_effective)" == true ]'
  is "$(agent_field wrand weight_effective)" "true" "status: weight in effect"
  bfq=$(grep "^$dev " "$CG2/$rand_cg/io.bfq.weight" | cut -d' ' -f2)
  [ -n "$bfq" ] && [ "$bfq" -gt 100 ]
  is "$?" "0" "io.bfq.weight of the random writer's cgroup is raised for $dev ($bfq)"
  like "$(ctl status)" "wrand .* $wr " "status table shows its weight"

  # Two pods, one writer each: the pods compete, not the containers.
  agent_stop
  is "$(grep -c "^$dev " "$CG2/$rand_cg/io.bfq.weight")" 0 \
    "SIGTERM: the agent puts io.bfq.weight back (no override for $dev, as before)"
  cg_remove "$CG2/$seq_cg"
  cg_remove "$CG2/$rand_cg"
  P=iobt-agent-pods-$$
  mk_cg "$P"
  echo +io >"$CG2/$P/cgroup.subtree_control"
  for pod in podA podB; do
    mk_cg "$P/$pod"
    echo +io >"$CG2/$P/$pod/cgroup.subtree_control"
  done
  mk_cg "$P/podA/c1"
  mk_cg "$P/podB/c2"
  seq_writer "$P/podA/c1" seq
  rand_writer "$P/podB/c2" rand
  agent_start "metrics = unix:$IOB_T/metrics.sock" || bail "iobatchd did not start again"
  ctl register pseq --cgroup "/$P/podA/c1" --class seq-write --running >/dev/null
  ctl register prand --cgroup "/$P/podB/c2" --class rand-write --running >/dev/null
  wait_for 15 '[ "$(agent_field prand weight_effective)" == true ]'
  is "$(agent_field prand weight_effective)/$(agent_field pseq weight_effective)" "true/true" \
    "pods: both weights in effect"
  pa=$(grep "^$dev " "$CG2/$P/podA/io.bfq.weight" | cut -d' ' -f2)
  pb=$(grep "^$dev " "$CG2/$P/podB/io.bfq.weight" | cut -d' ' -f2)
  [ -n "$pa" ] && [ -n "$pb" ] && [ "$pb" -gt "$pa" ]
  is "$?" "0" "pods: the random writer's pod cgroup gets the larger weight ($pb vs $pa)"
  c1=$(grep -c "^$dev " "$CG2/$P/podA/c1/io.bfq.weight")
  c2=$(grep -c "^$dev " "$CG2/$P/podB/c2/io.bfq.weight")
  is "$c1/$c2" "0/0" "pods: the container cgroups (no sibling of ours) are left alone"
  # A second container in podA: now podA/c1 and podA/c3 compete too.
  mk_cg "$P/podA/c3"
  rand_writer "$P/podA/c3" rand3
  ctl register prand3 --cgroup "/$P/podA/c3" --class rand-write --running >/dev/null
  wait_for 15 '[ -n "$(grep "^$dev " "$CG2/$P/podA/c3/io.bfq.weight" 2>/dev/null)" ]'
  w1=$(grep "^$dev " "$CG2/$P/podA/c1/io.bfq.weight" | cut -d' ' -f2)
  w3=$(grep "^$dev " "$CG2/$P/podA/c3/io.bfq.weight" | cut -d' ' -f2)
  [ -n "$w1" ] && [ -n "$w3" ] && [ "$w3" -gt "$w1" ]
  is "$?" "0" "pods: inside podA the two containers get their own ($w3 vs $w1)"
  m=$(curl -s --unix-socket "$IOB_T/metrics.sock" http://x/metrics |
    awk '$1 == "iobatch_weight_writes_total{result=\"written\"}" { print $2 }')
  [ -n "$m" ] && [ "$m" -ge 3 ]
  is "$?" "0" "metrics: iobatch_weight_writes_total{result=\"written\"} counts them (${m:-none})"
  # c3 leaves: nothing competes with c1 inside podA any more
  ctl exited prand3 >/dev/null
  ok "a container cgroup nothing competes in any more gets its weight back" \
    wait_for 15 '[ -z "$(grep "^$dev " "$CG2/$P/podA/c1/io.bfq.weight")" ]'
  agent_stop
  is "$(grep -c "^$dev " "$CG2/$P/podA/io.bfq.weight")/$(grep -c "^$dev " "$CG2/$P/podB/io.bfq.weight")" \
    "0/0" "SIGTERM: the pod cgroups' weights go back too"
else
  is "$(agent_field wrand weight_effective)" "false" "status: weight not in effect"
  is "$(agent_field wrand weight_note)" "no io controller in cgroup v2 on this host" \
    "status says why"
  like "$(ctl status)" "weight not in effect: no io controller" "the table says so too"
  agent_stop
fi
tap_done
