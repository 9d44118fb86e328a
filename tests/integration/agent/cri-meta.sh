#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Pods in Kubernetes' terms from the node's CRI (issue #25 item 2): a
# private containerd with its CRI plugin (as cri-pods.sh), pods started
# through it, and iobatchd with cri_endpoint on that socket.
#   - tests/cri-list (the C client alone) reads Version, ListPodSandbox and
#     ListContainers from containerd 1.6's CRI;
#   - a pod through the iobatch handler (the shim registers it with names
#     from the annotations): the CRI adds its uid and the labels its pod
#     rules name (pod_meta_source "cri");
#   - a pod through the runc handler, whose container the agent knows by
#     id alone (registered through iobatch-hook, as a container found
#     under kubepods would be): its namespace, pod and container names
#     come from the CRI;
#   - a container that plain runc runs with the hook (no CRI) keeps its id
#     and no names, polls after it registered;
#   - an endpoint that accepts and never answers: one log line however
#     many polls fail, and the agent answers while a call hangs;
#   - cri_endpoint = off: no poll, nothing said.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/agent.sh"
tap_plan 24

IMAGE=iobatch.test/busybox:1
PY=/usr/bin/python3
HOOK=$IOB_B/bin/iobatch-hook
iob_need containerd ctr runc jq tar sha256sum curl
$PY -c 'import grpc, grpc_tools' 2>/dev/null ||
  bail "python3-grpcio and python3-grpc-tools are not installed (scripts/install-deps.sh)"
for b in bin/containerd-shim-iobatch-v2 bin/iobatch-hook tests/cri-list; do
  [ -x "$IOB_B/$b" ] || bail "build first: $IOB_B/$b"
done

IOB_SOCK=$IOB_T/containerd.sock
CRI="$PY $IOB_TOP/tests/tools/cri_client.py --socket $IOB_SOCK --gen $IOB_T/gen"
RT=io.containerd.iobatch.v2
K8S="ctr --address $IOB_SOCK -n k8s.io"

CRI_CTR=$K8S
. "$(dirname "$0")/../lib/cri.sh"

# The agent's config with the CRI keys given; SIGHUP rereads it.
agent_conf() {
  cat >"$IOB_T/agent.conf" <<CONF
socket = $AGENT_SOCK
state_dir = $AGENT_STATE
sample_period = 250ms
$*
CONF
}
polls() { iobatchctl status --json 2>/dev/null | jq .cri_polls 2>/dev/null || echo 0; }
# wait until N more polls than now have finished
wait_polls() {
  local want=$(($(polls) + $1))
  wait_for 60 '[ "$(polls)" -ge '"$want"' ]'
}
field() { agent_field "$1" "$2"; }

R=$IOB_T/rootfs
iob_rootfs_busybox "$R"
make_image

# The agent first (the shims find it through containerd's environment),
# polling a CRI that is not there yet.
# Pod rules by namespace and label (issue #25): labels come from the CRI;
# only namespace shop is trusted, so the label rule for batch grants nothing.
agent_conf "cri_endpoint = unix://$IOB_SOCK
cri_poll = 500ms
cri_timeout = 5s
metrics = unix:$IOB_T/metrics.sock
trust_declared = shop
pod_rule = shop-db: namespace=shop label:tier=db -> class=latency
pod_rule = data-latency: label:team=data -> class=latency"
iobatchd -c "$IOB_T/agent.conf" -d >>"$AGENT_LOG" 2>&1 &
AGENT_PID=$!
at_exit "kill $AGENT_PID 2>/dev/null; wait $AGENT_PID 2>/dev/null"
wait_for 10 '[ -S "$AGENT_SOCK" ] && iobatchctl status >/dev/null 2>&1' || bail "iobatchd did not start"
export IOBATCH_AGENT_SOCKET=$AGENT_SOCK
wait_polls 2
cri_containerd_start || bail "containerd did not start"
$K8S images import --snapshotter native "$IOB_T/image.tar" >/dev/null 2>&1

# 1. The client alone.
out=$("$IOB_B/tests/cri-list" "unix://$IOB_SOCK" 2>&1)
is "$(head -1 <<<"$out" | jq -r '.api + " " + .runtime_name + " " + .runtime_api_version' 2>/dev/null)" \
  "runtime.v1 containerd v1" "cri-list: containerd's CRI answers Version as runtime.v1"

# 2. The agent finds it.
ok "the agent finds the CRI once it answers" \
  wait_for 30 'grep -q "pod names from the CRI at unix://$IOB_SOCK" "$AGENT_LOG"'
