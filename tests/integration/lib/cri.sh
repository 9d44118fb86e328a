# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# containerd with its CRI plugin, for the suites that drive it as a kubelet
# would (cri-pods.sh, cri-meta.sh).  Source after lib/common.sh, with IOB_SOCK,
# CRI (cri_client.py), RT (the iobatch runtime type), IMAGE, R (a rootfs)
# and CRI_CTR (ctr for the namespace whose tasks are cleaned up) set; NS,
# when set, is the test's own containerd namespace (runc's state dir for it
# is removed at the end).

# containerd with its CRI plugin on (iob_containerd_start turns it off):
# two runtime handlers; io.iobatch.* pod annotations passed to iobatch;
# what these machines need (restrict_oom_score_adj, the native snapshotter,
# an ephemeral streaming port, empty CNI directories).
cri_containerd_start() {
  mkdir -p "$IOB_T/root" "$IOB_T/state" "$IOB_T/cni/bin" "$IOB_T/cni/conf"
  cat >"$IOB_T/config.toml" <<TOML
version = 2
root = "$IOB_T/root"
state = "$IOB_T/state"
[grpc]
  address = "$IOB_SOCK"
[ttrpc]
  address = "$IOB_SOCK.ttrpc"
[debug]
  level = "debug"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$IMAGE"
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$IOB_T/cni/bin"
    conf_dir = "$IOB_T/cni/conf"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "native"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.iobatch]
      runtime_type = "$RT"
      pod_annotations = ["io.iobatch.*"]
TOML
  containerd --config "$IOB_T/config.toml" >>"$IOB_T/containerd.log" 2>&1 &
  IOB_CONTAINERD_PID=$!
  at_exit "cri_containerd_stop"
  wait_for 10 'ctr --address "$IOB_SOCK" version >/dev/null 2>&1'
}

# Pods first (as the kubelet would), then ctr's tasks, then containerd and
# whatever of ours survived it.
cri_containerd_stop() {
  local t pids m
  timeout 120 $CRI down >/dev/null 2>&1
  for t in $($CRI_CTR task ls -q 2>/dev/null); do $CRI_CTR task kill -s KILL "$t" >/dev/null 2>&1; done
  sleep 0.2
  for t in $($CRI_CTR task ls -q 2>/dev/null); do $CRI_CTR task delete -f "$t" >/dev/null 2>&1; done
  for t in $($CRI_CTR container ls -q 2>/dev/null); do $CRI_CTR container delete "$t" >/dev/null 2>&1; done
  kill "$IOB_CONTAINERD_PID" 2>/dev/null
  wait "$IOB_CONTAINERD_PID" 2>/dev/null
  pids=$(pgrep -f -- "-address $IOB_SOCK( |\$)")
  [ -z "$pids" ] || kill -KILL $pids 2>/dev/null
  for m in $(awk -v t="$IOB_T" 'index($5, t) == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
    umount -l "$m" 2>/dev/null
  done
  [ -z "${NS:-}" ] || rmdir "/run/containerd/runc/$NS" 2>/dev/null # runc's, our namespace only
  # ctr names a container's cgroup parent after the namespace (/NS/ID)
  [ -z "${NS:-}" ] || iob_cgroup_rmdir_empty "$NS"
}

# A docker archive of a busybox-static rootfs, `sleep` by default.
make_image() {
  local d=$IOB_T/img layer cfg
  mkdir -p "$d"
  tar --numeric-owner -C "$R" -cf "$d/layer.tar" .
  layer=$(sha256sum "$d/layer.tar" | cut -d' ' -f1)
  jq -n --arg d "sha256:$layer" '{architecture: "amd64", os: "linux",
    config: {Cmd: ["/bin/sleep", "2147483647"], Env: ["PATH=/bin"]},
    rootfs: {type: "layers", diff_ids: [$d]}}' >"$d/config.json"
  cfg=$(sha256sum "$d/config.json" | cut -d' ' -f1)
  mv "$d/config.json" "$d/$cfg.json"
  jq -n --arg c "$cfg.json" --arg t "$IMAGE" '[{Config: $c, RepoTags: [$t], Layers: ["layer.tar"]}]' \
    >"$d/manifest.json"
  tar -C "$d" -cf "$IOB_T/image.tar" manifest.json "$cfg.json" layer.tar
}
