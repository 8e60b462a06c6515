/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kbloom filter core: hashing, probe positions, bit operations and
 * sizing. No allocation, no locking, no module plumbing: the same source
 * compiles as a userspace object against tools/native/kbloom_native.h, so
 * the kernel and the native tests, benchmarks and offline tools compute
 * exactly the same bit positions.
 */
#ifndef _KBLOOM_CORE_H
#define _KBLOOM_CORE_H

#ifdef __KERNEL__
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

/* Fixed-point numbers in [0, 1] with 32 fractional bits: 1.0 is 1 << 32. */
#define KBLOOM_Q32_ONE		BIT_ULL(32)

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
};

/* The four operations on a key. */
enum kbloom_op {
	KBLOOM_OP_ADD,
	KBLOOM_OP_QUERY,
	KBLOOM_OP_TEST_AND_ADD,
	KBLOOM_OP_REMOVE,
};

/**
 * struct kbloom_delta - what an operation did to a filter's occupancy
 * @set: positions that went from free to occupied (a bit 0 -> 1, or a
 *	counter 0 -> 1).
 * @cleared: positions that went from occupied to free.
 * @stuck: counters that reached KBLOOM_COUNTER_STUCK.
 * @unstuck: stuck counters cleared (only a clear does that).
 *
 * Operations report exactly the transitions they made, each observed by
 * the atomic operation that made it, so the filter layer keeps "bits set"
 * and "saturated" as counters that are exact however callers race,
 * instead of scanning the storage to answer a read.
 */
struct kbloom_delta {
	u64 set;
	u64 cleared;
	u64 stuck;
	u64 unstuck;
};

/**
 * struct kbloom_probe - a key reduced to its probe sequence
 * @x: first position, in [0, m).
 * @y: first step, in [1, m): never 0, so the k positions are not all one
 *	bit. Later steps grow by 1, 2, ... modulo m and may pass through 0.
 *
 * Hashing a key once and probing from this lets a caller hash outside any
 * critical section and reuse the result.
 */
struct kbloom_probe {
	u64 x;
	u64 y;
};

u64 kbloom_hash64(const void *key, u32 len, const u32 seed[2]);
u64 kbloom_siphash64(const void *key, u32 len, const u32 seed[4]);
u64 kbloom_core_hash(const struct kbloom_core *core, const void *key,
		     u32 len);
void kbloom_core_probe(const struct kbloom_core *core, const void *key,
		       u32 len, struct kbloom_probe *probe);
void kbloom_core_positions(const struct kbloom_core *core, const void *key,
			   u32 len, u64 *pos);

void kbloom_core_init(struct kbloom_core *core, unsigned long *bitmap,
		      u64 nbits, u32 nhashes, u32 flags, const u32 *seed);
bool kbloom_core_valid(u64 nbits, u32 nhashes, u32 flags);
bool kbloom_params_valid(u64 nbits, u32 nhashes, u32 flags, u64 capacity,
			 u32 fpr_ppb);
size_t kbloom_core_bytes(u64 nbits, u32 flags);
size_t kbloom_storage_size(size_t bytes, size_t huge);
#ifdef KBLOOM_CORE_TESTS
bool kbloom_core_compatible(const struct kbloom_core *a,
			    const struct kbloom_core *b);
#endif

void kbloom_core_add(struct kbloom_core *core, const void *key, u32 len,
		     struct kbloom_delta *d);
bool kbloom_core_query(const struct kbloom_core *core, const void *key,
		       u32 len);
bool kbloom_core_test_and_add(struct kbloom_core *core, const void *key,
			      u32 len, struct kbloom_delta *d);
bool kbloom_core_remove(struct kbloom_core *core, const void *key, u32 len,
			struct kbloom_delta *d);
void kbloom_core_add_at(struct kbloom_core *core, const u64 *pos,
			struct kbloom_delta *d);
bool kbloom_core_query_at(const struct kbloom_core *core, const u64 *pos);
bool kbloom_core_test_and_add_at(struct kbloom_core *core, const u64 *pos,
				 struct kbloom_delta *d);
bool kbloom_core_remove_at(struct kbloom_core *core, const u64 *pos,
			   struct kbloom_delta *d);
bool kbloom_core_do(struct kbloom_core *core, enum kbloom_op op,
		    const void *key, u32 len, struct kbloom_delta *d);
u32 kbloom_core_do_batch(struct kbloom_core *core, enum kbloom_op op,
			 const u8 *keys, const u32 *lens, u32 n, u8 *results,
			 struct kbloom_delta *d);
int kbloom_core_clear(struct kbloom_core *core, struct kbloom_delta *d);
void kbloom_core_wipe(struct kbloom_core *core, struct kbloom_delta *d);
int kbloom_core_count(const struct kbloom_core *core, u64 *occupied,
		      u64 *stuck);
int kbloom_core_merge(struct kbloom_core *dst, const struct kbloom_core *src,
		      struct kbloom_delta *d);
int kbloom_core_compare(const struct kbloom_core *a,
			const struct kbloom_core *b, u64 *both, u64 *either);
bool kbloom_core_padding_clear(const struct kbloom_core *core);

int kbloom_size(u64 capacity, u32 fpr_ppb, u64 *nbits, u32 *nhashes);
int kbloom_size_flags(u64 capacity, u32 fpr_ppb, u32 flags, u64 *nbits,
		      u32 *nhashes);
u32 kbloom_block_cells(u32 flags);
u64 kbloom_fpr_blocked_q62(u64 nbits, u32 nhashes, u64 nkeys, u32 flags);
u32 kbloom_optimal_hashes(u64 nbits, u64 capacity);
#ifdef KBLOOM_CORE_TESTS
u64 kbloom_fpr_q32(u64 nbits, u32 nhashes, u64 nkeys);
#endif
u64 kbloom_fill_at(u64 nbits, u32 nhashes, u64 nkeys, u32 flags);
u32 kbloom_window_fpr(u32 fpr_ppb, u32 generations);
u64 kbloom_log2_q32(u64 x);
u64 kbloom_exp_neg_q32(u64 x);

#endif /* _KBLOOM_CORE_H */
