# SPDX-License-Identifier: Apache-2.0
# .proto files are compiled with protoc-c at build time into proto/gen/
# (not committed).  Everything that includes a generated header waits for
# the stamp (see the order-only prerequisite on $(B)/%.o).
# proto/cri/ is the CRI subset cri/ reads and the Python test client
# compiles itself.
PROTO_FILES := $(shell find proto -name '*.proto' -not -path 'proto/gen/*' | sort)
PROTO_GEN_C := $(patsubst proto/%.proto,proto/gen/%.pb-c.c,$(PROTO_FILES))
PROTO_STAMP := proto/gen/.stamp

$(PROTO_STAMP): $(PROTO_FILES)
	@mkdir -p proto/gen
	@echo "  PROTOC  proto/*.proto"
	$(Q)$(PROTOC_C) -Iproto --c_out=proto/gen $(patsubst proto/%,%,$(PROTO_FILES))
	@touch $@

$(PROTO_GEN_C): $(PROTO_STAMP)

$(B)/proto/gen/%.pb-c.o: proto/gen/%.pb-c.c | $(PROTO_STAMP)
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) $(GEN_CFLAGS) -c -o $@ $<

$(eval $(call lib,proto,$(PROTO_GEN_C)))
