# tests/install/: the product installed as an operator installs it, on a
# Debian 12 booted with systemd as PID 1 (systemd-nspawn on an mmdebstrap
# root, tests/install/lib.sh).  make check-install; part of make check-all.
INSTALL_TESTS += tests/install/deb.sh
# The DaemonSet run as a kubelet runs it; its image carries make static's
# binaries.
INSTALL_TESTS += tests/install/daemonset.sh
check-install: static
