# iobatchd: config and profiles have no dependency but common and jansson, so
# their tests run without ttrpc, the batcher or cgroupv2.
agentcore_SRCS := agent/config.c agent/profiles.c
$(eval $(call lib,agentcore,$(agentcore_SRCS)))
$(eval $(call unit,test_agent_config,tests/unit/test_agent_config.c,agentcore common))
$(eval $(call unit,test_agent_profiles,tests/unit/test_agent_profiles.c,agentcore common))
$(eval $(call fuzzer,fuzz_agent_config,tests/fuzz/fuzz_agent_config.c,agentcore common))
agent_SRCS := agent/admission.c
$(eval $(call lib,agent,$(agent_SRCS)))
$(eval $(call unit,test_agent_admission,tests/unit/test_agent_admission.c,agent agentcore batch common))