like "$(iobatchctl status --json | jq -r .cri)" "^unix://$IOB_SOCK \(containerd .*, runtime.v1\)$" \
  "status names the CRI endpoint in use"
is "$(grep -c "no pod names from the CRI: CRI 'unix://$IOB_SOCK': cannot connect" "$AGENT_LOG")" "1" \
  "before it was up: one line said why"

# The statically linked agent (make static: nghttp2 from libnghttp2.a)
# talks to the same CRI.
SB=${STATIC_B:-$IOB_TOP/build-static}
if [ -x "$SB/bin/iobatchd" ]; then
  printf 'socket = %s\nstate_dir = %s\ncri_endpoint = unix://%s\ncri_poll = 500ms\n' \
    "$IOB_T/static.sock" "$IOB_T/static-state" "$IOB_SOCK" >"$IOB_T/static.conf"
  "$SB/bin/iobatchd" -c "$IOB_T/static.conf" -d >"$IOB_T/static.log" 2>&1 &
  SPID=$!
  at_exit "kill $SPID 2>/dev/null; wait $SPID 2>/dev/null"
  ok "the static iobatchd ($SB) reads the CRI too" \
    wait_for 30 'grep -q "pod names from the CRI at unix://$IOB_SOCK (containerd" "$IOB_T/static.log"'
  kill "$SPID"
  wait "$SPID" 2>/dev/null
else
  skip "the static iobatchd reads the CRI too" "no $SB/bin/iobatchd (make static; make check builds it)"
fi

# 3. A pod through the iobatch handler, with labels.
$CRI --timeout 60 create --handler iobatch --image "$IMAGE" --name web-0 --namespace shop \
  --container nginx --label tier=db --label app=web >"$IOB_T/web.json" 2>&1
WEB=$(jq -r .container_id "$IOB_T/web.json" 2>/dev/null)
WEBPOD=$(jq -r .pod_id "$IOB_T/web.json" 2>/dev/null)
$CRI --timeout 60 start "$WEB" >/dev/null 2>&1
ok "a pod through the iobatch handler registers (names from annotations)" \
  wait_for 30 '[ "$(field "$WEB" container_name)" = nginx ]'
ok "the CRI confirms it: pod_meta_source cri" \
  wait_for 30 '[ "$(field "$WEB" pod_meta_source)" = cri ]'
UID_CRI=$("$IOB_B/tests/cri-list" "unix://$IOB_SOCK" | jq -r --arg id "$WEB" 'select(.id == $id) | .pod_uid')
is "$(field "$WEB" pod_uid)" "$UID_CRI" "its pod's uid is the CRI's"
is "$(field "$WEB" 'pod_labels | join(",")')" "tier=db" \
  "of its pod's labels the one a pod rule names (not app=web, nor the kubelet's io.*)"
is "$(field "$WEBPOD" 'pod_namespace + "/" + .pod_name + " " + .pod_meta_source')" "shop/web-0 cri" \
  "its sandbox carries the pod's names from the CRI"
ok "a rule by namespace and label (from the CRI) decides its class: protected" \
  wait_for 30 '[ "$(field "$WEB" rule)/$(field "$WEB" protected)" = shop-db/true ]'

# 4. A pod through the runc handler: the agent knows its container by id.
$CRI --timeout 60 create --handler runc --image "$IMAGE" --name etl-0 --namespace batch \
  --container etl --label team=data >"$IOB_T/etl.json" 2>&1
ETL=$(jq -r .container_id "$IOB_T/etl.json" 2>/dev/null)
$CRI --timeout 60 start "$ETL" >/dev/null 2>&1
ETLPID=$($K8S task ls 2>/dev/null | awk -v id="$ETL" '$1 == id { print $2 }')
BD=$IOB_T/io.containerd.runtime.v2.task/k8s.io/$ETL
mkdir -p "$BD"
echo '{"ociVersion":"1.0.2","process":{"args":["sleep"]}}' >"$BD/config.json"
printf '{"ociVersion":"1.0.2","id":"%s","status":"creating","pid":%s,"bundle":"%s"}' \
  "$ETL" "${ETLPID:-0}" "$BD" | "$HOOK" --socket "$AGENT_SOCK" --max-wait-ms 10000 >/dev/null 2>&1
ok "a runc-handler container registered by id alone gets its names from the CRI" \
  wait_for 30 '[ "$(field "$ETL" pod_meta_source)" = cri ]'
