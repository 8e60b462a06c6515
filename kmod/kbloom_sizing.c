// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom sizing arithmetic: m and k for a capacity and a rate, and the
 * rates and fills that follow, all in fixed point (no FPU in the kernel).
 * Built into kbloom.ko and, unchanged, into the native tests and tools.
 */

#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/string.h>
#endif

#include "kbloom_sizing.h"

/**
 * kbloom_block_cells() - positions in a block of a blocked filter
 * @flags: KBLOOM_CORE_* bits.
 *
 * Return: 512 bits, or 128 counters for a counting filter: 64 bytes.
 */
u32 kbloom_block_cells(u32 flags)
{
	return 1U << kbloom_block_shift(flags);
}

/**
 * kbloom_window_fpr() - the rate each generation of a windowed filter is
 * sized for
 * @fpr_ppb: the target rate of the whole filter, parts per billion.
 * @generations: G; 0 (or 1) for a plain filter.
 *
 * A key absent from all G generations is reported present if any of them
 * errs: at most G times the rate of one. Sizing each for eps / G keeps the
 * whole filter at eps.
 *
 * Return: the per-generation rate, at least 1 ppb.
 */
u32 kbloom_window_fpr(u32 fpr_ppb, u32 generations)
{
	if (generations < 2 || !fpr_ppb)
		return fpr_ppb;
	return max_t(u32, fpr_ppb / generations, 1);
}

/*
 * Sizing arithmetic. Numbers in [0, 1] (and logarithms) are fixed point
 * with 32 fractional bits; intermediate products go through the 128-bit
 * helpers of math64.h, so nothing overflows for any m up to 2^36.
 */
#define KBLOOM_LN2_Q32		2977044472ULL	/* ln 2 */
#define KBLOOM_LOG2E_Q32	6196328019ULL	/* log2 e = 1 / ln 2 */
#define KBLOOM_Q62_ONE		BIT_ULL(62)

/* 2^(-2^-(j+1)) for j = 0..31, with 62 fractional bits. */
static const u64 kbloom_exp2_neg_q62[32] = {
	0x2d413cccfe779921ULL, 0x35d13f32b5a75abdULL, 0x3ab031b9f7490e4cULL,
	0x3d495f454921b30bULL, 0x3ea0ecb6dc8a80cfULL, 0x3f4f83033d21b05dULL,
	0x3fa784571ee3e213ULL, 0x3fd3b2d65447b229ULL, 0x3fe9d59487236bb4ULL,
	0x3ff4e9d4703df843ULL, 0x3ffa74acbdf6c9d5ULL, 0x3ffd3a46ffc6e30fULL,
	0x3ffe9d1fa8010199ULL, 0x3fff4e8ede053ad5ULL, 0x3fffa747318376acULL,
	0x3fffd3a38961e6ffULL, 0x3fffe9d1c0d8fd14ULL, 0x3ffff4e8df7680c5ULL,
	0x3ffffa746f7dc0ecULL, 0x3ffffd3a37af8098ULL, 0x3ffffe9d1bd3e854ULL,
	0x3fffff4e8de8fe2cULL, 0x3fffffa746f44197ULL, 0x3fffffd3a37a116bULL,
	0x3fffffe9d1bd04deULL, 0x3ffffff4e8de8179ULL, 0x3ffffffa746f407fULL,
	0x3ffffffd3a37a030ULL, 0x3ffffffe9d1bd014ULL, 0x3fffffff4e8de809ULL,
	0x3fffffffa746f404ULL, 0x3fffffffd3a37a02ULL,
};

/**
 * kbloom_log2_q32() - log2 of an integer, 32 fractional bits
 * @x: at least 1.
 *
 * The integer part is the top set bit; each fractional bit comes from
 * squaring the mantissa (in [1, 2), 62 fractional bits) and seeing whether
 * it reached 2.
 *
 * Return: log2(@x) * 2^32, truncated; 0 for @x == 0.
 */
u64 kbloom_log2_q32(u64 x)
{
	u64 result, m;
	int ip, i;

	if (!x)
		return 0;
	ip = fls64(x) - 1;
	m = ip > 62 ? x >> (ip - 62) : x << (62 - ip);
	result = (u64)ip << 32;
	for (i = 31; i >= 0; i--) {
		m = mul_u64_u64_shr(m, m, 62);
		if (m >= 2 * KBLOOM_Q62_ONE) {
			m >>= 1;
			result |= 1ULL << i;
		}
	}
	return result;
}

