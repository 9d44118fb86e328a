# SPDX-License-Identifier: Apache-2.0
# client/: what the shim, the hook and iobatchctl link to talk to iobatchd.
# libagentclient: the API's names (api.h), the async client (client.c) and
# the one RegisterRequest filler (register.c).
agentclient_SRCS := client/client.c client/register.c
$(eval $(call lib,agentclient,$(agentclient_SRCS)))
$(eval $(call unit,test_agent_client,tests/unit/test_agent_client.c,agentclient ttrpc proto common))

# client/annotations.c (every io.iobatch.* key, its parser, the trust
# table) is a member of libbatch (batcher/module.mk): the shim, the hook,
# the detector (wcd/kind.c), the agent and iobatchctl all link libbatch,
# after wcd, so no link list changes; it needs only the classes and
# common.
$(eval $(call unit,test_client_annotations,tests/unit/test_client_annotations.c,batch common))
$(eval $(call fuzzer,fuzz_client_annotations,tests/fuzz/fuzz_client_annotations.c,batch common))
# The man pages and README.md's table against iob_ann_defs
# (iobatchctl annotations --keys).
INTEG_TESTS += tests/annotations-doc.sh
