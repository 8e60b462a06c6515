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
#include <linux/bitops.h>
#include <linux/build_bug.h>
#include <linux/bits.h>
#include <linux/jhash.h>
#include <linux/math64.h>
#include <linux/siphash.h>
#include <linux/types.h>
#include <asm/unaligned.h>
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
u64 kbloom_core_blocks(const struct kbloom_core *core);
u64 kbloom_core_fingerprint(const struct kbloom_core *core, u32 generations,
			    u32 window_ms);
bool kbloom_core_block_read(const struct kbloom_core *core, u64 block,
			    unsigned long *words);
bool kbloom_core_block_valid(const struct kbloom_core *core, u64 block,
			     const unsigned long *words);
u64 kbloom_core_block_new(const struct kbloom_core *core, u64 block,
			  const unsigned long *words);
void kbloom_core_block_or(struct kbloom_core *core, u64 block,
			  const unsigned long *words, struct kbloom_delta *d);

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

/*
 * ---- the one-key path of a blocked bit filter, inline ----
 *
 * The hash, the block and the bit tests, inline for whoever runs one key
 * at a time on a packet path (kbloom_core_do_inline(): the API calls and
 * the BPF kfuncs), as for the batch loops: there a call per key shows.
 * Only the write of new bits, rare once keys repeat, stays out of line
 * (kbloom_block_set()).
 */

/* The first @len (1 to 4) bytes at @k, little-endian, zero-padded. */
static __always_inline u32 kbloom_tail_le32(const u8 *k, u32 len)
{
	switch (len) {
	case 1:
		return k[0];
	case 2:
		return get_unaligned_le16(k);
	case 3:
		return get_unaligned_le16(k) | (u32)k[2] << 16;
	default:
		return get_unaligned_le32(k);
	}
}

/* kbloom_hash64(), inline for the hot paths. */
static __always_inline u64 __kbloom_hash64(const void *key, u32 len,
					   const u32 seed[2])
{
	const u8 *k = key;
	u32 a, b, c;

	a = JHASH_INITVAL + len + seed[0];
	b = a;
	c = a + seed[1];

	while (len > 12) {
		a += get_unaligned_le32(k);
		b += get_unaligned_le32(k + 4);
		c += get_unaligned_le32(k + 8);
		__jhash_mix(a, b, c);
		len -= 12;
		k += 12;
	}

	/*
	 * The last 1 to 12 bytes. jhash's switch adds byte i of them into
	 * word i / 4 at bits 8 * (i % 4): the little-endian words of the
	 * zero-padded tail, added here a word at a time (the same sums, in
	 * three loads instead of twelve).
	 */
	if (len >= 8) {
		a += get_unaligned_le32(k);
		b += get_unaligned_le32(k + 4);
		if (len > 8)
			c += kbloom_tail_le32(k + 8, len - 8);
	} else if (len >= 4) {
		a += get_unaligned_le32(k);
		if (len > 4)
			b += kbloom_tail_le32(k + 4, len - 4);
	} else if (len) {
		a += kbloom_tail_le32(k, len);
	}
	if (len)
		__jhash_final(a, b, c);
	/* len 0: nothing to mix; callers never pass empty keys. */
	return (u64)b << 32 | c;
}

/*
 * siphash() of lib/siphash.c, inline: SipHash-2-4 from the kernel's own
 * rounds (SIPHASH_PERMUTATION()), the same value for any alignment, and
 * KUnit (kbloom_hash_siphash_is_kernels) proves it equal to siphash().
 * Inline, the one-key path of a blocked filter makes no call at all. The
 * words are read as lib/siphash.c reads them; the last 0 to 7 bytes as
 * kbloom_tail_le32() reads a tail.
 */
static __always_inline u64 __kbloom_siphash64(const void *key, u32 len,
					      const u32 seed[4])
{
	const u64 k0 = (u64)seed[1] << 32 | seed[0];
	const u64 k1 = (u64)seed[3] << 32 | seed[2];
	u64 v0 = SIPHASH_CONST_0 ^ k0, v1 = SIPHASH_CONST_1 ^ k1;
	u64 v2 = SIPHASH_CONST_2 ^ k0, v3 = SIPHASH_CONST_3 ^ k1;
	u64 b = (u64)len << 56, m;
	const u8 *k = key;
	u32 left = len % 8;

	for (; len >= 8; len -= 8, k += 8) {
		m = get_unaligned_le64(k);
		v3 ^= m;
		SIPHASH_PERMUTATION(v0, v1, v2, v3);
		SIPHASH_PERMUTATION(v0, v1, v2, v3);
		v0 ^= m;
	}
	if (left > 4)
		b |= get_unaligned_le32(k) |
		     (u64)kbloom_tail_le32(k + 4, left - 4) << 32;
	else if (left)
		b |= kbloom_tail_le32(k, left);
	v3 ^= b;
	SIPHASH_PERMUTATION(v0, v1, v2, v3);
	SIPHASH_PERMUTATION(v0, v1, v2, v3);
	v0 ^= b;
	v2 ^= 0xff;
	SIPHASH_PERMUTATION(v0, v1, v2, v3);
	SIPHASH_PERMUTATION(v0, v1, v2, v3);
	SIPHASH_PERMUTATION(v0, v1, v2, v3);
	SIPHASH_PERMUTATION(v0, v1, v2, v3);
	return (v0 ^ v1) ^ (v2 ^ v3);
}

