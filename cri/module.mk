# SPDX-License-Identifier: Apache-2.0
# cri/: a client of the Kubernetes CRI (gRPC over h2c on a unix socket,
# nghttp2 + protobuf-c; libcri.a), for iobatchd's pod metadata
# (agent/kube/podmeta.c).  Statically linked too: Debian's libnghttp2-dev ships
# libnghttp2.a, which needs nothing else.
cri_SRCS := cri/grpc.c cri/client.c cri/meta.c
$(eval $(call lib,cri,$(cri_SRCS)))
$(B)/proto/gen/cri/api.pb-c.o: GEN_CFLAGS += -Ulinux
LDLIBS += $(shell pkg-config --libs libnghttp2 2>/dev/null || echo -lnghttp2)

# cri-list: the CRI client alone, what the agent would learn from an
# endpoint (tests/integration/agent/cri-meta.sh).
PROGRAMS += tests/cri-list
$(eval $(call prog,tests/cri-list,tests/tools/cri_list.c,cri proto common))
