# The corpus replay that runs every fuzz target's seeds under the plain and
# ASan builds (see the `fuzzer` macro in the Makefile and tests/fuzz/driver.c).
INTEG_TESTS += tests/fuzz/corpus-replay.sh
