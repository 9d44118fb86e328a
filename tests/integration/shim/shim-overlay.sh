#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# An image-backed container: containerd's overlayfs snapshotter hands the
# shim an overlay mount in Create, which the shim mounts onto the bundle's
# rootfs (and unmounts on Delete).  The image is a one-layer OCI tarball
# built here from busybox.
source "$(dirname "$0")/../lib/common.sh"
source "$(dirname "$0")/../lib/shim.sh"
tap_plan 7

shim_containerd_start || bail "containerd did not start"

# build_oci_tar OUT: a busybox image as an OCI layout tarball.
build_oci_tar() {
  local w=$IOB_T/oci rootfs=$IOB_T/oci-rootfs
  mkdir -p "$w/blobs/sha256"
  iob_rootfs_busybox "$rootfs"
  echo "from-the-image" >"$rootfs/etc/marker"
  tar -C "$rootfs" -cf "$IOB_T/layer.tar" .
  local diffid layer lsize
  diffid=$(sha256sum "$IOB_T/layer.tar" | cut -d' ' -f1)
  gzip -n -c "$IOB_T/layer.tar" >"$IOB_T/layer.tgz"
  layer=$(sha256sum "$IOB_T/layer.tgz" | cut -d' ' -f1)
  lsize=$(stat -c %s "$IOB_T/layer.tgz")
  mv "$IOB_T/layer.tgz" "$w/blobs/sha256/$layer"
  printf '{"architecture":"amd64","os":"linux","config":{"Cmd":["/bin/sh"],"Env":["PATH=/bin"]},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' "$diffid" >"$IOB_T/config.json"
  local cfg csize
  cfg=$(sha256sum "$IOB_T/config.json" | cut -d' ' -f1)
  csize=$(stat -c %s "$IOB_T/config.json")
  mv "$IOB_T/config.json" "$w/blobs/sha256/$cfg"
  printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:%s","size":%s}]}' "$cfg" "$csize" "$layer" "$lsize" >"$IOB_T/manifest.json"
  local man msize
  man=$(sha256sum "$IOB_T/manifest.json" | cut -d' ' -f1)
  msize=$(stat -c %s "$IOB_T/manifest.json")
  mv "$IOB_T/manifest.json" "$w/blobs/sha256/$man"
  printf '{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"org.opencontainers.image.ref.name":"latest"},"platform":{"architecture":"amd64","os":"linux"}}]}' "$man" "$msize" >"$w/index.json"
  echo '{"imageLayoutVersion":"1.0.0"}' >"$w/oci-layout"
  tar -C "$w" -cf "$1" oci-layout index.json blobs
}

build_oci_tar "$IOB_T/bb.tar"
ok "import a one-layer OCI image" $CTR image import --base-name iobatch.local/bb --digests "$IOB_T/bb.tar"
IMG=$($CTR image ls -q | grep '^iobatch.local/bb' | head -1)
diag "image: $IMG"

out=$(timeout 30 $CTR run --runtime $RT $SHIM_RUNOPTS --rm "$IMG" ov1 /bin/cat /etc/marker 2>&1)
is "$out" "from-the-image" "a container runs on the overlay rootfs the shim mounted"

ok "a detached image container" timeout 30 $CTR run --runtime $RT $SHIM_RUNOPTS -d "$IMG" ov2 /bin/sh -c 'echo written >/etc/new; sleep 600'
bundle=$IOB_T/state/io.containerd.runtime.v2.task/$SHIM_NS/ov2
for i in $(seq 1 50); do [ -e "$bundle/rootfs/etc/new" ] && break; sleep 0.1; done
like "$(grep " $bundle/rootfs " /proc/self/mountinfo)" "overlay" "the bundle's rootfs is an overlay mount"
is "$(cat "$bundle/rootfs/etc/new" 2>/dev/null)" "written" "writes land in the container's upper layer"
$CTR task kill -s SIGKILL ov2 >/dev/null 2>&1
for _ in $(seq 1 50); do $CTR task ls | grep -q '^ov2 .*STOPPED' && break; sleep 0.1; done
$CTR task delete ov2 >/dev/null 2>&1
ok "the rootfs is unmounted after delete" bash -c "! grep -q ' $bundle/rootfs ' /proc/self/mountinfo"
$CTR container delete ov2 >/dev/null 2>&1
is "$(shim_wait_gone)" 0 "no shim left"

tap_done