/* kbloom_core_hash(), inline for the batch loop, where a call per key shows. */
static __always_inline u64 kbloom_core_hash_inline(const struct kbloom_core *core,
						   const void *key, u32 len)
{
	if (core->flags & KBLOOM_CORE_SIPHASH)
		return __kbloom_siphash64(key, len, core->seed);
	return __kbloom_hash64(key, len, core->seed);
}

/*
 * Map a 64-bit hash onto [0, range) by multiply-high (Lemire's reduction):
 * no division on the hot path, and range need not be a power of two. The
 * result is floor(h * range / 2^64), always < range.
 */
static inline u64 kbloom_reduce(u64 h, u64 range)
{
	return mul_u64_u64_shr(h, range, 64);
}

/*
 * The finaliser of MurmurHash3 (fmix64): a bijection of 64-bit words in
 * which every output bit depends on every input bit.
 */
static inline u64 kbloom_mix64(u64 h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/*
 * Blocked layout: one cache line per key. The block comes from the hash by
 * multiply-high, which is decided by its high-order bits; the positions
 * inside it are log2(cells)-bit pieces of kbloom_mix64() of the hash (and
 * of the hash plus the golden ratio, and so on, when one word runs out:
 * 7 bit positions, or 9 counters, per word). So the k positions are
 * independent and uniform within the block, with repetition, exactly the
 * model kbloom_fpr_blocked_q62() computes the rate of; double hashing
 * inside 512 bits would make them distinct, a different (and not simpler)
 * formula, and cost as much as one multiply per position.
 */
struct kbloom_block_iter {
	u64 h;		/* the hash, stepped by the golden ratio per word */
	u64 r;		/* what is left of the current word */
	unsigned int left;	/* its bits */
};

/* The next position inside the block, in [0, 1 << shift). */
static inline unsigned int kbloom_block_next(struct kbloom_block_iter *it,
					     unsigned int shift)
{
	unsigned int p;

	if (it->left < shift) {
		it->r = kbloom_mix64(it->h);
		it->h += 0x9e3779b97f4a7c15ULL;
		it->left = 64;
	}
	p = it->r & ((1U << shift) - 1);
	it->r >>= shift;
	it->left -= shift;
	return p;
}

/*
 * Blocked bit filters (not counting ones) skip the position array on the
 * way that matters, the query: each of the k bits is tested in the
 * block's word where it lies, without a branch per position (an absent
 * key's first zero bit is a coin toss for the branch predictor), and the
 * positions are generated in registers. An add asks the same question
 * word by word, and writes nothing where the answer is yes.
 */
#define KBLOOM_BLOCK_LONGS	(KBLOOM_BLOCK_BYTES / sizeof(unsigned long))

/* The block of hash @h in a filter of @nblocks blocks. */
static __always_inline unsigned long *
kbloom_block_at(const struct kbloom_core *core, u64 h, u64 nblocks)
{
	return core->bitmap + kbloom_reduce(h, nblocks) * KBLOOM_BLOCK_LONGS;
}

static inline unsigned long *kbloom_block_of(const struct kbloom_core *core,
					     u64 h)
{
	return kbloom_block_at(core, h,
			       core->nbits >> kbloom_block_shift(core->flags));
}

/* Bit 0 of the result is set if bit @p of the block is set. */
static __always_inline unsigned long
kbloom_block_has(const unsigned long *blk, unsigned int p)
{
	return READ_ONCE(blk[p / BITS_PER_LONG]) >> (p % BITS_PER_LONG);
}

/*
 * Mark the block of storage word @word changed, if @core tracks changes.
 * Called after a fully ordered atomic operation set a bit of the word. A
 * collector clears a mark (fully ordered too) before it reads the block,
 * so if the mark read here was still set, the collector reads this bit;
 * if it was clear, it is set now for the next collection: no change is
 * ever lost. A mark already set costs a read, and a filter that does not
 * track, one predictable branch.
 */
static __always_inline void kbloom_core_changed(const struct kbloom_core *core,
						size_t word)
{
	unsigned long *marks = READ_ONCE(core->changed);
	size_t block = word / KBLOOM_BLOCK_LONGS;

	if (likely(!marks))
		return;
	if (!test_bit(block, marks))
		set_bit(block, marks);
}

#ifdef __KERNEL__
/*
 * Images and blocks travel in a fixed byte order: the storage as
 * little-endian words, which is the in-memory layout of every
 * little-endian machine, whatever its word size.
 */
static inline void kbloom_word_to_le(void *dst, unsigned long w)
{
#if BITS_PER_LONG == 64
	put_unaligned_le64(w, dst);
#else
	put_unaligned_le32(w, dst);
#endif
}

static inline unsigned long kbloom_word_from_le(const void *src)
{
#if BITS_PER_LONG == 64
	return get_unaligned_le64(src);
#else
	return get_unaligned_le32(src);
#endif
}
#endif /* __KERNEL__ */

/* Positions one word of kbloom_mix64() gives a blocked bit filter: 7. */
#define KBLOOM_BLOCK_PER_MIX	(64 / KBLOOM_BLOCK_SHIFT)
static_assert(KBLOOM_BLOCK_PER_MIX == 7, "KBLOOM_BLOCK_UNROLL() unrolls 7");
/* kbloom_block_add() keeps the block's words needing a write in a u32. */
static_assert(KBLOOM_BLOCK_LONGS <= 32, "a block's words fit a mask");

/* Position @n of a key in its block, from kbloom_mix64() of its hash. */
#define KBLOOM_BLOCK_POS(mix, n)					\
	(((mix) >> ((n) * KBLOOM_BLOCK_SHIFT)) & (BIT(KBLOOM_BLOCK_SHIFT) - 1))

/*
 * KBLOOM_BLOCK_STEP(n), which the user defines around it, for the k
 * positions, n = k - 1 down to 0, for the usual k (up to 7, for rates down
 * to 0.5%): all from one word of kbloom_mix64(), and unrolled, no loop to
 * run and no branch per position (an absent key's first zero bit is a coin
 * toss for the branch predictor). Larger k take kbloom_block_next() in a
 * loop.
 */
#define KBLOOM_BLOCK_UNROLL(k)						\
	do {								\
		switch (k) {						\
		case 7:							\
			KBLOOM_BLOCK_STEP(6);				\
			fallthrough;					\
		case 6:							\
			KBLOOM_BLOCK_STEP(5);				\
			fallthrough;					\
		case 5:							\
			KBLOOM_BLOCK_STEP(4);				\
			fallthrough;					\
		case 4:							\
			KBLOOM_BLOCK_STEP(3);				\
			fallthrough;					\
		case 3:							\
			KBLOOM_BLOCK_STEP(2);				\
			fallthrough;					\
		case 2:							\
			KBLOOM_BLOCK_STEP(1);				\
			fallthrough;					\
		default:						\
			KBLOOM_BLOCK_STEP(0);				\
		}							\
	} while (0)

/*
 * A query is a few instructions a bit: the word's index, its load, a shift
 * by the bit's index in the word (which x86-64 takes modulo 64 by itself:
 * no mask) and an AND.
 */
static __always_inline bool kbloom_block_query(const struct kbloom_core *core,
					       const unsigned long *blk, u64 h)
{
	struct kbloom_block_iter it = { .h = h };
	unsigned long have = ~0UL;
	u64 mix;
	u32 i;

#define KBLOOM_BLOCK_STEP(n)						\
	(have &= kbloom_block_has(blk, KBLOOM_BLOCK_POS(mix, n)))
	if (likely(core->nhashes <= KBLOOM_BLOCK_PER_MIX)) {
		mix = kbloom_mix64(h);
		KBLOOM_BLOCK_UNROLL(core->nhashes);
		return have & 1;
	}
#undef KBLOOM_BLOCK_STEP
	for (i = 0; i < core->nhashes; i++)
		have &= kbloom_block_has(blk,
				kbloom_block_next(&it, KBLOOM_BLOCK_SHIFT));
	return have & 1;
}

/*
 * Set the bits of @mask in *@w by one atomic OR, never a plain
 * read-modify-write: a concurrent adder's bits are never lost. The OR
 * returns the word it replaced, which tells which bits this call set, for
 * @d.
 *
 * Return: the bits this call set.
 */
static __always_inline unsigned long
kbloom_word_or(unsigned long *w, unsigned long mask, struct kbloom_delta *d)
{
	unsigned long got = mask & ~set_mask_bits(w, 0UL, mask);

	if (d)
		d->set += hweight_long(got);
	return got;
}

/*
 * Position @p of a key being added: its bit joins the mask of its word in
 * @want, and if the block lacks it, the word joins @words.
 */
static __always_inline void kbloom_block_want(const unsigned long *blk,
					      unsigned int p,
					      unsigned long *want,
					      unsigned int *words)
{
	want[p / BITS_PER_LONG] |= BIT_MASK(p);
	*words |= (unsigned int)(~kbloom_block_has(blk, p) & 1) <<
		  (p / BITS_PER_LONG);
}

/**
 * kbloom_block_add() - set a key's bits in its block
 * @core: a blocked bit filter.
 * @blk: the key's block.
 * @h: the key's hash.
 * @d: if not NULL, counts the bits set.
 *
 * The k bits are gathered by word, and each word that lacks one of them
 * takes one atomic OR; a word that has them all is only read, so a key
 * already present writes nothing (and a full filter's cache lines stay
 * shared between CPUs). Which words lack bits is found as a query tests
 * bits, without a branch per position; only the loop over those words
 * branches.
 *
 * Return: true if this call set no bit (the key was there, or a racing
 * adder set its last bits first).
 */
static __always_inline bool kbloom_block_add(const struct kbloom_core *core,
					     unsigned long *blk, u64 h,
					     struct kbloom_delta *d)
{
	unsigned long want[KBLOOM_BLOCK_LONGS] = {}, got = 0;
	struct kbloom_block_iter it = { .h = h };
	unsigned int words = 0;
	u64 mix;
	u32 i;

#define KBLOOM_BLOCK_STEP(n)						\
	kbloom_block_want(blk, KBLOOM_BLOCK_POS(mix, n), want, &words)
	if (likely(core->nhashes <= KBLOOM_BLOCK_PER_MIX)) {
		mix = kbloom_mix64(h);
		KBLOOM_BLOCK_UNROLL(core->nhashes);
	} else {
		for (i = 0; i < core->nhashes; i++)
			kbloom_block_want(blk,
					  kbloom_block_next(&it,
							    KBLOOM_BLOCK_SHIFT),
					  want, &words);
	}
#undef KBLOOM_BLOCK_STEP
	while (words) {
		i = __ffs(words);
		words &= words - 1;
		got |= kbloom_word_or(&blk[i], want[i], d);
	}
	if (got)
		kbloom_core_changed(core, blk - core->bitmap);
	return !got;
}

bool kbloom_block_set(const struct kbloom_core *core, unsigned long *blk,
		      u64 h, struct kbloom_delta *d);
bool kbloom_core_do_pos(struct kbloom_core *core, enum kbloom_op op,
			const void *key, u32 len, struct kbloom_delta *d);

/*
 * One operation of a blocked bit filter on the key hashing to @h: query,
 * add or test-and-add (remove is for counting filters, which never come
 * here; callers check, kbloom_op_check()).
 */
static __always_inline bool kbloom_block_do(const struct kbloom_core *core,
					    enum kbloom_op op,
					    unsigned long *blk, u64 h,
					    struct kbloom_delta *d)
{
	/*
	 * Callers refuse a remove (kbloom_op_check()); were one to come, it
	 * answers false and writes nothing, as in the batch.
	 */
	if (op == KBLOOM_OP_REMOVE)
		return false;
	/* An add whose bits are all set writes nothing. */
	if (kbloom_block_query(core, blk, h))
		return op != KBLOOM_OP_ADD;
	if (op == KBLOOM_OP_QUERY)
		return false;
	return kbloom_block_set(core, blk, h, d) &&
	       op == KBLOOM_OP_TEST_AND_ADD;
}

/* Blocked bit filters take kbloom_block_do(); the others, positions. */
static inline bool kbloom_core_block_bits(const struct kbloom_core *core)
{
	return (core->flags & (KBLOOM_CORE_BLOCKED | KBLOOM_CORE_COUNTING)) ==
	       KBLOOM_CORE_BLOCKED;
}

/* Inline: the one-key path of a blocked filter is one call, not four. */
static __always_inline bool kbloom_block_key(const struct kbloom_core *core,
					     enum kbloom_op op,
					     const void *key, u32 len,
					     struct kbloom_delta *d)
{
	u64 h = kbloom_core_hash_inline(core, key, len);

	return kbloom_block_do(core, op, kbloom_block_of(core, h), h, d);
}

/**
 * kbloom_core_do_inline() - kbloom_core_do(), inline for a blocked filter
 * @core: the filter.
 * @op: the operation; KBLOOM_OP_REMOVE on counting filters only.
 * @key: the key bytes.
 * @len: its length, at least 1.
 * @d: if not NULL, counts the transitions.
 *
 * Return: as kbloom_core_do().
 */
static __always_inline bool kbloom_core_do_inline(struct kbloom_core *core,
						  enum kbloom_op op,
						  const void *key, u32 len,
						  struct kbloom_delta *d)
{
	if (likely(kbloom_core_block_bits(core)))
		return kbloom_block_key(core, op, key, len, d);
	return kbloom_core_do_pos(core, op, key, len, d);
}

#endif /* _KBLOOM_CORE_H */
