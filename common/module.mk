common_SRCS := $(wildcard common/*.c)
$(eval $(call lib,common,$(common_SRCS)))
$(eval $(call unit,test_common,tests/unit/test_common.c,common))
$(eval $(call unit,test_sdnotify,tests/unit/test_sdnotify.c,common))
