# SPDX-License-Identifier: Apache-2.0
# wcd/ -> libwcd.a: the workload character detector (classification, thresholds
# config, workload key).  Depends on libcg2 for samples and on libbatch for
# the classes (batcher/class.h).
wcd_SRCS := $(filter-out wcd/probe.c,$(wildcard wcd/*.c))
$(eval $(call lib,wcd,$(wcd_SRCS)))
# wcd-probe: test and calibration helper, built with the programs, not installed.
PROGRAMS += bin/wcd-probe
$(eval $(call prog,bin/wcd-probe,wcd/probe.c,wcd batch cg2 common))
