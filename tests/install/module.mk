# SPDX-License-Identifier: Apache-2.0
# tests/install/: the product installed as an operator installs it, on a
# Debian booted with systemd as PID 1 (systemd-nspawn on an mmdebstrap
# root, tests/install/lib.sh).  make check-install; part of make check-all.
# One line per Debian suite, that is per containerd the tests run against
# (tests/run.sh passes INST_SUITE=... to the script that follows it):
# Debian 12's containerd 1.6, Debian 13's 1.7, unstable's 2.1.
INSTALL_TESTS += INST_SUITE=bookworm tests/install/deb.sh
INSTALL_TESTS += INST_SUITE=trixie tests/install/deb.sh
INSTALL_TESTS += INST_SUITE=sid tests/install/deb.sh
# The DaemonSet run as a kubelet runs it; its image carries make static's
# binaries.
INSTALL_TESTS += INST_SUITE=bookworm tests/install/daemonset.sh
check-install: static

# make check-shim-containerd2: the shim's protocol suites (create, start,
# exec, kill, delete, events, the held Start, OOM, containerd restarted)
# against unstable's containerd 2.x, run on this host with that root's
# containerd and ctr first on PATH (tests/install/containerd-bin.sh); runc
# is the host's.  Not in check-install: 5 of their checks fail against 2.1,
# docs/TESTING.md says which and why.
SHIM_C2_SUITES := $(addprefix tests/integration/shim/,shim-run.sh shim-task.sh ttrpc-events.sh \
	admission-hold.sh shim-restart.sh shim-group.sh)
.PHONY: check-shim-containerd2
check-shim-containerd2: all
	B=$(B) tests/install/containerd-bin.sh sid $(B)/containerd-sid
	PATH=$(abspath $(B))/containerd-sid/bin:$$PATH B=$(B) tests/run.sh $(SHIM_C2_SUITES)
