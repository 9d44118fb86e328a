# SPDX-License-Identifier: Apache-2.0
# The fuzz targets, and the corpus replay that runs every target's seeds
# under the plain and ASan builds (see the `fuzzer` macro in the Makefile
# and tests/fuzz/README.md).  Every tests/fuzz/fuzz_PREFIX_WHAT.c fuzzes
# a parser of the folder whose library PREFIX names and links
# TEST_LIBS_PREFIX (Makefile), as the unit tests do.  The exceptions, registered first with libraries of their own:
#   fuzz_log_journal: common/log.c's JOURNAL_STREAM (common alone);
#   fuzz_oci_config: common/oci.c's reader and what the shim and the hook
#     take from config.json, so it links both.
$(eval $(call fuzzer,fuzz_log_journal,tests/fuzz/fuzz_log_journal.c,common))
$(eval $(call fuzzer,fuzz_oci_config,tests/fuzz/fuzz_oci_config.c,shim hook agentclient wcd batch cg2 ttrpc proto common))
FUZZ_SRCS := $(filter-out $(addsuffix .c,$(FUZZERS)),$(sort $(wildcard tests/fuzz/fuzz_*.c)))
$(foreach s,$(FUZZ_SRCS),$(eval $(call fuzzer,$(basename $(notdir $(s))),$(s),$(call test_libs,$(s)))))

INTEG_TESTS += tests/fuzz/corpus-replay.sh
