# SPDX-License-Identifier: GPL-2.0
#
# kbloom.
#
#   make                  the modules (kmod/kbloom.ko, kmod/xt_bloom.ko; the
#                         KUnit suites inside kbloom.ko where the kernel has
#                         KUnit) against KDIR, tools/bloomctl/bloomctl, and
#                         tools/xtables/libxt_bloom.so if libxtables-dev is
#                         installed. Needs build-essential, the kernel
#                         headers and zlib1g-dev.
#   make BTF=1            the same, the modules with BTF (which kbloom's BPF
#                         kfuncs need): see BTF below
#   make install          all that (DESTDIR, PREFIX; see below); make uninstall
#   make install-bloomsync the fleet daemon (libnats-dev); uninstall-bloomsync
#   make bench-fleet      bloomsync's bytes on the wire and latency (natively)
#   make check            the test command (tools/check.sh), what CI runs
#   make check-quick      its first stages, no VM: native tests, bloomctl,
#                         static checks, packaging lint (the edit loop)
#   make dkms-check       dkms add/build/install/remove in a scratch tree
#   make deb              kbloom-dkms, bloomctl and bloomsync .debs in build/deb
#   make deb-check        make deb, lintian, and the packages' file lists
#   make completion-check the bash completion of bloomctl
#   make reboot-test      kbloom on a Debian system across a reboot and a
#                         crash (tools/vm/reboot-test.sh; after make deb)
#   make tools            the test-only programs too (static and 32-bit
#                         bloomctl, selftests): needs tools/deps.sh's packages
#   make demo, make shell, make bench, make bench-vm, make sparse,
#   make checkpatch, make shellcheck

KDIR ?= $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
	$(lastword $(sort $(wildcard /usr/src/linux-headers-*-amd64))))
# Debian's linux-source-6.1, unpacked by tools/vm/kernel.sh; for checkpatch.
KSRC ?= $(or $(KBLOOM_CACHE),$(HOME)/.cache/kbloom)/linux-source-6.1