is "$(field "$ETL" 'pod_namespace + "/" + .pod_name + "/" + .container_name')" "batch/etl-0/etl" \
  "namespace, pod and container name"
is "$(field "$ETL" 'pod_labels | join(",")')" "team=data" \
  "and the label of its pod a rule names"
scrape() { curl -sS --max-time 10 --unix-socket "$IOB_T/metrics.sock" http://x/metrics; }
like "$(scrape | grep -a "id=\"$ETL\"" | head -1)" 'namespace="batch",pod="etl-0",container="etl"' \
  "the metrics label its series with the names from the CRI"
is "$(field "$ETL" protected)" "false" \
  "a label rule in an untrusted namespace does not protect (rule '$(field "$ETL" rule)')"

# 5. Plain runc with the hook, no CRI: its id and no names.
RUNC="runc --root $IOB_T/runc"
CG=iobcrimeta${IOB_T##*.}
at_exit "iob_cgroup_rmdir_empty $CG" # in every hierarchy of a v1 host
b=$IOB_T/b-plain1
mkdir -p "$b"
(cd "$b" && runc spec)
jq --arg r "$R" --arg h "$HOOK" --arg s "$AGENT_SOCK" --arg cg "/$CG/plain1" \
  '.root = {path: $r, readonly: false} | .process.terminal = false
   | .process.args = ["/bin/sleep", "600"] | .linux.cgroupsPath = $cg
   | .hooks = {prestart: [{path: $h, args: ["iobatch-hook", "--socket", $s, "--max-wait-ms", "10000"]}]}' \
  "$b/config.json" >"$b/config.json.new" && mv "$b/config.json.new" "$b/config.json"
at_exit "$RUNC delete -f plain1"
timeout -k 5 60 $RUNC run -d --bundle "$b" plain1 </dev/null >"$IOB_T/plain1.out" 2>&1
ok "plain runc with the hook: the agent lists it" wait_for 30 '[ -n "$(field plain1 state)" ]'
wait_polls 2
is "$(field plain1 'pod_namespace + .pod_name + .container_name + .pod_uid + .pod_meta_source')" "" \
  "two polls later it has no names (the CRI does not know it)"

# 6. An endpoint that accepts and never answers.
HANG=$IOB_T/hang.sock
$PY -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(64)
held = []
while True:
    c, _ = s.accept(); held.append(c)
    open(sys.argv[2], "a").write("accepted\n")
' "$HANG" "$IOB_T/hang.log" &
HANG_PID=$!
at_exit "kill $HANG_PID 2>/dev/null"
wait_for 10 '[ -S "$HANG" ]'
agent_conf "cri_endpoint = unix://$HANG
cri_poll = 500ms
cri_timeout = 300ms"
kill -HUP "$AGENT_PID"
wait_polls 4
is "$(grep -c "no pod names from the CRI: CRI 'unix://$HANG' runtime.v1.RuntimeService/Version: no answer within 300 ms" "$AGENT_LOG")" \
  "1" "a CRI that does not answer: one log line naming the endpoint and method, however many polls"
ok "the agent lives on" kill -0 "$AGENT_PID"
# A call that hangs for long: the agent answers meanwhile.
agent_conf "cri_endpoint = unix://$HANG
cri_poll = 500ms
cri_timeout = 60s"
kill -HUP "$AGENT_PID"
n0=$(wc -l <"$IOB_T/hang.log")
wait_for 30 '[ "$(wc -l <"$IOB_T/hang.log")" -gt '"$n0"' ]'
p0=$(polls)
st=$(timeout 20 iobatchctl status --json)
rc=$?
p1=$(polls)
is "$rc:$p0:$(jq -r .cri_polls <<<"$st")" "0:$p1:$p1" \
  "while a CRI call hangs (no poll ends), iobatchctl status answers"
# 7. Off: nothing polled, nothing said; the names stay.
agent_conf "cri_endpoint = off"
kill -HUP "$AGENT_PID"
wait_for 10 '[ "$(iobatchctl status --json | jq -r .cri)" = off ]'
is "$(iobatchctl status --json | jq -r .cri)" "off" "cri_endpoint = off: status says off"
is "$(field "$ETL" pod_name)" "etl-0" "names learnt stay"
p2=$(polls)
agent_stop
is "$AGENT_RC:$p2" "0:$p1" "the agent stops cleanly with a CRI call in flight (no poll ended since it hung)"
tap_done