/* e^-x for x * 2^32, as e^-x * 2^62 (truncated). */
static u64 kbloom_exp_neg_q62(u64 x)
{
	u64 t = mul_u64_u64_shr(x, KBLOOM_LOG2E_Q32, 32);
	u64 r = KBLOOM_Q62_ONE;
	u32 ip = t >> 32, frac = (u32)t;
	int j;

	if (ip >= 62)
		return 0;
	for (j = 0; j < 32; j++)
		if (frac & (1U << (31 - j)))
			r = mul_u64_u64_shr(r, kbloom_exp2_neg_q62[j], 62);
	return r >> ip;
}

/**
 * kbloom_exp_neg_q32() - e^-x in fixed point
 * @x: x * 2^32.
 *
 * e^-x = 2^-t with t = x log2 e: the integer part of t is a shift, the
 * fraction a product of table entries, one per set bit.
 *
 * Return: e^-x * 2^32, rounded.
 */
u64 kbloom_exp_neg_q32(u64 x)
{
	return (kbloom_exp_neg_q62(x) + (1ULL << 29)) >> 30;
}

#ifdef KBLOOM_CORE_TESTS
/**
 * kbloom_fpr_q32() - theoretical false-positive rate (1 - e^(-kn/m))^k
 * @nbits: m, at least 1.
 * @nhashes: k.
 * @nkeys: n, the number of distinct keys added.
 *
 * Return: the rate * 2^32 (KBLOOM_Q32_ONE is certainty).
 */
u64 kbloom_fpr_q32(u64 nbits, u32 nhashes, u64 nkeys)
{
	u64 kn, p, r = KBLOOM_Q32_ONE;
	u32 i;

	if (!nkeys)
		return 0;
	/* Beyond kn/m = 48, e^(-kn/m) is below 2^-64: certainty. */
	if (check_mul_overflow(nkeys, (u64)nhashes, &kn) ||
	    div64_u64(kn, nbits) >= 48)
		return KBLOOM_Q32_ONE;
	p = KBLOOM_Q32_ONE -
	    kbloom_exp_neg_q32(mul_u64_u64_div_u64(kn, KBLOOM_Q32_ONE, nbits));
	if (p >= KBLOOM_Q32_ONE)
		return KBLOOM_Q32_ONE;
	/* r and p are both below 2^32 here, so r * p fits in 64 bits. */
	for (i = 0; i < nhashes; i++)
		r = (r * p + (1ULL << 31)) >> 32;
	return r;
}
#endif /* KBLOOM_CORE_TESTS */

/**
 * kbloom_fill_at() - positions expected set after n distinct keys
 * @nbits: m.
 * @nhashes: k.
 * @nkeys: n.
 * @flags: KBLOOM_CORE_* bits: the layout.
 *
 * m (1 - e^(-kn/m)): the fill a filter has at its design capacity, which a
 * time-windowed filter with rotate-at-fill watches for. A blocked filter
 * fills a little more slowly (a key's draws repeat cells of its block):
 * with Poisson(lambda = nB/m) keys in a block of B cells, a cell stays
 * empty with probability E[(1-1/B)^(ki)] = e^(-lambda (1 - (1-1/B)^k)).
 *
 * Return: the expected number of occupied positions, rounded down.
 */
u64 kbloom_fill_at(u64 nbits, u32 nhashes, u64 nkeys, u32 flags)
{
	unsigned int shift = kbloom_block_shift(flags);
	u64 kn, empty, x, q = KBLOOM_Q62_ONE, miss;
	u32 i;

	if (check_mul_overflow(nkeys, (u64)nhashes, &kn) ||
	    div64_u64(kn, nbits) >= 48)
		return nbits;
	if (flags & KBLOOM_CORE_BLOCKED) {
		/* (1-1/B)^k, then lambda (1 - that), in 2^32. */
		miss = KBLOOM_Q62_ONE - (KBLOOM_Q62_ONE >> shift);
		for (i = 0; i < nhashes; i++)
			q = mul_u64_u64_shr(q, miss, 62);
		x = mul_u64_u64_shr(mul_u64_u64_div_u64(nkeys, 1ULL << (32 + shift),
							nbits),
				    KBLOOM_Q62_ONE - q, 62);
	} else {
		/* The fraction still empty: e^(-kn/m). */
		x = mul_u64_u64_div_u64(kn, KBLOOM_Q32_ONE, nbits);
	}
	empty = kbloom_exp_neg_q32(x);
	return nbits - mul_u64_u64_shr(nbits, empty, 32);
}

