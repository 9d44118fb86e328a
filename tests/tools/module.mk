# SPDX-License-Identifier: Apache-2.0
# Test tools built with the project (not tests themselves): programs that
# integration tests drive.  build/tests/NAME, so the VM image copies them
# (tests/vm/build.sh).
#
# ttrpc-publish: our ttrpc client against containerd's ttrpc server, with
# containerd's event protos (tests/integration/shim/ttrpc-events.sh).
PROGRAMS += tests/ttrpc-publish
$(eval $(call prog,tests/ttrpc-publish,tests/tools/ttrpc_publish.c,ttrpc proto common))

# shim-start: a Task.Start with a deadline (ttrpc timeout_nano) straight to
# a shim (tests/integration/shim/admission-options.sh).
PROGRAMS += tests/shim-start
$(eval $(call prog,tests/shim-start,tests/tools/shim_start.c,ttrpc proto common))
# shim-call: one Task RPC straight to a shim (tests/integration/shim/shim-slowcreate.sh).
PROGRAMS += tests/shim-call
$(eval $(call prog,tests/shim-call,tests/tools/shim_call.c,ttrpc proto common))
# cg-throttle: cgroupv2/throttle.h on a container's cgroup
# (tests/integration/agent/throttle.sh).
PROGRAMS += tests/cg-throttle
$(eval $(call prog,tests/cg-throttle,tests/tools/cg_throttle.c,cg2 common))
# cri_client.py: a CRI client in Python (gRPC runtime.v1, as the kubelet
# speaks it) for tests/integration/e2e/cri-pods.sh, cri-meta.sh and
# tests/install/; it compiles proto/cri/api.proto itself.
# cri_fake.py: a CRI that only lists sandboxes and containers it is told
# of (tests/integration/agent/kubepods.sh).

# blklat-cmp: io.stat and the agent's BPF program's map read together per
# window for the same cgroups (bench/sampler-v2.sh, run in tests/vm).
PROGRAMS += tests/blklat-cmp
$(eval $(call prog,tests/blklat-cmp,tests/tools/blklat_cmp.c,agent agentcore cg2 common))
