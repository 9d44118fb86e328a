# SPDX-License-Identifier: Apache-2.0
# iobatch — one non-recursive Makefile; every folder adds a module.mk.
#
#   make                 build everything into build/
#   make check           unit + integration tests (plain build)
#   make check-asan      the same tests built with ASan + UBSan (build-asan/)
#   make check-all       everything CI runs, one summary line at the end
#   make check-install   the .deb and the DaemonSet on booted Debian 12, 13 and unstable
#                        roots (systemd-nspawn); the shim suites against containerd 2.1
#   make check-shim-containerd2   the shim's protocol suites against containerd 2.1
#   make fuzz            libFuzzer targets for a bounded time (clang)
#   make install PREFIX=/usr/local DESTDIR=   (the .deb: PREFIX=/usr)
#   make deb             build-pkg/iobatch_VERSION_ARCH.deb (debhelper, debian/)
#   make static          the four programs statically linked, in build-static/
#   make fmt             clang-format the tree
#   make fmt-check       list the C files clang-format would change
#   make docs            write bench/RESULTS.md from bench/results/
#   make docs-check      fail when bench/RESULTS.md is stale or the agent's
#                        config keys and their documentation disagree

# V=1 shows whole command lines.
ifeq ($(V),1)
Q :=
else
Q := @
endif

# Where `make install` puts things (the .deb: PREFIX=/usr, debian/rules).
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
LIBEXECDIR ?= $(PREFIX)/libexec/iobatch
MANDIR ?= $(PREFIX)/share/man
DATADIR ?= $(PREFIX)/share
SYSCONFDIR ?= /etc
# systemd units: a package's in /usr/lib/systemd/system (Debian's /usr-merge:
# /lib is a link to usr/lib, and a package ships its files under /usr);
# systemd also reads units and drop-ins under /usr/local/lib/systemd/system.
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
# The OCI hooks.d entry: a package's in /usr/share/containers/oci/hooks.d,
# an administrator's in /etc/containers/oci/hooks.d (podman and CRI-O
# read both).
HOOKSDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/share/containers/oci/hooks.d,/etc/containers/oci/hooks.d)
CC ?= cc
AR ?= ar
PROTOC_C ?= protoc-c

SAN ?= 0
FUZZ ?= 0
ifeq ($(FUZZ),1)
B := build-fuzz
CC := clang
SAN_FLAGS := -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer
OPT ?= -O1 -g
else ifeq ($(SAN),1)
B ?= build-asan
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
OPT ?= -O1 -g
else
B ?= build
SAN_FLAGS :=
OPT ?= -O2 -g
endif

# CI builds with -Werror (docs/STYLE.md); locally it is opt-in with WERROR=1.
ifeq ($(CI),true)
WERROR ?= 1
endif
WERROR ?= 0

WARN := -Wall -Wextra -Wformat=2 -Wshadow -Wmissing-prototypes
ifeq ($(WERROR),1)
WARN += -Werror
endif

# What --version prints (common/version.c): the release from VERSION and the
# git revision of this tree; "unknown" when the tree is no git checkout of
# its own (a release tarball unpacked inside some other repository must not
# report that repository's revision).
IOB_VERSION ?= $(shell cat VERSION 2>/dev/null || echo 0.0.0)
IOB_GIT_REV ?= $(shell [ "$$(git rev-parse --show-toplevel 2>/dev/null)" = "$(CURDIR)" ] && \
	git describe --always --dirty 2>/dev/null || echo unknown)

PKGS := jansson libprotobuf-c libseccomp
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

ALL_CFLAGS := -std=gnu11 -D_GNU_SOURCE $(WARN) -D_FORTIFY_SOURCE=3 -fstack-protector-strong \
	-I. -Iproto/gen $(PKG_CFLAGS) $(OPT) $(SAN_FLAGS) $(CFLAGS)
ALL_LDFLAGS := $(SAN_FLAGS) -Wl,--as-needed $(LDFLAGS)
LDLIBS := $(PKG_LIBS) -lm

# Generated protobuf-c code does not follow our prototypes rule.
GEN_CFLAGS := -Wno-missing-prototypes -Wno-unused-parameter

# Filled by module.mk files.
PROGRAMS :=
VM_TESTS :=
UNIT_TESTS :=
INTEG_TESTS :=
INSTALL_TESTS :=
FUZZERS :=
INSTALL_PROGRAMS :=

.PHONY: all
all:

# $(call lib,NAME,SOURCES): $(B)/libNAME.a, written afresh when its
# module.mk changes too (ar would keep the member of a source that moved to
# another library).
define lib
$(B)/lib$(1).a: $(patsubst %.c,$(B)/%.o,$(2)) $(lastword $(MAKEFILE_LIST))
	@mkdir -p $$(@D)
	@echo "  AR      $$@"
	$(Q)rm -f $$@ && $$(AR) rcs $$@ $$(filter %.o,$$^)
endef

# $(call prog,PATH,SOURCES,LIBS): program $(B)/PATH linked with $(B)/libX.a
define prog
$(B)/$(1): $(patsubst %.c,$(B)/%.o,$(2)) $(foreach l,$(3),$(B)/lib$(l).a)
	@mkdir -p $$(@D)
	@echo "  LD      $$@"
	$(Q)$$(CC) $$(ALL_LDFLAGS) -o $$@ $$(filter %.o,$$^) $$(filter %.a,$$^) $$(LDLIBS) $(4)
endef

# $(call unit,NAME,SOURCES,LIBS): cmocka test $(B)/tests/unit/NAME
define unit
UNIT_TESTS += tests/unit/$(1)
$(call prog,tests/unit/$(1),$(2),$(3),-lcmocka)
endef

# $(call fuzzer,NAME,SOURCES,LIBS): libFuzzer target build-fuzz/tests/fuzz/NAME;
# in build/ and build-asan/ the same target linked with tests/fuzz/driver.c,
# which replays corpus files (tests/fuzz/corpus-replay.sh).
define fuzzer
FUZZERS += tests/fuzz/$(1)
ifeq ($(FUZZ),1)
$(call prog,tests/fuzz/$(1),$(2),$(3),-fsanitize=fuzzer)
else
all: $(B)/tests/fuzz/$(1)
$(call prog,tests/fuzz/$(1),$(2) tests/fuzz/driver.c,$(3))
endif
endef

# The libraries a test links, by the second word of its name.
# tests/unit/test_PREFIX_FILE.c tests FILE.c of the folder whose library is
# PREFIX, and tests/fuzz/fuzz_PREFIX_WHAT.c fuzzes a parser there (agent:
# agent/ and its folders, batch: batcher/, cg2: cgroupv2/, client: client/,
# common: common/, cri: cri/, hook: runtime-hook/, shim: shim/, simdisk:
# simdisk/, ttrpc: ttrpc/, wcd: wcd/);
# each links that folder's library and what it needs, in link order.
# tests/unit/module.mk and tests/fuzz/module.mk register them all.
TEST_LIBS_agent = $(AGENT_LIBS)
TEST_LIBS_batch = batch common
TEST_LIBS_cg2 = cg2 common
TEST_LIBS_client = agentclient batch cg2 ttrpc proto common
TEST_LIBS_common = common
TEST_LIBS_cri = cri proto common
TEST_LIBS_hook = hook agentclient wcd batch cg2 ttrpc proto common
TEST_LIBS_shim = shim agentclient wcd batch cg2 ttrpc proto common
TEST_LIBS_simdisk = simdisk common
TEST_LIBS_ttrpc = ttrpc proto common
TEST_LIBS_wcd = wcd batch cg2 common
test_prefix = $(word 2,$(subst _, ,$(basename $(notdir $(1)))))
# $(call test_libs,PATH): the libraries of the test or fuzz target PATH.
test_libs = $(or $(TEST_LIBS_$(call test_prefix,$(1))),$(error $(1): no TEST_LIBS_$(call test_prefix,$(1)) \
	for the prefix of its name (Makefile)))

