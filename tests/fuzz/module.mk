# SPDX-License-Identifier: Apache-2.0
# Fuzz targets that are not tied to one component's module.mk, and the
# corpus replay that runs every target's seeds under the plain and ASan
# builds (see the `fuzzer` macro in the Makefile and tests/fuzz/README.md).
$(eval $(call fuzzer,fuzz_cg2_files,tests/fuzz/fuzz_cg2_files.c,cg2 common))
$(eval $(call fuzzer,fuzz_shim_options,tests/fuzz/fuzz_shim_options.c,shim agentclient wcd batch cg2 ttrpc proto common))
$(eval $(call fuzzer,fuzz_shim_requests,tests/fuzz/fuzz_shim_requests.c,shim ttrpc proto common))
$(eval $(call fuzzer,fuzz_agent_requests,tests/fuzz/fuzz_agent_requests.c,$(AGENT_LIBS)))
$(eval $(call fuzzer,fuzz_oci_config,tests/fuzz/fuzz_oci_config.c,shim hook agentclient wcd batch cg2 ttrpc proto common))

INTEG_TESTS += tests/fuzz/corpus-replay.sh
