# SPDX-License-Identifier: Apache-2.0
# cgroupv2/ -> libcg2.a: cgroup v2 mount/pid/procs, io.stat, io.pressure,
# io.weight/io.bfq.weight and their enforcement check, the v1 blkio source,
# the procfs fallback, io.max / blkio.throttle caps.
cg2_SRCS := $(wildcard cgroupv2/*.c)
$(eval $(call lib,cg2,$(cg2_SRCS)))
