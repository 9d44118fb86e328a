# tests/install: the product installed as an operator installs it, on a
# booted Debian 12 (tests/install/lib.sh); `make check-install` runs them.
# daemonset.sh needs make static's binaries (the DaemonSet's image).
INSTALL_TESTS += tests/install/daemonset.sh
check-install: static
