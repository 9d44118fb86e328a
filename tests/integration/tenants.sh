#!/usr/bin/env bash
# No tenant steers the node (issue #23): what a tenant declares from a
# namespace trust_declared does not trust is a hint only.  With
# `trust_declared = kube-system, NS2` and one batch slot
# (max_concurrency = 1) taken by a trusted sequential writer in NS2:
#   - io.iobatch.max-hold-ms=1 from this (untrusted) namespace does not
#     lower the hold: the container waits for the slot with the agent's
#     max_hold as its deadline, and the agent says once that it ignored
#     the declaration (today's code admitted it by force 1 ms later);
#   - the same from NS2 (trusted) is taken, but not below 1 s: it is
#     admitted at its deadline, after at least AGENT_MIN_HOLD_MS;
#   - io.iobatch.class=idle from this namespace, with no profile, is
#     planned as unknown: admitted as a probe, not as a container that
#     does no I/O (which would also keep it out of protection's reach).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/agent-lib.sh"
tap_plan 8
iob_need containerd ctr runc jq
NS2=iobt${IOB_T##*.} # trusted
iob_stack_up "max_hold = 60s
max_concurrency = 1
trust_declared = kube-system, $NS2"
CTR2=$(iob_ctr "$NS2")
at_exit "for t in blocker tshort; do $CTR2 task delete -f \$t; $CTR2 container delete \$t; done"

# The one slot: a trusted, declared sequential writer (a trusted class is
# never measured over, so it keeps the slot while it sleeps).
$CTR2 run -d --runtime $RT --annotation io.iobatch.class=seq-write --rootfs "$R" blocker \
  /bin/sleep 600 >"$IOB_T/blocker.out" 2>&1 || bail "ctr run failed: $(cat "$IOB_T/blocker.out")"
ok "a trusted sequential writer takes the only batch slot" \
  wait_for 20 '[ "$(agent_field blocker state)/$(agent_field blocker class_source)" == running/declared ]'

# ---- item 1: io.iobatch.max-hold-ms ----
# held_run CTR ID ANNOTATION...: ctr run -d in the background (it blocks in
# Start while the agent holds the container); its exit code in ID.rc.
held_run() {
  local c=$1 id=$2 a=() x
  shift 2
  for x in "$@"; do a+=(--annotation "$x"); done
  ($c run -d --runtime $RT "${a[@]}" --rootfs "$R" "$id" /bin/sleep 600 >"$IOB_T/$id.out" 2>&1
    echo $? >"$IOB_T/$id.rc") &
}
held_run "$CTR" ushort io.iobatch.max-hold-ms=1 io.iobatch.class=seq-write
ok "max-hold-ms=1 from an untrusted namespace: held behind the writer" \
  wait_for 20 '[ "$(agent_field ushort state)" == pending ] && [ "$(state ushort)" == CREATED ]'
by=$(agent_field ushort admit_by_ms)
[ "${by:-0}" -gt 30000 ] 2>/dev/null
is "$?" 0 "its deadline is the agent's max_hold (60 s), not 1 ms (admit_by_ms $by)"
n=$(grep -c "'ushort' declared max-hold-ms 1 (namespace '$NS', not trusted by trust_declared): ignored" "$AGENT_LOG")
is "$n" 1 "the agent says once that it ignored the declaration (shim Register and Admit both sent it)"

held_run "$CTR2" tshort io.iobatch.max-hold-ms=1 io.iobatch.class=seq-write
ok "max-hold-ms=1 from a trusted namespace: admitted at its deadline" \
  wait_for 20 '[ "$(CTR=$CTR2 state tshort)" == RUNNING ] && [ "$(cat "$IOB_T/tshort.rc" 2>/dev/null)" == 0 ]'
j=$(ctl status --json | jq -c '.containers[] | select(.id == "tshort")')
held=$(jq -r .held_ms <<<"$j")
[ "$(jq -r .reason <<<"$j")" == "admitted: max hold reached" ] && [ "${held:-0}" -ge 1000 ]
is "$?" 0 "forced in after its hold, floored at 1 s ($(jq -r '.reason + ", held " + (.held_ms | tostring) + " ms"' <<<"$j"))"

# ---- item 2: an untrusted io.iobatch.class=idle ----
$CTR run -d --runtime $RT --annotation io.iobatch.class=idle --annotation io.iobatch.workload=lazy-$NS \
  --rootfs "$R" lazy /bin/sleep 600 >"$IOB_T/lazy.out" 2>&1 || bail "ctr run failed: $(cat "$IOB_T/lazy.out")"
j=$(ctl status --json | jq -c '.containers[] | select(.id == "lazy")')
is "$(jq -r '[.declared_class, .declared_trusted] | join("/")' <<<"$j")" "idle/false" \
  "an untrusted class=idle with no profile is a hint"
is "$(jq -r .reason <<<"$j")" "admitted: unknown class, admitted as a probe" \
  "it is planned as unknown (a probe), not as idle"
cleanup_ctr lazy
cleanup_ctr ushort
tap_done