/**
 * kbloom_optimal_hashes() - k = round((m/n) ln 2), clamped to [1, 32]
 * @nbits: m.
 * @capacity: n, at least 1.
 *
 * Return: the k that minimises the false-positive rate at n keys.
 */
u32 kbloom_optimal_hashes(u64 nbits, u64 capacity)
{
	u64 k;

	if (!capacity)
		return 1;
	/* Past m/n = 48, k is clamped anyway; this also bounds the quotient. */
	if (div64_u64(nbits, capacity) >= 48)
		return KBLOOM_CORE_MAX_HASHES;
	k = mul_u64_u64_div_u64(nbits, KBLOOM_LN2_Q32, capacity);
	k = (k + (1ULL << 31)) >> 32;
	return clamp_t(u64, k, 1, KBLOOM_CORE_MAX_HASHES);
}

/**
 * kbloom_size() - size a filter for n keys at a target false-positive rate
 * @capacity: n, at least 1.
 * @fpr_ppb: the target rate eps in parts per billion, 1 to 10^9 - 1.
 * @nbits: out: m = ceil(-n ln(eps) / (ln 2)^2), at least 64.
 * @nhashes: out: k = round((m/n) ln 2).
 *
 * -ln(eps) / (ln 2)^2 = log2(1/eps) * log2(e), and log2(1/eps) is
 * log2(10^9) - log2(ppb): no floating point anywhere.
 *
 * Return: 0, or -EINVAL for arguments out of range or an m above
 * KBLOOM_CORE_MAX_BITS.
 */
int kbloom_size(u64 capacity, u32 fpr_ppb, u64 *nbits, u32 *nhashes)
{
	u64 l2, bpk, m;

	if (!capacity || !fpr_ppb || fpr_ppb >= 1000000000U)
		return -EINVAL;
	l2 = kbloom_log2_q32(1000000000U) - kbloom_log2_q32(fpr_ppb);
	bpk = mul_u64_u64_shr(l2, KBLOOM_LOG2E_Q32, 32);	/* bits per key */
	if (div64_u64(KBLOOM_CORE_MAX_BITS, capacity) < (bpk >> 32))
		return -EINVAL;
	m = mul_u64_u64_shr(capacity, bpk, 32);
	if ((u32)(capacity * bpk) != 0)	/* a fraction was cut off */
		m++;
	m = max_t(u64, m, KBLOOM_CORE_MIN_BITS);
	if (m > KBLOOM_CORE_MAX_BITS)
		return -EINVAL;
	*nbits = m;
	*nhashes = kbloom_optimal_hashes(m, capacity);
	return 0;
}

/*
 * The rate of a block of B cells whose keys made t uniform draws: the
 * chance that k uniform query positions all land on occupied cells,
 * E[(S/B)^k] for S the occupied cells, computed exactly and in positive
 * terms only (no alternating sums), so that fixed point keeps it even at
 * 1 ppb: the k query draws hit d distinct cells with probability pd[d],
 * and d given cells are all hit by t draws with probability g[d](t), where
 * g[d](t) = (1 - d/B) g[d](t-1) + (d/B) g[d-1](t-1) (the draw misses
 * them, or covers one). The plain formula's (E[S]/B)^k is 2-9% low at the
 * loads blocks have, and more at large k: S varies much more over 128 or
 * 512 cells than over a whole filter.
 */
struct kbloom_block_rate {
	u64 pd[KBLOOM_CORE_MAX_HASHES + 1];
	u64 g[KBLOOM_CORE_MAX_HASHES + 1];
	u64 t;
	u32 k;
	unsigned int shift;
};

