/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kbloom hashing: how a key becomes k positions. The seeded 64-bit hashes
 * (jhash carried to 64 bits, SipHash-2-4), the probe sequence of enhanced
 * double hashing, and the blocked layout's block and positions in it.
 * Above kbloom_types.h only. Inline here: what the one-key path and the
 * batch loops run per key, where a call per key shows.
 */
#ifndef _KBLOOM_HASH_H
#define _KBLOOM_HASH_H

#ifdef __KERNEL__
#include <linux/bitops.h>
#include <linux/jhash.h>
#include <linux/math64.h>
#include <linux/prefetch.h>
#include <linux/siphash.h>
#include <asm/unaligned.h>
#endif

#include "kbloom_types.h"

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

/* Positions one word of kbloom_mix64() gives a blocked bit filter: 7. */
#define KBLOOM_BLOCK_PER_MIX	(64 / KBLOOM_BLOCK_SHIFT)
static_assert(KBLOOM_BLOCK_PER_MIX == 7, "KBLOOM_BLOCK_UNROLL() unrolls 7");

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
 * Enhanced double hashing (Dillinger and Manolios, 2004), the refinement of
 * Kirsch and Mitzenmacher's g_i = h1 + i * h2: position i is
 * x_i = x_{i-1} + y_{i-1} (mod m) with y_i = y_{i-1} + i (mod m). The
 * growing step breaks the short cycles plain double hashing falls into when
 * gcd(step, m) > 1, which matters because m is not restricted to primes or
 * powers of two. Everything stays below 2m before each conditional
 * subtraction (m >= 64 > k), so there is no division.
 */
static inline void kbloom_probe_next(struct kbloom_probe *p, u64 m, u32 i)
{
	p->x += p->y;
	if (p->x >= m)
		p->x -= m;
	p->y += i;
	if (p->y >= m)
		p->y -= m;
}

static inline void kbloom_core_fill_blocked(const struct kbloom_core *core,
					    u64 h, u64 *pos)
{
	unsigned int shift = kbloom_block_shift(core->flags);
	u64 base = kbloom_reduce(h, core->nbits >> shift) << shift;
	struct kbloom_block_iter it = { .h = h };
	u32 i;

	prefetch(kbloom_cell_word(core, base));
	for (i = 0; i < core->nhashes; i++)
		pos[i] = base + kbloom_block_next(&it, shift);
}

/* Fill pos[0..k) and start fetching the words they live in. */
static inline void kbloom_core_fill(const struct kbloom_core *core,
				    const void *key, u32 len, u64 *pos)
{
	struct kbloom_probe p;
	u32 i;

	if (core->flags & KBLOOM_CORE_BLOCKED) {
		kbloom_core_fill_blocked(core, kbloom_core_hash(core, key, len),
					 pos);
		return;
	}

	kbloom_core_probe(core, key, len, &p);
	for (i = 0; i < core->nhashes; i++) {
		pos[i] = p.x;
		/*
		 * The k words are in unrelated cache lines of a bitmap that
		 * may be far larger than the caches: asking for all of them
		 * before touching any overlaps the k misses.
		 */
		prefetch(kbloom_cell_word(core, p.x));
		kbloom_probe_next(&p, core->nbits, i + 1);
	}
}

#endif /* _KBLOOM_HASH_H */
