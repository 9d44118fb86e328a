# SPDX-License-Identifier: Apache-2.0
# shim: containerd-shim-iobatch-v2 (libshim.a holds everything but main for
# the unit tests).
shim_SRCS := shim/admission.c shim/args.c shim/console.c shim/daemon.c shim/events.c \
	shim/hookinject.c shim/io.c shim/manager.c shim/rootfs.c shim/oom.c shim/options.c shim/process.c shim/reaper.c \
	shim/requests.c shim/runc.c shim/service.c shim/spawn.c shim/stats.c shim/trim.c shim/uri.c shim/validate.c
$(eval $(call lib,shim,$(shim_SRCS)))
$(eval $(call prog,bin/containerd-shim-iobatch-v2,shim/main.c,shim agentclient wcd batch cg2 ttrpc proto common))
PROGRAMS += bin/containerd-shim-iobatch-v2
INSTALL_PROGRAMS += bin/containerd-shim-iobatch-v2

$(eval $(call unit,test_shim,tests/unit/test_shim.c,shim ttrpc proto common))
$(eval $(call unit,test_shim_service,tests/unit/test_shim_service.c,shim agentclient wcd batch cg2 ttrpc proto common))
$(eval $(call unit,test_shim_hookinject,tests/unit/test_shim_hookinject.c,shim proto common))
$(eval $(call fuzzer,fuzz_shim_bootstrap,tests/fuzz/fuzz_shim_bootstrap.c,shim ttrpc proto common))
$(eval $(call fuzzer,fuzz_shim_uri,tests/fuzz/fuzz_shim_uri.c,shim ttrpc proto common))

