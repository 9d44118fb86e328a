#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/agent-overhead.sh (sampling only) and bench/kubepods-overhead.sh
# with real containers on a pure cgroup v2 machine: inside the VM of
# tests/vm (qemu TCG, 2 vCPUs, VM_MEM MiB, cgroup2 with io memory pids cpu,
# ext4 on an emulated NVMe drive at /data).  Each container a cgroup of
# its own with the io controller, one process reading 4 KiB with O_DIRECT
# from /tmp (on /data) every REAL_IO_S seconds; the BPF map is counted with
# the host's bpftool, copied in.  The VM's own containerd and iobatchd are
# stopped first.  Under emulation every CPU number is
# several times the host's: compare the rows with each other, not with
# the host's.  The admission part is not run here (ADMISSION=0).
# Writes OUT_DIR/agent-overhead-vm.json and OUT_DIR/kubepods-overhead-vm.json
# (the benches' own JSON, as they wrote it in the guest).
#
#   make all build/bench/iob-real-ctr build/bench/iob-agent-fixture
#   OUT_DIR=/tmp/ovh bench/agent-overhead-vm.sh
#
# Environment: COUNTS ("0 100 1000"), WINDOW (30), SAMPLERS (the bench's
# default for a host with the io controller in v2), KP_COUNTS (COUNTS;
# empty: no kubepods run), REAL_IO_S (5: the emulated disk serves a few
# hundred requests a second), OUT_DIR (bench/results), B (build), VM_MEM
# (4096), VM_TIMEOUT (5400 s; the guest test gets 120 s less).
# Time, with the boot: COUNTS=0 KP_COUNTS=1000 WINDOW=10 took 4 minutes;
# COUNTS=1000 SAMPLERS=bpf/bpf WINDOW=10 19 minutes, most of it checks
# that forked a process per container (since made builtins).  The
# defaults (four samplers at 0, 100 and 1000, then the kubepods bench at
# the same counts) are not timed: an estimated 25-40 minutes.  COUNTS
# and KP_COUNTS split the run.
set -euo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
B=${B:-build}
case "$B" in /*) ;; *) B=$TOP/$B ;; esac
OUT_DIR=${OUT_DIR:-$TOP/bench/results}
COUNTS=${COUNTS:-"0 100 1000"}
KP_COUNTS=${KP_COUNTS-$COUNTS}
WINDOW=${WINDOW:-30}
REAL_IO_S=${REAL_IO_S:-5}
VM_TIMEOUT=${VM_TIMEOUT:-5400}
GUEST_TIMEOUT=$((VM_TIMEOUT - 120))
for p in bin/iobatchd bin/iobatchctl bench/iob-real-ctr bench/iob-agent-fixture; do
  [ -x "$B/$p" ] || { echo "agent-overhead-vm: build $B/$p first (make all $p)" >&2; exit 1; }
done
command -v bpftool >/dev/null || { echo "agent-overhead-vm: 'bpftool' not found" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "agent-overhead-vm: must run as root" >&2; exit 1; }
mkdir -p "$OUT_DIR"
OUT_DIR=$(cd "$OUT_DIR" && pwd)
HOST_LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg) # the guest's own is in its JSON
# shellcheck source=bench/vm-scratch.sh
. "$TOP/bench/vm-scratch.sh"
vm_scratch aovm
# the VM takes $B/bin and $B/tests: a build dir of links with the bench's
# programs and bpftool among the test helpers
SB=$T/build
mkdir -p "$SB/bin" "$SB/tests"
cp "$B"/bin/* "$SB/bin/"
cp "$B/bench/iob-real-ctr" "$B/bench/iob-agent-fixture" "$(command -v bpftool)" "$SB/tests/"
# the benches' scripts, as they are in this tree, go in with the guest test
BUNDLE=$(tar -C "$TOP" -czf - bench/agent-overhead.sh bench/kubepods-overhead.sh bench/agent/lib.sh \
  bench/agent/report-md.jq | base64 -w0)
COMMIT=$(git -C "$TOP" log -1 --format=%h 2>/dev/null || echo unknown) # the tree measured
{
  cat <<GUEST
#!/usr/bin/env bash
# guest: the sampling benches with real containers on cgroup v2
echo "1..2"
BUNDLE=$BUNDLE
COUNTS="$COUNTS" KP_COUNTS="$KP_COUNTS" WINDOW="$WINDOW" REAL_IO_S="$REAL_IO_S" SAMPLERS="${SAMPLERS:-}"
GUEST
  cat <<'GUEST'
cd /iobatch
echo "$BUNDLE" | base64 -d | tar -xzf -
mkdir -p build/bench
cp build/tests/iob-real-ctr build/tests/iob-agent-fixture build/bench/
export PATH=/iobatch/build/tests:$PATH
echo "#RAW kernel $(uname -r)"
# the VM's own containerd and iobatchd (started by /init, PID 1's
# children) would share the two vCPUs and the disk with what is measured
for p in $(pgrep -P 1 -x iobatchd) $(pgrep -P 1 -x containerd); do kill "$p"; done
sleep 2
# pids_max, threads: what the VM can hold
echo "# pid_max $(cat /proc/sys/kernel/pid_max), threads-max $(cat /proc/sys/kernel/threads-max), MemTotal $(awk '/MemTotal/ { print $2 }' /proc/meminfo) kB"
n=0
run() { # NAME SCRIPT ENV...: one bench, its JSON as a #RAW line
  local name=$1 script=$2 out=/tmp/ovm-$1
  shift 2
  n=$((n + 1))
  mkdir -p "$out"
  if env "$@" OUT_DIR="$out" REAL_DIR=/tmp WINDOW="$WINDOW" REAL_IO_S="$REAL_IO_S" B=build \
    "$script" >"$out/log" 2>&1; then
    echo "#RAW $name $(jq -c . "$out"/*.json)"
    echo "ok $n - $name"
  else
    sed "s/^/# $name: /" "$out/log" | tail -30
    echo "not ok $n - $name"
  fi
  grep -h '^agent-overhead:\|^kubepods-overhead:' "$out/log" | cut -c1-300 | sed 's/^/# /'
}
smp=()
[ -z "$SAMPLERS" ] || smp=(SAMPLERS="$SAMPLERS")
run agent-overhead bench/agent-overhead.sh COUNTS="$COUNTS" ADMISSION=0 "${smp[@]}"
if [ -n "$KP_COUNTS" ]; then
  run kubepods-overhead bench/kubepods-overhead.sh COUNTS="$KP_COUNTS"
else
  echo "ok 2 - kubepods-overhead # SKIP KP_COUNTS is empty"
fi
GUEST
} >"$G/t-agent-overhead.sh"
chmod +x "$G/t-agent-overhead.sh"
rc=0
VM_CACHE=$TOP/tests/vm/cache B=$SB VM_MEM=${VM_MEM:-4096} VM_TIMEOUT=$VM_TIMEOUT VM_TEST_TIMEOUT=$GUEST_TIMEOUT \
  "$T/tests/vm/run.sh" >"$T/tap" 2>&1 || rc=$?
grep -v '^#RAW ' "$T/tap" | grep -E '^(ok|not ok|# (agent|kubepods)-overhead|# pid_max)' || true
for name in agent-overhead kubepods-overhead; do
  line=$(grep "^#RAW $name " "$T/tap" | head -1 | cut -d' ' -f3- || true) # none: that bench did not run
  [ -n "$line" ] || continue
  echo "$line" | jq --arg agent "iobatchd at commit $COMMIT" --arg kernel "$(grep '^#RAW kernel ' "$T/tap" | cut -d' ' -f3-)" \
    --arg hl "start $HOST_LOAD_START, end $(cut -d' ' -f1-3 /proc/loadavg)" \
    '. + {host: "tests/vm (qemu TCG, cgroup v2)", kernel: $kernel, agent: $agent, host_loadavg: $hl,
          command: ("bench/agent-overhead-vm.sh: " + .command)}' >"$OUT_DIR/$name-vm.json"
  echo "agent-overhead-vm: wrote $OUT_DIR/$name-vm.json"
done
if [ $rc -ne 0 ]; then
  echo "agent-overhead-vm: the VM run failed; its TAP:" >&2
  grep -v '^#RAW ' "$T/tap" | tail -40 >&2
fi
exit $rc