SOURCES := $(filter-out %.mod.c,$(wildcard kmod/*.[ch] kmod/selftest/*.[ch])) \
	tools/bench/kbloom_apibench.c include/uapi/linux/kbloom.h

# The version is written in one place, the first line of debian/changelog;
# dkms.conf and the packages take it from there.
# (Its upstream part: no epoch, no Debian revision.)
KBLOOM_VERSION := $(shell sed -n '1{s/^[^(]*(\([^)]*\)).*/\1/;s/^[0-9]*://;s/-[^-]*$$//;p}' debian/changelog)

# ---- installation ----------------------------------------------------------
# PREFIX is /usr/local, where locally built software goes (Debian policy
# 9.1.2); the Debian packages install with PREFIX=/usr. The modules go to
# /lib/modules/KVER/$(INSTALL_MOD_DIR) (kbuild's own default, "extra"; DKMS
# uses updates/dkms, which depmod ranks first) whatever PREFIX is, and the
# iptables extension to the directory iptables loads extensions from.
PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
DOCDIR ?= $(PREFIX)/share/doc/kbloom
BLOOMSYNC_DOCDIR ?= $(PREFIX)/share/doc/bloomsync/examples
INSTALL_MOD_DIR ?= extra
# The systemd units (kbloom.service, kbloom-save.service and .timer): where
# a package puts them (/lib/systemd/system) with PREFIX=/usr, else under
# PREFIX (/usr/local/lib/systemd/system, which systemd reads too). The
# netfilter-persistent plugin goes where netfilter-persistent looks for
# plugins whatever PREFIX is; the example /etc/kbloom/filters.conf is
# installed only where there is none yet.
SYSTEMDUNITDIR ?= $(if $(filter /usr,$(PREFIX)),/lib/systemd/system,$(PREFIX)/lib/systemd/system)
NFP_PLUGINDIR ?= /usr/share/netfilter-persistent/plugins.d
KBLOOM_CONFDIR ?= /etc/kbloom
SYSTEMD_UNITS := kbloom.service kbloom-save.service kbloom-save.timer
PKG_CONFIG ?= pkg-config
XTLIBDIR ?= $(shell $(PKG_CONFIG) --variable=xtlibdir xtables 2>/dev/null)
INSTALL ?= install
# The kernel KDIR is for, e.g. 6.1.0-57-amd64.
KVER ?= $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' \
	$(KDIR)/include/generated/utsrelease.h 2>/dev/null)
# What modules_install puts under /lib/modules/KVER/$(INSTALL_MOD_DIR)/.
MODULES := kmod/kbloom kmod/xt_bloom
MODDIR = $(DESTDIR)/lib/modules/$(KVER)/$(INSTALL_MOD_DIR)
# Kernels built with CONFIG_MODULE_SIG_ALL (Debian's) make modules_install
# sign with the kernel's own key, which distributions do not ship: without
# it, do not try (sign-file would only print an error). DKMS signs with
# its MOK key instead.
SIG_KEY := $(shell sed -n 's/^CONFIG_MODULE_SIG_KEY="\(.*\)"/\1/p' $(KDIR)/.config 2>/dev/null)
NOSIGN := $(if $(SIG_KEY),$(if $(wildcard $(if $(filter /%,$(SIG_KEY)),,$(KDIR)/)$(SIG_KEY)),,CONFIG_MODULE_SIG_ALL=))

# ---- module BTF ------------------------------------------------------------
# BTF=1: build the modules with BTF, without which kbloom's BPF kfuncs do
# not register. kbuild gives external modules BTF only if KDIR has vmlinux
# and resolve_btfids, which Debian's headers do not: tools/btf-kdir.sh
# makes a private copy of KDIR with both (the target kernel's BTF, from
# /boot/vmlinuz-KVER) and the modules are built against that, in
# $(KBLOOM_CACHE)/btf-kdir/KVER (~/.cache/kbloom/btf-kdir/KVER) unless
# BTF_KDIR=DIR. Needs dwarves (pahole), libelf-dev and linux-source-X.Y.
BTF ?=
BTF_KDIR ?=
BUILT_KO := $(MODULES:=.ko)

all: modules bloomctl xtables

no-kdir:
	@test -n "$(KDIR)" || { echo "no kernel build directory: apt-get install linux-headers-$$(uname -r), or make KDIR=DIR" >&2; exit 1; }

# With BTF=1, a .ko from a build without BTF is up to date for kbuild,
# which would neither relink it nor add BTF: it is removed first. Then every
# module must have come out with BTF.
modules: no-kdir
ifeq ($(BTF),1)
	@kdir=$$(bash tools/btf-kdir.sh $(KDIR) $(BTF_KDIR)) || exit; \
	for ko in $(BUILT_KO); do \
		if [ -f $$ko ] && ! readelf -S $$ko | grep ' \.BTF ' > /dev/null; then rm -f $$ko; fi; \
	done; \
	echo "$(MAKE) -C $$kdir M=$(CURDIR) W=1 modules"; \
	$(MAKE) -C "$$kdir" M=$(CURDIR) W=1 modules || exit; \
	for ko in $(BUILT_KO); do \
		readelf -S $$ko | grep ' \.BTF ' > /dev/null || { echo "$$ko: no BTF (.BTF section)" >&2; exit 1; }; \
	done
else
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules
endif

# Only the dynamically linked bloomctl: the static and 32-bit variants are
# the tests' (make tools).
bloomctl:
	$(MAKE) -C tools/bloomctl bloomctl

# The fleet daemon needs libnats-dev (the NATS C client); installed apart
# (make install-bloomsync), as Debian's package bloomsync.
bloomsync:
	$(MAKE) -C tools/bloomsync bloomsync

install-bloomsync: bloomsync
	$(INSTALL) -D -m 0755 tools/bloomsync/bloomsync $(DESTDIR)$(SBINDIR)/bloomsync
	$(INSTALL) -D -m 0644 tools/bloomsync/bloomsync.8 $(DESTDIR)$(MANDIR)/man8/bloomsync.8
	$(INSTALL) -d $(DESTDIR)$(SYSTEMDUNITDIR)
	sed 's|@SBINDIR@|$(SBINDIR)|g' tools/bloomsync/bloomsync@.service \
		> $(DESTDIR)$(SYSTEMDUNITDIR)/bloomsync@.service
	chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/bloomsync@.service
	$(INSTALL) -D -m 0644 tools/bloomsync/nats-server.conf.example \
		$(DESTDIR)$(BLOOMSYNC_DOCDIR)/nats-server.conf.example

uninstall-bloomsync:
	rm -f $(DESTDIR)$(SBINDIR)/bloomsync $(DESTDIR)$(MANDIR)/man8/bloomsync.8 \
		$(DESTDIR)$(SYSTEMDUNITDIR)/bloomsync@.service \
		$(DESTDIR)$(BLOOMSYNC_DOCDIR)/nats-server.conf.example
	rmdir $(DESTDIR)$(BLOOMSYNC_DOCDIR) 2>/dev/null || true

# The iptables extension needs libxtables-dev; without it, say so and go on.
xtables:
	@if $(PKG_CONFIG) --exists xtables 2>/dev/null; then \
		$(MAKE) -C tools/xtables; \
	else \
		echo "note: libxt_bloom.so (the iptables extension) not built: apt-get install libxtables-dev pkgconf"; \
	fi

# The test-only programs, as tools/check.sh uses them.
tools:
	$(MAKE) -C tools/native
	$(MAKE) -C tools/bench kbloom_bench kbloom_hashcost
	$(MAKE) -C tools/bloomctl bloomctl bloomctl.static bloomctl32
	$(MAKE) -C tools/selftest

install: install-modules install-tools

# depmod only for the running system: with DESTDIR, whoever installs the
# staged files runs it (the packages' postinst, or by hand). With BTF=1 the
# modules are built with BTF first; installing them needs nothing of it.
install-modules: modules
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_PATH=$(abspath $(DESTDIR)) \
		INSTALL_MOD_DIR=$(INSTALL_MOD_DIR) DEPMOD=true $(NOSIGN) modules_install
ifeq ($(DESTDIR),)
	@if command -v depmod > /dev/null; then set -x; depmod -a $(KVER); \
	else echo "note: no depmod (apt-get install kmod): run 'depmod -a $(KVER)'"; fi
else
	@echo "note: depmod not run (DESTDIR is set): run 'depmod -a $(KVER)' once the modules are in place"
endif

# Built first; then installed by a second make, which sees what was built.
install-tools: bloomctl xtables
	@$(MAKE) --no-print-directory install-tools-files

install-tools-files:
	$(INSTALL) -D -m 0755 tools/bloomctl/bloomctl $(DESTDIR)$(SBINDIR)/bloomctl
	$(INSTALL) -D -m 0644 tools/bloomctl/bloomctl.8 $(DESTDIR)$(MANDIR)/man8/bloomctl.8
	$(INSTALL) -D -m 0644 tools/completion/bloomctl $(DESTDIR)$(BASHCOMPDIR)/bloomctl
	$(INSTALL) -D -m 0644 tools/packaging/60-kbloom.rules.example \
		$(DESTDIR)$(DOCDIR)/60-kbloom.rules.example
	$(INSTALL) -d $(DESTDIR)$(SYSTEMDUNITDIR)
	for u in $(SYSTEMD_UNITS); do \
		sed 's|@SBINDIR@|$(SBINDIR)|g' tools/packaging/$$u > $(DESTDIR)$(SYSTEMDUNITDIR)/$$u && \
		chmod 0644 $(DESTDIR)$(SYSTEMDUNITDIR)/$$u || exit; \
	done
	$(INSTALL) -D -m 0755 tools/packaging/10-kbloom $(DESTDIR)$(NFP_PLUGINDIR)/10-kbloom
	@if [ -e $(DESTDIR)$(KBLOOM_CONFDIR)/filters.conf ]; then \
		echo "note: $(DESTDIR)$(KBLOOM_CONFDIR)/filters.conf exists: left as it is"; \
	else \
		set -x; $(INSTALL) -D -m 0644 tools/packaging/filters.conf $(DESTDIR)$(KBLOOM_CONFDIR)/filters.conf; \
	fi
ifeq ($(wildcard tools/xtables/libxt_bloom.so),)
	@echo "note: libxt_bloom.so not installed (not built: no libxtables-dev)"
else ifeq ($(XTLIBDIR),)
	@echo "note: libxt_bloom.so not installed: no xtables directory (pkg-config --variable=xtlibdir xtables)"
else
	$(INSTALL) -D -m 0644 tools/xtables/libxt_bloom.so $(DESTDIR)$(XTLIBDIR)/libxt_bloom.so
ifneq ($(wildcard tools/xtables/libxt_bloom.man),)
	$(INSTALL) -d $(DESTDIR)$(MANDIR)/man8
	sh tools/packaging/xtables-man.sh $(KBLOOM_VERSION) tools/xtables/libxt_bloom.man \
		> $(DESTDIR)$(MANDIR)/man8/libxt_bloom.8
	chmod 0644 $(DESTDIR)$(MANDIR)/man8/libxt_bloom.8
endif
endif

uninstall: uninstall-modules uninstall-tools

# Remove DIR, then its parents, while they are empty, but only inside a
# DESTDIR (a staging tree): on the real system, only kbloom's own
# directories go.
prune = d='$(DESTDIR)$(1)'; \
	while [ -n '$(DESTDIR)' ] && [ "$${d\#'$(DESTDIR)'/}" != "$$d" ]; do \
		if [ -d "$$d" ]; then rmdir "$$d" 2>/dev/null || break; fi; d=$${d%/*}; done

uninstall-modules:
	@test -n "$(KVER)" || { echo "which kernel? make uninstall KVER=... (or KDIR=...)" >&2; exit 1; }
	rm -f $(foreach m,$(MODULES),$(MODDIR)/$(m).ko $(MODDIR)/$(m).ko.gz $(MODDIR)/$(m).ko.xz $(MODDIR)/$(m).ko.zst)
	rmdir $(MODDIR)/kmod 2>/dev/null || true
	rmdir $(MODDIR) 2>/dev/null || true
	@$(call prune,/lib/modules/$(KVER))
ifeq ($(DESTDIR),)
	@if [ -d /lib/modules/$(KVER)/kernel ] && command -v depmod > /dev/null; then \
		set -x; depmod -a $(KVER); fi
endif

uninstall-tools:
	rm -f $(DESTDIR)$(SBINDIR)/bloomctl $(DESTDIR)$(MANDIR)/man8/bloomctl.8 \
		$(DESTDIR)$(MANDIR)/man8/libxt_bloom.8 \
		$(DESTDIR)$(BASHCOMPDIR)/bloomctl \
		$(DESTDIR)$(DOCDIR)/60-kbloom.rules.example \
		$(addprefix $(DESTDIR)$(SYSTEMDUNITDIR)/,$(SYSTEMD_UNITS)) \
		$(DESTDIR)$(NFP_PLUGINDIR)/10-kbloom
	@echo "note: $(DESTDIR)$(KBLOOM_CONFDIR)/filters.conf and /var/lib/kbloom (saved filters) are left in place"
ifneq ($(XTLIBDIR),)
	rm -f $(DESTDIR)$(XTLIBDIR)/libxt_bloom.so
endif
	rmdir $(DESTDIR)$(DOCDIR) 2>/dev/null || true
	@$(call prune,$(SBINDIR)); $(call prune,$(MANDIR)/man8); \
	$(call prune,$(BASHCOMPDIR)); $(call prune,$(DOCDIR)); \
	$(call prune,$(SYSTEMDUNITDIR)); $(call prune,$(NFP_PLUGINDIR)); \
	$(if $(XTLIBDIR),$(call prune,$(XTLIBDIR)))

# ---- packaging and its tests -------------------------------------------------
print-version:
	@echo $(KBLOOM_VERSION)

dkms-check:
	bash tools/packaging/dkms-check.sh

deb:
	bash tools/packaging/deb.sh

deb-check:
	bash tools/packaging/deb.sh --check

completion-check: bloomctl
	bash tools/completion/test.sh tools/bloomctl/bloomctl

reboot-test:
	bash tools/vm/reboot-test.sh

# ---- development -------------------------------------------------------------
# C=2: check every file, not only those recompiled.
sparse:
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 C=2 CHECK=sparse modules

$(KSRC)/scripts/checkpatch.pl:
	tools/vm/kernel.sh --extract-only

checkpatch: $(KSRC)/scripts/checkpatch.pl
	$(KSRC)/scripts/checkpatch.pl --strict --no-tree --quiet \
		--ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG -f $(SOURCES)

check:
	bash tools/check.sh

check-quick:
	bash tools/check.sh --quick

# Every shell script: the tools, the VM's busybox scripts, the completion,
# the netfilter-persistent plugin.
SHELL_SCRIPTS = $(shell find tools .ci -name '*.sh' -not -path '*/work/*') \
	tools/completion/bloomctl tools/packaging/10-kbloom .ci/run

shellcheck:
	shellcheck -x $(SHELL_SCRIPTS)

# The hot path natively (the module's own core), no VM, side by side with
# libbloom and the BPF bloom map: tables and plot in build/bench/
# (KEYS="N ..." for other sizes than 1M, 10M and 50M keys).
bench:
	$(MAKE) -C tools/bench bench

# In the VM: the bloom match against xt_recent and an nft set on one
# pktgen stream (FLOWS=N, default 100000), and kbloom's ioctls against one
# bpf() per key on a BPF bloom map (KEYS=N, default 100000).
bench-vm:
	$(MAKE) -C tools/bench vm

# bloomsync natively, a real nats-server, hosts on the fake device: bytes
# on the wire per interval against the image at 1K, 10K and 100K new keys
# a second, and propagation latency with 1 and 3 subscribers.
bench-fleet:
	$(MAKE) -C tools/bench fleet

demo:
	bash tools/demo.sh

shell:
	bash tools/demo.sh --shell

clean:
	$(if $(KDIR),$(MAKE) -C $(KDIR) M=$(CURDIR) clean)
	$(MAKE) -C tools/native clean
	$(MAKE) -C tools/bench clean
	$(MAKE) -C tools/bloomctl clean
	$(MAKE) -C tools/selftest clean
	$(MAKE) -C tools/xtables clean
	rm -rf build build.native.log

.PHONY: all no-kdir modules bloomctl bloomsync xtables tools install install-modules \
	install-bloomsync uninstall-bloomsync bench-fleet \
	install-tools install-tools-files uninstall uninstall-modules uninstall-tools print-version \
	dkms-check deb deb-check completion-check reboot-test sparse checkpatch shellcheck check check-quick \
	bench bench-vm demo shell clean
