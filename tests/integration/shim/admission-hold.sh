#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The admission hold end to end: a private containerd (with
# IOBATCH_AGENT_SOCKET in its environment, so the shim finds the agent),
# iobatchd with the paper policy, our shim, and fio in busybox containers.
#   - the shim registers a container at Create, before Start is answered,
#     with its pid and its cgroup, and leaves its config.json as containerd
#     wrote it (no prestart hook);
#   - two sequential writers run; a random writer started beside them is
#     pending (iobatchctl status) and CREATED (ctr task ls) while its Start
#     is held, and runs, to exit 0, once they have exited;
#   - a max hold (annotation io.iobatch.max-hold-ms) forces admission;
#   - a held container can be killed or deleted: its Start fails saying so,
#     the agent forgets it;
#   - a held container survives an agent restart;
#   - without the agent containers start at once (fail open);
#   - nothing is left behind (shims, mounts, sockets).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 34

iob_need containerd ctr runc fio jq

# A deterministic hold: the paper policy with alpha 0.6 and the default
# matrix except that sequential streams do not count against each other,
# so two seq-writes run together and a rand-write beside either is held.
cp "$IOB_TOP/tests/fixtures/batch/hold-matrix.conf" "$IOB_T/matrix.conf"
agent_start "policy = paper
alpha = 0.6
matrix = $IOB_T/matrix.conf
max_hold = 60s" || bail "iobatchd did not start"

# The shim inherits containerd's environment.
export IOBATCH_AGENT_SOCKET=$AGENT_SOCK
iob_stack_ctr fio
# seq_writer ID SECONDS: 1M writes over a 256 MiB file, again and again for
# that long (time based, so that the hold does not depend on how fast the
# disk is today; a small file, so that the VM's 4 GiB disk does not fill:
# runc create then fails without a word).
seq_writer() {
  $CTR run -d --runtime $RT --annotation io.iobatch.class=seq-write --rootfs "$R" "$1" \
    /usr/bin/fio --name=s --filename="/data/$1" --rw=write --bs=1M --size=256M --time_based \
    --runtime="$2" --direct=1 --ioengine=psync >/dev/null
}
# rand_writer ID [ANNOTATION...]: ctr run -d in the background (it blocks in
# Start while the agent holds the container); rc and time in $IOB_T/ID.*
rand_writer() {
  local id=$1 a=() x
  shift
  for x in "$@"; do a+=(--annotation "$x"); done
  (
    $CTR run -d --runtime $RT --annotation io.iobatch.class=rand-write "${a[@]}" --rootfs "$R" \
      "$id" /usr/bin/fio --name=r --filename="/data/$id" --rw=randwrite --bs=4k --size=16M \
      --direct=1 --ioengine=psync >"$IOB_T/$id.out" 2>&1
    local rc=$?
    date +%s%N >"$IOB_T/$id.at"
    $CTR task ls >"$IOB_T/$id.ls" 2>&1
    echo $rc >"$IOB_T/$id.rc.tmp" && mv "$IOB_T/$id.rc.tmp" "$IOB_T/$id.rc" # last: the test waits for it
  ) &
}

# 1. Two sequential writers, then a random writer: held, then admitted.
# 15 s: under emulation (the VM) creating the random writer alone takes
# seconds, and the writers must still run a second after it is held.
seq_writer s1 15 && seq_writer s2 15
ok "two sequential writers started (seq-write)" wait_for 10 '[ "$(state s1)" == RUNNING ] && [ "$(state s2)" == RUNNING ]'
rand_writer r1
wait_for 10 '[ "$(agent_field r1 state)" == pending ]'
is "$(agent_field r1 state)" "pending" "the random writer is pending in iobatchctl status"
like "$(ctl status)" "r1 +pending +rand-write \(declared\)" "status table shows it pending, declared rand-write"
is "$(state r1)" "CREATED" "ctr task ls shows it CREATED while held"
sleep 1
[ ! -e "$IOB_T/r1.rc" ] && [ "$(state r1)" == CREATED ] &&
  { [ "$(state s1)" == RUNNING ] || [ "$(state s2)" == RUNNING ]; }
