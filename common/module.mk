# SPDX-License-Identifier: Apache-2.0
common_SRCS := $(wildcard common/*.c)
$(eval $(call lib,common,$(common_SRCS)))

# Only common/version.o sees the version, so a new revision recompiles one
# file; the stamp changes (and forces that) only when the strings do.
VERSION_DEFS := -DIOB_VERSION='"$(IOB_VERSION)"' -DIOB_GIT_REV='"$(IOB_GIT_REV)"'
$(B)/common/version.o: ALL_CFLAGS += $(VERSION_DEFS)
$(B)/common/version.o: $(B)/version.stamp
$(B)/version.stamp: FORCE
	@mkdir -p $(@D)
	@printf '%s\n' '$(IOB_VERSION) $(IOB_GIT_REV)' | cmp -s - $@ || printf '%s\n' '$(IOB_VERSION) $(IOB_GIT_REV)' >$@
.PHONY: FORCE
FORCE:
