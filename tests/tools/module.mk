# SPDX-License-Identifier: Apache-2.0
# Test tools built with the project (not tests themselves): programs that
# integration tests drive.  build/tests/NAME, so the VM image copies them
# (tests/vm/build.sh).
#
# ttrpc-publish: our ttrpc client against containerd's ttrpc server, with
# containerd's event protos (tests/integration/ttrpc-events.sh).
PROGRAMS += tests/ttrpc-publish
$(eval $(call prog,tests/ttrpc-publish,tests/tools/ttrpc_publish.c,ttrpc proto common))

# blklat-cmp: io.stat and the agent's BPF program's map read together per
# window for the same cgroups (bench/sampler-v2.sh, run in tests/vm).
PROGRAMS += tests/blklat-cmp
$(eval $(call prog,tests/blklat-cmp,tests/tools/blklat_cmp.c,agent agentcore cg2 common))
