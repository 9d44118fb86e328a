# SPDX-License-Identifier: Apache-2.0
# Benchmarks (bench/README.md).  Not part of `make all` nor of CI: they take
# minutes, need root and a real disk, and their numbers are results, not
# pass/fail checks.
#
#   make bench          every benchmark, one after another
#   make bench-sched | bench-calibrate | bench-agent | bench-shim | bench-solver | bench-profiles
#   make bench-pairs    (not in `make bench`: a probe of fio pairs, bench/pairs.sh)
#   make bench-simdisk  (not in `make bench`: the emulated disk's calibration,
#                        bench/simdisk-calibrate.sh; root, a quiet machine)

# Runs `iobatchctl calibrate` (cli/calibrate.c) before the CLI dispatches it.
$(eval $(call prog,bench/iobctl-calibrate,bench/calibrate/main.c cli/calibrate.c,batch common))

BENCH_SCRIPTS := $(wildcard bench/shim-cost.sh bench/solver.sh bench/plan-cost.sh) bench/sched.sh \
	bench/calibrate.sh bench/agent-overhead.sh bench/profiles-rss.sh bench/libcgroup.sh

.PHONY: bench bench-sched bench-calibrate bench-agent bench-shim bench-solver bench-pairs bench-profiles \
	bench-libcgroup
bench: all $(B)/bench/iobctl-calibrate $(B)/bench/iob-agent-fixture $(B)/bench/iob-real-ctr \
	$(B)/bench/iob-libcgroup
	@rc=0; for s in $(BENCH_SCRIPTS); do \
		echo "== $$s"; B=$(B) $$s || { echo "== $$s failed"; rc=1; }; \
	done; bench/results-page.py || rc=1; exit $$rc
bench-sched: all
	B=$(B) bench/sched.sh
bench-calibrate: $(B)/bench/iobctl-calibrate
	B=$(B) bench/calibrate.sh
bench-agent: all $(B)/bench/iob-agent-fixture $(B)/bench/iob-real-ctr
	B=$(B) bench/agent-overhead.sh
bench-shim: all
	B=$(B) bench/shim-cost.sh
bench-solver: all
	B=$(B) bench/solver.sh
bench-pairs:
	bench/pairs.sh
.PHONY: bench-simdisk
bench-simdisk: all
	B=$(B) bench/simdisk-calibrate.sh
bench-profiles: all
	B=$(B) bench/profiles-rss.sh
bench-libcgroup: $(B)/bench/iob-libcgroup
	B=$(B) bench/libcgroup.sh

# Registers fixture cgroups with iobatchd for bench/agent-overhead.sh.
$(eval $(call prog,bench/iob-agent-fixture,bench/agent/fixture.c,agentclient ttrpc proto common))

# One process per real container, reading with O_DIRECT in cgroups of its
# own (bench/agent-overhead.sh, bench/kubepods-overhead.sh).
$(eval $(call prog,bench/iob-real-ctr,bench/agent/realctr.c,))

# libcgroup against cgroupv2/'s direct reads (bench/libcgroup.sh, docs/DESIGN.md).
$(eval $(call prog,bench/iob-libcgroup,bench/libcgroup/main.c,cg2 common,-lcgroup))
