#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What the agent writes on cgroups goes back (issue #14): the protection
# caps on a batch container (v1 blkio.throttle on a hybrid host, io.max
# with the v2 io controller), written while a latency-sensitive container
# runs, are put back to what was there before
#   (a) when the protected container ends;
#   (b) when the agent stops on SIGTERM;
#   (c) after kill -9: the journal in state_dir is there, and the next agent
#       replays it at start (one log line per file).
# "What was there" is not nothing: the batch container's spec sets a read
# IOPS limit (linux.resources.blockIO, as docker --device-read-iops does)
# which the cap keeps in force and the restore keeps.
# The agent samples every 5 s, so that the cap level (which rises x1.25 per
# sample while the victim has slack) stays set for over a minute; each
# check reads the files, and (c) checks the journal that only a set cap
# leaves, so none of them can pass because the cap went away by itself.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 15
iob_need containerd ctr runc jq
[ "$(id -u)" -eq 0 ] || bail "needs root"
TOOL=$IOB_B/tests/cg-throttle
[ -x "$TOOL" ] || bail "build first: $TOOL"
AGENT_SAMPLE_PERIOD=5s
# protect_batch_budget = 0: the batch container runs `sleep 600` like the
# victims, whose ends teach that key a short runtime alone; the caps must
# stay for the whole test, not give way at its budget.
agent_start "max_hold = 120s
protect_batch_budget = 0" || bail "iobatchd did not start"
export IOBATCH_AGENT_SOCKET=$AGENT_SOCK
iob_stack_ctr
at_exit "for d in /sys/fs/cgroup/*/$NS /sys/fs/cgroup/$NS; do rmdir \$d; done"
JOURNAL=$AGENT_STATE/restore.json

# The whole disk under the rootfs (the kernel throttles whole disks).
rootdev=$(stat -c '%Hd:%Ld' "$R")
disk=$rootdev
[ -e "/sys/dev/block/$rootdev/partition" ] && disk=$(cat "/sys/dev/block/$rootdev/../dev")
[ "${disk%%:*}" != 0 ] || bail "the rootfs ($R) is not on a block device"
IOPS=77777

# The batch container: declared seq-write, with the runtime's own limit.
ctr oci spec >"$IOB_T/base.json"
jq --arg r "$R" --arg cg "/$NS/wr" --argjson maj "${disk%%:*}" --argjson min "${disk##*:}" \
  --argjson iops "$IOPS" '
  .root = {"path": $r, "readonly": false}
  | .process.args = ["/bin/sleep", "600"] | .process.terminal = false | .process.cwd = "/"
  | .annotations = {"io.iobatch.class": "seq-write"}
  | .linux.cgroupsPath = $cg
  | .linux.resources.blockIO = {"throttleReadIOPSDevice": [{"major": $maj, "minor": $min, "rate": $iops}]}' \
  "$IOB_T/base.json" >"$IOB_T/wr.json"
victim() {
  $CTR run -d --runtime $RT --annotation io.iobatch.class=latency --rootfs "$R" "$1" \
    /bin/sleep 600 >/dev/null 2>&1
}
$CTR run -d --runtime $RT --config "$IOB_T/wr.json" wr >"$IOB_T/wr.out" 2>&1 ||
  bail "ctr run failed: $(cat "$IOB_T/wr.out")"
wait_for 20 '[ "$(state wr)" == RUNNING ]' || bail "the batch container did not start"
pid=$($CTR task ls | awk '$1 == "wr" { print $2 }')
orig="0 0 $IOPS 0"
read -r mech cgdir _ <<<"$("$TOOL" resolve "$pid")"
diag "caps through $mech in $cgdir"
[ "$("$TOOL" get "$pid" "$disk")" == "$orig" ] ||
  bail "the runtime's limit is not in place: $("$TOOL" get "$pid" "$disk")"
# capped: the caps' line reads "L L 77777 0" with the level L > 0
capped() { [[ "$("$TOOL" get "$pid" "$disk")" =~ ^[1-9][0-9]*\ [1-9][0-9]*\ $IOPS\ 0$ ]]; }

# (a) the protected container ends
victim v1
ok "a latency-sensitive container runs" wait_for 20 '[ "$(agent_field v1 protected)" == true ]'
ok "the batch container is capped, and the runtime's IOPS limit stays under the cap" \
  wait_for 30 capped
diag "caps: $("$TOOL" get "$pid" "$disk")"
jq -c '.entries[]' "$JOURNAL" 2>/dev/null | sed 's/^/# journal: /'
if [ "$mech" == io.max ]; then
  file=io.max want="rbps=max wbps=max riops=$IOPS wiops=max"
else
  file=blkio.throttle.read_iops_device want=$IOPS
fi
is "$(jq -r --arg d "$disk" --arg f "$cgdir/$file" '.entries[] | select(.dev == $d and .file == $f) | .value' "$JOURNAL" 2>/dev/null)" \
  "$want" "the journal holds what $file held before the first cap"
cleanup_ctr v1
ok "(a) when it ends, the files are back to what they were" wait_for 30 '[ "$("$TOOL" get "$pid" "$disk")" == "$orig" ]'
ok "and the journal is gone" test ! -e "$JOURNAL"

# (b) SIGTERM while capped
victim v2
ok "capped again beside a new latency-sensitive container" wait_for 30 capped
agent_stop
is "$AGENT_RC" 0 "the agent stops on SIGTERM"
is "$("$TOOL" get "$pid" "$disk")" "$orig" "(b) and puts back what was there"
ok "leaving no journal" test ! -e "$JOURNAL"

# (c) kill -9 while capped
agent_start "max_hold = 120s
protect_batch_budget = 0" || bail "iobatchd did not start again"
ok "the shims register again; capped again" wait_for 40 capped
kill -KILL "$AGENT_PID"
wait "$AGENT_PID" 2>/dev/null
has_entries() { jq -e '.entries | length > 0' "$JOURNAL" >/dev/null; }
ok "(c) kill -9 leaves the journal" has_entries
ok "and the caps in place" capped
# Nothing to protect when the next agent starts: only the journal can put
# the values back.
cleanup_ctr v2
agent_start "max_hold = 120s
protect_batch_budget = 0" || bail "iobatchd did not start after kill -9"
n=$(grep -c "restored '.*' $disk to '.*' (left by an agent that did not stop)" "$AGENT_LOG")
[ "$n" -ge 1 ]
is "$?" 0 "the next agent replays it at start, a log line per file ($n)"
is "$("$TOOL" get "$pid" "$disk")" "$orig" "the files are back to what they were"
ok "and the journal is gone" test ! -e "$JOURNAL"
grep "restored '" "$AGENT_LOG" | sed 's/^/# /'
cleanup_ctr wr
tap_done
