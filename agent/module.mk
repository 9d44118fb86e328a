# SPDX-License-Identifier: Apache-2.0
# iobatchd (agent/ and its folders, each with a README.md saying what it
# owns and what it may call; docs/ARCHITECTURE.md, "The agent's folders",
# has the order tests/cycles.sh holds the calls to).
#   agent/     main.c (the program), daemon.c (the wiring), config.c
#   serve/     the shims' API and its threads, pid watching, metrics
#   kube/      pods: kubepods cgroups, CRI pod metadata, pod rules
#   weights/   io.weight where the containers compete
#   sample/    the sampling windows, I/O latency (and its BPF program),
#              the node's headroom
#   plan/      admission, penalties, learning
#   protect/   protection's controller, budget and levers
#   store/     what outlives the process: profiles, journal, lock
#   ctr/       the container record and its table
# libagentcore: the parts with no I/O of their own and no dependency but
# common, jansson and the batcher, which iobatchctl links too: the config
# parser, learned profiles, protection's arithmetic, the latency
# histograms and pod rules.  libagent: everything else of the daemon.
# One library for all the folders: the folders order the calls
# (tests/cycles.sh), and one archive keeps the link order what it is.
agentcore_SRCS := agent/config.c agent/store/profiles.c agent/protect/protect.c agent/sample/lathist.c \
	agent/kube/podrules.c
$(eval $(call lib,agentcore,$(agentcore_SRCS)))

AGENT_DIRS := serve kube weights sample plan protect store ctr
agent_SRCS := agent/daemon.c $(filter-out $(agentcore_SRCS),$(sort $(foreach d,$(AGENT_DIRS),$(wildcard agent/$(d)/*.c))))
$(eval $(call lib,agent,$(agent_SRCS)))

# The block I/O latency program (agent/sample/bpf/blklat.bpf.c): CO-RE, compiled
# with clang for the BPF target (no vmlinux.h: the structs it reads are
# declared in it), embedded in iobatchd as a bpftool skeleton.  Whatever
# links libagent links libbpf (-lbpf -lelf -lz; statically: libbpf.a,
# libelf.a, libz.a).
BPF_CLANG ?= clang
BPFTOOL ?= bpftool
BPF_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
$(B)/agent/sample/bpf/blklat.bpf.o: agent/sample/bpf/blklat.bpf.c agent/sample/bpf/blklat.h
	@mkdir -p $(@D)
	@echo "  BPF     $<"
	$(Q)$(BPF_CLANG) -target bpf -O2 -g -D__TARGET_ARCH_$(BPF_ARCH) -I. \
		-I/usr/include/$(shell $(CC) -print-multiarch 2>/dev/null) -c -o $@ $<
$(B)/agent/sample/bpf/blklat.skel.h: $(B)/agent/sample/bpf/blklat.bpf.o
	@echo "  SKEL    $@"
	$(Q)$(BPFTOOL) gen skeleton $< name blklat > $@.tmp && mv $@.tmp $@
$(B)/agent/sample/latency.o: $(B)/agent/sample/bpf/blklat.skel.h
$(B)/agent/sample/latency.o: ALL_CFLAGS += -I$(B)
LDLIBS += -lbpf -lelf -lz

AGENT_LIBS := agent agentcore wcd batch ttrpc cri cg2 proto common
PROGRAMS += bin/iobatchd
INSTALL_PROGRAMS += bin/iobatchd
$(eval $(call prog,bin/iobatchd,agent/main.c,$(AGENT_LIBS)))
