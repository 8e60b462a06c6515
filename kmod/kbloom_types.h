/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A filter as the kbloom core sees it: its limits and flags, the blocks
 * of the blocked layout, struct kbloom_core, and the storage word that
 * holds a position. No code: the bottom of the core, which every unit of
 * it includes.
 *
 * The core is four units, each calling only those before it:
 * kbloom_sizing (m and k, in fixed point), kbloom_hash (a key to its
 * positions), kbloom_core (the bit operations), kbloom_batch (many keys,
 * their cache misses overlapped). No allocation, no locking, no module
 * plumbing: the same sources compile as userspace objects against
 * tools/native/kbloom_native.h, so the kernel and the native tests,
 * benchmarks and offline tools compute exactly the same bit positions.
 */
#ifndef _KBLOOM_TYPES_H
#define _KBLOOM_TYPES_H

#ifdef __KERNEL__
#include <linux/bitops.h>
#include <linux/build_bug.h>
#include <linux/bits.h>
#include <linux/types.h>
#else
#include "kbloom_native.h"
#endif

/*
 * What only the tests use (KUnit, tools/native) is built where they run:
 * in userspace, and in a module for a kernel with KUnit; a module for a
 * kernel without KUnit does not carry it.
 */
#ifdef __KERNEL__
#if IS_ENABLED(CONFIG_KUNIT)
#define KBLOOM_CORE_TESTS	1
#endif
#else
#define KBLOOM_CORE_TESTS	1
#endif

#define KBLOOM_CORE_MIN_BITS	64ULL
#define KBLOOM_CORE_MAX_BITS	BIT_ULL(36)
#define KBLOOM_CORE_MAX_HASHES	32

/* Flags of a core. */
#define KBLOOM_CORE_COUNTING	BIT(0)	/* 4-bit counters, not bits */
#define KBLOOM_CORE_SIPHASH	BIT(1)	/* SipHash-2-4, 128-bit key; else jhash */
#define KBLOOM_CORE_BLOCKED	BIT(2)	/* a key's k positions in one block */
#define KBLOOM_CORE_FLAGS	(KBLOOM_CORE_COUNTING | KBLOOM_CORE_SIPHASH | \
				 KBLOOM_CORE_BLOCKED)
/* A saturated counter sticks: never decremented again. */
#define KBLOOM_COUNTER_STUCK	15

/*
 * Blocked filters: a block is one 64-byte cache line, 512 bits or 128
 * counters (the storage is page-aligned, so blocks are line-aligned), and
 * m is a whole number of blocks.
 */
#define KBLOOM_BLOCK_BYTES	64
#define KBLOOM_BLOCK_SHIFT	9	/* log2 of the bits in a block */
#define KBLOOM_BLOCK_SHIFT_COUNTING 7	/* log2 of the counters in one */

/* log2 of the positions in a block of a filter with KBLOOM_CORE_* @flags. */
static inline unsigned int kbloom_block_shift(u32 flags)
{
	return flags & KBLOOM_CORE_COUNTING ? KBLOOM_BLOCK_SHIFT_COUNTING :
					      KBLOOM_BLOCK_SHIFT;
}

/* Storage words in a block. */
#define KBLOOM_BLOCK_LONGS	(KBLOOM_BLOCK_BYTES / sizeof(unsigned long))

/**
 * struct kbloom_core - one filter's bits and parameters
 * @bitmap: m bits, in unsigned longs, as the kernel bitops want them; for
 *	a counting filter, m 4-bit counters packed in the same words (counter
 *	i in bits 4 * (i % 16) .. +3 of word i / 16 on 64-bit).
 * @nbits: m, from KBLOOM_CORE_MIN_BITS to KBLOOM_CORE_MAX_BITS; any value,
 *	not only powers of two; for a blocked filter a multiple of the cells
 *	in a block (kbloom_block_cells()).
 * @nhashes: k, from 1 to KBLOOM_CORE_MAX_HASHES.
 * @flags: KBLOOM_CORE_* bits.
 * @seed: the per-filter hash seed; secret, so that nobody can compute which
 *	keys collide in a given filter. jhash uses the first two words (the
 *	last two are zero), SipHash all four as its 128-bit key.
 * @changed: NULL, or a mark per KBLOOM_BLOCK_BYTES of @bitmap: set after
 *	an operation sets a bit of the block (kbloom_core_changed()), cleared
 *	by whoever collects the block. Bit filters only. Allocated and freed
 *	by the filter's owner; the core only sets marks.
 *
 * The blocked layout (KBLOOM_CORE_BLOCKED) is only another way from a hash
 * to k positions (all in one cache line): every operation on positions,
 * counting, clear, merge, images and windows, is the same for both.
 */
struct kbloom_core {
	unsigned long *bitmap;
	u64 nbits;
	u32 nhashes;
	u32 flags;
	u32 seed[4];
	unsigned long *changed;
};

/*
 * Counting filters keep a 4-bit counter per position, packed in the same
 * unsigned longs the bitmap uses, so the file/image byte order and the
 * allocation are shared with plain filters.
 */
#define KBLOOM_NIBBLES_PER_LONG	(BITS_PER_LONG / 4)

static inline bool kbloom_counting(const struct kbloom_core *core)
{
	return core->flags & KBLOOM_CORE_COUNTING;
}

/* The word holding position @pos: bit @pos, or counter @pos. */
static inline unsigned long *kbloom_cell_word(const struct kbloom_core *core,
					      u64 pos)
{
	if (kbloom_counting(core))
		return &core->bitmap[pos / KBLOOM_NIBBLES_PER_LONG];
	return &core->bitmap[BIT_WORD(pos)];
}

#endif /* _KBLOOM_TYPES_H */
