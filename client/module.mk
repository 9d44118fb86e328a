# SPDX-License-Identifier: Apache-2.0
# client/: what the shim, the hook and iobatchctl link to talk to iobatchd.
# libagentclient: the API's names (api.h), the async client (client.c), a
# container's birth (birth.c: cgroup, baseline, first weight) and
# the one RegisterRequest filler (register.c).
agentclient_SRCS := client/birth.c client/client.c client/register.c
$(eval $(call lib,agentclient,$(agentclient_SRCS)))

# client/annotations.c (every io.iobatch.* key, its parser, the trust
# table) is a member of libbatch (batcher/module.mk): the shim, the hook,
# the detector (wcd/kind.c), the agent and iobatchctl all link libbatch,
# after wcd, so no link list changes; it needs only the classes and
# common.
# The man pages and README.md's table against iob_ann_defs
# (iobatchctl annotations --keys).
INTEG_TESTS += tests/annotations-doc.sh
