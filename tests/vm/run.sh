#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Run the guest test suite (tests/vm/guest/t-*.sh) inside a pure cgroup v2 VM
# and print its results as one TAP stream for tests/run.sh.
#
# Builds the kernel, initramfs and disk with tests/vm/build.sh, boots them with
# qemu's TCG emulation (no KVM: nested KVM hangs on our machines) with the
# disk as an emulated NVMe drive, and reads the guest's TAP back from the
# serial console between per-boot markers (see tests/vm/guest/init).  Fails
# when a guest test fails, when a guest test or the VM does not finish, or
# when a plan is short.  Everything of one run (image, disk, serial log) is in
# its own mktemp directory, so runs by different people do not collide; only
# the kernel is shared, in tests/vm/cache/ (under a lock).  The serial log of
# the last run to finish is copied to tests/vm/cache/serial.log.
#
# Environment: VM_ONLY (run only these sections: guest t-*.sh names and/or
# tests/integration suites by base name or path, e.g. "t-shim.sh
# shim-group.sh agent/agent-sampler.sh"; default:
# every t-*.sh and every guest/integration.list entry), VM_TIMEOUT (whole VM,
# s, default 1080), VM_TEST_TIMEOUT (each guest test, s, default 420), VM_SMP
# (2), VM_MEM (MiB, 2048), VM_CPU (qemu -cpu, max), B (build).
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
VMDIR=$TOP/tests/vm
# A whole run took 280-400 s before shim-run, shim-group and shim-crun
# joined the list, and about 600-700 s since; shim-crun alone (four suites
# with crun) takes about 170 s.  VM_TIMEOUT stays below tests/run.sh's 1200 s
# for one test program, build and a second boot included.
VM_TIMEOUT=${VM_TIMEOUT:-1080}
VM_TEST_TIMEOUT=${VM_TEST_TIMEOUT:-420}
VM_SMP=${VM_SMP:-2}
VM_MEM=${VM_MEM:-2048}
VM_CPU=${VM_CPU:-max}
KEEP_LOG=$VMDIR/cache/serial.log

WORK=$(mktemp -d /tmp/iobvm.XXXXXX)
TPID=
cleanup() {
  local pid
  set +e # best effort: every step runs even when an earlier one fails
  # timeout forwards TERM to qemu; the pidfile covers a timeout killed by -9.
  [ -n "$TPID" ] && kill "$TPID" 2>/dev/null
  if [ -s "$WORK/qemu.pid" ]; then
    pid=$(cat "$WORK/qemu.pid")
    if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = qemu-system-x86 ]; then
      kill "$pid" 2>/dev/null
      sleep 1
      kill -9 "$pid" 2>/dev/null
    fi
  fi
  [ -n "$TPID" ] && wait "$TPID" 2>/dev/null
  if [ -f "$WORK/serial.log" ]; then
    # cp + mv: a concurrent run's copy is never seen half-written.
    mkdir -p "$(dirname "$KEEP_LOG")"
    cp "$WORK/serial.log" "$KEEP_LOG.$$" 2>/dev/null && mv -f "$KEEP_LOG.$$" "$KEEP_LOG"
    rm -f "$KEEP_LOG.$$"
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP

# bail_tap REASON: the VM could not be run at all.
bail_tap() {
  echo "1..1"
  echo "not ok 1 - vm: $1"
  exit 1
}

command -v qemu-system-x86_64 >/dev/null || bail_tap "qemu-system-x86_64 not found (run scripts/install-deps.sh)"

# The sections the guest runs after init, and in which order: GUEST_TESTS
# (t-*.sh) then SUITES (paths under tests/integration/, DIR/NAME.sh).
# VM_ONLY picks a subset; a name that is neither is an error, not an empty
# run.
GUEST_TESTS=()
SUITES=()
SUITE_DIR=$TOP/tests/integration
# suite_path NAME: the suite NAME names, as DIR/NAME.sh under
# tests/integration/ (its path there, or its base name: the base names of
# the suites are unique); "integration/" before either is allowed.
suite_path() {
  local t=${1#integration/} p m=()
  case "$t" in
  "" | /* | *..* | lib/* | */*/*) ;;
  */*) [ -f "$SUITE_DIR/$t" ] && [[ "$t" == *.sh ]] && m=("$t") ;;
  *) for p in "$SUITE_DIR"/*/"$t"; do
      [ -f "$p" ] && [[ "$p" == *.sh && "$p" != "$SUITE_DIR"/lib/* ]] && m+=("${p#"$SUITE_DIR"/}")
    done ;;
  esac
  [ ${#m[@]} -eq 1 ] || return 1
  echo "${m[0]}"
}
if [ -n "${VM_ONLY:-}" ]; then
  for t in $VM_ONLY; do
    case "$t" in
    t-*.sh) [ -f "$VMDIR/guest/$t" ] || bail_tap "VM_ONLY: no guest test tests/vm/guest/$t"
      GUEST_TESTS+=("$t") ;;
    *) p=$(suite_path "$t") || bail_tap "VM_ONLY: '$t' names no one suite under tests/integration/"
      SUITES+=("$p") ;;
    esac
  done
else
  for t in "$VMDIR"/guest/t-*.sh; do GUEST_TESTS+=("$(basename "$t")"); done
  for t in $(sed 's/#.*//' "$VMDIR/guest/integration.list"); do
    p=$(suite_path "$t") || bail_tap "guest/integration.list: '$t' names no one suite under tests/integration/"
    SUITES+=("$p")
  done
