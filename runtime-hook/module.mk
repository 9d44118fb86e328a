# SPDX-License-Identifier: Apache-2.0
# runtime-hook/ -> iobatch-hook, the OCI prestart/createRuntime hook.
hook_SRCS := $(filter-out runtime-hook/main.c,$(wildcard runtime-hook/*.c))
$(eval $(call lib,hook,$(hook_SRCS)))
PROGRAMS += bin/iobatch-hook
INSTALL_PROGRAMS += bin/iobatch-hook
$(eval $(call prog,bin/iobatch-hook,runtime-hook/main.c,hook agentclient wcd batch cg2 ttrpc proto common))
