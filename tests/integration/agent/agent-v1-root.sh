#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Issue #14: a container registered with cgroup "/" (what the hook sends
# when runc left the container in the cgroup2 root of a hybrid host) is
# never sampled as the whole root.  The agent samples the container's own
# cgroup from its pid (its v1 blkio cgroup on a hybrid host), so a direct
# writer in another cgroup does not show up as the container's I/O, and
# the container's own writer does.  On a host without v1 blkio (the cgroup
# v2 VM) the processes get v2 cgroups of their own and are still registered
# as "/".
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 7

[ "$(id -u)" -eq 0 ] || bail "needs root to create cgroups"
BLKIO=$(awk '$0 ~ / - cgroup / && $NF ~ /(^|,)blkio(,|$)/ { print $5; exit }' /proc/self/mountinfo)
CG2=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)
HIER=${BLKIO:-$CG2}
[ -n "$HIER" ] || bail "no blkio or cgroup2 hierarchy"
# the data file on a real disk, not on a tmpfs
. "$IOB_TOP/bench/calibrate-wcd-lib.sh"
DATA=$(wcd_data_dir "$IOB_T/data" "/data/.agent-v1-root.$$") || bail "no directory on a block device"
at_exit "rm -rf '$DATA'"

CTR=$HIER/iobt-v1root-ctr-$$ NOISE=$HIER/iobt-v1root-noise-$$
mkdir -p "$CTR" "$NOISE"
at_exit "cg_remove '$CTR'; cg_remove '$NOISE'"

agent_start || bail "iobatchd did not start"
diag "sampler: $(ctl status --json | jq -r .sampler)"

ctr_pid=$(cg_run "$CTR" sleep 600)
at_exit "kill $ctr_pid 2>/dev/null"
wait_for 5 'grep -q "^$ctr_pid\$" "$CTR/cgroup.procs"'
if [ -n "$BLKIO" ]; then
  is "$(sed -n 's/^0:://p' /proc/$ctr_pid/cgroup)" "/" "the container is in the cgroup2 root (hybrid host)"
else
  is "$(sed -n 's/^0:://p' /proc/$ctr_pid/cgroup)" "/${CTR##*/}" "the container has its own v2 cgroup"
fi
out=$(ctl register v1root --cgroup / --pid "$ctr_pid" --running)
like "$out" "^registered v1root" "registered with cgroup '/' and its pid"

# Noise: a direct writer in another cgroup, registered the same way so
# that its rate is measured by the same sampler in the same windows.
noise_pid=$(cg_run "$NOISE" dd if=/dev/zero of="$DATA/noise" bs=1M count=100000 oflag=direct)
at_exit "kill $noise_pid 2>/dev/null"
ctl register noise --cgroup / --pid "$noise_pid" --running >/dev/null
wait_for 15 'awk -v w="$(agent_field noise write_bps)" "BEGIN { exit !(w > 65536) }"'
is "$?" "0" "the other cgroup's writer is measured ($(agent_field noise write_bps) B/s)"
# Several sampling periods with the noise running; the container (sleep)
# wrote nothing.  Under the old rule ("/" = the cgroup2 root) it got all of
# the root's I/O, the noise included.
nb=$(agent_field noise write_bps) cb=$(agent_field v1root write_bps)
for _ in 1 2 3 4; do
  sleep 0.3
  cb=$(awk -v a="$cb" -v b="$(agent_field v1root write_bps)" 'BEGIN { print (b > a ? b : a) }')
  nb=$(awk -v a="$nb" -v b="$(agent_field noise write_bps)" 'BEGIN { print (b > a ? b : a) }')
done
awk -v c="$cb" -v n="$nb" 'BEGIN { exit !(n > 0 && c * 100 < n) }'
_tap_report $? "the root's I/O is not the container's: at most $cb B/s against the noise's $nb B/s"

# The container's own writer shows up.
kill "$noise_pid" 2>/dev/null
own=$(cg_run "$CTR" dd if=/dev/zero of="$DATA/own" bs=1M count=100000 oflag=direct)
at_exit "kill $own 2>/dev/null"
wait_for 15 'awk -v w="$(agent_field v1root write_bps)" "BEGIN { exit !(w > 65536) }"'
is "$?" "0" "the container's own writer is measured ($(agent_field v1root write_bps) B/s)"
# runc removes a container's cgroups at delete; with io.stat a vanished
# cgroup is the exit (an emptied one too with blkio-v1 and procfs)
kill "$own" "$ctr_pid" 2>/dev/null
cg_remove "$CTR"
wait_for 10 '[ -z "$(agent_field v1root state)" ]'
is "$(agent_field v1root state)" "" "its cgroup gone: counted as exited"
agent_stop
is "$AGENT_RC" "0" "clean exit"
tap_done
