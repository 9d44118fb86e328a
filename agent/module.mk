# SPDX-License-Identifier: Apache-2.0
# iobatchd (agent/).  libagentcore: the parts with no I/O of their own
# and no dependency but common, jansson and the batcher, which iobatchctl
# links too: the config parser (config.c), learned profiles (profiles.c),
# protection's arithmetic (protect.c), the latency histograms (lathist.c)
# and pod rules (podrules.c).  libagent: everything else of the daemon
# (agent/README.md has a line for each):
#   the API      server.c, plan_async.c (the Plan RPC on a thread),
#                requests.c
#   admission    admission.c, ctr.c, pidwatch.c, penalties.c
#   sampling     sampler.c, latency.c (and its BPF program below),
#                headroom.c
#   weights      weights.c, weighttree.c
#   protection   protection.c, budget.c, and its levers caps.c,
#                freeze.c, ioprio.c; restore.c journals what they replace
#   Kubernetes   kubepods.c, podmeta.c (over cri/), kube.c (both applied)
#   learning     learning.c, statesave.c (its files written off the loop)
#   the daemon   daemon.c, lock.c, fdlimit.c, metrics.c, metrics_server.c
# main.c alone is the program.
agentcore_SRCS := agent/config.c agent/profiles.c agent/protect.c agent/lathist.c agent/podrules.c
$(eval $(call lib,agentcore,$(agentcore_SRCS)))

agent_SRCS := agent/admission.c agent/ctr.c agent/learning.c agent/kube.c agent/budget.c agent/lock.c agent/penalties.c agent/caps.c agent/freeze.c agent/ioprio.c agent/protection.c agent/pidwatch.c agent/restore.c agent/plan_async.c agent/sampler.c agent/weights.c agent/weighttree.c \
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
