# SPDX-License-Identifier: Apache-2.0
# tests/install/: the product installed as an operator installs it, on a
# Debian booted with systemd as PID 1 (systemd-nspawn on an mmdebstrap
# root, tests/install/lib.sh).  make check-install; part of make check-all.
# One line per Debian suite, that is per containerd the tests run against
# (tests/run.sh passes INST_SUITE=... to the script that follows it):
# Debian 12's containerd 1.6, Debian 13's 1.7, unstable's 2.1; and the
# shim's protocol suites against unstable's 2.1 (below).
INSTALL_TESTS += INST_SUITE=bookworm tests/install/deb.sh
INSTALL_TESTS += INST_SUITE=trixie tests/install/deb.sh
INSTALL_TESTS += INST_SUITE=sid tests/install/deb.sh
# The DaemonSet run as a kubelet runs it, on each containerd; its image
# carries make static's binaries and Debian 12's userland on every suite.
INSTALL_TESTS += INST_SUITE=bookworm tests/install/daemonset.sh
INSTALL_TESTS += INST_SUITE=trixie tests/install/daemonset.sh
INSTALL_TESTS += INST_SUITE=sid tests/install/daemonset.sh
check-install: static

# The shim's protocol suites (create, start, exec, kill, delete, events,
# the held Start, OOM, containerd restarted) against unstable's containerd
# 2.x, run on this host with that root's containerd and ctr first on PATH
# (tests/install/shim-containerd2.sh, containerd-bin.sh); runc is the
# host's.  make check-shim-containerd2 runs them alone.
INSTALL_TESTS += INST_SUITE=sid tests/install/shim-containerd2.sh
.PHONY: check-shim-containerd2
check-shim-containerd2: all
	B=$(B) tests/run.sh INST_SUITE=sid tests/install/shim-containerd2.sh
