# SPDX-License-Identifier: Apache-2.0
# ttrpc: framing, server and client (libttrpc.a), their tests and fuzzers.
ttrpc_SRCS := ttrpc/frame.c ttrpc/server.c ttrpc/client.c
$(eval $(call lib,ttrpc,$(ttrpc_SRCS)))

$(eval $(call unit,test_ttrpc_frame,tests/unit/test_ttrpc_frame.c,ttrpc proto common))
$(eval $(call unit,test_ttrpc_server,tests/unit/test_ttrpc_server.c,ttrpc proto common))

$(eval $(call fuzzer,fuzz_ttrpc_frame,tests/fuzz/fuzz_ttrpc_frame.c,ttrpc proto common))
$(eval $(call fuzzer,fuzz_ttrpc_server,tests/fuzz/fuzz_ttrpc_server.c,ttrpc proto common))

# Interoperability with containerd (tests/integration/shim/ttrpc-events.sh; its
# tool, the only user of containerd's protos here, is in tests/tools/).
$(eval $(call fuzzer,fuzz_ttrpc_client,tests/fuzz/fuzz_ttrpc_client.c,ttrpc proto common))
