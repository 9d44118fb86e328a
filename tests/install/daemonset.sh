#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The DaemonSet run the way a kubelet runs it (issue 21 item 5), on a
# booted Debian (systemd as PID 1; lib.sh) with that Debian's containerd:
# INST_SUITE bookworm (Debian 12, containerd 1.6), trixie (13, 1.7) or sid
# (unstable, 2.1).  Each check's name says which containerd it ran against.
# tests/install/kubelet.py reads packaging/kubernetes/*.yaml and drives the
# guest's containerd through the CRI as the kubelet would: the sandbox with
# the pod's namespaces, the init container to completion, then the
# containers, with the template's image, hostPath and configMap volumes,
# env (fieldRef spec.nodeName), command and security context.  The image
# iobatch:0.1.0 is built here by packaging/kubernetes/mkimage.sh from `make
# static`'s binaries and Debian 12's packages (busybox-static, bash-static,
# kubernetes-client, socat), from Debian 12's root whatever the node runs
# (the image does not depend on the node, and Debian 13 and unstable have
# no kubernetes-client), and imported with ctr.
#   - as shipped (RESTART_CONTAINERD=false): the shim and binaries are on
#     the node, the version was read from the node's containerd, and
#     containerd's real config.toml serves the handler by that version's
#     mechanism: on 1.6 and 1.7 a block in config.toml (an imported file
#     would replace its whole CRI table); on 2.x the drop-in
#     /etc/containerd/conf.d/iobatch.toml in config.toml's own config
#     version (Debian's is 2), which config.toml imports; config.toml's own
#     CRI settings still hold (a version 3 drop-in under it hid them from
#     containerd 2.1: install.sh, dropin); containerd is not
#     restarted, so the handler is not served yet, and the node is not
#     labelled; the agent answers the liveness probe (ExecSync); the
#     metrics sidecar serves on the pod's IP;
#   - least privilege as the manifest says it (issue 23 item 12): iobatchd
#     runs unprivileged with exactly its five capabilities; the proxy
#     (socat) as uid 65532 of the metrics group, without capabilities,
#     seeing only the metrics directory, and that uid cannot open the
#     agent's API socket on the node; in the pod's network namespace the
#     one TCP listener is the proxy, not root; the service-account token
#     is in the installer only; the CRI socket is in the agent, read-only;
#   - with RESTART_CONTAINERD=true (and a test ConfigMap: the paper policy
#     and tests/fixtures/batch/hold-matrix.conf, a deterministic hold):
#     containerd restarts, then the installer tries the label; a pod with
#     runtimeClassName iobatch runs and the agent names its namespace, pod
#     and container; of two conflicting batch pods the second is held in
#     StartContainer and starts when the first ends;
#   - iobatch-cleanup.yaml: the label first, then everything: /etc/containerd,
#     /usr and /var/lib/iobatch are as before the install (paths, modes,
#     owners, checksums); run again, it changes nothing.
# No API server can run here: the node label is the one call not made
# against a server (kubectl finds none; the installer logs it and goes on).
. "$(dirname "$0")/lib.sh"
tap_plan 39

# wait_for SECONDS 'CONDITION': poll until it holds (a watchdog, not a
# measurement).
wait_for() {
  local end=$((SECONDS + $1))
  while :; do
    eval "$2" && return 0
    [ "$SECONDS" -lt "$end" ] || return 1
    sleep 0.2
  done
}

PY=/usr/bin/python3
SB=${STATIC_B:-$IOB_TOP/build-static}
K=$IOB_TOP/packaging/kubernetes
iob_need jq tar sha256sum readelf
$PY -c 'import grpc, grpc_tools, yaml' 2>/dev/null ||
  bail "python3-grpcio, python3-grpc-tools and python3-yaml are needed (scripts/install-deps.sh)"
[ -x "$SB/bin/containerd-shim-iobatch-v2" ] || bail "no $SB/bin: run make static"

