# SPDX-License-Identifier: Apache-2.0
# ttrpc: framing, server and client (libttrpc.a).
ttrpc_SRCS := ttrpc/frame.c ttrpc/server.c ttrpc/client.c
$(eval $(call lib,ttrpc,$(ttrpc_SRCS)))

# Its interoperability with containerd: tests/integration/shim/ttrpc-events.sh
# (its tool, the only user of containerd's protos here, is in tests/tools/).
