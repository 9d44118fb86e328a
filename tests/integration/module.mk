# tests/integration: suites that are not one component's, and their tools.
$(eval $(call prog,tests/shim-start,tests/integration/shim_start.c,ttrpc proto common))
PROGRAMS += tests/shim-start
INTEG_TESTS += tests/integration/admission-more.sh tests/integration/admission-node.sh tests/integration/protect.sh tests/integration/learn.sh
