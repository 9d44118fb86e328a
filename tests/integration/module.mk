# SPDX-License-Identifier: Apache-2.0
# tests/integration: suites that are not one component's, and their tools.
$(eval $(call prog,tests/shim-start,tests/integration/shim_start.c,ttrpc proto common))
PROGRAMS += tests/shim-start
$(eval $(call prog,tests/shim-call,tests/integration/shim_call.c,ttrpc proto common))
PROGRAMS += tests/shim-call
INTEG_TESTS += tests/integration/admission-more.sh tests/integration/admission-node.sh tests/integration/protect.sh tests/integration/learn.sh \
	tests/integration/agent-faults.sh tests/integration/agent-hardening.sh tests/integration/podman-hooks.sh
INTEG_TESTS += tests/integration/cri-pods.sh
$(eval $(call prog,tests/cg-throttle,tests/integration/cg_throttle.c,cg2 common))
PROGRAMS += tests/cg-throttle
INTEG_TESTS += tests/integration/agent-v1-root.sh tests/integration/throttle.sh
INTEG_TESTS += tests/integration/weights-restore.sh tests/integration/trust.sh tests/integration/journal.sh
INTEG_TESTS += tests/integration/tenants.sh tests/integration/agent-lock.sh tests/integration/hook-owner.sh
INTEG_TESTS += tests/integration/version.sh
INTEG_TESTS += tests/integration/ctl.sh tests/integration/agent-latency.sh tests/integration/agent-sampler-bpf.sh
INTEG_TESTS += tests/integration/agent-sampler-auto.sh
INTEG_TESTS += tests/integration/soak.sh
INTEG_TESTS += tests/integration/hook-pidfd.sh
INTEG_TESTS += tests/integration/shim-hungrunc.sh
INTEG_TESTS += tests/integration/protect-slo.sh tests/integration/protect-freeze.sh
INTEG_TESTS += tests/integration/npd-config.sh
INTEG_TESTS += tests/integration/k8s-monitoring.sh tests/integration/pod-metrics.sh
INTEG_TESTS += tests/integration/static.sh
INTEG_TESTS += tests/integration/kubepods.sh
