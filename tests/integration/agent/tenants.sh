#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
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
#     does no I/O (which would also keep it out of protection's reach);
#   - iobatchctl status prints a workload key and a pod name that hold
#     terminal escape sequences escaped (the table and the detail), and
#     --json keeps them exact in valid JSON;
#   - with profiles_per_namespace = 2, this namespace's changing workload
#     keys evict only its own oldest profiles: NS2's profile stays;
#   - a command line cut at 1024 bytes is cut before a character: its
#     container is registered (today's shim cut inside one, the agent
#     refused the key and the container started unplanned), and refusals
#     are counted in iobatch_refused_total;
#   - io.iobatch.class=latency from this namespace, with I/O the detector
#     finds latency-sensitive (QD1 4 KiB random reads), does not make the
#     container protected (protect = declared): today's agent protected
#     it, capping every batch writer on the node.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 20
iob_need containerd ctr runc jq curl fio
NS2=iobt${IOB_T##*.} # trusted
iob_stack_up "max_hold = 60s
max_concurrency = 1
profiles_per_namespace = 2
metrics = unix:$IOB_T/m.sock
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
    echo $? >"$IOB_T/$id.rc.tmp" && mv "$IOB_T/$id.rc.tmp" "$IOB_T/$id.rc") &
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

# ---- item 5: tenant strings on the terminal ----
EVIL=$'evil\e]0;pwned\a\e[2J\xc2\x9b'
# (pod names with C0 controls are dropped by the shim; C1 and bidi pass)
EVILPOD=$'pod\xc2\x9b2J\xe2\x80\xaeX'
$CTR run -d --runtime $RT --annotation "io.iobatch.workload=$EVIL" \
  --annotation "io.kubernetes.cri.sandbox-name=$EVILPOD" --annotation io.iobatch.class=idle \
  --rootfs "$R" evil /bin/sleep 600 >"$IOB_T/evil.out" 2>&1 || bail "ctr run failed: $(cat "$IOB_T/evil.out")"
ctl status -o wide >"$IOB_T/table" 2>&1
ctl status evil >"$IOB_T/detail" 2>&1
sed 's/^/# /' "$IOB_T/detail" | grep -a -E '^# (Pod|Workload)' | cat -v
# no ESC, BEL, C1 CSI or bidi override in what a terminal would get
raw() { LC_ALL=C grep -c -a -P '\x1b|\x07|\xc2\x9b|\xe2\x80\xae' "$1"; }
is "$(raw "$IOB_T/table"):$(raw "$IOB_T/detail")" "0:0" "no raw escape byte in the table or the detail"
like "$(grep -a '^Workload:' "$IOB_T/detail")" 'evil\\x1b\]0;pwned\\x07\\x1b\[2J\\u009b' \
  "the detail shows the workload key escaped"
like "$(cat "$IOB_T/table")" 'pod\\u009b2J\\u202eX' "the table shows the pod name escaped"
ctl status --json >"$IOB_T/json"
is "$(jq -r '.containers[] | select(.id == "evil") | .workload_key' "$IOB_T/json" | tr -d '\n' | od -An -tx1 | tr -d ' \n')" \
  "$(printf '%s' "$EVIL" | od -An -tx1 | tr -d ' \n')" "--json is valid JSON and keeps the key exact"
cleanup_ctr evil
cleanup_ctr ushort

# ---- item 6: profiles capped per namespace ----
# run_key CTR KEY: a short container with workload key KEY (declared idle:
# started beside the writer), which teaches a profile when it exits; more
# than a second apart, so that their ages (seconds) differ.
run_key() {
  $1 run --rm --runtime $RT --annotation io.iobatch.class=idle --annotation "io.iobatch.workload=$2" \
    --rootfs "$R" "k-$2" /bin/sleep 1.2 >"$IOB_T/k-$2.out" 2>&1 || bail "ctr run failed: $(cat "$IOB_T/k-$2.out")"
}
profile() { jq -e --arg ns "$1" --arg k "$2" '.namespaces[$ns][$k]' "$AGENT_STATE/profiles.json" >/dev/null 2>&1; }
run_key "$CTR2" keep
ok "a trusted namespace's profile is learnt" wait_for 20 'profile "$NS2" keep'
for k in v1 v2 v3 v4; do run_key "$CTR" $k; done
ok "the newest keys of the noisy namespace are learnt" wait_for 20 'profile "$NS" v4 && profile "$NS" v3'
keys=$(jq -r --arg ns "$NS" '.namespaces[$ns] | keys | join(" ")' "$AGENT_STATE/profiles.json")
is "$keys/$(profile "$NS2" keep && echo kept)" "v3 v4/kept" \
  "it keeps 2 (its own newest), and the other namespace's profile stays"

# ---- item 10: keys cut on a character boundary; refusals counted ----
metric() { curl -sS --max-time 10 --unix-socket "$IOB_T/m.sock" http://x/metrics | awk -v k="$1" '$1 == k { print $2 }'; }
# "/bin/sh -c : " is 13 bytes, then 2-byte characters: byte 1024 would
# be the second byte of one
long=": $(for _ in $(seq 600); do printf '\xc3\xa9'; done)"
$CTR run -d --runtime $RT --annotation io.iobatch.class=idle --rootfs "$R" cut /bin/sh -c "$long; sleep 600" \
  >"$IOB_T/cut.out" 2>&1 || bail "ctr run failed: $(cat "$IOB_T/cut.out")"
key=$(agent_field cut workload_key)
is "$(printf '%s' "$key" | wc -c)/$(printf '%s' "$key" | iconv -f UTF-8 -t UTF-8 >/dev/null 2>&1 && echo utf8)" \
  "1023/utf8" "a command line cut before a character: registered with a 1023-byte UTF-8 key"
is "$(metric 'iobatch_refused_total{call="register"}')/$(metric 'iobatch_refused_total{call="admit"}')" "0/0" \
  "nothing was refused"
ctl register --ns "$NS" --class bogus refused >/dev/null 2>&1
is "$(metric 'iobatch_refused_total{call="register"}')" 1 "a refused Register is counted"
cleanup_ctr cut

# ---- item 3: an untrusted latency declaration never protects ----
fio --name=prep --filename="$R/data/lat" --rw=write --bs=1M --size=64M --direct=1 >/dev/null 2>&1 ||
  bail "cannot prepare the reader's file"
$CTR run -d --runtime $RT --annotation io.iobatch.class=latency --rootfs "$R" lat \
  /usr/bin/fio --name=v --filename=/data/lat --rw=randread --bs=4k --size=64M --time_based \
  --runtime=60 --direct=1 --ioengine=psync >"$IOB_T/lat.out" 2>&1 || bail "ctr run failed: $(cat "$IOB_T/lat.out")"
ok "a QD1 random reader declared latency (untrusted) is measured" \
  wait_for 30 '[ "$(agent_field lat class_source)" == detected ] && grep -q "'"'lat' declared latency"'" "$AGENT_LOG"'
grep -a "'lat'" "$AGENT_LOG" | sed 's/^/#   /'
is "$(agent_field lat protected)/$(grep -c "'lat' declared latency (namespace '$NS', not trusted by trust_declared), measured [a-z-]* (confidence [0-9.]*): not protected (an untrusted latency never protects)" "$AGENT_LOG")" \
  "false/1" "it is not protected, and the agent says so once"
cleanup_ctr lat
tap_done
