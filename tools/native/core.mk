# SPDX-License-Identifier: GPL-2.0
# The module's core built as userspace code (tools/native, tools/bench,
# bloomctl, bloomsync, tools/fuzz): its sources in calling order and the
# headers they need, listed once. The batch ring (kmod/kbloom_batch.c) is
# added only where the batch is run. Set TOP first.
KBLOOM_CORE_SRC := $(addprefix $(TOP)/kmod/,kbloom_sizing.c kbloom_hash.c \
	kbloom_core.c)
KBLOOM_CORE_HDR := $(addprefix $(TOP)/kmod/,kbloom_types.h kbloom_sizing.h \
	kbloom_hash.h kbloom_core.h) $(TOP)/tools/native/kbloom_native.h
KBLOOM_BATCH_SRC := $(TOP)/kmod/kbloom_batch.c $(TOP)/kmod/kbloom_batch.h
