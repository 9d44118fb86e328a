# SPDX-License-Identifier: Apache-2.0
# tests/vm: the guest suite run inside a pure cgroup v2 VM (qemu TCG, an
# emulated NVMe drive); see tests/vm/README.md.  check-all runs it with the
# other tests; check-vm runs it alone.
# Two boots (run-part.sh): each stays well inside tests/run.sh's TEST_TIMEOUT.
VM_TESTS += tests/vm/run-first.sh tests/vm/run-second.sh

check-vm: all
	B=$(B) tests/run.sh tests/vm/run-first.sh tests/vm/run-second.sh
