#!/usr/bin/env bash
# The root file system of the DaemonSet's image iobatch:0.1.0, assembled
# from files only (no base image: the Dockerfile copies this tree into an
# image FROM scratch; tests/install/daemonset.sh wraps it in a docker
# archive and imports it into containerd).
#
#   mkimage.sh BINDIR SRCROOT OUTDIR
#
# BINDIR   the four programs of `make static` (build-static/bin): they are
#          copied onto the nodes, so they must not need the node's glibc.
# SRCROOT  a Debian 12 root with busybox-static, bash-static, socat and
#          kubernetes-client installed (/ in the Dockerfile's build stage).
# OUTDIR   created; must not exist.
#
# What the image holds and why:
#   /opt/iobatch/bin/*       the static programs (install.sh copies them)
#   /opt/iobatch/install.sh, runtime-options.toml
#   /bin/busybox + applets   the installer's userland (sh, cp, sed, awk,
#                            nsenter, sha256sum, ...), static
#   /bin/bash                bash-static: install.sh is a bash script
#   /usr/bin/kubectl         kubernetes-client's (a static Go binary): the
#                            node label, the installer's one API call
#   /usr/bin/socat           the metrics sidecar; Debian has no static socat,
#                            so it comes with the shared libraries ldd names
#                            (they stay in the image: only /opt/iobatch is
#                            copied to the node)
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: mkimage.sh BINDIR SRCROOT OUTDIR" >&2; exit 2; }
BIN=$1 SRC=$2 OUT=$3
TOP=$(cd "$(dirname "$0")/../.." && pwd)
die() { echo "mkimage: $*" >&2; exit 1; }

[ ! -e "$OUT" ] || die "'$OUT' exists"
for p in iobatchd iobatchctl iobatch-hook containerd-shim-iobatch-v2; do
  [ -x "$BIN/$p" ] || die "no '$BIN/$p' (make static)"
  if readelf -lW "$BIN/$p" | grep -q INTERP; then die "'$BIN/$p' is dynamically linked (make static)"; fi
done
for f in /bin/busybox /bin/bash-static /usr/bin/kubectl /usr/bin/socat; do
  [ -x "$SRC$f" ] || die "no '$SRC$f' (busybox-static, bash-static, kubernetes-client, socat)"
done

mkdir -p "$OUT"/{bin,usr/bin,etc,tmp,opt/iobatch/bin}
chmod 1777 "$OUT/tmp"
cp "$BIN"/{iobatchd,iobatchctl,iobatch-hook,containerd-shim-iobatch-v2} "$OUT/opt/iobatch/bin/"
cp "$TOP/packaging/kubernetes/install.sh" "$OUT/opt/iobatch/install.sh"
chmod 755 "$OUT/opt/iobatch/install.sh"
cp "$TOP/packaging/containerd/runtime-options.toml" "$OUT/opt/iobatch/runtime-options.toml"

cp "$SRC/bin/busybox" "$OUT/bin/busybox"
for a in $("$OUT/bin/busybox" --list); do
  [ -e "$OUT/bin/$a" ] || ln -s busybox "$OUT/bin/$a"
done
ln -sf ../../bin/busybox "$OUT/usr/bin/env" # #!/usr/bin/env bash
cp "$SRC/bin/bash-static" "$OUT/bin/bash"
cp "$SRC/usr/bin/kubectl" "$OUT/usr/bin/kubectl"
cp "$SRC/usr/bin/socat" "$OUT/usr/bin/socat"
# socat's libraries, as its own root resolves them (ldd and readlink run
# in SRCROOT: Debian's /lib64/ld-linux-x86-64.so.2 is an absolute link).
for lib in $(chroot "$SRC" ldd /usr/bin/socat | grep -oE '/[^ ]+'); do
  mkdir -p "$OUT$(dirname "$lib")"
  cp "$SRC$(chroot "$SRC" readlink -f "$lib")" "$OUT$lib"
done
printf 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$OUT/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$OUT/etc/group"
