# SPDX-License-Identifier: Apache-2.0
# tests/integration/: the integration suites, one folder per feature
# (shim/, agent/, hook/, packaging/, e2e/; their libraries in lib/, their
# programs in tests/tools/).  Every suite there runs in make check, in the
# order of its path (no suite depends on another's having run).  Left out:
# lib/, and the suites named *-v2.sh, which need a pure cgroup v2 host
# with the io controller and bail out on the hybrid hosts make check runs
# on; the VM runs them (tests/vm/guest/integration.list).
INTEG_TESTS += $(filter-out tests/integration/lib/% %-v2.sh,$(sort $(wildcard tests/integration/*/*.sh)))
# Not moved to a folder yet:
INTEG_TESTS += tests/integration/protect.sh tests/integration/learn.sh \
	tests/integration/agent-faults.sh tests/integration/agent-hardening.sh
INTEG_TESTS += tests/integration/agent-v1-root.sh tests/integration/throttle.sh
INTEG_TESTS += tests/integration/weights-restore.sh tests/integration/trust.sh tests/integration/journal.sh
INTEG_TESTS += tests/integration/tenants.sh tests/integration/agent-lock.sh
INTEG_TESTS += tests/integration/ctl.sh tests/integration/agent-latency.sh tests/integration/agent-sampler-bpf.sh
INTEG_TESTS += tests/integration/protect-slo.sh tests/integration/protect-freeze.sh
INTEG_TESTS += tests/integration/pod-metrics.sh
INTEG_TESTS += tests/integration/kubepods.sh
