# SPDX-License-Identifier: Apache-2.0
# cgroupv2/ -> libcg2.a: cgroup v2 mount/pid/procs, io.stat, io.pressure,
# io.weight/io.bfq.weight and their enforcement check, the v1 blkio source,
# the procfs fallback, io.max / blkio.throttle caps.
cg2_SRCS := $(wildcard cgroupv2/*.c)
$(eval $(call lib,cg2,$(cg2_SRCS)))

$(eval $(call unit,test_cg2_iostat,tests/unit/test_cg2_iostat.c,cg2 common))
$(eval $(call unit,test_cg2_weight,tests/unit/test_cg2_weight.c,cg2 common))
$(eval $(call unit,test_cg2_paths,tests/unit/test_cg2_paths.c,cg2 common))
$(eval $(call unit,test_cg2_cpu,tests/unit/test_cg2_cpu.c,cg2 common))
$(eval $(call unit,test_cg2_blkio,tests/unit/test_cg2_blkio.c,cg2 common))
$(eval $(call unit,test_cg2_freeze,tests/unit/test_cg2_freeze.c,cg2 common))
$(eval $(call fuzzer,fuzz_cg2_iostat,tests/fuzz/fuzz_cg2_iostat.c,cg2 common))
$(eval $(call fuzzer,fuzz_cg2_pressure,tests/fuzz/fuzz_cg2_pressure.c,cg2 common))
$(eval $(call fuzzer,fuzz_cg2_blkio,tests/fuzz/fuzz_cg2_blkio.c,cg2 common))
$(eval $(call fuzzer,fuzz_cg2_freeze,tests/fuzz/fuzz_cg2_freeze.c,cg2 common))
