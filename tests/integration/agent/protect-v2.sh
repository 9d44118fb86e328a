#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Protection with weights and caps on a pure cgroup v2 host (issue #12):
# a container declared io.iobatch.class=latency (a queue-depth-1 random
# reader) and a batch writer, both through io.containerd.iobatch.v2 and a
# private containerd, with iobatchd.
#   - the disk under the test gets a weight mechanism (iocost, else bfq:
#     what cg2_weight_mechanism looks for), and the agent writes the
#     weights there: 10000 (bfq: 1000) for the protected container, at most
#     the default for the batch writer;
#   - the writer runs under an io.max cap while the protected one runs;
#   - the cap is lifted when the protected container is gone;
#   - the writer runs at cpu.weight 1 meanwhile (protect_cpu), and gets its
#     own back after.
# Protection by share, and the level never rises (protect_raise = 1): it
# starts at protect_cap_start with the victim, is cut where the victim is
# short of its target, and stays where it is not, so only the victim's
# leaving lifts it.  Whether the writer slows the victim is the disk's to
# decide (a disk may serve both faster together: kubepods.sh, 03974b9);
# with the level free to rise, one that did not would see the cap lifted
# within a few seconds, before the checks, or vanish between them.  The
# test waits for the files and the agent's status, never for a time.
# Needs the io controller in cgroup v2 (the VM of tests/vm; listed in
# tests/vm/guest/integration.list).  On a hybrid host it bails out, which
# counts as a failure, so make check leaves it out (as every *-v2.sh:
# tests/integration/module.mk): protect.sh covers protection (held
# starts, v1 caps) there.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 14
iob_need containerd ctr runc fio jq
V2=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
grep -qw io "$V2/cgroup.controllers" 2>/dev/null ||
  bail "needs the io controller in cgroup v2 (here '$V2' has '$(cat "$V2/cgroup.controllers" 2>/dev/null)'); run it with make check-vm"
grep -qw io "$V2/cgroup.subtree_control" || echo +io >"$V2/cgroup.subtree_control" || bail "cannot enable io"

# The disk under $IOB_T, where the containers' files are (a partition maps
# to its disk: weights and io.cost.qos are per disk).
blk=$(df -P "$IOB_T" | awk 'NR == 2 { print $1 }')
sys=/sys/class/block/$(basename "$(readlink -f "$blk")")
[ -e "$sys/partition" ] && sys=$(dirname "$(readlink -f "$sys")")
DEV=$(cat "$sys/dev" 2>/dev/null) || bail "no block device under $IOB_T ($blk)"
# A weight mechanism for it: iocost if the kernel has it, else bfq.
MECH='' WFILE='' HI=''
if [ -f "$V2/io.cost.qos" ] && echo "$DEV enable=1" >"$V2/io.cost.qos" 2>/dev/null &&
  grep -q "^$DEV enable=1 " "$V2/io.cost.qos"; then
  at_exit "echo '$DEV enable=0' >'$V2/io.cost.qos'"
  MECH=iocost WFILE=io.weight HI=10000
else
  sched=$sys/queue/scheduler
  grep -qw bfq "$sched" 2>/dev/null || modprobe bfq 2>/dev/null
  old_sched=$(sed 's/.*\[\(.*\)\].*/\1/' "$sched" 2>/dev/null)
  if echo bfq >"$sched" 2>/dev/null && grep -q '\[bfq\]' "$sched"; then
    at_exit "echo '$old_sched' >'$sched'"
    MECH=bfq WFILE=io.bfq.weight HI=1000 # cg2_weight_io_to_bfq(10000)
  fi
fi
T0=$(now_ms)
# step WHAT: where the time goes (under emulation most of it is containerd)
step() { diag "$(($(now_ms) - T0)) ms: $*"; }
ok "the kernel enforces weights on $DEV: ${MECH:-neither iocost nor bfq}" [ -n "$MECH" ]
[ -n "$MECH" ] || bail "no weight mechanism for $DEV"

# By share, not by a latency objective (protect-slo.sh); a level that
# never rises (above).  No batch budget: the writer, of unknown runtime
# and capped from its start, would run free whenever what a binding cap
# took from it passed half the time it had run free (agent/protect/budget.c);
# the cap must go because the victim does, and only then.
iob_stack_up "protect_raise = 1
protect_objective = off
protect_batch_budget = 0"
step "agent and containerd up"
fio --name=prep --filename="$R/data/victim" --rw=write --bs=1M --size=64M --direct=1 \
  >/dev/null 2>&1 || bail "cannot prepare the victim's file"

