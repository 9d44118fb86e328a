#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# One half of the VM suite, for CI: tests/run.sh gives every test program
# TEST_TIMEOUT (1200 s) and the whole VM suite takes 10-13 minutes under
# emulation, so check-all boots the VM twice, each boot with a share of the
# sections (VM_ONLY, see run.sh).  guest/integration.list says where the
# second boot starts (the line "#@second-boot"):
#   tests/vm/run-part.sh first    the guest's own t-*.sh and the suites
#                                 listed before the mark
#   tests/vm/run-part.sh second   the suites listed after it
# Together they run exactly what tests/vm/run.sh runs in one boot.
set -euo pipefail
VMDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LIST=$VMDIR/guest/integration.list
# A VM_ONLY of the caller's own (make check-vm VM_ONLY=...): one boot runs it.
if [ -n "${VM_ONLY:-}" ]; then
  [ "${1:-}" = second ] && { echo "1..0 # SKIP VM_ONLY given: the first boot runs it"; exit 0; }
  exec "$VMDIR/run.sh"
fi
grep -qx '#@second-boot' "$LIST" || { echo "$0: no '#@second-boot' line in $LIST" >&2; exit 2; }
# Suite names before (first) or after (second) the mark, comments dropped.
suites() {
  awk -v want="$1" '$0 == "#@second-boot" { second = 1; next }
    { sub(/#.*/, ""); gsub(/[[:space:]]/, "") }
    $0 != "" && ((want == "second") == (second == 1)) { print }' "$LIST"
}
case "${1:-}" in
first) only="$(cd "$VMDIR/guest" && ls t-*.sh) $(suites first)" ;;
second) only=$(suites second) ;;
*)
  echo "usage: $0 first|second" >&2
  exit 2
  ;;
esac
VM_ONLY=$(echo $only) exec "$VMDIR/run.sh"
