# SPDX-License-Identifier: GPL-2.0
#
# kbloom. `make` builds the module (and the KUnit module where the kernel
# has KUnit) against KDIR, plus the tools. `make check` is the test command.

KDIR ?= $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
	$(lastword $(sort $(wildcard /usr/src/linux-headers-*-amd64))))
# Debian's linux-source-6.1, unpacked by tools/vm/kernel.sh; for checkpatch.
KSRC ?= $(or $(KBLOOM_CACHE),$(HOME)/.cache/kbloom)/linux-source-6.1

SOURCES := $(filter-out %.mod.c,$(wildcard kmod/*.[ch] kmod/selftest/*.[ch])) \
	include/uapi/linux/kbloom.h

all: modules tools

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 modules

tools:
	$(MAKE) -C tools/native
	$(MAKE) -C tools/bloomctl
	$(MAKE) -C tools/selftest

# C=2: check every file, not only those recompiled.
sparse:
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=1 C=2 CHECK=sparse modules

$(KSRC)/scripts/checkpatch.pl:
	tools/vm/kernel.sh --extract-only

checkpatch: $(KSRC)/scripts/checkpatch.pl
	$(KSRC)/scripts/checkpatch.pl --strict --no-tree --quiet \
		--ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG -f $(filter-out kmod/selftest/kbloom_vectors.h,$(SOURCES))

check:
	bash tools/check.sh

# The hot path natively (the module's own core), no VM.
bench:
	$(MAKE) -C tools/native bench

demo:
	bash tools/demo.sh

shell:
	bash tools/demo.sh --shell

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean
	$(MAKE) -C tools/native clean
	$(MAKE) -C tools/bloomctl clean
	$(MAKE) -C tools/selftest clean
	rm -rf build build.native.log

.PHONY: all modules tools sparse checkpatch check bench demo shell clean
