#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Build what the cgroup v2 test VM boots, into OUTDIR:
#   vmlinuz            Debian's cloud kernel; the .deb is downloaded once into
#                      tests/vm/cache/ with apt-get download and unpacked with
#                      dpkg-deb -x (never installed on this machine)
#   initramfs.cpio.gz  busybox-static, bash, this machine's containerd, ctr,
#                      containerd-shim-runc-v2, runc, crun and fio with their shared
#                      libraries, the kernel modules the tests need, whatever
#                      this project built into $B/bin, and the guest scripts
#   disk.img           a raw ext4 image for the emulated NVMe drive
# Usage: tests/vm/build.sh OUTDIR      (B=build by default; rebuilt every run)
set -euo pipefail

die() { echo "vm build: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: $0 OUTDIR"
OUT=$1
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
VMDIR=$TOP/tests/vm
CACHE=${VM_CACHE:-$VMDIR/cache}
B=${B:-build}
case "$B" in /*) ;; *) B=$TOP/$B ;; esac
DISK_SIZE=${VM_DISK_SIZE:-4G}
META=linux-image-cloud-amd64
# Modules the guest loads (with their dependencies); NVMe, ext4 and the
# cgroup controllers are built into the cloud kernel, see kernel_check_config.
MODULES=(virtio virtio_ring bfq overlay)
# Host programs copied into the guest, with their libraries.  crun: the
# shim suites run with it too (shim-crun.sh; crun refuses the hybrid host);
# script: util-linux's, for shim-tty.sh's terminals (busybox has none).
PROGRAMS=(busybox bash containerd ctr containerd-shim-runc-v2 runc crun script fio pgrep pkill jq awk curl)
# GNU tools where the tests expect the host's behaviour (date +%N, tr classes,
# stat -c, ...); busybox fills in the rest.
GNU_PACKAGES=(coreutils grep sed findutils)
# ...except where busybox's behaviour is the same and speed matters: under
# emulation a dynamically linked program costs about 65 ms per exec against
# 13 ms for static busybox, and iob_rootfs_busybox runs ln 400 times (26 s
# with GNU ln, 5 s with busybox's).
BUSYBOX_PREFERRED=(ln)

for c in apt-cache apt-get dpkg-deb cpio gzip mkfs.ext4 depmod modprobe ldd flock "${PROGRAMS[@]}"; do
  command -v "$c" >/dev/null || die "'$c' not found (run scripts/install-deps.sh)"
done
mkdir -p "$OUT" "$CACHE"

# The versioned kernel package the metapackage points at, e.g.
# linux-image-6.1.0-57-cloud-amd64.
kernel_package() {
  apt-cache depends "$META" 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }'
}

# apt-get download runs as _apt when it can; give it a directory it may write.
kernel_download() { # PKG
  local d
  d=$(mktemp -d "$CACHE/dl.XXXXXX")
  chmod 0777 "$d"
  if ! (cd "$d" && apt-get download -q "$1" >"$d/log" 2>&1); then
    sed 's/^/vm build: apt-get: /' "$d/log" >&2
    rm -rf "$d"
    return 1
  fi
  mv "$d"/"$1"_*.deb "$CACHE"/
  rm -rf "$d"
}

# Sets KVER and KDIR (the unpacked package, with modules.dep made by depmod).
kernel_fetch() {
  local pkg deb
  pkg=$(kernel_package)
  if [ -z "$pkg" ] && [ "$(id -u)" -eq 0 ]; then
    apt-get update -q >/dev/null 2>&1 || true
    pkg=$(kernel_package)
  fi
  if [ -z "$pkg" ]; then
    # No apt lists (offline): use what the cache already holds.
    pkg=$(find "$CACHE" -maxdepth 1 -type d -name 'linux-image-*' -printf '%f\n' | sort -V | tail -1)
    [ -n "$pkg" ] || die "cannot resolve '$META' with apt-cache and nothing is cached in '$CACHE'"
    echo "vm build: apt-cache knows no '$META'; using cached '$pkg'" >&2
  fi
  KVER=${pkg#linux-image-}
  KDIR=$CACHE/$pkg
  if [ ! -f "$KDIR/.complete" ]; then
    deb=$(find "$CACHE" -maxdepth 1 -name "${pkg}_*.deb" | sort -V | tail -1)
    if [ -z "$deb" ]; then
      if ! kernel_download "$pkg"; then
        # Stale lists name a version the mirror no longer has.
        [ "$(id -u)" -eq 0 ] && apt-get update -q >/dev/null 2>&1 || true
        kernel_download "$pkg" || die "cannot download '$pkg' with apt-get download"
      fi
      deb=$(find "$CACHE" -maxdepth 1 -name "${pkg}_*.deb" | sort -V | tail -1)
    fi
    rm -rf "$KDIR" "$KDIR.tmp"
    dpkg-deb -x "$deb" "$KDIR.tmp" || die "cannot unpack '$deb'"
    depmod -b "$KDIR.tmp" "$KVER" || die "depmod failed on '$KDIR.tmp'"
    mv "$KDIR.tmp" "$KDIR"
    touch "$KDIR/.complete"
    # Older kernels are not needed any more.
    find "$CACHE" -maxdepth 1 -name 'linux-image-*' ! -name "${pkg}*" -exec rm -rf {} +
  fi
  [ -f "$KDIR/boot/vmlinuz-$KVER" ] || die "'$KDIR/boot/vmlinuz-$KVER' missing from the package"
}

# The tests rely on these being built in; a new kernel that makes one of them
# a module must be noticed here, not as a mysterious guest failure.
kernel_check_config() {
  local cfg=$KDIR/boot/config-$KVER opt
  for opt in CONFIG_BLK_DEV_NVME CONFIG_EXT4_FS CONFIG_BLK_CGROUP CONFIG_BLK_CGROUP_IOCOST \
    CONFIG_MEMCG CONFIG_CGROUP_PIDS CONFIG_PSI CONFIG_DEVTMPFS CONFIG_SERIAL_8250_CONSOLE; do
    grep -q "^$opt=y" "$cfg" || die "kernel $KVER: $opt is not built in ('$cfg')"
  done
  grep -q '^CONFIG_BFQ_GROUP_IOSCHED=y' "$cfg" || die "kernel $KVER: no BFQ cgroup support"
}

# copy_file ROOT PATH: PATH (symlinks resolved) to the same path under ROOT.
copy_file() {
  mkdir -p "$1$(dirname "$2")"
  cp -L "$2" "$1$2" || die "cannot copy '$2'"
}

# copy_program ROOT PATH: the program and every library ldd names.
copy_program() {
  local root=$1 prog lib
  prog=$(readlink -f "$2")
  copy_file "$root" "$prog"
  # pkill -> pgrep: keep the name too
  [ -e "$root$2" ] || { mkdir -p "$root$(dirname "$2")" && ln -s "$prog" "$root$2"; }
  if ldd "$prog" >/dev/null 2>&1; then
    for lib in $(ldd "$prog" | grep -oE '(=> )?/[^ ]+' | grep -oE '/[^ ]+'); do
      [ -e "$root$lib" ] || copy_file "$root" "$lib"
    done
  fi
}

make_root() {
  local root=$1 p m
  rm -rf "$root"
  mkdir -p "$root"/{usr/bin,usr/sbin,usr/lib,usr/lib64,usr/local/bin}
  # Debian's merged /usr: ldd names /lib/..., /lib64/...
  ln -s usr/bin "$root/bin"
  ln -s usr/sbin "$root/sbin"
  ln -s usr/lib "$root/lib"
  ln -s usr/lib64 "$root/lib64"
  mkdir -p "$root"/{dev,proc,sys,tmp,run,data,root,mnt,etc/containerd,etc/iobatch-vm,var/lib}

  for p in "${PROGRAMS[@]}"; do copy_program "$root" "$(command -v "$p")"; done
  for p in $(dpkg -L "${GNU_PACKAGES[@]}" | grep -E '^(/usr)?/s?bin/[^/]+$'); do
    [ -f "$p" ] && [ -x "$p" ] && copy_program "$root" "$p"
  done
  ldd "$(readlink -f "$(command -v busybox)")" >/dev/null 2>&1 &&
    die "'$(command -v busybox)' is dynamically linked; install busybox-static"
  copy_file "$root" "$(readlink -f "$(command -v ldd)")" # used by lib/common.sh
  for p in $(busybox --list-full); do
    [ -e "$root/$p" ] || [ -L "$root/$p" ] || ln -s /usr/bin/busybox "$root/$p"
  done
  for p in "${BUSYBOX_PREFERRED[@]}"; do ln -sfn /usr/bin/busybox "$root/usr/bin/$p"; done

  # The kernel modules and the order to insmod them in.
  : >"$root/etc/iobatch-vm/modules"
  for m in "${MODULES[@]}"; do
    modprobe -d "$KDIR" -S "$KVER" --show-depends "$m" >"$OUT/modprobe.out" 2>&1 ||
      die "kernel $KVER: no module '$m': $(cat "$OUT/modprobe.out")"
    # "builtin NAME" lines need nothing; "insmod PATH" lines do.
    for p in $(awk '$1 == "insmod" { print $2 }' "$OUT/modprobe.out"); do
      p=${p#"$KDIR"}
      grep -qxF "$p" "$root/etc/iobatch-vm/modules" && continue
      mkdir -p "$root$(dirname "$p")"
      cp "$KDIR$p" "$root$p"
      echo "$p" >>"$root/etc/iobatch-vm/modules"
    done
  done
  rm -f "$OUT/modprobe.out"

  # This project: whatever has been built so far, and the guest tests.
  mkdir -p "$root/iobatch/build/bin" "$root/iobatch/tests/integration" "$root/iobatch/tests/vm/guest"
  if [ -d "$B/bin" ]; then
    for p in "$B"/bin/*; do
      [ -f "$p" ] && [ -x "$p" ] || continue
      cp "$p" "$root/iobatch/build/bin/"
      copy_program "$root" "$p"
      echo "$(basename "$p")" >>"$root/etc/iobatch-vm/project-programs"
    done
  fi
  # Test helpers built with the project (ttrpc-publish, ...), not unit tests.
  if [ -d "$B/tests" ]; then
    mkdir -p "$root/iobatch/build/tests"
    for p in "$B"/tests/*; do
      [ -f "$p" ] && [ -x "$p" ] || continue
      cp "$p" "$root/iobatch/build/tests/"
      copy_program "$root" "$p"
    done
  fi
  # The host integration suites: guest/integration.list names those that
  # run in the VM too.
  cp -r "$TOP"/tests/integration/. "$root/iobatch/tests/integration/"
  # What the suites read from the source tree (shim-options.sh runs the
  # shipped runtime options; the admission suites hold with
  # tests/fixtures/batch/hold-matrix.conf).
  mkdir -p "$root/iobatch/tests/fixtures"
  cp -r "$TOP"/tests/fixtures/batch "$root/iobatch/tests/fixtures/"
  mkdir -p "$root/iobatch/packaging/containerd"
  cp "$TOP"/packaging/containerd/*.toml "$root/iobatch/packaging/containerd/"
  mkdir -p "$root/iobatch/bench"
  for p in "$TOP"/bench/*-lib.sh; do [ -f "$p" ] && cp "$p" "$root/iobatch/bench/"; done
  compgen -G "$VMDIR/guest/t-*.sh" >/dev/null || die "no guest tests in '$VMDIR/guest'"
  cp "$VMDIR"/guest/*.sh "$VMDIR/guest/integration.list" "$root/iobatch/tests/vm/guest/"
  chmod 0755 "$root"/iobatch/tests/vm/guest/t-*.sh
  install -m 0755 "$VMDIR/guest/init" "$root/init"
  cp "$VMDIR/guest/containerd.toml" "$root/etc/containerd/config.toml"

  echo "root:x:0:0:root:/root:/bin/sh" >"$root/etc/passwd"
  echo "root:x:0:" >"$root/etc/group"
  echo "iobvm" >"$root/etc/hostname"
  : >"$root/etc/resolv.conf"
}

make_initramfs() {
  local root=$1
  (cd "$root" && find . -print0 | cpio --null -o -H newc --owner=0:0 --quiet) |
    gzip -1 >"$OUT/initramfs.cpio.gz.tmp" || die "cannot write '$OUT/initramfs.cpio.gz'"
  mv "$OUT/initramfs.cpio.gz.tmp" "$OUT/initramfs.cpio.gz"
}

# A busybox rootfs for containers, made here because a few hundred
# fork+execs of ln under emulation take half a minute (the layout is
# vm_rootfs's in guest/vmlib.sh: the guest's /usr is bound in for fio).
make_disk_rootfs() {
  local d=$1/rootfs/busybox a
  mkdir -p "$d"/{bin,proc,sys,dev,tmp,etc,data,usr,work}
  cp "$(readlink -f "$(command -v busybox)")" "$d/bin/busybox"
  for a in $(busybox --list); do [ -e "$d/bin/$a" ] || ln -s busybox "$d/bin/$a"; done
  ln -s usr/lib "$d/lib"
  ln -s usr/lib64 "$d/lib64"
  echo "root:x:0:0:root:/:/bin/sh" >"$d/etc/passwd"
  echo "root:x:0:" >"$d/etc/group"
  touch "$d/.done"
}

# Fresh each run.  Inode tables and journal are initialised here so that the
# guest's ext4lazyinit does not write behind the tests' backs.
make_disk() {
  rm -rf "$OUT/disk.img" "$OUT/disk"
  make_disk_rootfs "$OUT/disk"
  truncate -s "$DISK_SIZE" "$OUT/disk.img"
  mkfs.ext4 -q -F -L iobvm -i 65536 -E lazy_itable_init=0,lazy_journal_init=0 -d "$OUT/disk" "$OUT/disk.img" ||
    die "mkfs.ext4 failed on '$OUT/disk.img'"
  rm -rf "$OUT/disk"
}

(
  flock 9
  kernel_fetch
  echo "$KVER" >"$OUT/kernel-version"
  echo "$KDIR" >"$OUT/kernel-dir"
) 9>"$CACHE/.lock"
KVER=$(cat "$OUT/kernel-version")
KDIR=$(cat "$OUT/kernel-dir")
kernel_check_config
cp "$KDIR/boot/vmlinuz-$KVER" "$OUT/vmlinuz"
make_root "$OUT/root"
make_initramfs "$OUT/root"
rm -rf "$OUT/root"
make_disk
echo "vm build: kernel $KVER, initramfs $(du -h "$OUT/initramfs.cpio.gz" | cut -f1), disk $DISK_SIZE"