static void kbloom_block_rate_init(struct kbloom_block_rate *br, u32 nhashes,
				   unsigned int shift)
{
	u64 *pd = br->pd;
	u32 j, d;

	memset(br, 0, sizeof(*br));
	br->k = nhashes;
	br->shift = shift;
	br->g[0] = KBLOOM_Q62_ONE;
	/* Distinct cells after j query draws: pd[d] over d = 0..j. */
	pd[0] = KBLOOM_Q62_ONE;
	for (j = 1; j <= nhashes; j++) {
		for (d = j; d >= 1; d--)
			pd[d] = mul_u64_u64_shr(pd[d], (u64)d << (62 - shift),
						62) +
				mul_u64_u64_shr(pd[d - 1],
						KBLOOM_Q62_ONE - ((u64)(d - 1) <<
								  (62 - shift)),
						62);
		pd[0] = 0;
	}
}

/* The rate, * 2^62, after @t draws (t never decreases between calls). */
static u64 kbloom_block_rate_at(struct kbloom_block_rate *br, u64 t)
{
	u64 r = 0, hit;
	u32 d;

	for (; br->t < t; br->t++) {
		for (d = br->k; d >= 1; d--) {
			hit = (u64)d << (62 - br->shift);
			br->g[d] = mul_u64_u64_shr(br->g[d],
						   KBLOOM_Q62_ONE - hit, 62) +
				   mul_u64_u64_shr(br->g[d - 1], hit, 62);
		}
	}
	for (d = 1; d <= br->k; d++)
		r += mul_u64_u64_shr(br->pd[d], br->g[d], 62);
	return min_t(u64, r, KBLOOM_Q62_ONE);
}

/* ln(lambda / j) * 2^32, lambda * 2^32 given: one Poisson ratio, in logs. */
static s64 kbloom_ln_ratio_q32(u64 lambda, u64 j)
{
	s64 l2 = (s64)kbloom_log2_q32(lambda) - (32LL << 32) -
		 (s64)kbloom_log2_q32(j);

	return l2 < 0 ? -(s64)mul_u64_u64_shr(-l2, KBLOOM_LN2_Q32, 32) :
			(s64)mul_u64_u64_shr(l2, KBLOOM_LN2_Q32, 32);
}

/* Poisson weights below e^-40 of the mode's are left out of the sum. */
#define KBLOOM_POISSON_CUT	(40LL << 32)

/**
 * kbloom_fpr_blocked_q62() - theoretical false-positive rate, blocked layout
 * @nbits: m, a whole number of blocks.
 * @nhashes: k.
 * @nkeys: n, the number of distinct keys added.
 * @flags: KBLOOM_CORE_* bits (the block has 512 bits, or 128 counters).
 *
 * With N = m / B blocks of B cells, the keys in the block a query lands in
 * are Poisson with mean lambda = n / N, and a block holding i keys (k i
 * draws) answers "maybe" at the rate kbloom_block_rate_at() computes
 * (Putze, Sanders and Singler, "Cache-, Hash- and Space-Efficient Bloom
 * Filters", 2007, with that rate exact). The weights are taken relative to
 * the mode's, from their logarithms (no e^-lambda, which underflows, and
 * no error that grows along the sum), from where they fall below e^-40 on
 * one side to where they do on the other. All in fixed point.
 *
 * Return: the rate * 2^62.
 */
u64 kbloom_fpr_blocked_q62(u64 nbits, u32 nhashes, u64 nkeys, u32 flags)
{
	unsigned int shift = kbloom_block_shift(flags);
	u64 lambda, mode, i, w, sum_w = 0, sum_f = 0, kn;
	struct kbloom_block_rate br;
	s64 lw = 0;

	if (!nkeys)
		return 0;
	/* Beyond kn/m = 48 every block is full: certainty (as the plain one). */
	if (check_mul_overflow(nkeys, (u64)nhashes, &kn) ||
	    div64_u64(kn, nbits) >= 48)
		return KBLOOM_Q62_ONE;
	lambda = mul_u64_u64_div_u64(nkeys, 1ULL << (32 + shift), nbits);
	mode = lambda >> 32;
	/* Down from the mode to the first weight that counts. */
	for (i = mode; i > 0; i--) {
		s64 step = kbloom_ln_ratio_q32(lambda, i);

		if (lw - step < -KBLOOM_POISSON_CUT)
			break;
		lw -= step;	/* ln w(i - 1) = ln w(i) - ln(lambda / i) */
	}
	kbloom_block_rate_init(&br, nhashes, shift);
	/* Up from there; every weight at most 2^52, their sum below 2^63. */
	for (; lw >= -KBLOOM_POISSON_CUT; i++) {
		w = kbloom_exp_neg_q62(-lw) >> 10;
		sum_w += w;
		sum_f += mul_u64_u64_shr(w, kbloom_block_rate_at(&br,
								 nhashes * i),
					 62);
		lw += kbloom_ln_ratio_q32(lambda, i + 1);
	}
	return mul_u64_u64_div_u64(sum_f, KBLOOM_Q62_ONE, sum_w);
}

