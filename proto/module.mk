# SPDX-License-Identifier: Apache-2.0
# .proto files are compiled with protoc-c at build time into proto/gen/
# (not committed).  Everything that includes a generated header waits for
# the stamp (see the order-only prerequisite on $(B)/%.o).
# proto/cri/ is the CRI subset cri/ reads and the Python test client
# compiles itself.
PROTO_FILES := $(shell find proto -name '*.proto' -not -path 'proto/gen/*' | sort)
PROTO_GEN_C := $(patsubst proto/%.proto,proto/gen/%.pb-c.c,$(PROTO_FILES))
PROTO_GEN_H := $(patsubst proto/%.proto,proto/gen/%.pb-c.h,$(PROTO_FILES))
PROTO_STAMP := proto/gen/.stamp

$(PROTO_STAMP): $(PROTO_FILES)
	@mkdir -p proto/gen
	@echo "  PROTOC  proto/*.proto"
	$(Q)$(PROTOC_C) -Iproto --c_out=proto/gen $(patsubst proto/%,%,$(PROTO_FILES))
	@touch $@
	@touch -r $@ $(PROTO_GEN_C) $(PROTO_GEN_H)

# An empty recipe, not none: make then takes the files as remade after the
# stamp's recipe ran and looks at their times again, and what includes or
# compiles them is rebuilt in the same run (without it, under -j, objects
# compared against the times read before protoc-c ran stayed stale until
# a second make).  The generated files take the stamp's time: were they
# older, every later make would take them as out of date and rebuild all
# that includes them.
$(PROTO_GEN_C) $(PROTO_GEN_H): $(PROTO_STAMP) ;

$(B)/proto/gen/%.pb-c.o: proto/gen/%.pb-c.c | $(PROTO_STAMP)
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(CC) $(ALL_CFLAGS) $(GEN_CFLAGS) -c -o $@ $<

$(eval $(call lib,proto,$(PROTO_GEN_C)))
