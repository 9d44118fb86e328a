# SPDX-License-Identifier: Apache-2.0
# libagentclient (client/): what the shim, the hook and iobatchctl link to
# talk to iobatchd: the API's names (api.h), the async client (client.c)
# and the one RegisterRequest filler (register.c).
agentclient_SRCS := client/client.c client/register.c
$(eval $(call lib,agentclient,$(agentclient_SRCS)))
$(eval $(call unit,test_agent_client,tests/unit/test_agent_client.c,agentclient ttrpc proto common))