/*
 * The least m (whole blocks) at which k keeps n keys at @eps (2^62). The
 * search starts at the plain layout's @m0, which a blocked filter never
 * needs less than: a rate is then never computed for a filter crammed
 * far past its capacity, where the sum is longest.
 */
static u64 kbloom_blocked_bits_for(u64 capacity, u32 nhashes, u64 eps,
				   u32 flags, u64 m0)
{
	u64 cells = kbloom_block_cells(flags);
	u64 max = KBLOOM_CORE_MAX_BITS / cells;
	u64 hi = clamp_t(u64, m0 / cells, 1, max), lo = (hi + 1) / 2;

	while (kbloom_fpr_blocked_q62(hi * cells, nhashes, capacity, flags) >
	       eps) {
		if (hi == max)
			return 0;
		lo = hi + 1;
		hi = min_t(u64, hi * 2, max);
	}
	/* At lo - 1 the rate must be missed: else search from 1. */
	if (lo > 1 && kbloom_fpr_blocked_q62((lo - 1) * cells, nhashes,
					     capacity, flags) <= eps)
		lo = 1;
	while (lo < hi) {
		u64 mid = lo + (hi - lo) / 2;

		if (kbloom_fpr_blocked_q62(mid * cells, nhashes, capacity,
					   flags) > eps)
			lo = mid + 1;
		else
			hi = mid;
	}
	return hi * cells;
}

/**
 * kbloom_size_flags() - size a filter of either layout
 * @capacity: n, at least 1.
 * @fpr_ppb: the target rate in parts per billion, 1 to 10^9 - 1.
 * @flags: KBLOOM_CORE_* bits: the layout, and counting (a blocked counting
 *	filter has 128-counter blocks).
 * @nbits: out: m.
 * @nhashes: out: k.
 *
 * The plain layout is kbloom_size(). A blocked filter errs more than a
 * plain one of the same m (its blocks fill unevenly), so it is sized by its
 * own formula, kbloom_fpr_blocked_q62(): for each k from the plain
 * optimum k0 down to k0 - k0/2 (a blocked filter wants fewer hashes),
 * the least whole number of blocks that keeps the rate, and of those the
 * smallest m, then the fewest hashes. A deterministic function of n and
 * the rate, as IMPORT's check of the sizing rule needs.
 *
 * Return: 0, or -EINVAL for arguments out of range or an m above
 * KBLOOM_CORE_MAX_BITS.
 */
int kbloom_size_flags(u64 capacity, u32 fpr_ppb, u32 flags, u64 *nbits,
		      u32 *nhashes)
{
	u64 m, best_m = 0, eps;
	u32 k0, k, best_k = 0;
	int ret;

	ret = kbloom_size(capacity, fpr_ppb, nbits, nhashes);
	if (ret || !(flags & KBLOOM_CORE_BLOCKED))
		return ret;
	eps = mul_u64_u64_div_u64(fpr_ppb, KBLOOM_Q62_ONE, 1000000000U);
	k0 = *nhashes;
	for (k = k0; k >= 1 && k >= k0 - k0 / 2; k--) {
		m = kbloom_blocked_bits_for(capacity, k, eps, flags, *nbits);
		if (m && (!best_m || m <= best_m)) {
			best_m = m;
			best_k = k;
		}
	}
	if (!best_m)
		return -EINVAL;
	*nbits = best_m;
	*nhashes = best_k;
	return 0;
}