inst_root || bail "cannot build the Debian root"
inst_root_of bookworm || bail "cannot build Debian 12's root (the image's userland)"
IMAGE_SRC_TAR=$REPLY
inst_boot daemonset || bail "the Debian root did not boot"
G=/proc/$INST_PID/root # the node's / from here
CV=$(inst_containerd_version)
[ -n "$CV" ] || bail "the guest's containerd --version says no version"
P="daemonset[containerd $CV]"
diag "$INST_SUITE: containerd $CV; the image's userland from $(basename "$IMAGE_SRC_TAR")"
KUBELET="$PY $IOB_TOP/tests/install/kubelet.py --socket $G/run/containerd/containerd.sock --gen $IOB_T/gen --root $G --node node-1"
SOCK=/run/iobatch/iobatchd.sock
ctl() { $KUBELET exec --pod iobatch --container iobatchd -- /opt/iobatch/bin/iobatchctl --socket $SOCK "$@"; }
init_log() { jq -r 'select(.event == "init") | .log' "$1"; }
containerd_pid() { inst_exec systemctl show -p MainPID --value containerd; }

# ---- the node as its admin set it up (before the install): a CNI network
# for the pods, a sandbox image that exists here (the pause image cannot be
# pulled), oom_score_adj as this sandbox allows it, no fixed streaming
# port.  The network: a bridge without an address, so that nothing asks
# for IP forwarding (/proc/sys is read-only in the guest, and the guest
# shares the host's network namespace, whose settings are not the test's
# to change); pods reach each other and themselves, not the node.  The
# bridge goes at exit.
mkdir -p "$G/etc/cni/net.d"
cat >"$G/etc/cni/net.d/10-iobtest.conflist" <<'JSON'
{"cniVersion": "0.4.0", "name": "iobtest", "plugins": [
  {"type": "bridge", "bridge": "iobtest0", "isGateway": false, "ipMasq": false,
   "ipam": {"type": "host-local", "subnet": "10.99.77.0/24"}}]}
JSON
at_exit "inst_exec busybox ip link del iobtest0"
sed -i 's|^  \[plugins."io.containerd.grpc.v1.cri"\]$|&\n    sandbox_image = "iobatch.test/pause:1"\n    restrict_oom_score_adj = true\n    stream_server_port = "0"|' \
  "$G/etc/containerd/config.toml"
inst_restart containerd || bail "containerd did not restart in the guest"

# docker_archive ROOTFS TAG CMD-JSON OUT
docker_archive() {
  local d=$IOB_T/archive layer cfg
  rm -rf "$d" && mkdir -p "$d"
  tar --numeric-owner -C "$1" -cf "$d/layer.tar" .
  layer=$(sha256sum "$d/layer.tar" | cut -d' ' -f1)
  jq -n --arg d "sha256:$layer" --argjson cmd "$3" '{architecture: "amd64", os: "linux",
    config: {Cmd: $cmd, Env: ["PATH=/usr/bin:/bin"]}, rootfs: {type: "layers", diff_ids: [$d]}}' >"$d/config.json"
  cfg=$(sha256sum "$d/config.json" | cut -d' ' -f1)
  mv "$d/config.json" "$d/$cfg.json"
  jq -n --arg c "$cfg.json" --arg t "$2" '[{Config: $c, RepoTags: [$t], Layers: ["layer.tar"]}]' >"$d/manifest.json"
  tar -C "$d" -cf "$4" manifest.json "$cfg.json" layer.tar
}
iob_rootfs_busybox "$IOB_T/pause"
docker_archive "$IOB_T/pause" iobatch.test/pause:1 '["/bin/sleep", "infinity"]' "$G/var/tmp/pause.tar"
# The image's userland: Debian 12's root, a copy of its own (mkimage.sh
# runs ldd in it), gone once the image is built.
mkdir -p "$IOB_T/image-src"
tar -xf "$IMAGE_SRC_TAR" -C "$IOB_T/image-src" || bail "cannot unpack $IMAGE_SRC_TAR"
"$K/mkimage.sh" "$SB/bin" "$IOB_T/image-src" "$IOB_T/image" >"$IOB_T/mkimage.log" 2>&1 || {
  sed 's/^/# /' "$IOB_T/mkimage.log"
  bail "mkimage.sh failed"
}
rm -rf "$IOB_T/image-src"
docker_archive "$IOB_T/image" iobatch:0.1.0 '["/bin/sh"]' "$G/var/tmp/iobatch.tar"
for t in pause iobatch; do
  inst_exec ctr -n k8s.io images import "/var/tmp/$t.tar" >>"$IOB_T/import.log" 2>&1 || bail "ctr images import $t failed"
  rm -f "$G/var/tmp/$t.tar"
