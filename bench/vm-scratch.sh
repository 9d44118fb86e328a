# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash
# Sourced by the benches that boot tests/vm with a guest of their own
# (sampler-v2.sh, calibrate-wcd-vm.sh).
#
# vm_scratch NAME: a scratch copy, in a fresh T (/tmp/NAME.XXXXXX, removed
# at exit), of what tests/vm/build.sh takes from the tree: tests/vm,
# tests/integration, tests/fixtures, packaging/containerd and the bench
# libraries; with the guest's own t-*.sh and host suites left out.  Sets T
# and G (the copy's tests/vm/guest, where the bench puts its t-*.sh).
vm_scratch() {
  T=$(mktemp -d "/tmp/$1.XXXXXX")
  # shellcheck disable=SC2064 # T is fixed now
  trap "rm -rf '$T'" EXIT
  mkdir -p "$T/tests" "$T/bench" "$T/packaging"
  tar -C "$TOP/tests" --exclude=vm/cache -cf - vm integration fixtures | tar -C "$T/tests" -xf -
  cp -r "$TOP/packaging/containerd" "$T/packaging/"
  cp "$TOP"/bench/*-lib.sh "$T/bench/"
  G=$T/tests/vm/guest
  rm -f "$G"/t-*.sh
  : >"$G/integration.list" # no host suites in this VM run
}
