# SPDX-License-Identifier: Apache-2.0
common_SRCS := $(wildcard common/*.c)
$(eval $(call lib,common,$(common_SRCS)))
$(eval $(call unit,test_common,tests/unit/test_common.c,common))
$(eval $(call unit,test_sdnotify,tests/unit/test_sdnotify.c,common))
$(eval $(call unit,test_oci,tests/unit/test_oci.c,common))
$(eval $(call unit,test_escape,tests/unit/test_escape.c,common))
$(eval $(call fuzzer,fuzz_log_journal,tests/fuzz/fuzz_log_journal.c,common))

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