done
ok "$P: iobatch:0.1.0 (make static + Debian 12's busybox, bash, kubectl, socat) imported into the node's containerd" \
  inst_exec ctr -n k8s.io images check name==iobatch:0.1.0

# What uninstall must give back: paths, modes, owners, link targets and
# checksums of /etc/containerd, /usr and /var/lib/iobatch.
snapshot() {
  inst_exec sh -c 'for d in /etc/containerd /usr /var/lib/iobatch; do
    [ -e "$d" ] || { echo "$d absent"; continue; }
    find "$d" -xdev -printf "%p %M %U:%G %l\n" | LC_ALL=C sort
    find "$d" -xdev -type f -print0 | LC_ALL=C sort -z | xargs -0r md5sum
  done'
}
snapshot >"$IOB_T/before"

# ---- 1. the manifest as shipped
pid0=$(containerd_pid)
$KUBELET up "$K/iobatch-deploy.yaml" --pod DaemonSet/iobatch >"$IOB_T/up1.json" 2>"$IOB_T/up1.err"
is "$?:$(jq -r 'select(.event == "init") | "\(.container)=\(.exit_code)"' "$IOB_T/up1.json"):$(jq -r 'select(.event == "started") | .container' "$IOB_T/up1.json" | paste -sd,)" \
  "0:install=0:iobatchd,metrics-proxy" \
  "$P: as shipped: the init container install.sh ends 0, then iobatchd and metrics-proxy start"
init_log "$IOB_T/up1.json" >"$IOB_T/install1.log"
[ "$_tap_failed" -eq 0 ] || { sed 's/^/# /' "$IOB_T/up1.err" "$IOB_T/install1.log"; bail "the DaemonSet's pod did not come up"; }
is "$(readlink "$G/usr/local/bin/containerd-shim-iobatch-v2")" "/opt/iobatch/bin/containerd-shim-iobatch-v2" \
  "$P: the shim is linked into the node's /usr/local/bin"
readelf -lW "$G/opt/iobatch/bin/containerd-shim-iobatch-v2" | grep -q INTERP
ok "$P: the binaries on the node are the static ones (no program interpreter)" test $? -ne 0
like "$(cat "$IOB_T/install1.log")" "the node's containerd: /usr/bin/containerd says 'containerd github\.com/containerd/containerd(/v2)? v?${CV//./\\.}[~+ ]" \
  "$P: the containerd version was read on the node (its running binary), not asked of an API server"
inst_exec containerd config dump >"$IOB_T/dump1" 2>&1
like "$(grep -A12 'containerd.runtimes.iobatch\]' "$IOB_T/dump1" | grep runtime_type)" "runtime_type = .io\.containerd\.iobatch\.v2." \
  "$P: the node's containerd on its real /etc/containerd/config.toml has the handler (containerd config dump)"
is "$(awk -F"[\"']" '/^[[:space:]]*(sandbox_image|sandbox)[[:space:]]*=/ { print $2; exit }' "$IOB_T/dump1") $(grep -Eo 'restrict_oom_score_adj = (true|false)' "$IOB_T/dump1" | head -1)" \
  "iobatch.test/pause:1 restrict_oom_score_adj = true" \
  "$P: and config.toml's own CRI settings still hold (the admin's sandbox image and restrict_oom_score_adj)"
# By which mechanism: config.toml's own block, its imports, the drop-in's
# config version.
conf=$G/etc/containerd/config.toml dropin=$G/etc/containerd/conf.d/iobatch.toml
how="block=$(grep -c '^# BEGIN iobatch' "$conf") imports=$(awk '/^[ \t]*\[/ { exit } $1 == "imports" { print $3; exit }' "$conf")"
how+=" drop-in=$([ -e "$dropin" ] && awk '$1 == "version" { print "version-" $3; exit }' "$dropin" || echo none)"
case $CV in
1.*) is "$how" "block=1 imports= drop-in=none" \
  "$P: the handler is a block in config.toml, no conf.d drop-in (1.6 and 1.7 let an imported file replace the whole CRI table)" ;;
*) is "$how" 'block=0 imports=["/etc/containerd/conf.d/iobatch.toml"] drop-in=version-2' \
  "$P: the handler is /etc/containerd/conf.d/iobatch.toml in config.toml's version (2, Debian's), imported by config.toml (2.x merges imports)" ;;
esac
is "$(containerd_pid)" "$pid0" "$P: as shipped (RESTART_CONTAINERD=false): containerd is not restarted"
like "$(tr '\n' ' ' <"$IOB_T/install1.log")" "restart containerd for it to take effect.*not labelling the node" \
  "$P: the log says to restart containerd, and the node is not labelled"
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: early, namespace: tenant-a}\nspec:\n  runtimeClassName: iobatch\n  containers:\n  - {name: c, image: "iobatch.test/pause:1", command: [/bin/true]}\n' >"$IOB_T/early.yaml"
out=$($KUBELET up "$IOB_T/early.yaml" "$K/runtimeclass.yaml" --pod Pod/early 2>&1)
like "$out" "no runtime for \"iobatch\" is configured" \
  "$P: until containerd restarts, the CRI does not serve the handler (RunPodSandbox fails)"
is "$(stat -c '%a %U' "$G/run/iobatch")" "700 root" "$P: /run/iobatch is root's and 0700 (the kubelet made it 0755)"
ok "$P: the agent answers its livenessProbe (iobatchctl status through ExecSync)" \
  wait_for 20 '$KUBELET probe "$K/iobatch-deploy.yaml" --pod DaemonSet/iobatch --container iobatchd >"$IOB_T/probe.json" 2>&1'
[ "$_tap_failed" -eq 0 ] || $KUBELET logs --pod iobatch --container iobatchd 2>&1 | tail -20 | sed 's/^/# iobatchd: /'
ip=$(jq -r 'select(.event == "sandbox") | .ip' "$IOB_T/up1.json")
wait_for 10 '$KUBELET exec --pod iobatch --container iobatchd -- wget -qO- "http://$ip:9464/metrics" >"$IOB_T/metrics" 2>&1'
like "$(grep -c '^iobatch_' "$IOB_T/metrics")" "^[1-9]" \
  "$P: the metrics sidecar (socat) serves the agent's metrics on the pod's IP ($ip:9464)"

