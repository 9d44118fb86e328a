# SPDX-License-Identifier: Apache-2.0
# tests/integration/: the integration suites, one folder per feature
# (shim/, agent/, hook/, packaging/, e2e/; their libraries in lib/, their
# programs in tests/tools/).  Every suite there runs in make check, in the
# order of its path (no suite depends on another's having run).  Left out:
# lib/, and the suites named *-v2.sh, which need a pure cgroup v2 host
# with the io controller and bail out on the hybrid hosts make check runs
# on; the VM runs them (tests/vm/guest/integration.list).
INTEG_SUITES := $(filter-out tests/integration/lib/%,$(sort $(wildcard tests/integration/*/*.sh)))
INTEG_TESTS += $(filter-out %-v2.sh,$(INTEG_SUITES))
# A suite's base name names it alone (VM_ONLY=NAME.sh, tests/vm/run.sh).
ifneq ($(words $(notdir $(INTEG_SUITES))),$(words $(sort $(notdir $(INTEG_SUITES)))))
$(error tests/integration: two suites share a base name: $(sort $(foreach n,$(notdir $(INTEG_SUITES)),$(if $(filter-out 1,$(words $(filter %/$(n),$(INTEG_SUITES)))),$(n)))))
endif
