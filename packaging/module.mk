# packaging/: man pages (scdoc), the FHS install the Debian package uses,
# and `make deb`.  The layout (README, Installing):
#   /usr/bin/iobatchctl, /usr/sbin/iobatchd,
#   /usr/libexec/iobatch/{containerd-shim-iobatch-v2,iobatch-hook} with
#   /usr/bin/containerd-shim-iobatch-v2 -> ../libexec/iobatch/... (containerd
#   finds the shim on PATH; the shim finds the hook next to its real path),
#   /usr/libexec/iobatch/containerd-config and its drop-in
#   /lib/systemd/system/containerd.service.d/iobatch.conf (containerd runs
#   on /run/iobatch-containerd/config.toml: config.toml plus the handler).
MAN_PAGES := iobatchd iobatchctl iobatch-hook containerd-shim-iobatch-v2
MAN_OUT := $(addprefix $(B)/man/,$(addsuffix .8,$(MAN_PAGES)))

.PHONY: man
man: $(MAN_OUT)
$(B)/man/%.8: packaging/man/%.8.scd
	@mkdir -p $(@D)
	@echo "  SCDOC   $@"
	$(Q)scdoc <$< >$@.tmp && mv $@.tmp $@

# One hooks.d file, rendered for where the hook is:
# $(call hooks_json,HOOK_PATH,OUT) writes packaging/hooks.d/iobatch.json.in
# with @HOOK_PATH@ replaced, mode 0644.  $(B)/hooks/iobatch.json points
# at this build's hook (tests/integration/podman-hooks.sh uses it); make
# install at BINDIR's, make install-dist (the .deb) at /usr/libexec/iobatch.
HOOKS_JSON_IN := packaging/hooks.d/iobatch.json.in
define hooks_json
	@mkdir -p $(dir $(2))
	@echo "  GEN     $(2)"
	$(Q)sed 's|@HOOK_PATH@|$(1)|g' $(HOOKS_JSON_IN) >$(2).tmp && chmod 0644 $(2).tmp && mv $(2).tmp $(2)
endef
all: $(B)/hooks/iobatch.json
$(B)/hooks/iobatch.json: $(HOOKS_JSON_IN)
	$(call hooks_json,$(abspath $(B))/bin/iobatch-hook,$@)

# install-dist DESTDIR=...: the package's file tree (debian/rules uses it).
.PHONY: install-dist
install-dist: programs man
	install -d $(DESTDIR)/usr/bin $(DESTDIR)/usr/sbin $(DESTDIR)/usr/libexec/iobatch \
		$(DESTDIR)/lib/systemd/system $(DESTDIR)/etc/iobatch \
		$(DESTDIR)/lib/systemd/system/containerd.service.d \
		$(DESTDIR)/usr/share/containers/oci/hooks.d $(DESTDIR)/usr/share/bash-completion/completions \
		$(DESTDIR)/usr/share/man/man8
	install -m 0755 $(B)/bin/iobatchctl $(DESTDIR)/usr/bin/
	install -m 0755 $(B)/bin/iobatchd $(DESTDIR)/usr/sbin/
	install -m 0755 $(B)/bin/containerd-shim-iobatch-v2 $(B)/bin/iobatch-hook \
		packaging/containerd/containerd-config $(DESTDIR)/usr/libexec/iobatch/
	ln -sfn ../libexec/iobatch/containerd-shim-iobatch-v2 $(DESTDIR)/usr/bin/containerd-shim-iobatch-v2
	install -m 0644 packaging/systemd/iobatchd.service $(DESTDIR)/lib/systemd/system/
	install -m 0644 agent/iobatchd.conf.example $(DESTDIR)/etc/iobatch/iobatchd.conf
	install -m 0644 packaging/containerd/runtime-options.toml $(DESTDIR)/etc/iobatch/
	install -m 0644 packaging/containerd/containerd.service.d/iobatch.conf \
		$(DESTDIR)/lib/systemd/system/containerd.service.d/
	$(call hooks_json,/usr/libexec/iobatch/iobatch-hook,$(DESTDIR)/usr/share/containers/oci/hooks.d/iobatch.json)
	install -m 0644 packaging/bash-completion/iobatchctl $(DESTDIR)/usr/share/bash-completion/completions/
	install -m 0644 $(MAN_OUT) $(DESTDIR)/usr/share/man/man8/

# make deb: a clean copy of the tree (tracked and new files, not build
# output) built by dpkg-buildpackage in $(B)-pkg/src; the .deb lands in
# $(B)-pkg/ (not under $(B): the Makefile includes every *.d there).
DEB_VERSION = $(shell dpkg-parsechangelog -l debian/changelog -SVersion 2>/dev/null)
DEB_ARCH = $(shell dpkg-architecture -qDEB_HOST_ARCH 2>/dev/null)
DEB_DIR = $(abspath $(B))-pkg
DEB_FILE = $(DEB_DIR)/iobatch_$(DEB_VERSION)_$(DEB_ARCH).deb
.PHONY: deb deb-lint
deb:
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_DIR)/src
	git ls-files -z -co --exclude-standard | \
		tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C $(DEB_DIR)/src
	@echo "  DPKG    $(DEB_FILE) (log: $(DEB_DIR)/build.log)"
	$(Q)cd $(DEB_DIR)/src && dpkg-buildpackage -b -us -uc >$(DEB_DIR)/build.log 2>&1 || \
		{ tail -40 $(DEB_DIR)/build.log; exit 1; }
	@test -f $(DEB_FILE) && echo "  DEB     $(DEB_FILE)"
deb-lint: deb
	lintian --info --display-info --fail-on error,warning $(DEB_DIR)/*.changes

INTEG_TESTS += tests/integration/deb.sh tests/integration/containerd-config.sh
INTEG_TESTS += tests/integration/k8s-install.sh tests/integration/k8s-manifests.sh
