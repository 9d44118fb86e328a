# SPDX-License-Identifier: Apache-2.0
# The cmocka unit tests.  Every tests/unit/test_PREFIX_FILE.c tests FILE.c
# of the folder whose library PREFIX names, and links TEST_LIBS_PREFIX
# (Makefile).  The exceptions are registered first, with libraries of their
# own, and the wildcard leaves them out.
#
# test_shipped_configs: every configuration file the project ships, read
# by the parser that reads it on a node (the agent's, the detector's, the
# batcher's, the shim's runtime options).
$(eval $(call unit,test_shipped_configs,tests/unit/test_shipped_configs.c,shim agent agentcore wcd batch cg2 ttrpc proto common))

UNIT_SRCS := $(filter-out $(addsuffix .c,$(UNIT_TESTS)),$(sort $(wildcard tests/unit/test_*.c)))
$(foreach s,$(UNIT_SRCS),$(eval $(call unit,$(basename $(notdir $(s))),$(s),$(call test_libs,$(s)))))
