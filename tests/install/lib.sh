# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Helpers for the install tests (bash): a Debian root (INST_SUITE, below:
# Debian 12, 13 or unstable) with systemd as PID 1, booted with systemd-nspawn, that the tests install iobatch into as
# an operator would.  Source it after nothing else (it sources
# tests/integration/lib/common.sh: TAP, at_exit, bail, IOB_T, IOB_B).
#
#   inst_root [EXTRA_PKGS...]  build (once, cached under $IOB_B/install/) a
#                              root tarball of INST_SUITE with mmdebstrap;
#                              sets INST_TAR
#   inst_root_of SUITE [EXTRA_PKGS...]
#                              the same for another suite, in REPLY (the
#                              same cached file as INST_SUITE=SUITE's);
#                              INST_SUITE and INST_TAR stay as they are
#   inst_boot NAME             unpack a fresh copy under $IOB_T/NAME, boot
#                              it; sets INST_ROOT, INST_PID (the guest's
#                              PID 1 as the host sees it), INST_NAME
#   inst_exec CMD...           run CMD in the guest, return its status
#   inst_put SRC DST           copy a host file to DST inside the guest
#   inst_halt                  power the guest off and wait (inst_boot
#                              registers it with at_exit)
#   wait_for SECONDS 'COND'    poll COND every 0.1 s
#
# Why each nspawn option (/work/shared/TESTBED.md): --register=no
# --keep-unit because the host has no system bus; SYSTEMD_SECCOMP=0 and
# --capability=all because nspawn's own seccomp filter and capability set
# stop runc's container init; inside, the read-only v1 cgroup hierarchies
# nspawn mounts are replaced with writable ones so runc can make cgroups.
# The guest shares the host's network (no CNI: pods use the node network).
. "$(dirname "${BASH_SOURCE[0]}")/../integration/lib/common.sh"

# INST_SUITE: which Debian, and so which containerd, the root is built from
# (Debian's own packages, mmdebstrap as for Debian 12):
#   bookworm  Debian 12, containerd 1.6.20
#   trixie    Debian 13, containerd 1.7.24
#   sid       Debian unstable, containerd 2.1.x (its Release file has expired
#             on the mirror: Check-Valid-Until is off for that suite alone)
# The tests say which containerd the booted root runs in their names
# (inst_containerd_version).
INST_SUITE=${INST_SUITE:-bookworm}
# _inst_suite SUITE: the settings of SUITE's root, below (inst_root_of sets
# another suite's in its own scope).
_inst_suite() {
  # What every root has: systemd as PID 1, the suite's containerd and runc,
  # busybox-static for test rootfs, and the iobatch package's shared
  # libraries (so `apt-get install ./iobatch_*.deb` needs no network).
  INST_BASE_PKGS=(socat bash-static containernetworking-plugins
    systemd systemd-sysv dbus containerd runc busybox-static
    libjansson4 libprotobuf-c1 libseccomp2 libbpf1 zlib1g libnghttp2-14)
  INST_MMDEBSTRAP_OPTS=()
  INST_MMDEBSTRAP_SOURCES=() # none: the suite's own from Debian's mirror
  INST_NSPAWN_ENV=() # systemd-nspawn's environment
  INST_INIT_ARGS=()  # the guest's systemd's command line
  case $1 in
  bookworm)
    # deb.sh's podman and the DaemonSet image's kubectl (daemonset.sh takes
    # the image's userland from this root whatever the node's suite): one
    # root, built once per run, serves both.
    INST_BASE_PKGS+=(libelf1 podman uidmap kubernetes-client) ;;
  trixie)
    # libelf1 became libelf1t64 (the 64-bit time_t transition).  No podman:
    # podman 5 refuses this host's cgroup v1 hierarchies; no
    # kubernetes-client: not in Debian 13.
    INST_BASE_PKGS+=(libelf1t64) ;;
  sid)
    # systemd from Debian 13: unstable's (258 and later) has no cgroup v1
    # support and refuses to boot on this host's hybrid hierarchy, and a
    # cgroup v2 guest here has no controllers (they are bound to v1), where
    # runc cannot set a container's cpu.weight.  containerd, runc and the
    # rest are unstable's.
    # netbase: containerd 2.x copies the node's /etc/hosts into a
    # host-network sandbox, and fails without one (1.6 and 1.7 do not).
    # /root/debs: Debian 13's containerd 1.7 and unstable's own 2.x, as .debs
    # (deb.sh installs one and then the other: the package's file trigger on
    # containerd's binary, with no network during the test).
    INST_BASE_PKGS+=(libelf1t64 netbase)
    INST_MMDEBSTRAP_OPTS+=('--aptopt=Acquire::Check-Valid-Until "false"'
      '--customize-hook=mkdir -p "$1/root/debs" && chroot "$1" sh -c "cd /root/debs && apt-get -q download containerd/trixie containerd/sid"'
      '--setup-hook=mkdir -p "$1/etc/apt/preferences.d" && printf "Package: systemd systemd-sysv libsystemd-shared libsystemd0\nPin: release n=trixie\nPin-Priority: 1001\n" >"$1/etc/apt/preferences.d/systemd-trixie"')
    INST_MMDEBSTRAP_SOURCES=("deb http://deb.debian.org/debian sid main" "deb http://deb.debian.org/debian trixie main") ;;
  *) bail "INST_SUITE=$1: not a suite the install tests know (bookworm, trixie, sid)" ;;
  esac
}
_inst_suite "$INST_SUITE"
INST_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

