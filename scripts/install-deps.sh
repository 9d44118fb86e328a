#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Install every build, test, benchmark and VM-test dependency from Debian.
# Idempotent: packages already present are left alone.
set -euo pipefail
PKGS=(
  build-essential pkg-config git ca-certificates
  libjansson-dev libprotobuf-c-dev protobuf-c-compiler libseccomp-dev libcmocka-dev
  libcgroup-dev # bench/libcgroup.sh only: why cgroupv2/ does not use it (docs/DESIGN.md)
  clang libclang-rt-14-dev llvm clang-format shellcheck # shellcheck: tests/shellcheck.sh
  libbpf-dev bpftool libelf-dev zlib1g-dev # iobatchd's latency program (agent/sample/bpf/)
  libnghttp2-dev # iobatchd's CRI client (cri/): gRPC over HTTP/2, linked statically too
  containerd runc crun fio busybox-static util-linux procps psmisc kmod iproute2 tmux
  socat # tests: agent-metrics-group.sh, hook-owner.sh (a unix-socket peer)
  strace # tests: agent-statesave.sh (which thread fsyncs)
  fuse3 libfuse3-dev # simdisk/: the emulated disk (a FUSE file behind a loop device)
  qemu-system-x86 qemu-utils cpio gzip e2fsprogs
  hyperfine gnuplot-nox python3 jq curl podman
  valgrind # bench/agent-overhead.sh PROFILE=callgrind
  linux-perf # bench/start-path.sh: the kernel's process tracepoints (perf record)
  debhelper dpkg-dev fakeroot lintian scdoc systemd bash-completion man-db python3-yaml python3-kubernetes
  mmdebstrap systemd-container # tests/install: a booted Debian 12 root (systemd-nspawn)
  python3-grpcio python3-grpc-tools # the CRI client of tests/integration/e2e/cri-pods.sh
  file binutils # tests/integration/packaging/static.sh (file, readelf)
  postgresql-15 postgresql-client-15
  prometheus # its promtool: tests/integration/packaging/k8s-monitoring.sh (the server is kept from running, below)
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" -eq 0 ] || { echo "install-deps: need root to install: ${missing[*]}" >&2; exit 1; }
  export DEBIAN_FRONTEND=noninteractive
  # Only promtool of Debian's prometheus is wanted: its postinst would
  # start the server (and enable it for the next boot).  A policy-rc.d
  # refuses that start for this install (one already there is left alone:
  # container images ship one that refuses every start), and the unit is
  # disabled and stopped afterwards.
  new_prom=no
  [[ " ${missing[*]} " == *" prometheus "* ]] && new_prom=yes
  own_policy=no
  if [ "$new_prom" = yes ] && [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\n[ "$1" = prometheus ] && exit 101\nexit 0\n' >/usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    own_policy=yes
  fi
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
  [ "$own_policy" = no ] || rm -f /usr/sbin/policy-rc.d
  if [ "$new_prom" = yes ]; then
    systemctl disable prometheus.service >/dev/null 2>&1 || true
    if [ -d /run/systemd/system ]; then systemctl stop prometheus.service >/dev/null 2>&1 || true; fi
  fi
fi
echo "install-deps: all ${#PKGS[@]} packages present"