fi
# The guest is always told what to run (iobatch.only), with the suites'
# paths resolved here.
only=("${GUEST_TESTS[@]}" "${SUITES[@]}")
ONLY=$(IFS=,; echo "${only[*]}")

t0=$(date +%s.%N)
if ! "$VMDIR/build.sh" "$WORK" >"$WORK/build.log" 2>&1; then
  sed 's/^/# /' "$WORK/build.log"
  bail_tap "cannot build the VM image (tests/vm/build.sh)"
fi
t1=$(date +%s.%N)

NONCE=$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
# cryptomgr.notests: the kernel's crypto self-tests are slow under TCG, and
# once one hung a vCPU for the whole run (soft lockup in cryptomgr_test).
APPEND="console=ttyS0 quiet loglevel=1 panic=1 cryptomgr.notests iobatch.nonce=$NONCE iobatch.test_timeout=$VM_TEST_TIMEOUT"
# guest/init runs these (comma-separated), in this order.
APPEND+=" iobatch.only=$ONLY"
# A guest that shows no sign of life (/init's UP marker) within
# VM_BOOT_TIMEOUT seconds hung in the emulated kernel's boot: boot it once
# more instead of waiting out VM_TIMEOUT.  A hang after UP is a test result.
VM_BOOT_TIMEOUT=${VM_BOOT_TIMEOUT:-150}
boot_vm() { # remaining-seconds
  rm -f "$WORK/serial.log" "$WORK/qemu.pid"
  # -nodefaults: no NIC, no VGA; the serial port is the only way in or out.
  timeout -k 10 "$1" qemu-system-x86_64 \
    -accel tcg,thread=multi -cpu "$VM_CPU" -smp "$VM_SMP" -m "$VM_MEM" \
    -nodefaults -display none -no-reboot -monitor none \
    -serial "file:$WORK/serial.log" -pidfile "$WORK/qemu.pid" \
    -kernel "$WORK/vmlinuz" -initrd "$WORK/initramfs.cpio.gz" -append "$APPEND" \
    -drive "file=$WORK/disk.img,format=raw,if=none,id=d0,cache=none" \
    -device nvme,drive=d0,serial=iobvm0 \
    </dev/null >"$WORK/qemu.out" 2>&1 &
  TPID=$!
}
qrc=0
boot_start=$(date +%s)
boot_vm "$VM_TIMEOUT"
for attempt in 1 2; do
  while kill -0 "$TPID" 2>/dev/null && ! grep -qa "@@IOBVM:$NONCE:UP" "$WORK/serial.log" 2>/dev/null &&
    [ $(($(date +%s) - boot_start)) -lt "$VM_BOOT_TIMEOUT" ]; do
    sleep 1
  done
  if [ "$attempt" -eq 1 ] && kill -0 "$TPID" 2>/dev/null &&
    ! grep -qa "@@IOBVM:$NONCE:UP" "$WORK/serial.log" 2>/dev/null; then
    echo "# vm: no sign of life after ${VM_BOOT_TIMEOUT}s (kernel boot hung under emulation); booting once more"
    tr -d '\r' <"$WORK/serial.log" 2>/dev/null | tail -n 5 | sed 's/^/#   /'
    kill "$TPID" 2>/dev/null
    wait "$TPID" 2>/dev/null
    # The second boot gets what is left of VM_TIMEOUT, not all of it again.
    left=$((VM_TIMEOUT - ($(date +%s) - boot_start)))
    boot_vm $((left > 1 ? left : 1)) # timeout 0 would mean none
    boot_start=$(date +%s)
    continue
  fi
  break
