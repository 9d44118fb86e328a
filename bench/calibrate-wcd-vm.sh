#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Run bench/calibrate-wcd.sh inside the pure cgroup v2 VM of tests/vm (qemu
# TCG, the disk as an emulated NVMe drive): the same fio cases, classified
# from io.stat instead of the host's procfs fallback, printed as markdown.
#
#   make build/bin/wcd-probe && bench/calibrate-wcd-vm.sh > /tmp/cal-vm.md
#
# It boots a copy of tests/vm whose only guest test is the calibration
# (the project's own guest tests and integration suites are left out, and
# nothing in tests/vm is changed).  TCG is slow (a few hundred IOPS): rates are meaningless, the
# request sizes and shares that the detector uses are not.  Environment:
# VM_WCD_SIZE (64M), VM_WCD_RUNTIME (3 s), VM_WCD_REPS (1), VM_TIMEOUT
# (whole VM, 1800 s), B (build).
set -euo pipefail
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
B=${B:-build}
case "$B" in /*) ;; *) B=$TOP/$B ;; esac
[ -x "$B/bin/wcd-probe" ] || { echo "calibrate-wcd-vm: build $B/bin/wcd-probe first" >&2; exit 1; }
[ -x "$TOP/tests/vm/run.sh" ] || { echo "calibrate-wcd-vm: no tests/vm/run.sh" >&2; exit 1; }
# shellcheck source=bench/vm-scratch.sh
. "$TOP/bench/vm-scratch.sh"
vm_scratch wcdvm
cp "$TOP/bench/calibrate-wcd.sh" "$TOP/bench/calibrate-wcd-lib.sh" "$G/"
cat >"$G/t-wcd-calibrate.sh" <<GUEST
#!/usr/bin/env bash
# guest: the calibration on the NVMe drive (/data), io.stat as the source
echo "1..1"
WCD_DIR=/data/wcdcal WCD_SIZE=${VM_WCD_SIZE:-64M} WCD_RUNTIME=${VM_WCD_RUNTIME:-3} \\
  REPS=${VM_WCD_REPS:-1} WCD_PROBE=/iobatch/build/bin/wcd-probe \\
  bash /iobatch/tests/vm/guest/calibrate-wcd.sh >/tmp/cal.md 2>/tmp/cal.err
rc=\$?
sed 's/^/#MD /' /tmp/cal.md
sed 's/^/# calibrate: /' /tmp/cal.err
if [ \$rc -eq 0 ]; then echo "ok 1 - calibration ran"; else echo "not ok 1 - calibration failed (\$rc)"; fi
GUEST
chmod +x "$G/t-wcd-calibrate.sh"
rc=0
VM_CACHE=$TOP/tests/vm/cache B=$B VM_TIMEOUT=${VM_TIMEOUT:-1800} VM_TEST_TIMEOUT=${VM_TEST_TIMEOUT:-1700} \
  "$T/tests/vm/run.sh" >"$T/tap" 2>&1 || rc=$?
sed -n 's/^#MD //p' "$T/tap"
if [ $rc -ne 0 ]; then
  echo "calibrate-wcd-vm: the VM run failed; its TAP:" >&2
  grep -v '^#MD ' "$T/tap" | tail -40 >&2
fi
exit $rc
