#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Kubernetes path (issue #11): pods through containerd's CRI plugin,
# driven by a real CRI client (cri_client.py, gRPC runtime.v1 as the
# kubelet speaks it), with iobatchd on its default configuration.
#   - N pods (sandbox + an idle `sleep`) start through the `iobatch`
#     runtime handler; the agent lists their sandboxes with kind sandbox
#     and the pod and container names;
#   - a new pod's whole start (RunPodSandbox, CreateContainer,
#     StartContainer, the container's exit, StopPodSandbox,
#     RemovePodSandbox) through `iobatch` and through `runc`, interleaved
#     in the same run: no timeout, nothing admitted by force, and the
#     ratio of the medians stays under a generous bound;
#   - the same with ctr only: six idle containers and two containers
#     annotated as sandboxes, then `ctr run --rm` timed against runc's shim;
#   - a CRI sandbox starts even when the agent cannot be asked (fail
#     closed): the shim does not ask about them; an invalid io.iobatch.kind
#     fails Create naming the annotation;
#   - nothing is left behind.
# No registry here: the image is a busybox-static rootfs imported as a
# docker archive, and the sandbox ("pause") image is the same busybox
# image running `sleep` (the real pause image cannot be pulled here).
# Pods share the node's network (no CNI on these machines).
# CRI_PODS (4), CRI_REPS (5) and CRI_CTR_REPS (5) change the sizes.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 26

N=${CRI_PODS:-4}
REPS=${CRI_REPS:-5}
CTR_REPS=${CRI_CTR_REPS:-5}
BOUND=3 # iobatch/runc ratio of median start times
IMAGE=iobatch.test/busybox:1
# Debian's grpc modules are for Debian's python (a python3 earlier in PATH,
# pyenv's say, does not have them).
PY=/usr/bin/python3

iob_need containerd ctr runc jq tar sha256sum
$PY -c 'import grpc, grpc_tools' 2>/dev/null ||
  bail "python3-grpcio and python3-grpc-tools are not installed (scripts/install-deps.sh)"
[ -x "$IOB_B/bin/containerd-shim-iobatch-v2" ] || bail "build first: $IOB_B/bin/containerd-shim-iobatch-v2"

# iobatchd with nothing but its socket and state directory set: every
# other setting is the default a node gets.
cat >"$IOB_T/agent.conf" <<CONF
socket = $AGENT_SOCK
state_dir = $AGENT_STATE
CONF
iobatchd -c "$IOB_T/agent.conf" -d >>"$AGENT_LOG" 2>&1 &
AGENT_PID=$!
at_exit "kill $AGENT_PID 2>/dev/null; wait $AGENT_PID 2>/dev/null"
wait_for 10 '[ -S "$AGENT_SOCK" ] && iobatchctl status >/dev/null 2>&1' || bail "iobatchd did not start"