done
# A vCPU stuck for a minute in the emulated kernel (its watchdog says
# "soft lockup") is the emulator, not a test: seen here with runc's init
# spinning on one vCPU and runc on the other, both until VM_TIMEOUT.  Boot
# once more, with what is left of VM_TIMEOUT; the second boot's log is the
# result, and a lockup there is waited out as before.
while kill -0 "$TPID" 2>/dev/null; do
  if tr -d '\r' <"$WORK/serial.log" 2>/dev/null |
    grep -qaE 'soft lockup - CPU#[0-9]+ stuck for ([6-9][0-9]|[1-9][0-9]{2,})s'; then
    echo "# vm: a vCPU stuck in the emulated kernel; booting once more. The serial log:"
    tr -d '\r' <"$WORK/serial.log" | grep -a "soft lockup" | head -n 2 | sed 's/^/#   /'
    kill "$TPID" 2>/dev/null
    wait "$TPID" 2>/dev/null
    left=$((VM_TIMEOUT - ($(date +%s) - boot_start)))
    boot_vm $((left > 1 ? left : 1))
    break
  fi
  sleep 2
done
wait "$TPID" || qrc=$?
TPID=
t2=$(date +%s.%N)

expected="init"
for t in "${GUEST_TESTS[@]}"; do expected+=" $t"; done
for t in "${SUITES[@]}"; do expected+=" integration/$t"; done

# Renumber the guest sections into one stream; every way of not finishing
# becomes a "not ok" line so that tests/run.sh counts it.
tr -d '\r' <"$WORK/serial.log" 2>/dev/null | awk -v m="@@IOBVM:$NONCE:" -v expected="$expected" '
  function emit(s) { out[++nout] = s }
  function result(okay, desc) {
    n++
    emit((okay ? "ok " : "not ok ") n " - " desc)
    if (!okay) bad++
  }
  function finish(name, why) {
    if (why != "") result(0, name ": " why)
    else if (plan[name] == "") result(0, name ": printed no TAP plan")
    else if (cnt[name] < plan[name]) result(0, name ": ran " cnt[name] " of " plan[name] " planned tests")
    else if (cnt[name] > plan[name]) result(0, name ": ran " cnt[name] " tests, planned " plan[name])
    if (why == "" && rc[name] != 0 && nfail[name] == 0) result(0, name ": exited with status " rc[name])
    cur = ""
  }
  {
    p = index($0, m)
    if (p) {
      split(substr($0, p + length(m)), f, " ")
      if (f[1] == "BEGIN") {
        if (cur != "") finish(cur, "did not finish")
        cur = f[2]; began[cur] = 1; plan[cur] = ""; cnt[cur] = 0; nfail[cur] = 0
      } else if (f[1] == "END" && f[2] == cur) {
        rc[cur] = f[3]
        if (f[4] != "") emit("# " cur ": " f[4] " s")
        finish(cur, "")
      } else if (f[1] == "UP") {
        up = f[2]
      } else if (f[1] == "DONE") {
        done = f[2]
      }
      next
    }
    if (cur == "") next
    if ($0 ~ /^1\.\.[0-9]+/ && plan[cur] == "") { plan[cur] = substr($1, 4) + 0; next }
    if ($0 ~ /^(not )?ok( |$)/) {
      okay = ($0 !~ /^not /)
      d = $0
      sub(/^(not )?ok *[0-9]* *(- *)?/, "", d)
      cnt[cur]++
      if (!okay) nfail[cur]++
      result(okay, cur ": " d)
      next
    }
    if ($0 ~ /^Bail out!/) { result(0, cur ": " $0); next }
    if ($0 ~ /^#/) emit($0); else emit("# " cur "| " $0)
  }
  END {
    if (cur != "") finish(cur, "did not finish (VM timed out or crashed)")
    k = split(expected, e, " ")
    for (i = 1; i <= k; i++) if (!(e[i] in began)) result(0, e[i] ": never ran")
    if (done != "") result(1, "vm: came back (" done ")")
    else result(0, "vm: did not come back (no DONE marker)")
    print "1.." n
    for (i = 1; i <= nout; i++) print out[i]
    if (up != "") print "# vm: guest " up " when /init stage 2 began"
    exit (bad > 0)
  }' >"$WORK/tap" && trc=0 || trc=$?
cat "$WORK/tap"

awk -v a="$t0" -v b="$t1" -v c="$t2" -v rc="$qrc" 'BEGIN {
  printf "# vm: build %.1f s, qemu %.1f s (exit %d), whole %.1f s\n", b - a, c - b, rc, c - a }'
if [ "$qrc" -eq 124 ] || [ "$qrc" -eq 137 ]; then
  echo "# vm: qemu killed after VM_TIMEOUT=${VM_TIMEOUT}s"
fi
if [ "$trc" -ne 0 ]; then
  echo "# vm: serial log kept in ${KEEP_LOG#"$TOP"/}; its tail:"
  tr -d '\r' <"$WORK/serial.log" 2>/dev/null | tail -n 40 | sed 's/^/#   /'
  if [ -s "$WORK/qemu.out" ]; then sed 's/^/# qemu: /' "$WORK/qemu.out"; fi
  exit 1
fi
