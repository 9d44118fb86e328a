# SPDX-License-Identifier: Apache-2.0
# libbatch: the penalty-aware batcher (no I/O); see batcher/batcher.h.  It
# also carries client/annotations.c, the io.iobatch.* vocabulary beside the
# classes (client/module.mk says why).
batch_SRCS := batcher/class.c batcher/kind.c batcher/config.c batcher/solve.c batcher/plan.c batcher/jobfile.c \
	client/annotations.c
$(eval $(call lib,batch,$(batch_SRCS)))
# The solver benchmark (bench/solver.sh runs it).
$(eval $(call prog,bench/solver/batch-bench,bench/solver/main.c,batch common))
# The planner's cost per plan (bench/plan-cost.sh runs it).
$(eval $(call prog,bench/plancost/plan-cost,bench/plancost/main.c,batch common))
