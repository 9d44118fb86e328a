# SPDX-License-Identifier: Apache-2.0
# packaging/: man pages (scdoc), `make install` (the one install: the
# Debian package is `make install PREFIX=/usr`, debian/rules) and
# `make deb`.  The layout (docs/INSTALL.md), shown for PREFIX=/usr:
#   /usr/bin/iobatchctl, /usr/sbin/iobatchd,
#   /usr/libexec/iobatch/{containerd-shim-iobatch-v2,iobatch-hook} with
#   /usr/bin/containerd-shim-iobatch-v2 -> ../libexec/iobatch/... (containerd
#   finds the shim on PATH; hooks.d names the hook for podman and CRI-O),
#   /usr/libexec/iobatch/containerd-{setup,start,config} and the unit drop-in
#   /usr/share/iobatch/containerd/zz-iobatch.conf, which `containerd-setup
#   install` (the .deb's postinst; run it by hand after a plain make install)
#   puts in /usr/lib/systemd/system/containerd.service.d/ for containerd 1.6/1.7
#   (containerd runs its unit's own command on /run/iobatch-containerd/
#   config.toml: its config plus the handler), or, for a containerd 2.x
#   whose config imports /etc/containerd/conf.d/*.toml, a conf.d drop-in
#   instead.
# The unit and the drop-in name /usr/sbin and /usr/libexec/iobatch; another
# PREFIX rewrites those paths as it installs them.
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
# at this build's hook (tests/integration/hook/podman-hooks.sh uses it); make
# install (and so the .deb) at LIBEXECDIR's, as 50-iobatch.json: hooks run
# in the order of their file names (oci-hooks(5)), and a middle prefix
# leaves room on both sides for the admin's.
HOOKS_JSON_IN := packaging/hooks.d/iobatch.json.in
define hooks_json
	@mkdir -p $(dir $(2))
	@echo "  GEN     $(2)"
	$(Q)sed 's|@HOOK_PATH@|$(1)|g' $(HOOKS_JSON_IN) >$(2).tmp && chmod 0644 $(2).tmp && mv $(2).tmp $(2)
endef
all: $(B)/hooks/iobatch.json
$(B)/hooks/iobatch.json: $(HOOKS_JSON_IN)
	$(call hooks_json,$(abspath $(B))/bin/iobatch-hook,$@)

# make install [PREFIX=/usr/local] [DESTDIR=]: everything a node needs.  A
# configuration file already there is kept (the package's is a conffile).
INSTALL_PATHS = sed -e 's|/usr/sbin/|$(SBINDIR)/|g' -e 's|/usr/libexec/iobatch|$(LIBEXECDIR)|g' \
	-e 's|/usr/share/iobatch|$(DATADIR)/iobatch|g' -e 's|:-/usr/lib/systemd/system}|:-$(SYSTEMDUNITDIR)}|'
.PHONY: install
install: programs man
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(SBINDIR) $(DESTDIR)$(LIBEXECDIR) \
		$(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(DATADIR)/iobatch/containerd $(DESTDIR)$(SYSCONFDIR)/iobatch \
		$(DESTDIR)$(HOOKSDIR) $(DESTDIR)$(DATADIR)/bash-completion/completions \
		$(DESTDIR)$(MANDIR)/man8
	install -m 0755 $(B)/bin/iobatchctl $(DESTDIR)$(BINDIR)/
	install -m 0755 $(B)/bin/iobatchd $(DESTDIR)$(SBINDIR)/
	install -m 0755 $(B)/bin/containerd-shim-iobatch-v2 $(B)/bin/iobatch-hook \
		packaging/containerd/containerd-config packaging/containerd/containerd-start \
		$(DESTDIR)$(LIBEXECDIR)/
	$(INSTALL_PATHS) packaging/containerd/containerd-setup >$(DESTDIR)$(LIBEXECDIR)/containerd-setup
	chmod 0755 $(DESTDIR)$(LIBEXECDIR)/containerd-setup
	ln -sfn $(shell realpath -m --relative-to=$(BINDIR) $(LIBEXECDIR))/containerd-shim-iobatch-v2 \
		$(DESTDIR)$(BINDIR)/containerd-shim-iobatch-v2
	$(INSTALL_PATHS) packaging/systemd/iobatchd.service >$(DESTDIR)$(SYSTEMDUNITDIR)/iobatchd.service
	$(INSTALL_PATHS) packaging/containerd/containerd.service.d/zz-iobatch.conf \
		>$(DESTDIR)$(DATADIR)/iobatch/containerd/zz-iobatch.conf
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/iobatchd.service \
		$(DESTDIR)$(DATADIR)/iobatch/containerd/zz-iobatch.conf
	[ -e $(DESTDIR)$(SYSCONFDIR)/iobatch/iobatchd.conf ] || \
		install -m 0644 agent/iobatchd.conf.example $(DESTDIR)$(SYSCONFDIR)/iobatch/iobatchd.conf
	[ -e $(DESTDIR)$(SYSCONFDIR)/iobatch/runtime-options.toml ] || \
		install -m 0644 packaging/containerd/runtime-options.toml $(DESTDIR)$(SYSCONFDIR)/iobatch/
	$(call hooks_json,$(LIBEXECDIR)/iobatch-hook,$(DESTDIR)$(HOOKSDIR)/50-iobatch.json)
	install -m 0644 packaging/bash-completion/iobatchctl $(DESTDIR)$(DATADIR)/bash-completion/completions/
	install -m 0644 $(MAN_OUT) $(DESTDIR)$(MANDIR)/man8/

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