# cg_of ID: the container's cgroup directory, from its pid
cg_of() {
  local pid
  pid=$($CTR task ls 2>/dev/null | awk -v id="$1" '$1 == id { print $2 }')
  [ -n "$pid" ] && [ "$pid" != 0 ] || return 1
  echo "$V2$(sed -n 's/^0:://p' "/proc/$pid/cgroup")"
}
# wline CGDIR: the weight written for $DEV in $WFILE (empty: none)
wline() { awk -v d="$DEV" '$1 == d { print $2 }' "$1/$WFILE" 2>/dev/null; }
# capped CGDIR: io.max limits $DEV's writes
capped() { grep -q "^$DEV .*wbps=[0-9]" "$1/io.max" 2>/dev/null; }

$CTR run -d --runtime $RT --annotation io.iobatch.class=latency --rootfs "$R" victim \
  /usr/bin/fio --name=v --filename=/data/victim --rw=randread --bs=4k --size=64M \
  --time_based --runtime=600 --direct=1 --ioengine=psync >/dev/null 2>&1
ok "the latency-sensitive container starts" wait_for 60 '[ "$(state victim)" == RUNNING ]'
is "$(agent_field victim protected)" "true" "status marks it protected"
step "victim running"
VCG=$(cg_of victim) || bail "no cgroup for the victim"
# Its rate alone first (a few 250 ms windows), then the writer.
wait_for 30 '[ "$(agent_field victim "read_bps > 0")" == true ]'
step "victim sampled: read_bps $(agent_field victim read_bps)"
(
  $CTR run -d --runtime $RT --annotation io.iobatch.class=seq-write --rootfs "$R" w1 \
    /usr/bin/fio --name=w --filename=/data/w1 --rw=write --bs=1M --size=256M --time_based \
    --runtime=600 --direct=1 --ioengine=psync >"$IOB_T/w1.out" 2>&1
  echo $? >"$IOB_T/w1.rc.tmp" && mv "$IOB_T/w1.rc.tmp" "$IOB_T/w1.rc"
) &
wait_for 120 '[ -e "$IOB_T/w1.rc" ]'
is "$(cat "$IOB_T/w1.rc" 2>/dev/null)" "0" "a batch writer starts beside it"
step "writer running"
WCG=$(cg_of w1) || bail "no cgroup for the writer"
diag "victim $VCG, writer $WCG, disk $DEV, $MECH"

wait_for 60 '[ "$(wline "$VCG")" == $HI ] && [ -n "$(wline "$WCG")" ]'
is "$(wline "$VCG")" "$HI" "$WFILE of the protected container: $DEV $HI"
w=$(wline "$WCG")
[ -n "$w" ] && [ "$w" -le 100 ]
is "$?" "0" "$WFILE of the batch writer: at most the default ($DEV ${w:-none})"
wait_for 30 '[ "$(agent_field victim weight_effective)/$(agent_field w1 weight_effective)" == true/true ]'
is "$(agent_field victim io_weight)/$(agent_field victim weight_effective)/$(agent_field w1 weight_effective)" \
  "10000/true/true" "status: weight 10000 for the protected one, both in effect"

step "weights checked"
ok "the writer is capped through io.max while the victim runs" wait_for 60 'capped "$WCG"'
diag "io.max: $(grep "^$DEV " "$WCG/io.max" 2>/dev/null); status cap $(agent_field w1 cap_bps) B/s, victim share $(agent_field victim share)"
# seen once is enough: the cap level moves every window (agent/protect/protect.h)
ok "status shows the writer's cap" wait_for 60 '[ "$(agent_field w1 cap_bps)" -gt 0 ] 2>/dev/null'
WCPU0=$(cat "$VCG/cpu.weight" 2>/dev/null)
ok "the writer runs at cpu.weight 1 while the victim runs (the victim at ${WCPU0:-none})" \
  wait_for 60 '[ "$(cat "$WCG/cpu.weight" 2>/dev/null)" = 1 ]'

step "cap checked"
cleanup_ctr victim
ok "the protected container is gone" wait_for 60 '[ -z "$(agent_field victim state)" ]'
ok "the writer's io.max cap is lifted" wait_for 60 '! capped "$WCG"'
ok "and its cpu.weight is put back (${WCPU0:-none})" \
  wait_for 60 '[ -n "$WCPU0" ] && [ "$(cat "$WCG/cpu.weight" 2>/dev/null)" = "$WCPU0" ]'
is "$(agent_field w1 cap_bps)/$(ctl status --json | jq -r .protect_cap_bps)" "0/0" \
  "status: no cap on the writer and no protection level"
diag "writer after: io.max '$(grep "^$DEV " "$WCG/io.max" 2>/dev/null)', $WFILE $(wline "$WCG"), state $(agent_field w1 state)"
step "cap lifted"
cleanup_ctr w1
rm -f "$R"/data/*
tap_done
