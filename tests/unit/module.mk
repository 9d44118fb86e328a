# SPDX-License-Identifier: Apache-2.0
# Malformed-input tests of the parsers of outside input (tests/fuzz/README.md
# lists every parser with its unit test and fuzz target).
$(eval $(call unit,test_parse_shim,tests/unit/test_parse_shim.c,shim agentclient wcd batch cg2 ttrpc proto common))
$(eval $(call unit,test_parse_requests,tests/unit/test_parse_requests.c,agentcore batch shim ttrpc proto common))
$(eval $(call unit,test_shipped_configs,tests/unit/test_shipped_configs.c,shim agent agentcore wcd batch cg2 ttrpc proto common))
