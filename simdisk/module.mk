# SPDX-License-Identifier: Apache-2.0
# simdisk/: an emulated disk for tests and benchmarks (README.md), not part
# of the product: built by `make all` (so CI builds it), never installed.
# The models and the option parser are a library of their own, without
# FUSE, for the unit test (tests/unit/test_simdisk_model.c).
simdisk_LIB_SRCS := simdisk/opts.c simdisk/model.c simdisk/heap.c simdisk/hdd.c simdisk/ssd.c
$(eval $(call lib,simdisk,$(simdisk_LIB_SRCS)))

FUSE3_CFLAGS := $(shell pkg-config --cflags fuse3 2>/dev/null)
FUSE3_LIBS := $(shell pkg-config --libs fuse3 2>/dev/null)
$(B)/simdisk/simdisk.o: ALL_CFLAGS += $(FUSE3_CFLAGS)
PROGRAMS += bin/simdisk
$(eval $(call prog,bin/simdisk,simdisk/simdisk.c,simdisk common,$(FUSE3_LIBS) -lpthread))
