#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The VM is a pure cgroup v2 machine with the io controller enabled.
. "$(dirname "$0")/vmlib.sh"
tap_plan 6

is "$(awk '$2 == "/sys/fs/cgroup" { print $3 }' /proc/mounts)" cgroup2 "cgroup2 is mounted at /sys/fs/cgroup"
is "$(awk '$3 == "cgroup" { n++ } END { print n + 0 }' /proc/mounts)" 0 "no cgroup v1 hierarchy is mounted"
like "$(cat $CG/cgroup.controllers)" '(^| )io( |$)' "io is in the root's cgroup.controllers"
ctl=$(cat $CG/cgroup.subtree_control)
diag "subtree_control: $ctl"
has_all() { local c; for c in io memory pids cpu; do [[ " $ctl " == *" $c "* ]] || return 1; done; }
ok "io memory pids cpu are enabled for children" has_all
ok "root has io.stat, io.cost.qos, io.cost.model, io.pressure" \
  test -r $CG/io.stat -a -w $CG/io.cost.qos -a -w $CG/io.cost.model -a -r $CG/io.pressure
like "$(cat $CG/io.pressure)" '^some avg10=' "io.pressure (PSI) reads"
tap_done