is "$?" "0" "its Start is still held a second later, while a writer still runs"
# Registered by the shim at Create (one line: its Admit finds it there),
# with the init's pid, which Start has not run yet.
is "$(grep -c "registered 'r1' (namespace '$NS', from shim" "$AGENT_LOG")" "1" \
  "the shim registered it once at Create; no hook did"
pid=$(agent_field r1 pid)
[ "${pid:-0}" -gt 0 ] && grep -q '^0::/.\|:blkio:/.\|:memory:/.' "/proc/$pid/cgroup" 2>/dev/null
is "$?" "0" "the agent has its init's pid ($pid), in a cgroup of its own, while Start is held"
B1=$IOB_T/state/io.containerd.runtime.v2.task/$NS/r1
diff <($CTR container info r1 | jq -S .Spec) <(jq -S . "$B1/config.json") >"$IOB_T/r1.spec.diff"
is "$?:$(jq -c '.hooks // {}' "$B1/config.json")" "0:{}" \
  "its config.json is the spec containerd wrote, with no hook added"
wait_for 90 '[ -e "$IOB_T/r1.rc" ]'
is "$(cat "$IOB_T/r1.rc" 2>/dev/null)" "0" "ctr run returns once the agent admits it"
# The shim's Exited, or the sampler seeing the cgroup empty first (either
# may come first under load): each writer's end, once.
s_end=$(grep -oE "'s[12]' (exited with status 0|\(running\) is gone)" "$AGENT_LOG" |
  grep -oE "'s[12]'" | sort -u | wc -l)
is "$s_end" "2" "both sequential writers had exited by then"
like "$(awk '$1 == "s1" || $1 == "s2" { print $3 }' "$IOB_T/r1.ls" | sort -u | tr '\n' ' ')" "^STOPPED $" \
  "ctr task ls at its admission: s1 and s2 STOPPED"
held=$(grep -oE "admitted 'r1' \([a-z-]+\) after [0-9]+ ms" "$AGENT_LOG" | grep -oE '[0-9]+ ms' | grep -oE '[0-9]+')
[ "${held:-0}" -ge 1000 ]
is "$?" "0" "the agent held it ${held:-?} ms"
wait_for 180 '[ "$(state r1)" == STOPPED ]'
is "$(state r1)" "STOPPED" "the random writer ran to completion"
$CTR task delete r1 >/dev/null 2>&1
is "$?" "0" "and exited with status 0"
$CTR container delete r1 >/dev/null 2>&1
for id in s1 s2; do $CTR task delete $id >/dev/null 2>&1; $CTR container delete $id >/dev/null 2>&1; done
rm -f "$R"/data/*

# 2. Max hold: admitted at its deadline beside a running seq-write.
seq_writer s3 120
wait_for 10 '[ "$(state s3)" == RUNNING ]'
t0=$(date +%s%N)
rand_writer r2 io.iobatch.max-hold-ms=1500
wait_for 60 '[ -e "$IOB_T/r2.rc" ]'
el=$((($(cat "$IOB_T/r2.at" 2>/dev/null || date +%s%N) - t0) / 1000000))
is "$(cat "$IOB_T/r2.rc" 2>/dev/null)" "0" "a held container with max-hold-ms=1500 starts (${el} ms after ctr run)"
# The agent's own account of the hold, not the wall clock (ctr run alone
# takes seconds under emulation in the VM).
held=$(grep -oE "admitted 'r2' \(rand-write\) by force after [0-9]+ ms" "$AGENT_LOG" | grep -oE '[0-9]+ ms' | grep -oE '[0-9]+')
[ "${held:-0}" -ge 1500 ] && [ "$(state s3)" == RUNNING ]
is "$?" "0" "at its deadline (held ${held:-?} ms), while the seq-write still runs"
grep -q "admitted 'r2' (rand-write) by force after [0-9]* ms: its deadline came" "$AGENT_LOG"
is "$?" "0" "the agent says it was admitted by force at its deadline"
cleanup_ctr r2

# 3. Kill of a held container.
rand_writer r3
wait_for 10 '[ "$(agent_field r3 state)" == pending ]'
is "$(state r3)" "CREATED" "another random writer is held (CREATED)"
$CTR task kill -s KILL r3
is "$?" "0" "ctr task kill of the held container works"
wait_for 10 '[ -e "$IOB_T/r3.rc" ]'
is "$(cat "$IOB_T/r3.rc" 2>/dev/null)" "1" "its held Start fails"
like "$(cat "$IOB_T/r3.out")" "cancelled: the task was killed" "saying the task was killed while held"
wait_for 5 '[ -z "$(agent_field r3 state)" ]'
is "$(agent_field r3 state)" "" "the agent forgets it"
wait_for 10 '[ "$(state r3)" == STOPPED ]'
$CTR task delete r3 >/dev/null 2>&1
$CTR container delete r3 >/dev/null 2>&1
is "$(state r3)" "" "and it can be deleted"

# Delete of a held task (containerd wants it forced: a Kill, then Delete).
rand_writer r4
wait_for 10 '[ "$(agent_field r4 state)" == pending ]'
$CTR task delete -f r4 >/dev/null 2>&1
is "$?" "0" "ctr task delete -f of a held task works"
wait_for 10 '[ -e "$IOB_T/r4.rc" ]'
like "$(cat "$IOB_T/r4.rc" 2>/dev/null) $(cat "$IOB_T/r4.out")" "^1 .*cancelled: the task was killed or deleted" \
  "its held Start fails, saying so"
wait_for 5 '[ -z "$(agent_field r4 state)" ]'
is "$(agent_field r4 state)" "" "the agent forgets it too"
$CTR container delete r4 >/dev/null 2>&1
cleanup_ctr s3
rm -f "$R"/data/*

# The agent restarts while a Start is held: the shim's client reconnects,
# registers the container again and repeats its Admit; nothing is lost.
seq_writer s5 120
wait_for 10 '[ "$(state s5)" == RUNNING ]'
rand_writer r5
wait_for 10 '[ "$(agent_field r5 state)" == pending ]'
{ kill -9 "$AGENT_PID"; wait "$AGENT_PID"; } 2>/dev/null
rm -f "$AGENT_SOCK"
agent_start "policy = paper
alpha = 0.6
matrix = $IOB_T/matrix.conf
max_hold = 60s" || bail "iobatchd did not restart"
wait_for 10 '[ -n "$(agent_field r5 state)" ] || [ -e "$IOB_T/r5.rc" ]'
st=$(agent_field r5 state)
like "$st" "^(pending|running)$" "after an agent restart the held container is registered again"
[[ "$st" =~ ^(pending|running)$ ]] ||
  { cat "$IOB_T/r5.out"; grep -h "r5\|lost\|back\|listening\|runc\|hook" "$IOB_T/containerd.log" "$AGENT_LOG" | tail -40; } | sed 's/^/# /' 
# s5's shim registers it again as running at once, so r5 may stay held
# beside it (admission-options.sh checks that): end s5.
cleanup_ctr s5
wait_for 60 '[ -e "$IOB_T/r5.rc" ]'
is "$(cat "$IOB_T/r5.rc" 2>/dev/null)" "0" "and started, not lost"
[ "$(cat "$IOB_T/r5.rc" 2>/dev/null)" == 0 ] || sed 's/^/# /' "$IOB_T/r5.out"
cleanup_ctr r5

# 4. No agent: fail open.
agent_stop
t0=$(date +%s%N)
out=$(timeout 60 $CTR run --rm --runtime $RT --annotation io.iobatch.class=rand-write --rootfs "$R" \
  n1 /bin/sh -c 'echo started' 2>&1)
el=$((($(date +%s%N) - t0) / 1000000))
is "$out" "started" "without the agent a container starts at once (${el} ms)"
grep -q "not asked about 'n1': .*starting it now (fail open)" "$IOB_T/containerd.log"
is "$?" "0" "and the shim log says why"

out=$(timeout 60 $CTR run --rm --runtime $RT --annotation io.iobatch.max-hold-ms=soon --rootfs "$R" \
  bad1 /bin/true 2>&1)
like "$out" "invalid annotation 'io.iobatch.max-hold-ms': 'soon' is not a number of milliseconds" \
  "an invalid max hold fails the create, saying why"
$CTR container delete bad1 >/dev/null 2>&1

# 5. Nothing left behind.
wait_for 10 '[ "$(our_shims)" -eq 0 ]'
is "$(our_shims)" "0" "no shim process left"
ok "no sockets, bundles, runc state or mounts left" no_leftovers s1 s2 s3 s5 r1 r2 r3 r4 r5 n1 bad1
! grep -E "Sanitizer|runtime error:" "$IOB_T/containerd.log"
is "$?" "0" "no sanitizer report in the shim log"
tap_done