inst_root() {
  iob_need mmdebstrap systemd-nspawn nsenter tar flock sha256sum
  local pkgs key dir tmp rc
  pkgs=$(printf '%s\n' "${INST_BASE_PKGS[@]}" "$@" | sort -u | paste -sd, -)
  key=$(printf '%s %s %s' "$INST_SUITE" "$pkgs" "${INST_MMDEBSTRAP_OPTS[*]} ${INST_MMDEBSTRAP_SOURCES[*]}" |
    sha256sum | cut -c1-16)
  dir=$IOB_B/install
  mkdir -p "$dir"
  INST_TAR=$dir/root-$INST_SUITE-$key.tar
  # One build per package list even when two suites ask at once.
  exec {_inst_lock}>"$INST_TAR.lock"
  flock "$_inst_lock"
  if [ ! -s "$INST_TAR" ]; then
    diag "building $INST_TAR: mmdebstrap $INST_SUITE with $pkgs"
    tmp=$dir/.tmp-$key-$$.tar # a name ending in .tar: mmdebstrap writes a tarball
    mmdebstrap --variant=minbase "${INST_MMDEBSTRAP_OPTS[@]}" --include="$pkgs" "$INST_SUITE" "$tmp" "${INST_MMDEBSTRAP_SOURCES[@]}" \
      >"$dir/mmdebstrap-$key.log" 2>&1
    rc=$?
    if [ $rc -ne 0 ]; then
      sed 's/^/# mmdebstrap: /' "$dir/mmdebstrap-$key.log" | tail -20
      rm -f "$tmp"
      flock -u "$_inst_lock"
      bail "mmdebstrap failed ($rc); log: $dir/mmdebstrap-$key.log"
    fi
    mv "$tmp" "$INST_TAR"
  fi
  flock -u "$_inst_lock"
  exec {_inst_lock}>&-
  printf '%s\n' "$pkgs" >"$INST_TAR.pkgs"
}

inst_root_of() {
  local INST_SUITE=$1 INST_TAR INST_BASE_PKGS INST_MMDEBSTRAP_OPTS INST_MMDEBSTRAP_SOURCES \
    INST_NSPAWN_ENV INST_INIT_ARGS
  _inst_suite "$1"
  inst_root "${@:2}"
  REPLY=$INST_TAR
}

# _inst_leader NSPAWN_PID: the pid (host's view) of the guest's PID 1.
_inst_leader() {
  local p c ns
  for p in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
    for c in "$p" $(cat /proc/"$p"/task/*/children 2>/dev/null); do
      ns=$(awk '$1 == "NSpid:" { print $NF }' /proc/"$c"/status 2>/dev/null)
      [ "$ns" = 1 ] && { echo "$c"; return 0; }
    done
  done
  return 1
}

inst_boot() {
  [ -n "${INST_TAR:-}" ] || bail "inst_boot: call inst_root first"
  INST_NAME=$1
  INST_ROOT=$IOB_T/$1
  mkdir -p "$INST_ROOT"
  tar -xf "$INST_TAR" -C "$INST_ROOT" || bail "inst_boot: cannot unpack $INST_TAR"
  # No login prompt on the console, no fight over it.
  ln -sf /dev/null "$INST_ROOT/etc/systemd/system/console-getty.service"
  INST_LOG=$IOB_T/$1.console
  env SYSTEMD_SECCOMP=0 "${INST_NSPAWN_ENV[@]}" systemd-nspawn -D "$INST_ROOT" --machine="$1" --boot \
    --register=no --keep-unit --capability=all --console=read-only -- "${INST_INIT_ARGS[@]}" \
    >"$INST_LOG" 2>&1 </dev/null &
  INST_NSPAWN=$!
  at_exit "inst_halt"
  local i
  INST_PID=
  for ((i = 0; i < 200; i++)); do
    INST_PID=$(_inst_leader "$INST_NSPAWN") && break
    kill -0 "$INST_NSPAWN" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$INST_PID" ]; then
    sed 's/^/# console: /' "$INST_LOG" | tail -20
    bail "inst_boot $1: systemd-nspawn did not start a PID 1"
  fi
  # systemctl answers once PID 1 listens on its private socket.
  local state
  for ((i = 0; i < 600; i++)); do
    state=$(timeout 120 nsenter -t "$INST_PID" -a -r -w env -i PATH="$INST_PATH" \
      systemctl is-system-running --wait 2>&1)
    case $state in *"Failed to connect"*) sleep 0.1 ;; *) break ;; esac
  done
  case $state in
  running | degraded) ;;
  *)
    sed 's/^/# console: /' "$INST_LOG" | tail -30
    bail "inst_boot $1: systemctl is-system-running says '$state'"
    ;;
  esac
  [ "$state" = running ] || inst_exec systemctl --failed --no-legend | sed 's/^/# failed unit: /'
  # Writable v1 hierarchies (runc makes the containers' cgroups there).
  # (a guest on cgroup v2, INST_NSPAWN_ENV, has nothing to remount)
  inst_exec sh -c '[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] && exit 0
    for d in /sys/fs/cgroup/*/; do
      c=$(basename "$d"); [ -L "${d%/}" ] && continue
      case $c in systemd | unified) continue ;; esac
      umount -l "$d" && mount -t cgroup -o "$c" cgroup "$d"
    done' || bail "inst_boot $1: cannot remount the cgroup hierarchies writable"
}

# wait_for SECONDS 'CONDITION': true once CONDITION is (a watchdog).
wait_for() {
  local i
  for ((i = 0; i < $1 * 10; i++)); do eval "$2" && return 0; sleep 0.1; done
  return 1
}

inst_exec() {
  [ -n "${INST_PID:-}" ] || { echo "inst_exec: no guest" >&2; return 125; }
  nsenter -t "$INST_PID" -a -r -w env -i PATH="$INST_PATH" HOME=/root LANG=C.UTF-8 \
    DEBIAN_FRONTEND=noninteractive "$@"
}

inst_put() {
  [ -n "${INST_PID:-}" ] || { echo "inst_put: no guest" >&2; return 125; }
  cp "$1" "/proc/$INST_PID/root$2"
}

inst_halt() {
  [ -n "${INST_NSPAWN:-}" ] || return 0
  if kill -0 "$INST_NSPAWN" 2>/dev/null; then
    inst_exec systemctl poweroff >/dev/null 2>&1 || kill -TERM "$INST_NSPAWN" 2>/dev/null
    local i
    for ((i = 0; i < 300; i++)); do kill -0 "$INST_NSPAWN" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$INST_NSPAWN" 2>/dev/null && { diag "inst_halt: $INST_NAME did not power off; killing"; kill -KILL "$INST_NSPAWN"; }
  fi
  wait "$INST_NSPAWN" 2>/dev/null
  INST_NSPAWN='' INST_PID=''
  return 0
}

# inst_restart UNIT: `systemctl restart UNIT` in the guest.  These tests
# restart containerd far more often than an admin does, and dpkg restarts
# it too when it upgrades containerd; systemd's default start limit (5
# starts in 10 s) is for crash loops and refuses such a start ("start of
# the service was attempted too often").  reset-failed flushes that counter
# (systemd.unit(5), StartLimitIntervalSec=); a unit that cannot start still
# fails the restart.
inst_restart() {
  inst_exec systemctl reset-failed "$1" >/dev/null 2>&1
  inst_exec systemctl restart "$1"
}

# inst_containerd_version: the version of the guest's containerd, as its
# binary says it ("1.7.24", without Debian's "~ds1" suffix).
inst_containerd_version() {
  inst_exec containerd --version 2>/dev/null | awk '{ v = $3; sub(/^v/, "", v); sub(/[~+-].*/, "", v); print v }'
}
