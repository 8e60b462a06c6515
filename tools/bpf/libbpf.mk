# SPDX-License-Identifier: GPL-2.0
#
# How programs on libbpf link (tools/bpf's loaders, tools/bench's XDP
# bench): they are copied into the VM's initramfs, which has no
# libraries, so static if the static libraries are there (libbpf-dev,
# libelf-dev, zlib1g-dev have them; libelf here needs no zstd), else
# dynamic. Sets MULTIARCH, LINK and LDLIBS.

MULTIARCH := $(shell $(CC) -print-multiarch)
STATIC_LIBS := $(wildcard $(addprefix /usr/lib/$(MULTIARCH)/,libbpf.a libelf.a libz.a))
ifeq ($(words $(STATIC_LIBS)),3)
LINK := -static
LDLIBS := -lbpf -lelf -lz -lm
else
LINK :=
LDLIBS := $(shell pkg-config --libs libbpf 2>/dev/null || echo -lbpf -lelf -lz) -lm
endif
