# SPDX-License-Identifier: Apache-2.0
# iobatchd (agent/).  libagentcore: config, profiles, protection's
# arithmetic (protect.c), latency histograms (lathist.c) and pod rules
# (podrules.c) (plain C; no dependency but common, jansson and the
# batcher), what iobatchctl links.  libagent: the admission state machine,
# the sampler, weights, protection and its levers (protection.c), the
# ttrpc server and the daemon around them.
agentcore_SRCS := agent/config.c agent/profiles.c agent/protect.c agent/lathist.c agent/podrules.c
$(eval $(call lib,agentcore,$(agentcore_SRCS)))

agent_SRCS := agent/admission.c agent/ctr.c agent/budget.c agent/lock.c agent/penalties.c agent/caps.c agent/freeze.c agent/ioprio.c agent/protection.c agent/pidwatch.c agent/restore.c agent/plan_async.c agent/sampler.c agent/weights.c agent/weighttree.c \
	agent/requests.c agent/server.c agent/daemon.c agent/metrics.c agent/metrics_server.c agent/latency.c agent/podmeta.c agent/kubepods.c agent/headroom.c agent/fdlimit.c agent/statesave.c
$(eval $(call lib,agent,$(agent_SRCS)))

# The block I/O latency program (agent/bpf/blklat.bpf.c): CO-RE, compiled
# with clang for the BPF target (no vmlinux.h: the structs it reads are
# declared in it), embedded in iobatchd as a bpftool skeleton.  Whatever
# links libagent links libbpf (-lbpf -lelf -lz; statically: libbpf.a,
# libelf.a, libz.a).
BPF_CLANG ?= clang
BPFTOOL ?= bpftool
BPF_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
$(B)/agent/bpf/blklat.bpf.o: agent/bpf/blklat.bpf.c agent/bpf/blklat.h
	@mkdir -p $(@D)
	@echo "  BPF     $<"
	$(Q)$(BPF_CLANG) -target bpf -O2 -g -D__TARGET_ARCH_$(BPF_ARCH) -I. \
		-I/usr/include/$(shell $(CC) -print-multiarch 2>/dev/null) -c -o $@ $<
$(B)/agent/bpf/blklat.skel.h: $(B)/agent/bpf/blklat.bpf.o
	@echo "  SKEL    $@"
	$(Q)$(BPFTOOL) gen skeleton $< name blklat > $@.tmp && mv $@.tmp $@
$(B)/agent/latency.o: $(B)/agent/bpf/blklat.skel.h
$(B)/agent/latency.o: ALL_CFLAGS += -I$(B)
LDLIBS += -lbpf -lelf -lz

AGENT_LIBS := agent agentcore wcd batch ttrpc cri cg2 proto common
PROGRAMS += bin/iobatchd
INSTALL_PROGRAMS += bin/iobatchd
$(eval $(call prog,bin/iobatchd,agent/main.c,$(AGENT_LIBS)))