# The shims find the agent through containerd's environment.
export IOBATCH_AGENT_SOCKET=$AGENT_SOCK
IOB_SOCK=$IOB_T/containerd.sock
CRI="$PY $IOB_TOP/tests/tools/cri_client.py --socket $IOB_SOCK --gen $IOB_T/gen"
NS=iob${IOB_T##*.}
CTR=$(iob_ctr "$NS")
RT=io.containerd.iobatch.v2

CRI_CTR=$CTR
. "$(dirname "$0")/../lib/cri.sh"

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio_below() { awk -v a="$1" -v b="$2" -v m="$3" 'BEGIN { exit !(a > 0 && b > 0 && a / b < m) }'; }
sandboxes() { # NS: the agent's containers of kind sandbox in containerd namespace NS
  iobatchctl status --json | jq -r --arg ns "$1" '.containers[] | select(.namespace == $ns and .kind == "sandbox") | .id'
}

R=$IOB_T/rootfs
iob_rootfs_busybox "$R"
make_image
cri_containerd_start || bail "containerd did not start"

# 1. CRI is there and sees the image.
out=$($CRI version 2>&1)
is "$(jq -r .runtime_api_version <<<"$out" 2>/dev/null)" "v1" "containerd's CRI plugin serves runtime.v1"
ctr --address "$IOB_SOCK" -n k8s.io images import --snapshotter native "$IOB_T/image.tar" >/dev/null 2>&1
is "$($CRI image-status "$IMAGE" | jq -r .present)" "true" "the local image is imported and CRI sees it"

# 2. N idle pods through iobatch.
$CRI --timeout 60 pods-up --handler iobatch --image "$IMAGE" --count "$N" --prefix idle \
  --start-timeout 20 >"$IOB_T/up.json" 2>&1
sed 's/^/# /' "$IOB_T/up.json"
is "$(jq -s '[.[] | select(.started)] | length' "$IOB_T/up.json")" "$N" \
  "$N idle pods start through the iobatch handler (StartContainer returns)"
$CRI list >"$IOB_T/list.json"
is "$(jq -s '[.[] | select(.kind == "container" and .name == "idle" and .state == "CONTAINER_RUNNING")] | length' "$IOB_T/list.json")" \
  "$N" "their idle containers are RUNNING"
is "$(jq -s '[.[] | select(.kind == "pod" and .handler == "iobatch" and .state == "SANDBOX_READY")] | length' "$IOB_T/list.json")" \
  "$N" "their sandboxes are READY with runtime handler iobatch"
# Sandboxes register in the background: give the agent a moment.
wait_for 10 '[ "$(sandboxes k8s.io | wc -l)" -ge "$N" ]'
is "$(sandboxes k8s.io | wc -l)" "$N" "iobatchctl status lists the $N sandboxes with kind sandbox"
st=$(iobatchctl status --json)
is "$(jq -r '[.containers[] | select(.kind == "sandbox") | .pod_namespace + "/" + .pod_name] | sort | join(" ")' <<<"$st")" \
  "$(for i in $(seq 0 $((N - 1))); do printf 'iobtest/idle-%d\n' "$i"; done | sort | paste -sd' ')" \
  "each sandbox carries its pod's namespace and name"
is "$(jq '[.containers[] | select(.kind != "sandbox" and .container_name == "idle" and .pod_name != "")] | length' <<<"$st")" \
  "$N" "each idle container carries its container and pod name"
is "$(jq '[.containers[] | select(.kind == "sandbox" and .state != "running")] | length' <<<"$st")" \
  "0" "the agent knows the sandboxes are running"

# 3. A new pod's start, through iobatch and runc, interleaved.
$CRI --timeout 20 bench --image "$IMAGE" --handlers iobatch,runc --reps "$REPS" --wait 20 \
  >"$IOB_T/bench.json" 2>&1
sed 's/^/# /' "$IOB_T/bench.json"
for h in iobatch runc; do
  is "$(jq -s --arg h $h '[.[] | select(.handler == $h and .ok == true)] | length' "$IOB_T/bench.json")" \
    "$REPS" "every new pod through $h starts and its container exits ($REPS rounds)"
done
is "$(jq -s '[.[] | select(.ok == true and .exit_code != 0)] | length' "$IOB_T/bench.json")" "0" \
  "their containers exit 0"
mi=$(jq -s '[.[] | select(.handler == "iobatch" and .ok == true) | .ms][]' "$IOB_T/bench.json" | median)
mr=$(jq -s '[.[] | select(.handler == "runc" and .ok == true) | .ms][]' "$IOB_T/bench.json" | median)
diag "pod start (sandbox + container + exit + removal), median of $REPS beside $N idle pods: iobatch ${mi} ms, runc ${mr} ms, ratio $(awk -v a="$mi" -v b="$mr" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')"
ok "iobatch/runc ratio of median pod start times below $BOUND" ratio_below "$mi" "$mr" "$BOUND"

# 4. ctr only: idle containers and sandbox-annotated ones through iobatch.
# In parallel: a held one must not make the next one wait.  (A bare
# `wait` would wait for containerd and the agent too.)
pids=()
for i in $(seq 1 6); do
  (timeout 20 $CTR run -d --runtime $RT --rootfs "$R" "idle$i" /bin/sleep 3600 >/dev/null 2>&1
    echo $? >"$IOB_T/idle$i.rc") &
  pids+=($!)
done
wait "${pids[@]}"
is "$(cat "$IOB_T"/idle*.rc | grep -c '^0$')" "6" "six idle containers start through iobatch (ctr run -d returns)"
timeout 40 $CTR run -d --runtime $RT --annotation io.kubernetes.cri.container-type=sandbox \
  --annotation io.kubernetes.cri.sandbox-name=ctr-pod --rootfs "$R" sb1 /bin/sleep 3600 >/dev/null 2>&1
r1=$?
timeout 40 $CTR run -d --runtime $RT --annotation io.iobatch.kind=sandbox --rootfs "$R" sb2 \
  /bin/sleep 3600 >/dev/null 2>&1
r2=$?
is "$r1 $r2" "0 0" "two sandbox-annotated containers start (CRI's container-type, io.iobatch.kind)"
wait_for 10 '[ "$(sandboxes "$NS" | sort | paste -sd" ")" == "sb1 sb2" ]'
is "$(sandboxes "$NS" | sort | paste -sd' ')" "sb1 sb2" "the agent lists both with kind sandbox"
running=$($CTR task ls 2>/dev/null | awk '$3 == "RUNNING"' | wc -l)
is "$running" "8" "all eight are RUNNING"
ti=() tr=() fails=0
for rep in $(seq 1 "$CTR_REPS"); do
  order="iobatch runc"
  [ $((rep % 2)) -eq 0 ] && order="runc iobatch"
  for h in $order; do
    rt=$RT
    [ $h = runc ] && rt=io.containerd.runc.v2
    [ -n "${failed_rt:-}" ] && [ "$failed_rt" = $h ] && continue # one timeout says it
    t0=$(date +%s%N)
    if ! timeout 20 $CTR run --rm --runtime $rt --rootfs "$R" "new-$h-$rep" /bin/true >/dev/null 2>&1; then
      fails=$((fails + 1))
      failed_rt=$h
      $CTR task delete -f "new-$h-$rep" >/dev/null 2>&1
      $CTR container delete "new-$h-$rep" >/dev/null 2>&1
    fi
    ms=$((($(date +%s%N) - t0) / 1000000))
    if [ $h = iobatch ]; then ti+=("$ms"); else tr+=("$ms"); fi
  done
done
is "$fails" "0" "ctr run --rm of a new container: every run exits 0 within 20 s"
mi=$(printf '%s\n' "${ti[@]}" | median)
mr=$(printf '%s\n' "${tr[@]}" | median)
diag "ctr run --rm /bin/true beside 6 idle + 2 sandboxes, median of $CTR_REPS: iobatch ${mi} ms (${ti[*]}), runc ${mr} ms (${tr[*]})"
ok "iobatch/runc ratio of median ctr run --rm times below $BOUND" ratio_below "$mi" "$mr" "$BOUND"

# 5. The shim does not ask about a sandbox: with fail closed and nobody at
# the socket, a sandbox starts and a job does not.
NOWHERE=$IOB_T/nowhere.sock
printf 'IobatchAgentSocket = "%s"\nIobatchFailClosed = true\n' "$NOWHERE" >"$IOB_T/dead.toml"
out=$(timeout 40 $CTR run -d --runtime $RT --runtime-config-path "$IOB_T/dead.toml" \
  --annotation io.kubernetes.cri.container-type=sandbox --rootfs "$R" sb3 /bin/sleep 3600 2>&1)
is "$?:$out" "0:" "fail closed, no agent: a sandbox starts at once"
out=$(timeout 40 $CTR run -d --runtime $RT --runtime-config-path "$IOB_T/dead.toml" --rootfs "$R" \
  job3 /bin/true 2>&1)
like "$out" "fail closed" "fail closed, no agent: a job does not start (the contrast)"
$CTR task delete -f job3 >/dev/null 2>&1
$CTR container delete job3 >/dev/null 2>&1
out=$(timeout 40 $CTR run --rm --runtime $RT --annotation io.iobatch.kind=pod --rootfs "$R" bad1 \
  /bin/true 2>&1)
like "$out" "invalid annotation 'io.iobatch.kind': unknown kind 'pod'" \
  "an invalid io.iobatch.kind fails Create, naming the annotation"
$CTR container delete bad1 >/dev/null 2>&1

# 6. The agent held nothing until its deadline.
forced=$(grep -c "by force" "$AGENT_LOG")
is "$forced" "0" "the agent admitted nothing by force"
[ "$forced" -eq 0 ] || grep "by force" "$AGENT_LOG" | head -5 | sed 's/^/# /'
is "$(iobatchctl status --json | jq .forced_admissions)" "0" "iobatchctl status: 0 forced admissions"

# 7. Nothing left: every pod goes with Stop/Remove, every shim with its task.
$CRI down >/dev/null 2>&1
is "$($CRI list | wc -l)" "0" "no pod sandbox or container left after StopPodSandbox/RemovePodSandbox"
for t in $($CTR task ls -q 2>/dev/null); do $CTR task kill -s KILL "$t" >/dev/null 2>&1; done
wait_for 10 '[ -z "$($CTR task ls 2>/dev/null | awk "NR > 1 && \$3 == \"RUNNING\"")" ]'
for t in $($CTR task ls -q 2>/dev/null); do $CTR task delete "$t" >/dev/null 2>&1; done
for t in $($CTR container ls -q 2>/dev/null); do $CTR container delete "$t" >/dev/null 2>&1; done
wait_for 10 '[ "$(pgrep -f -- "-address $IOB_SOCK( |\$)" | wc -l)" -eq 0 ]'
is "$(pgrep -f -- "-address $IOB_SOCK( |\$)" | wc -l)" "0" "no shim of this containerd left"

tap_done
