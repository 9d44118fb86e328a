# SPDX-License-Identifier: Apache-2.0
# shim: containerd-shim-iobatch-v2 (libshim.a holds everything but main for
# the unit tests).
shim_SRCS := shim/admission.c shim/args.c shim/console.c shim/daemon.c shim/events.c \
	shim/io.c shim/manager.c shim/rootfs.c shim/oom.c shim/options.c shim/process.c shim/reaper.c \
	shim/requests.c shim/runc.c shim/service.c shim/spawn.c shim/stats.c shim/trim.c shim/uri.c shim/validate.c
$(eval $(call lib,shim,$(shim_SRCS)))
$(eval $(call prog,bin/containerd-shim-iobatch-v2,shim/main.c,shim agentclient wcd batch cg2 ttrpc proto common))
PROGRAMS += bin/containerd-shim-iobatch-v2
INSTALL_PROGRAMS += bin/containerd-shim-iobatch-v2
