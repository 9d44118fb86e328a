#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# containerd-bin.sh SUITE DIR: the containerd and ctr of the install tests'
# Debian SUITE root (tests/install/lib.sh builds it once and caches it), in
# DIR/bin, for the shim's suites to find first on PATH (make
# check-shim-containerd2).  They run on this host only if its glibc has
# every symbol version they ask for: unstable's containerd 2.1 asks for
# GLIBC_2.34 at most, Debian 12 has 2.36.  runc stays the host's.
INST_SUITE=${1:?usage: containerd-bin.sh SUITE DIR}
DIR=${2:?usage: containerd-bin.sh SUITE DIR}
. "$(dirname "$0")/lib.sh"
inst_root
mkdir -p "$DIR/bin" || bail "cannot make '$DIR/bin'"
tar -xf "$INST_TAR" -C "$DIR/bin" --strip-components=3 ./usr/bin/containerd ./usr/bin/ctr ||
  bail "no containerd in $INST_TAR"
need=$(objdump -T "$DIR/bin/containerd" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
have=$(getconf GNU_LIBC_VERSION | awk '{ print "GLIBC_" $2 }')
[ "$(printf '%s\n%s\n' "$need" "$have" | sort -V | tail -1)" = "$have" ] ||
  bail "$INST_SUITE's containerd needs $need, this host has $have: run the suites inside that root instead"
"$DIR/bin/containerd" --version || bail "$INST_SUITE's containerd does not run here"
