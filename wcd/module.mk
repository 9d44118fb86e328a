# wcd/ -> libwcd.a: the workload character detector (classes, thresholds
# config, workload key).  Depends on libcg2 for samples.
wcd_SRCS := $(wildcard wcd/*.c)
$(eval $(call lib,wcd,$(wcd_SRCS)))
$(eval $(call unit,test_wcd,tests/unit/test_wcd.c,wcd cg2 common))