# ---- least privilege, as the pod runs (issue 23 item 12)
# guest_pid COMM: the pid (host's view) of the guest's process COMM (the
# pod has hostPID: its processes are in the guest's PID namespace).
guest_pid() {
  local ns p
  ns=$(readlink "/proc/$INST_PID/ns/pid")
  for p in /proc/[0-9]*; do
    [ "$(cat "$p/comm" 2>/dev/null)" = "$1" ] && [ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$ns" ] &&
      { echo "${p#/proc/}"; return 0; }
  done
  return 1
}
field() { awk -v k="$2:" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "/proc/$1/status"; }
pexec() { $KUBELET exec --pod iobatch --container "$@"; }
agent_pid=$(guest_pid iobatchd)
proxy_pid=$(guest_pid socat)
want_caps=$(printf '%016x' $(((1 << 1) | (1 << 2) | (1 << 19) | (1 << 38) | (1 << 39))))
is "$(field "$agent_pid" Uid | awk '{ print $1 }') $(field "$agent_pid" CapEff) $(field "$agent_pid" CapBnd) $(field "$agent_pid" NoNewPrivs)" \
  "0 $want_caps $want_caps 1" \
  "$P: iobatchd is not privileged: root with DAC_OVERRIDE, DAC_READ_SEARCH, SYS_PTRACE, PERFMON and BPF only (effective and bounding), no_new_privs"
is "$(field "$proxy_pid" Uid | awk '{ print $1 }'):$(field "$proxy_pid" Gid | awk '{ print $1 }'):$(field "$proxy_pid" CapEff):$(field "$proxy_pid" CapBnd):$(field "$proxy_pid" Seccomp)" \
  "65532:9464:0000000000000000:0000000000000000:2" \
  "$P: the metrics proxy (socat) runs as uid 65532 of group 9464, without capabilities, under the runtime's seccomp filter"
is "$(stat -c '%a %U %g' "$G/run/iobatch/metrics/metrics.sock") / $(stat -c '%a %U %g' "$G/run/iobatch/metrics")" \
  "660 root 9464 / 750 root 9464" \
  "$P: on the node the metrics socket is 0660 root:9464, in a 0750 root:9464 directory of its own"
is "$(pexec metrics-proxy -- ls -A /run/iobatch 2>&1 | paste -sd,)" "metrics" \
  "$P: the proxy sees only the metrics directory of /run/iobatch (no API socket in its mounts)"
out=$(inst_exec setpriv --reuid 65532 --regid 9464 --clear-groups socat -u OPEN:/dev/null UNIX-CONNECT:$SOCK 2>&1)
like "$out" "Permission denied" "$P: as the proxy's uid and group, the agent's API socket on the node cannot be opened"
like "$(pexec metrics-proxy -- sh -c 'id -u; id -G; printf "GET /metrics HTTP/1.0\r\n\r\n" | socat -t 5 - UNIX-CONNECT:/run/iobatch/metrics/metrics.sock | head -1' 2>&1 | paste -sd' ')" \
  "^65532 9464 HTTP/1.1 200 OK" "$P: while in the proxy's container that uid (group 9464 alone) reads the metrics socket"
# Every TCP listener in the pod's network namespace (the host's ss, in the
# proxy's namespace), with the uid of each process that holds it.
nsenter -t "$proxy_pid" -n ss -ltnpH >"$IOB_T/ss" 2>&1
listeners=$(grep -o 'pid=[0-9]*' "$IOB_T/ss" | cut -d= -f2 | sort -u | while read -r p; do
  echo "$(cat "/proc/$p/comm"):uid=$(field "$p" Uid | awk '{ print $1 }')"; done | paste -sd,)
is "$(awk '{ print $4 }' "$IOB_T/ss" | paste -sd,)|$listeners" "0.0.0.0:9464|socat:uid=65532" \
  "$P: ss -ltnp in the pod's network namespace: one TCP listener, the proxy on 9464, not root (nothing root listens on a port)"
[ "$_tap_failed" -eq 0 ] || sed 's/^/# ss: /' "$IOB_T/ss"
like "$(grep '^iobatch_latency_source_info' "$IOB_T/metrics")" 'source="bpf"' \
  "$P: the agent's BPF latency program loads and attaches with CAP_BPF and CAP_PERFMON, no CAP_SYS_ADMIN"
sa=/var/run/secrets/kubernetes.io/serviceaccount
is "$(for c in iobatchd metrics-proxy; do pexec $c -- sh -c "test -e $sa && echo $c has it || echo $c none"; done | paste -sd,)" \
  "iobatchd none,metrics-proxy none" \
  "$P: the service-account token is mounted in neither iobatchd nor metrics-proxy (the installer has it: its kubectl asks the in-cluster server, below)"
like "$(pexec iobatchd -- sh -c 'test -S /run/containerd/containerd.sock && grep " /run/containerd/containerd.sock " /proc/self/mountinfo' 2>&1)" \
  " /run/containerd/containerd.sock ro[ ,]" "$P: the CRI socket is in the agent's container, on a read-only mount"

# ---- 2. RESTART_CONTAINERD=true, as an admin sets it after the log above
# (the DaemonSet rolls: the pod goes, a new one comes).  Test ConfigMap:
# the paper policy with tests/fixtures/batch/hold-matrix.conf (a random
# writer beside a sequential one is held).
$PY - "$K/iobatch-deploy.yaml" "$IOB_TOP/tests/fixtures/batch/hold-matrix.conf" >"$IOB_T/deploy2.yaml" <<'PY'
import sys, yaml
docs = list(yaml.safe_load_all(open(sys.argv[1])))
for d in docs:
    if d["kind"] == "ConfigMap":
        d["data"]["iobatchd.conf"] += "policy = paper\nalpha = 0.6\nmatrix = /etc/iobatch/hold-matrix.conf\n"
        d["data"]["hold-matrix.conf"] = open(sys.argv[2]).read()
    if d["kind"] == "DaemonSet":
        for e in d["spec"]["template"]["spec"]["initContainers"][0]["env"]:
            if e["name"] == "RESTART_CONTAINERD":
                e["value"] = "true"
yaml.safe_dump_all(docs, sys.stdout)
PY
$KUBELET down --pod iobatch >/dev/null
$KUBELET up "$IOB_T/deploy2.yaml" --pod DaemonSet/iobatch >"$IOB_T/up2.json" 2>"$IOB_T/up2.err"
is "$?:$(jq -r 'select(.event == "init") | .exit_code' "$IOB_T/up2.json")" "0:0" "$P: RESTART_CONTAINERD=true: the pod comes up again"
init_log "$IOB_T/up2.json" >"$IOB_T/install2.log"
[ "$_tap_failed" -eq 0 ] || sed 's/^/# /' "$IOB_T/up2.err"
isnt_pid=$(containerd_pid)
ok "$P: containerd was restarted (MainPID $pid0 -> $isnt_pid) and is active" \
  test "$isnt_pid" != "$pid0" -a "$(inst_exec systemctl is-active containerd)" = active
like "$(tr '\n' ' ' <"$IOB_T/install2.log")" "restarting containerd .*containerd serves the handler iobatch .*cannot label node node-1 iobatch.io/runtime=true \(no API server answered\?\).*127\.0\.0\.1:6443.*going on" \
  "$P: the label is tried only after the handler is served, at the in-cluster API server; none answers: logged, and the install goes on"
diag "no API server runs here: the node label (kubectl label node) is the one call not made against a server; install.sh logged: $(grep -o 'cannot label.*' "$IOB_T/install2.log")"
ok "$P: the agent answers its livenessProbe after the restart" \
  wait_for 20 '$KUBELET probe "$IOB_T/deploy2.yaml" --pod DaemonSet/iobatch --container iobatchd >/dev/null 2>&1'

# A pod through the handler, as a tenant's.
cat >"$IOB_T/pods.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: idle, namespace: tenant-a}
spec:
  runtimeClassName: iobatch
  containers:
    - {name: sleeper, image: "iobatch.test/pause:1", command: [/bin/sleep, "3600"]}
---
apiVersion: v1
kind: Pod
metadata: {name: seq, namespace: tenant-a, annotations: {io.iobatch.class: seq-write, io.iobatch.workload: seq-writer}}
spec:
  runtimeClassName: iobatch
  restartPolicy: Never
  containers:
    - name: writer
      image: "iobatch.test/pause:1"
      command: [/bin/sh, -c, "until [ -e /work/stop ]; do dd if=/dev/zero of=/work/seq bs=1M count=32 oflag=direct 2>/dev/null; done; rm -f /work/seq"]
      volumeMounts: [{name: work, mountPath: /work}]
  volumes: [{name: work, hostPath: {path: /var/tmp/iobatch-hold, type: DirectoryOrCreate}}]
---
apiVersion: v1
kind: Pod
metadata: {name: rand, namespace: tenant-a, annotations: {io.iobatch.class: rand-write, io.iobatch.workload: rand-writer}}
spec:
  runtimeClassName: iobatch
  restartPolicy: Never
  containers:
    - {name: writer, image: "iobatch.test/pause:1", command: [/bin/sh, -c, "echo rand ran"]}
YAML
$KUBELET up "$IOB_T/pods.yaml" "$K/runtimeclass.yaml" --pod Pod/idle >"$IOB_T/idle.json" 2>&1
is "$(jq -r 'select(.event == "sandbox") | .handler' "$IOB_T/idle.json"):$(jq -r 'select(.event == "started") | .container' "$IOB_T/idle.json")" \
  "iobatch:sleeper" "$P: a pod with runtimeClassName iobatch runs through the CRI handler iobatch"
agent_has() { ctl status --json 2>/dev/null | jq -e "$1" >/dev/null; }
wait_for 10 'agent_has ".containers[] | select(.container_name == \"sleeper\")"'
is "$(ctl status --json | jq -r '.containers[] | select(.container_name == "sleeper") | "\(.pod_namespace)/\(.pod_name)/\(.container_name)"')" \
  "tenant-a/idle/sleeper" "$P: the agent names its namespace, pod and container"

# Two conflicting batch pods.  Each names its workload: the agent's
# profiles are keyed by the image otherwise, and both run the same image.
$KUBELET up "$IOB_T/pods.yaml" "$K/runtimeclass.yaml" --pod Pod/seq >"$IOB_T/seq.json" 2>&1
is "$(jq -r 'select(.event == "started") | .container' "$IOB_T/seq.json")" "writer" "$P: a sequential writer pod starts"
# The random writer comes once the agent has seen the sequential one
# write: a plan made before its first window (on a busy machine, its
# start can take seconds) has nothing running to hold the second for.
wait_for 30 'agent_has ".containers[] | select(.pod_name == \"seq\" and .kind != \"sandbox\" and .write_bps > 0)"' ||
  diag "the agent saw no write from the seq pod: $(ctl status --json | jq -c '.containers[] | select(.pod_name == "seq")')"
($KUBELET up "$IOB_T/pods.yaml" "$K/runtimeclass.yaml" --pod Pod/rand >"$IOB_T/rand.json" 2>&1; echo $? >"$IOB_T/rand.rc") &
wait_for 20 'agent_has ".containers[] | select(.pod_name == \"rand\" and .state == \"pending\")"'
is "$(ctl status --json | jq -r '.containers[] | select(.pod_name == "rand" and .kind != "sandbox") | .state'):$($KUBELET status --pod rand | jq -r .containers.writer.state):$([ -e "$IOB_T/rand.rc" ] && echo returned || echo waiting)" \
  "pending:CONTAINER_CREATED:waiting" \
  "$P: a random writer pod beside it is held: pending in the agent, CREATED in the CRI, its StartContainer waiting"
touch "$G/var/tmp/iobatch-hold/stop"
wait_for 60 '[ -e "$IOB_T/rand.rc" ]'
$KUBELET status --pod seq >"$IOB_T/seq.st"
wait_for 10 '$KUBELET status --pod rand >"$IOB_T/rand.st" && [ "$(jq -r .containers.writer.state "$IOB_T/rand.st")" = CONTAINER_EXITED ]'
is "$(cat "$IOB_T/rand.rc"):$(jq -r .containers.writer.exit_code "$IOB_T/rand.st"):$(jq -r '.containers.writer.finished_at' "$IOB_T/seq.st" | awk -v r="$(jq -r .containers.writer.started_at "$IOB_T/rand.st")" '{ print (r >= $1 && $1 > 0) ? "after" : "before" }')" \
  "0:0:after" "$P: when the sequential writer ends, the held pod starts (after it) and exits 0"
for p in idle seq rand; do $KUBELET down --pod $p >/dev/null 2>&1; done
rm -rf "$G/var/tmp/iobatch-hold"

# ---- 3. the documented uninstall: delete iobatch-deploy.yaml, apply
# iobatch-cleanup.yaml (as shipped), wait for "uninstalled", delete it.
$KUBELET down --pod iobatch >/dev/null
cleanup() { # run the cleanup DaemonSet's pod until it logged its verdict
  $KUBELET up "$K/iobatch-cleanup.yaml" --pod DaemonSet/iobatch-cleanup >"$IOB_T/cleanup.json" 2>&1 || return 1
  wait_for 60 '$KUBELET logs --pod iobatch-cleanup --container uninstall >"$IOB_T/cleanup.log" 2>&1 && grep -qE "uninstalled|nothing of iobatch" "$IOB_T/cleanup.log"'
  $KUBELET down --pod iobatch-cleanup >/dev/null
}
cleanup
like "$(head -1 "$IOB_T/cleanup.log")" "take the label iobatch.io/runtime off node node-1" \
  "$P: uninstall: the label is taken off first (no API server: logged, going on)"
like "$(tail -1 "$IOB_T/cleanup.log")" "uninstalled" "$P: uninstall: the cleanup pod logs 'uninstalled'"
snapshot >"$IOB_T/after"
is "$(diff "$IOB_T/before" "$IOB_T/after" | head -20)" "" \
  "$P: uninstall leaves /etc/containerd, /usr and /var/lib/iobatch as before the install (paths, modes, owners, checksums)"
ok "$P: uninstall: /opt/iobatch and /etc/iobatch are gone" test ! -e "$G/opt/iobatch" -a ! -e "$G/etc/iobatch"
cleanup
like "$(tail -1 "$IOB_T/cleanup.log")" "nothing of iobatch on this node" \
  "$P: the cleanup DaemonSet on a node without iobatch's files: a no-op, said in the log"
snapshot >"$IOB_T/after2"
ok "$P: and it changed nothing" cmp -s "$IOB_T/before" "$IOB_T/after2"
[ "$_tap_failed" -eq 0 ] || for f in install1.log install2.log cleanup.log; do sed "s/^/# $f: /" "$IOB_T/$f"; done
tap_done