# The folders first, then tests/: what a test's registration reads (the
# libraries, AGENT_LIBS, explicit registrations) is defined before it.
include $(sort $(wildcard */module.mk)) $(sort $(wildcard tests/*/module.mk))

all: $(addprefix $(B)/,$(PROGRAMS) $(UNIT_TESTS))

# Only the installed programs (what debian/rules builds).
.PHONY: programs
programs: $(addprefix $(B)/,$(INSTALL_PROGRAMS))

$(B)/%.o: %.c | $(PROTO_STAMP)
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

-include $(shell find $(B) -name '*.d' 2>/dev/null)

.PHONY: check check-unit check-integration check-asan check-all check-vm
# The runner prints TAP and ends with "N passed, N failed".
check: all static
	B=$(B) tests/run.sh $(addprefix $(B)/,$(UNIT_TESTS)) $(INTEG_TESTS)

check-unit: all
	B=$(B) tests/run.sh $(addprefix $(B)/,$(UNIT_TESTS))

check-integration: all static
	B=$(B) tests/run.sh $(INTEG_TESTS)

check-asan:
	$(MAKE) SAN=1 check

# The .deb (and the DaemonSet) on a booted Debian 12 (tests/install/).
.PHONY: check-install
check-install: all
	B=$(B) tests/run.sh $(INSTALL_TESTS)

# The format check runs with the tests (tests/fmt-check.sh).
INTEG_TESTS += tests/fmt-check.sh tests/spdx-check.sh tests/shellcheck.sh
# Every tool a suite, a bench or the demo needs comes from install-deps.sh.
INTEG_TESTS += tests/deps-check.sh
# No circle of C files, and the agent's folders call only down their order
# (scripts/file-cycles.py over the objects of $(B)).
INTEG_TESTS += tests/cycles.sh

# CI: unit tests under sanitizers, then the plain build's full suite; one
# runner invocation so the last line is the summary of everything.
check-all:
	$(MAKE) SAN=1 all
	$(MAKE) all
	$(MAKE) static
	B=$(B) ASAN_B=build-asan tests/run.sh \
		$(addprefix build-asan/,$(UNIT_TESTS)) \
		$(addprefix $(B)/,$(UNIT_TESTS)) $(INTEG_TESTS) $(VM_TESTS) $(INSTALL_TESTS)

# Each fuzzer runs FUZZ_SECONDS on its seed corpus (tests/fuzz/corpus/NAME).
FUZZ_SECONDS ?= 60
.PHONY: fuzz fuzz-build
fuzz:
	$(MAKE) FUZZ=1 fuzz-build
	tests/fuzz/run.sh $(FUZZ_SECONDS) $(addprefix build-fuzz/,$(FUZZERS))
fuzz-build: $(addprefix $(B)/,$(FUZZERS))

# The programs linked statically (-static-pie: glibc's libc.a and the
# libjansson/libprotobuf-c/libseccomp archives of Debian's -dev packages),
# in their own tree: no shared library, so they run on nodes whose glibc is
# older than the build host's (the DaemonSet's image carries these;
# tests/integration/packaging/static.sh).  No NSS lookups are linked in (no getpw*,
# getaddrinfo), which a static glibc could not serve.
STATIC_B := build-static
.PHONY: static
static:
	$(MAKE) B=$(STATIC_B) SAN=0 FUZZ=0 LDFLAGS='-static-pie $(LDFLAGS)' programs


.PHONY: fmt fmt-check
# The files fmt-check checks, and only those: tests/ and bench/ keep the
# layout their tables were written in.
fmt:
	clang-format -i $(FMT_CHECK_FILES)

# Lists the C files (outside tests/, bench/ and the generated proto/gen/)
# that clang-format with .clang-format would change; changes nothing.
FMT_CHECK_FILES = $(shell git ls-files '*.c' '*.h' | grep -v -e '^tests/' -e '^bench/' -e '^proto/gen/')
fmt-check:
	@command -v clang-format >/dev/null || { echo "fmt-check: clang-format not found" >&2; exit 2; }
	@bad=0; n=0; for f in $(FMT_CHECK_FILES); do n=$$((n + 1)); \
	  clang-format --style=file --dry-run -Werror "$$f" >/dev/null 2>&1 || { echo "$$f"; bad=$$((bad + 1)); }; \
	done; \
	if [ $$bad -gt 0 ]; then echo "fmt-check: $$bad of $$n files are not clang-formatted (make fmt)"; exit 1; fi; \
	echo "fmt-check: $$n files clang-formatted"

# bench/RESULTS.md is generated from bench/results/ and bench/RESULTS.md.in
# by bench/results-page.py; the check runs with the tests
# (tests/docs-check.sh), so CI fails on a stale page.  The same check
# holds the agent's config keys (agent/config.c) and the documents that
# list them (agent/iobatchd.conf.example, agent/README.md) to each other:
# scripts/config-keys-check.py.  Both run, so one failure hides no other.
# The page marks a result whose code changed after the commit it was
# measured on (bench/results-code.txt); tests/results-page.sh tries that
# logic on repositories of its own.
.PHONY: docs docs-check
docs:
	bench/results-page.py
docs-check:
	@rc=0; bench/results-page.py --check || rc=1; scripts/config-keys-check.py || rc=1; exit $$rc
INTEG_TESTS += tests/docs-check.sh tests/results-page.sh

.PHONY: clean
clean:
	rm -rf build build-asan build-fuzz build-pkg build-static proto/gen

.PHONY: demo
demo: all
	B=$(B) tests/demo.sh
