// SPDX-License-Identifier: GPL-2.0
/*
 * Native unit tests of the kbloom core (kmod/kbloom_core.c built as a
 * userspace object). They run in seconds, before any VM boots, and cover
 * what is cheaper to sweep natively: millions of probes, exact comparison
 * of the fixed-point sizing with libm, the golden vectors shared with the
 * KUnit suite, and real threads on the lock-free add path.
 *
 * Output: one "ok N - name" / "not ok N - name: why" line per test, then
 * "native: N passed, M failed". Exit status 0 only if nothing failed.
 */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "kbloom_batch.h"
#include "kbloom_core.h"
#include "../../include/uapi/linux/kbloom.h"
#include "../../kmod/selftest/kbloom_test_util.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * Merge, and return true if the transitions reported match a full count
 * before and after: what the module keeps instead of scanning ("bits
 * set", "saturated") stays exact.
 */
static bool kbloom_test_merge(struct kbloom_core *dst,
			      const struct kbloom_core *src)
{
	struct kbloom_delta d = {};
	u64 o0, s0, o1, s1;

	kbloom_core_count(dst, &o0, &s0);
	if (kbloom_core_merge(dst, src, &d))
		return false;
	kbloom_core_count(dst, &o1, &s1);
	return o0 + d.set - d.cleared == o1 && s0 + d.stuck - d.unstuck == s1;
}

/*
 * SipHash-2-4 reference vectors (the SipHash paper's, as in the kernel's
 * lib/test_siphash.c): key bytes 00..0f, i.e. seed words 0x03020100,
 * 0x07060504, 0x0b0a0908, 0x0f0e0d0c; message i is the bytes 00..i-1.
 */
static const u32 kbloom_siphash_ref_seed[4] = {
	0x03020100, 0x07060504, 0x0b0a0908, 0x0f0e0d0c,
};

static const u64 kbloom_siphash_ref[16] = {
	0x726fdb47dd0e0e31ULL, 0x74f839c593dc67fdULL, 0x0d6c8009d9a94f5aULL,
	0x85676696d7fb7e2dULL, 0xcf2794e0277187b7ULL, 0x18765564cd99a68dULL,
	0xcbc9466e58fee3ceULL, 0xab0200f58b01d137ULL, 0x93f5f5799a932462ULL,
	0x9e0082df0ba9e4b0ULL, 0x7a5dbbc594ddb9f3ULL, 0xf4b32f46226bada7ULL,
	0x751e8fbc860ee5fbULL, 0x14ea5627c0843d90ULL, 0xf723ca908e7af2eeULL,
	0xa129ca6149be45e5ULL,
};

static int passed, failed;
static char why[256];

static bool fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return false;
}

static void *zalloc(size_t bytes)
{
	void *p = calloc(1, bytes);

	if (!p) {
		perror("kbloom_core_test: calloc");
		exit(2);
	}
	return p;
}

static struct kbloom_core *core_new_flags(u64 nbits, u32 nhashes, u32 flags,
					   u32 s0, u32 s1)
{
	struct kbloom_core *core = zalloc(sizeof(*core));
	u32 seed[2] = { s0, s1 };

	kbloom_core_init(core, zalloc(kbloom_core_bytes(nbits, flags)), nbits,
			 nhashes, flags, seed);
	return core;
}

static struct kbloom_core *core_new(u64 nbits, u32 nhashes, u32 s0, u32 s1)
{
	return core_new_flags(nbits, nhashes, 0, s0, s1);
}

static void core_free(struct kbloom_core *core)
{
	free(core->bitmap);
	free(core);
}

/* Add keys [@from, @to) of stream @s. */
static void keys_add(struct kbloom_core *core, u64 s, u64 from, u64 to)
{
	u8 key[32];

	for (; from < to; from++)
		kbloom_core_add(core, key, kbloom_test_key(key, s, from), NULL);
}

/* How many of keys [@from, @to) of stream @s the filter finds. */
static u64 keys_found(const struct kbloom_core *core, u64 s, u64 from, u64 to)
{
	u64 found = 0;
	u8 key[32];

	for (; from < to; from++)
		found += kbloom_core_query(core, key,
					   kbloom_test_key(key, s, from));
	return found;
}

static bool siphash_reference(void)
{
	u8 msg[16];
	int i;

	for (i = 0; i < 16; i++)
		msg[i] = i;
	for (i = 0; i < 16; i++)
		if (kbloom_siphash64(msg, i, kbloom_siphash_ref_seed) !=
		    kbloom_siphash_ref[i])
			return fail("SipHash reference vector %d differs", i);
	return true;
}

static bool golden_vectors_match(void)
{
	int i = kbloom_test_vectors();

	return i < 0 || fail("vector %d, position %d (32: hash)", i / 64,
			     i % 64);
}

/*
 * Probes and positions in range, the step never 0; and on the smaller
 * filters every bit reachable, and roughly evenly: an off-by-one in the
 * range reduction starves the last bit or the first.
 */
static bool positions_in_range_and_uniform(void)
{
	static const u64 ms[] = { 64, 65, 1000, 4099, 9585059,
				  (1ULL << 32) + 3, 1ULL << 36 };
	static u32 hits[4099];
	u64 pos[KBLOOM_CORE_MAX_HASHES], i, b;
	u32 seed[2] = { 11, 12 }, len, j;
	struct kbloom_probe p;
	struct kbloom_core core;
	size_t mi;
	u8 key[32];

	for (mi = 0; mi < ARRAY_SIZE(ms); mi++) {
		kbloom_core_init(&core, NULL, ms[mi], 32, 0, seed);
		for (i = 0; i < 100000; i++) {
			len = kbloom_test_key(key, mi, i);
			kbloom_core_probe(&core, key, len, &p);
			if (p.x >= ms[mi] || p.y == 0 || p.y >= ms[mi])
				return fail("m %llu: probe out of range",
					    (unsigned long long)ms[mi]);
			kbloom_core_positions(&core, key, len, pos);
			for (j = 0; j < 32; j++)
				if (pos[j] >= ms[mi])
					return fail("m %llu: position %llu",
						    (unsigned long long)ms[mi],
						    (unsigned long long)pos[j]);
		}
		if (ms[mi] > ARRAY_SIZE(hits))
			continue;
		memset(hits, 0, sizeof(hits));
		kbloom_core_init(&core, NULL, ms[mi], 3, 0, seed);
		for (i = 0; i < ms[mi] * 1000; i++) {
			len = kbloom_test_key(key, 100 + mi, i);
			kbloom_core_positions(&core, key, len, pos);
			for (j = 0; j < 3; j++)
				hits[pos[j]]++;
		}
		/* 3000 expected per bit; 6 sigma is about 330. */
		for (b = 0; b < ms[mi]; b++)
			if (hits[b] < 2600 || hits[b] > 3400)
				return fail("m %llu: bit %llu hit %u times of 3000",
					    (unsigned long long)ms[mi],
					    (unsigned long long)b, hits[b]);
	}
	return true;
}

static bool no_false_negatives(void)
{
	static const struct { u64 m; u32 k; u64 n; } sw[] = {
		{ 64, 1, 5 }, { 64, 32, 3 }, { 1000, 1, 100 }, { 1000, 32, 20 },
		{ 4099, 7, 400 }, { 1000003, 7, 100000 },
		{ 1 << 20, 10, 50000 }, { (1 << 20) + 7, 7, 100000 },
		{ (1ULL << 32) + 64, 4, 100000 },
	};
	struct kbloom_core *core;
	u64 found;
	size_t s;

	for (s = 0; s < ARRAY_SIZE(sw); s++) {
		core = core_new(sw[s].m, sw[s].k, (u32)s, 99);
		keys_add(core, s, 0, sw[s].n);
		found = keys_found(core, s, 0, sw[s].n);
		core_free(core);
		if (found != sw[s].n)
			return fail("m %llu k %u: %llu keys of %llu lost",
				    (unsigned long long)sw[s].m, sw[s].k,
				    (unsigned long long)(sw[s].n - found),
				    (unsigned long long)sw[s].n);
	}
	return true;
}

/*
 * Measured FPR of 10^6 absent keys within 3 binomial sigma of theory, and
 * the core's fixed-point rate (kbloom_fpr_q32(), what sizing and the
 * window use) the same theory.
 */
static bool fpr_matches_theory(void)
{
	static const u32 bpk[] = { 4, 6, 8, 10, 16 };
	const u64 n = 100000, queries = 1000000;
	struct kbloom_core *core;
	double p, sigma, got, fixed;
	u64 fp, m;
	u32 k;
	size_t b;

	for (b = 0; b < ARRAY_SIZE(bpk); b++) {
		m = n * bpk[b] + 13;	/* not a power of two */
		k = kbloom_optimal_hashes(m, n);
		core = core_new(m, k, 1000 + (u32)b, 7);
		keys_add(core, 1, 0, n);
		fp = keys_found(core, 2, 0, queries);
		core_free(core);
		p = pow(1 - exp(-(double)k * n / m), k);
		fixed = (double)kbloom_fpr_q32(m, k, n) / KBLOOM_Q32_ONE;
		if (fabs(fixed - p) > 1e-6 * p)
			return fail("m/n %u: kbloom_fpr_q32() %.9g, libm %.9g",
				    bpk[b], fixed, p);
		sigma = sqrt(p * (1 - p) / queries);
		got = (double)fp / queries;
		printf("# m/n %u k %u: measured %.5f%% theory %.5f%% (%.2f sigma)\n",
		       bpk[b], k, got * 100, p * 100, (got - p) / sigma);
		if (fabs(got - p) > 3 * sigma)
			return fail("m/n %u: measured %g, theory %g", bpk[b],
				    got, p);
	}
	return true;
}

/*
 * The blocked rate in doubles by another road than the core's: from the
 * occupancy distribution of t draws into B cells (a dynamic programme
 * over the draws, S by S), E[(S/B)^k] for each Poisson number of keys in a
 * block; and in *@var (if not NULL) the variance of (S/B)^k over blocks,
 * for one filter's sigma.
 */
static double exact_fpr_blocked(double m, u32 k, double n, u32 cells,
				double *var)
{
	double lambda = n * cells / m, sum = 0, sum2 = 0, w, g, g2;
	u32 i, end = (u32)(lambda + 40 * sqrt(lambda) + 60), s;
	double *p = calloc(cells + 1, sizeof(*p)), *nx = calloc(cells + 1, 8);
	u64 t, draws = 0;

	p[0] = 1;
	for (i = 0; i < end; i++) {
		for (t = draws; t < (u64)k * i; t++) {
			memset(nx, 0, (cells + 1) * sizeof(*nx));
			for (s = 0; s <= cells; s++) {
				nx[s] += p[s] * s / cells;
				if (s < cells)
					nx[s + 1] += p[s] * (cells - s) / cells;
			}
			memcpy(p, nx, (cells + 1) * sizeof(*p));
		}
		draws = (u64)k * i;
		for (g = g2 = 0, s = 0; s <= cells; s++) {
			g += p[s] * pow((double)s / cells, k);
			g2 += p[s] * pow((double)s / cells, 2.0 * k);
		}
		w = exp(-lambda + i * log(lambda) - lgamma(i + 1));
		sum += w * g;
		sum2 += w * g2;
	}
	free(p);
	free(nx);
	if (var)
		*var = sum2 - sum * sum;
	return sum;
}

/* Every key's k positions lie in one block, and every block is used. */
static bool blocked_positions_in_one_block(void)
{
	static const struct { u64 m; u32 k; u32 flags; } sw[] = {
		{ 512, 1, 0 }, { 512 * 7, 7, 0 }, { 512 * 1001, 32, 0 },
		{ 128 * 3, 5, KBLOOM_CORE_COUNTING },
		{ 128 * 999, 13, KBLOOM_CORE_COUNTING },
		{ 128 * 1001, 32, KBLOOM_CORE_COUNTING },
	};
	u64 pos[32], base, cells, blocks, i, *hits;
	struct kbloom_core core;
	u32 s, j;
	u8 key[32];

	for (s = 0; s < ARRAY_SIZE(sw); s++) {
		u32 flags = sw[s].flags | KBLOOM_CORE_BLOCKED, seed[2] = { s, 3 };

		cells = kbloom_block_cells(flags);
		blocks = sw[s].m / cells;
		if (!kbloom_core_valid(sw[s].m, sw[s].k, flags) ||
		    kbloom_core_valid(sw[s].m + 64, sw[s].k, flags))
			return fail("m %llu: a whole number of blocks is the rule",
				    (unsigned long long)sw[s].m);
		/* Positions need only m, k, the layout and the seed. */
		kbloom_core_init(&core, NULL, sw[s].m, sw[s].k, flags, seed);
		hits = zalloc(blocks * sizeof(*hits));
		for (i = 0; i < 200 * blocks; i++) {
			kbloom_core_positions(&core, key,
					      kbloom_test_key(key, 40, i), pos);
			base = pos[0] / cells * cells;
			hits[base / cells]++;
			for (j = 0; j < sw[s].k; j++) {
				if (pos[j] < base || pos[j] >= base + cells ||
				    pos[j] >= sw[s].m) {
					free(hits);
					return fail("m %llu: position %llu outside block %llu",
						    (unsigned long long)sw[s].m,
						    (unsigned long long)pos[j],
						    (unsigned long long)base);
				}
			}
		}
		/* 200 keys a block: Poisson, 7 sigma is about 100. */
		for (i = 0; i < blocks; i++) {
			if (hits[i] < 100 || hits[i] > 300) {
				free(hits);
				return fail("m %llu: block %llu got %llu keys of 200 expected",
					    (unsigned long long)sw[s].m,
					    (unsigned long long)i,
					    (unsigned long long)hits[i]);
			}
		}
		free(hits);
	}
	return true;
}

/*
 * The filter's own rate: a query's k positions are independent and
 * uniform in a uniform block, so it is the mean over blocks of
 * (occupied cells / B)^k, from the storage itself.
 */
static double blocked_own_rate(const struct kbloom_core *core)
{
	bool counting = core->flags & KBLOOM_CORE_COUNTING;
	u32 cells = kbloom_block_cells(core->flags), occupied, i;
	u64 nblocks = core->nbits / cells, b;
	const u8 *bytes = (const u8 *)core->bitmap;
	double sum = 0;

	for (b = 0; b < nblocks; b++) {
		const u8 *blk = bytes + b * KBLOOM_BLOCK_BYTES;

		for (occupied = 0, i = 0; i < KBLOOM_BLOCK_BYTES; i++)
			occupied += counting ? !!(blk[i] & 0xf) +
					       !!(blk[i] >> 4) :
					       __builtin_popcount(blk[i]);
		sum += pow((double)occupied / cells, core->nhashes);
	}
	return sum / nblocks;
}

/*
 * Blocked filters at 4 to 16 bits a key: no false negative, the measured
 * rate within 3 sigma of the exact blocked rate, and the core's
 * fixed-point rate (computed another way) equal to it. The rate is an
 * expectation over filters; one filter's own rate is the mean over its N
 * blocks of theirs, which vary with their loads and patterns, so sigma
 * has that part too (variance over blocks / N) besides the queries'
 * binomial one. Apart, the measured rate within 3 binomial sigma of the
 * filter's own (which tests that queries land uniformly, as the formula
 * assumes), and that own rate within 25% of the formula.
 */
static bool blocked_fpr_matches_theory(void)
{
	static const struct { u32 bpk, k, flags; } sw[] = {
		{ 4, 3, 0 }, { 6, 4, 0 }, { 8, 5, 0 }, { 10, 6, 0 },
		{ 16, 10, 0 }, { 4, 3, KBLOOM_CORE_COUNTING },
		{ 6, 4, KBLOOM_CORE_COUNTING }, { 8, 5, KBLOOM_CORE_COUNTING },
		{ 10, 6, KBLOOM_CORE_COUNTING }, { 16, 9, KBLOOM_CORE_COUNTING },
		{ 16, 10, KBLOOM_CORE_COUNTING },
	};
	const u64 n = 100000, queries = 1000000;
	struct kbloom_core *core;
	double p, sigma, got, fixed, var, own;
	u64 fill, fp, m, cells;
	size_t b;

	for (b = 0; b < ARRAY_SIZE(sw); b++) {
		u32 flags = sw[b].flags | KBLOOM_CORE_BLOCKED, k = sw[b].k;

		cells = kbloom_block_cells(flags);
		m = (n * sw[b].bpk + cells - 1) / cells * cells;
		core = core_new_flags(m, k, flags, 2000 + (u32)b, 8);
		keys_add(core, 41, 0, n);
		if (keys_found(core, 41, 0, n) != n)
			return fail("blocked m/n %u: a key lost", sw[b].bpk);
		/* The fill rotate-at-fill watches for: about what it is. */
		fill = kbloom_fill_at(m, k, n, flags);
		if (fabs((double)kbloom_test_weight(core) - fill) >
		    0.003 * fill + 50)
			return fail("blocked m/n %u: %llu positions set, kbloom_fill_at() says %llu",
				    sw[b].bpk,
				    (unsigned long long)kbloom_test_weight(core),
				    (unsigned long long)fill);
		fp = keys_found(core, 42, 0, queries);
		own = blocked_own_rate(core);
		core_free(core);
		p = exact_fpr_blocked(m, k, n, (u32)cells, &var);
		fixed = (double)kbloom_fpr_blocked_q62(m, k, n, flags) /
			(double)(1ULL << 62);
		sigma = sqrt(p * (1 - p) / queries + var / (m / cells));
		got = (double)fp / queries;
		printf("# blocked%s m/n %u k %u: measured %.5f%% exact %.5f%% (%.2f sigma), core's formula %.5f%%; plain at this m/n and k: %.5f%%\n",
		       sw[b].flags ? " counting" : "", sw[b].bpk, k, got * 100,
		       p * 100, (got - p) / sigma, fixed * 100,
		       100 * pow(1 - exp(-(double)k * n / m), k));
		if (fabs(fixed - p) > 1e-12 + 1e-5 * p)
			return fail("blocked m/n %u: the core's %.12g, exact %.12g",
				    sw[b].bpk, fixed, p);
		if (fabs(got - p) > 3 * sigma)
			return fail("blocked m/n %u: measured %g, theory %g",
				    sw[b].bpk, got, p);
		if (fabs(got - own) > 3 * sqrt(own * (1 - own) / queries) ||
		    fabs(own - fixed) > fixed / 4)
			return fail("blocked m/n %u: measured %g, own rate %g, formula %g",
				    sw[b].bpk, got, own, fixed);
	}
	return true;
}

/*
 * Blocked sizing: whole blocks, the rate kept by the double formula, no
 * block to spare for any k it considers, and the rule IMPORT checks.
 */
static bool blocked_sizing_is_least(void)
{
	static const struct { u64 n; u32 ppb, flags; } sw[] = {
		{ 1000000, 10000000, 0 }, { 1000000, 1000000, 0 },
		{ 100000, 1000, 0 }, { 1000, 100000000, 0 }, { 5000, 1, 0 },
		{ 1000000, 10000000, KBLOOM_CORE_COUNTING },
		{ 20000, 100000, KBLOOM_CORE_COUNTING },
		{ 1000, 10000000, KBLOOM_CORE_COUNTING },
	};
	const u64 eps62 = (1ULL << 62) / 100;	/* 1%, floored as CREATE does */
	size_t s;
	u64 m;
	u32 k;

	/*
	 * The figures bloomctl and the documentation give (3.5% more bits
	 * than plain at 1%), the core's own rate keeping the target there
	 * and not with a block less, and no size past the core's limit.
	 */
	if (kbloom_size_flags(1000000, 10000000, KBLOOM_CORE_BLOCKED, &m, &k) ||
	    m != 9918464 || k != 6)
		return fail("blocked 1%%: m %llu k %u, want 9918464 and 6",
			    (unsigned long long)m, k);
	if (kbloom_fpr_blocked_q62(m, k, 1000000, KBLOOM_CORE_BLOCKED) > eps62 ||
	    kbloom_fpr_blocked_q62(m - 512, k, 1000000, KBLOOM_CORE_BLOCKED) <=
	    eps62)
		return fail("blocked 1%%: kbloom_fpr_blocked_q62() does not put the least m at %llu",
			    (unsigned long long)m);
	if (kbloom_params_valid(9585059, 7, KBLOOM_CORE_BLOCKED, 1000000,
				10000000))
		return fail("blocked: plain sizing taken for blocked");
	if (kbloom_size_flags(1ULL << 40, 1, KBLOOM_CORE_BLOCKED, &m, &k) !=
	    -EINVAL)
		return fail("blocked: 2^40 keys at 1 ppb sized");

	for (s = 0; s < ARRAY_SIZE(sw); s++) {
		u32 flags = sw[s].flags | KBLOOM_CORE_BLOCKED, k0, kk;
		u32 cells = kbloom_block_cells(flags);
		double eps = sw[s].ppb / 1e9, rate;
		u64 m0;

		if (kbloom_size(sw[s].n, sw[s].ppb, &m0, &k0) ||
		    kbloom_size_flags(sw[s].n, sw[s].ppb, flags, &m, &k))
			return fail("n %llu ppb %u: not sized",
				    (unsigned long long)sw[s].n, sw[s].ppb);
		rate = exact_fpr_blocked(m, k, sw[s].n, cells, NULL);
		printf("# blocked%s n %llu at %g: m %llu k %u, %.2f%% more bits than plain (m %llu k %u), rate %.4g\n",
		       sw[s].flags ? " counting" : "",
		       (unsigned long long)sw[s].n, eps, (unsigned long long)m,
		       k, 100.0 * ((double)m / m0 - 1),
		       (unsigned long long)m0, k0, rate);
		if (m % cells || m < m0 || rate > eps * (1 + 1e-6))
			return fail("n %llu ppb %u: m %llu k %u misses the rate",
				    (unsigned long long)sw[s].n, sw[s].ppb,
				    (unsigned long long)m, k);
		for (kk = k0 - k0 / 2; kk <= k0; kk++)
			if (exact_fpr_blocked(m - cells, kk, sw[s].n, cells,
					      NULL) < eps * (1 - 1e-6))
				return fail("n %llu ppb %u: %llu bits with k %u would do",
					    (unsigned long long)sw[s].n,
					    sw[s].ppb,
					    (unsigned long long)(m - cells),
					    kk);
		if (!kbloom_params_valid(m, k, flags, sw[s].n, sw[s].ppb) ||
		    kbloom_params_valid(m + cells, k, flags, sw[s].n,
					sw[s].ppb) ||
		    kbloom_params_valid(m0, k0, flags, sw[s].n, sw[s].ppb))
			return fail("n %llu ppb %u: kbloom_params_valid() does not follow blocked sizing",
				    (unsigned long long)sw[s].n, sw[s].ppb);
	}
	return true;
}

/*
 * The figures of the seeds and the documentation: 9.585 bits a key and
 * k = 7 at 1%, 14.377 and 10 at 0.1%; a tiny filter clamped to 64 bits.
 * The rate of m = 10000, k = 10, n = 1000 is (1 - e^-1)^10 = 1.01859%.
 */
static bool sizing_reproduces_seed_figures(void)
{
	static const struct { u64 n; u32 ppb; u64 m; u32 k; } t[] = {
		{ 1000000, 10000000, 9585059, 7 },
		{ 1000000, 1000000, 14377588, 10 },
		{ 1000, 10000000, 9586, 7 },
		{ 1000, 1000000, 14378, 10 },
		{ 1, 500000000, 64, 32 },
	};
	u64 m, ppm;
	size_t i;
	u32 k;

	for (i = 0; i < ARRAY_SIZE(t); i++)
		if (kbloom_size(t[i].n, t[i].ppb, &m, &k) || m != t[i].m ||
		    k != t[i].k)
			return fail("n %llu ppb %u: m %llu k %u, want %llu and %u",
				    (unsigned long long)t[i].n, t[i].ppb,
				    (unsigned long long)m, k,
				    (unsigned long long)t[i].m, t[i].k);
	ppm = (kbloom_fpr_q32(10000, 10, 1000) * 1000000) >> 32;
	if (ppm < 10185 || ppm > 10186)
		return fail("m 10000 k 10 n 1000: %llu ppm, want 10185",
			    (unsigned long long)ppm);
	if (kbloom_fpr_q32(10000, 10, 0) != 0 ||
	    kbloom_fpr_q32(64, 32, 1ULL << 40) != KBLOOM_Q32_ONE)
		return fail("the rate of an empty or a full filter");
	return true;
}

/*
 * What CREATE refuses, and what IMPORT takes (kbloom_params_valid(), the
 * rules the two share): exactly what CREATE makes.
 */
static bool sizing_rejects_bad_input(void)
{
	static const struct { u64 m; u32 k, flags; bool valid; } v[] = {
		{ 63, 1, 0, false }, { 64, 0, 0, false }, { 64, 33, 0, false },
		{ (1ULL << 36) + 1, 7, 0, false }, { 64, 7, 8, false },
		{ 1ULL << 36, 32, 0, true },
		{ 64, 1, KBLOOM_CORE_COUNTING, true },
		/* Blocked: whole 64-byte blocks of 128 counters (or 512 bits). */
		{ 64, 1, KBLOOM_CORE_FLAGS, false },
		{ 128, 1, KBLOOM_CORE_FLAGS, true },
	};
	u64 m;
	size_t i;
	u32 k;

	if (kbloom_size(0, 10000000, &m, &k) != -EINVAL ||
	    kbloom_size(1000, 0, &m, &k) != -EINVAL ||
	    kbloom_size(1000, 1000000000, &m, &k) != -EINVAL ||
	    /* 10^12 keys at 1 ppb: far over 2^36 bits. */
	    kbloom_size(1000000000000ULL, 1, &m, &k) != -EINVAL)
		return fail("kbloom_size() sized a bad request");
	for (i = 0; i < ARRAY_SIZE(v); i++)
		if (kbloom_core_valid(v[i].m, v[i].k, v[i].flags) != v[i].valid)
			return fail("kbloom_core_valid(%llu, %u, %#x) is not %d",
				    (unsigned long long)v[i].m, v[i].k,
				    v[i].flags, v[i].valid);
	if (kbloom_size(1000000, 10000000, &m, &k) ||
	    !kbloom_params_valid(m, k, 0, 1000000, 10000000) ||
	    !kbloom_params_valid(m, k, 0, 1234, 0) ||
	    !kbloom_params_valid(m, k, 0, 0, 0) ||
	    !kbloom_params_valid(m, k, KBLOOM_CORE_COUNTING |
					KBLOOM_CORE_SIPHASH, 5, 0) ||
	    kbloom_params_valid(m, k, KBLOOM_CORE_FLAGS, 5, 0) ||
	    !kbloom_params_valid(m / 512 * 512, k, KBLOOM_CORE_FLAGS, 5, 0) ||
	    kbloom_params_valid(m + 1, k, 0, 1000000, 10000000) ||
	    kbloom_params_valid(m, k + 1, 0, 1000000, 10000000) ||
	    kbloom_params_valid(m, k, 0, 0, 10000000) ||
	    kbloom_params_valid(m, k, 0, 1000000, 1000000000) ||
	    kbloom_params_valid(m, k, 8, 1000000, 10000000) ||
	    kbloom_params_valid(63, 1, 0, 0, 0) ||
	    kbloom_params_valid(64, 33, 0, 0, 0))
		return fail("kbloom_params_valid() does not take what CREATE makes, only that");
	return true;
}

/*
 * The window's per-generation rate, and the design fill rotate-at-fill
 * watches for, against libm.
 */
static bool window_rate_and_fill(void)
{
	u64 m, fill;
	u32 k, g;
	double want;

	if (kbloom_size(1000000, 10000000, &m, &k))
		return fail("sizing 1%% failed");
	for (g = 2; g <= 16; g++)
		if (kbloom_window_fpr(10000000, g) != 10000000 / g)
			return fail("window rate for G %u", g);
	if (kbloom_window_fpr(10000000, 0) != 10000000 ||
	    kbloom_window_fpr(3, 16) != 1)
		return fail("window rate edge cases");
	fill = kbloom_fill_at(m, k, 1000000, 0);
	want = m * (1 - exp(-(double)k * 1000000 / m));
	if (fabs(fill - want) > 1e-6 * want + 2)
		return fail("fill at capacity %llu, libm says %.0f",
			    (unsigned long long)fill, want);
	if (kbloom_fill_at(64, 32, 1000, 0) != 64)
		return fail("an overfull filter's fill is not m");
	return true;
}

/* The fixed-point sizing agrees with the same formulas in double. */
static bool sizing_agrees_with_libm(void)
{
	static const u32 ppbs[] = { 1, 7, 1000, 123456, 1000000, 10000000,
				    50000000, 300000000, 999999999 };
	double ln2 = log(2), exact, kx;
	u64 n, m;
	size_t p;
	u32 k;

	for (n = 1; n < 2000000000ULL; n = n * 3 + 1) {
		for (p = 0; p < ARRAY_SIZE(ppbs); p++) {
			exact = -(double)n * log(ppbs[p] / 1e9) / (ln2 * ln2);
			if (exact > (double)KBLOOM_CORE_MAX_BITS) {
				if (!kbloom_size(n, ppbs[p], &m, &k))
					return fail("n %llu: no -EINVAL",
						    (unsigned long long)n);
				continue;
			}
			if (kbloom_size(n, ppbs[p], &m, &k))
				return fail("n %llu ppb %u failed",
					    (unsigned long long)n, ppbs[p]);
			/* Off by one only where exact is all but integral. */
			if (m != fmax(64, ceil(exact)) &&
			    fabs(exact - round(exact)) > 1e-6 * exact)
				return fail("n %llu ppb %u: m %llu, libm %.3f",
					    (unsigned long long)n, ppbs[p],
					    (unsigned long long)m, exact);
			kx = (double)m / n * ln2;
			if (kx < 32.5 && k != fmax(1, fmin(32, round(kx))) &&
			    fabs(kx - floor(kx) - 0.5) > 1e-6)
				return fail("n %llu ppb %u: k %u, libm %.4f",
					    (unsigned long long)n, ppbs[p], k,
					    kx);
		}
	}
	return true;
}

static bool fixed_point_log_exp_accurate(void)
{
	double err = 0, e;
	u64 x;

	for (x = 1; x < (1ULL << 62); x = x * 5 / 3 + 1) {
		e = fabs((double)kbloom_log2_q32(x) / KBLOOM_Q32_ONE - log2(x));
		err = fmax(err, e);
	}
	if (err > 1e-8)
		return fail("log2 error %g", err);
	for (x = 0; x < (40ULL << 32); x += (1ULL << 32) / 1000 + 7) {
		e = fabs((double)kbloom_exp_neg_q32(x) / KBLOOM_Q32_ONE -
			 exp(-(double)x / KBLOOM_Q32_ONE));
		err = fmax(err, e);
	}
	if (err > 1e-9)
		return fail("exp error %g", err);
	return true;
}

static bool test_and_add_reports_seen(void)
{
	struct kbloom_core *core = core_new(1 << 20, 7, 1, 2);
	bool ok = true;
	u8 key[32];
	u32 len;
	u64 i;

	for (i = 0; i < 1000 && ok; i++) {
		len = kbloom_test_key(key, 3, i);
		if (kbloom_core_query(core, key, len))
			ok = fail("new key %llu found before its add",
				  (unsigned long long)i);
		else if (kbloom_core_test_and_add(core, key, len, NULL))
			ok = fail("new key %llu reported seen",
				  (unsigned long long)i);
		else if (!kbloom_core_test_and_add(core, key, len, NULL) ||
			 !kbloom_core_query(core, key, len))
			ok = fail("key %llu not seen after add",
				  (unsigned long long)i);
	}
	core_free(core);
	return ok;
}

static bool clear_and_weight(void)
{
	struct kbloom_core *core = core_new(100003, 5, 3, 4);
	struct kbloom_delta d = {};
	u64 pos[5], distinct = 0, i;
	u8 key[32], *seen = calloc(1, 100003);
	bool ok = true;
	u32 len, j;

	for (i = 0; i < 5000; i++) {
		len = kbloom_test_key(key, 4, i);
		kbloom_core_add(core, key, len, NULL);
		kbloom_core_positions(core, key, len, pos);
		for (j = 0; j < 5; j++)
			if (!seen[pos[j]]++)
				distinct++;
	}
	if (kbloom_test_weight(core) != distinct)
		ok = fail("weight %llu, want %llu",
			  (unsigned long long)kbloom_test_weight(core),
			  (unsigned long long)distinct);
	/* Every position freed reported, as "bits set" counts them. */
	if (kbloom_core_clear(core, &d) || d.cleared != distinct || d.set ||
	    d.stuck || d.unstuck)
		ok = fail("clear did not report exactly what it freed");
	if (ok && kbloom_test_weight(core))
		ok = fail("weight after clear not 0");
	if (ok && keys_found(core, 4, 0, 5000))
		ok = fail("keys found after clear");
	free(seen);
	core_free(core);
	return ok;
}

/*
 * Threads adding at once to the same filters, half their keys by
 * test-and-add: no key lost, and the bits the threads say they set add up
 * to the bits set (each 0 -> 1 transition claimed by exactly one atomic
 * OR). Free-running, in one round of many keys on a small, dense filter
 * where they fight over words; and in lockstep, on one tiny filter per
 * round with a barrier between rounds: every 0 -> 1 transition races with
 * the other threads' transitions in the same word, which is exactly where
 * a plain read-modify-write in place of the atomic OR loses a bit (so a
 * key), or lets two threads both claim one. Threads only race while they
 * run at the same time, which a busy machine makes rare: rounds go on,
 * batch after batch, until the threads were seen adding at once
 * ADDERS_OVERLAPS times (or the batches ran out: a machine that never
 * runs two at once proves nothing here, and says so).
 */
#define ADDERS_THREADS	4
#define ADDERS_OVERLAPS	20000

static const struct adders_cfg {
	u64 nbits;
	u32 k, flags, rounds, keys, batches;
} adders_cfgs[] = {
	{ 1 << 16, 3, 0, 1, 200000, 1 },
	/* Blocked: the k bits in 8 words, several often in one word. */
	{ 1 << 16, 6, KBLOOM_CORE_BLOCKED, 1, 200000, 1 },
	/* Lockstep: a filter of one word, or of one block. */
	{ 64, 2, 0, 4096, 16, 200 },
	{ 1 << KBLOOM_BLOCK_SHIFT, 2, KBLOOM_CORE_BLOCKED, 4096, 16, 200 },
};

struct adders {
	const struct adders_cfg *cfg;
	struct kbloom_core *cores;
	u64 *claimed;
	u64 overlaps;
	int arrived;
	int busy;
	int nthreads;
};

struct adders_thread {
	struct adders *a;
	u64 stream;
};

/*
 * Round @round ends when (round + 1) * n threads arrived; yielding now
 * and then lets a thread that lost its CPU have it back.
 */
static void adders_barrier(struct adders *a, u32 round)
{
	int target = (int)(round + 1) * a->nthreads, spins = 0;

	__atomic_fetch_add(&a->arrived, 1, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&a->arrived, __ATOMIC_ACQUIRE) < target)
		if (++spins % 1024 == 0)
			sched_yield();
}

static void *adders_fn(void *arg)
{
	struct adders_thread *t = arg;
	struct adders *a = t->a;
	const struct adders_cfg *c = a->cfg;
	struct kbloom_core *core;
	struct kbloom_delta d;
	u64 overlaps = 0;
	u32 r, i, len;
	u8 key[32];

	adders_barrier(a, 0);
	for (r = 0; r < c->rounds; r++) {
		core = &a->cores[r];
		memset(&d, 0, sizeof(d));
		__atomic_fetch_add(&a->busy, 1, __ATOMIC_SEQ_CST);
		for (i = 0; i < c->keys; i++) {
			len = kbloom_test_key(key, t->stream, r * c->keys + i);
			if (i % 2)
				kbloom_core_add(core, key, len, &d);
			else
				kbloom_core_test_and_add(core, key, len, &d);
			overlaps += a->nthreads ==
				    __atomic_load_n(&a->busy, __ATOMIC_SEQ_CST);
		}
		__atomic_fetch_sub(&a->busy, 1, __ATOMIC_SEQ_CST);
		__atomic_fetch_add(&a->claimed[r], d.set, __ATOMIC_RELAXED);
		adders_barrier(a, r + 1);
	}
	__atomic_fetch_add(&a->overlaps, overlaps, __ATOMIC_RELAXED);
	return NULL;
}

static bool adders_lose_nothing(u32 cfg)
{
	const struct adders_cfg *c = &adders_cfgs[cfg];
	size_t bytes = kbloom_core_bytes(c->nbits, c->flags);
	struct adders_thread th[ADDERS_THREADS];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct adders a = { .cfg = c, .nthreads = 2 };
	u32 seed[2] = { 77, 88 }, r, lost = 0, twice = 0, b;
	pthread_t t[ADDERS_THREADS];
	u8 *bits;
	int n;

	if (cpus > a.nthreads)
		a.nthreads = cpus < ADDERS_THREADS ? cpus : ADDERS_THREADS;
	a.cores = zalloc(c->rounds * sizeof(*a.cores));
	a.claimed = zalloc(c->rounds * sizeof(*a.claimed));
	bits = zalloc(c->rounds * bytes);
	for (b = 0; b < c->batches && !lost && !twice &&
	     a.overlaps < ADDERS_OVERLAPS; b++) {
		memset(bits, 0, c->rounds * bytes);
		memset(a.claimed, 0, c->rounds * sizeof(*a.claimed));
		a.arrived = 0;
		for (r = 0; r < c->rounds; r++)
			kbloom_core_init(&a.cores[r],
					 (unsigned long *)(bits + r * bytes),
					 c->nbits, c->k, c->flags, seed);
		for (n = 0; n < a.nthreads; n++) {
			th[n].a = &a;
			th[n].stream = 100 + n + (u64)b * ADDERS_THREADS;
			pthread_create(&t[n], NULL, adders_fn, &th[n]);
		}
		for (n = 0; n < a.nthreads; n++)
			pthread_join(t[n], NULL);
		for (r = 0; r < c->rounds; r++) {
			for (n = 0; n < a.nthreads; n++)
				lost += c->keys -
					keys_found(&a.cores[r], th[n].stream,
						   r * c->keys,
						   (r + 1) * c->keys);
			twice += a.claimed[r] !=
				 kbloom_test_weight(&a.cores[r]);
		}
	}
	printf("# %d threads, %u rounds: %llu adds while all were adding%s\n",
	       a.nthreads, b * c->rounds, (unsigned long long)a.overlaps,
	       a.overlaps < ADDERS_OVERLAPS && !lost && !twice ?
	       ": too few to prove anything" : "");
	free(bits);
	free(a.cores);
	free(a.claimed);
	if (lost || twice)
		return fail("%d threads: %u keys lost, %u filters with bits claimed twice",
			    a.nthreads, lost, twice);
	return true;
}

/* Counter i of a counting filter, read straight from the storage. */
static unsigned int counter(const struct kbloom_core *core, u64 i)
{
	return (core->bitmap[i / (BITS_PER_LONG / 4)] >>
		(i % (BITS_PER_LONG / 4)) * 4) & 0xf;
}

/*
 * A key added 20 times saturates its counters at 15, and so does a merge
 * of two filters that had it 10 times each (never wrapping past 15);
 * removing the key 20 times must leave it present in both: a stuck
 * counter is never decremented.
 */
static bool counting_saturation_keeps_key(void)
{
	struct kbloom_core *a = core_new_flags(4096, 4, KBLOOM_CORE_COUNTING,
					       1, 2);
	struct kbloom_core *b = core_new_flags(4096, 4, KBLOOM_CORE_COUNTING,
					       1, 2);
	u64 pos[4];
	bool ok = true;
	u8 key[32];
	u32 len = kbloom_test_key(key, 20, 1), j;
	int i;

	for (i = 0; i < 10; i++) {
		kbloom_core_add(a, key, len, NULL);
		kbloom_core_add(b, key, len, NULL);
	}
	if (!kbloom_test_merge(a, b))
		ok = fail("counting merge did not report its transitions");
	kbloom_core_positions(a, key, len, pos);
	for (j = 0; j < 4; j++)
		if (counter(a, pos[j]) != 15)
			ok = fail("counter %u is %u after 10 + 10, want 15", j,
				  counter(a, pos[j]));
	for (i = 0; i < 10; i++)
		kbloom_core_add(b, key, len, NULL);
	if (!kbloom_test_saturated(b) || kbloom_test_saturated(b) > 4)
		ok = fail("%llu saturated counters after 20 adds of a key, want 1 to k",
			  (unsigned long long)kbloom_test_saturated(b));
	for (i = 0; i < 20 && ok; i++)
		if (!kbloom_core_remove(a, key, len, NULL) ||
		    !kbloom_core_remove(b, key, len, NULL))
			ok = fail("remove %d refused", i);
	if (ok && (!kbloom_core_query(a, key, len) ||
		   !kbloom_core_query(b, key, len)))
		ok = fail("key lost after 20 adds and 20 removes");
	core_free(a);
	core_free(b);
	return ok;
}

/*
 * A key added once to a counting filter and removed is gone. Removes of
 * the keys a counting filter does not have, and of any key on a filter
 * without counters (which every caller refuses first), on either
 * layout, through either one-key call: each answers false and writes
 * nothing, as the batch does.
 */
static bool removes_refused_write_nothing(void)
{
	static const u32 flagsets[] = { KBLOOM_CORE_COUNTING, 0,
					KBLOOM_CORE_BLOCKED };
	struct kbloom_core *core;
	size_t bytes;
	void *before;
	bool ok = true;
	u8 key[32];
	u32 f, len;
	u64 i;

	for (f = 0; ok && f < ARRAY_SIZE(flagsets); f++) {
		core = core_new_flags(1 << 14, 5, flagsets[f], 3, 4);
		bytes = kbloom_core_bytes(core->nbits, core->flags);
		len = kbloom_test_key(key, 21, 1000);
		kbloom_core_add(core, key, len, NULL);
		if (core->flags & KBLOOM_CORE_COUNTING &&
		    (!kbloom_core_remove(core, key, len, NULL) ||
		     kbloom_core_query(core, key, len) ||
		     kbloom_test_weight(core)))
			ok = fail("a key added once is not gone after its remove");
		keys_add(core, 23, 0, 300);
		before = zalloc(bytes);
		memcpy(before, core->bitmap, bytes);
		/* Keys 0 to 299 present, the others absent. */
		for (i = 0; i < 1000 && ok; i++) {
			len = kbloom_test_key(key, 23, i);
			if (core->flags & KBLOOM_CORE_COUNTING &&
			    kbloom_core_query(core, key, len))
				continue;
			if (kbloom_core_remove(core, key, len, NULL) ||
			    kbloom_core_do(core, KBLOOM_OP_REMOVE, key, len,
					   NULL))
				ok = fail("flags %#x: key %llu removed",
					  core->flags, (unsigned long long)i);
			else if (memcmp(before, core->bitmap, bytes))
				ok = fail("flags %#x: a refused remove wrote",
					  core->flags);
		}
		free(before);
		core_free(core);
	}
	return ok;
}

/*
 * Random adds and removes against an exact model of every counter
 * (saturating at 15, stuck there) and of every key's multiplicity; also
 * with 128-counter blocks (where a key's counters repeat more).
 */
static bool counting_model(u32 flags)
{
	const u64 m = 4096, nkeys = 600;
	struct kbloom_core *core = core_new_flags(m, 3,
						  KBLOOM_CORE_COUNTING | flags,
						  5, 6);
	unsigned int *model = calloc(m, sizeof(*model));
	unsigned int *count = calloc(nkeys, sizeof(*count));
	u64 pos[3], x = 12345, i, k;
	bool ok = true;
	u8 key[32];
	u32 len, j;

	for (i = 0; i < 200000 && ok; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		k = (x >> 33) % nkeys;
		len = kbloom_test_key(key, 23, k);
		kbloom_core_positions(core, key, len, pos);
		if ((x >> 20) % 3 || !count[k]) {	/* add */
			kbloom_core_add(core, key, len, NULL);
			count[k]++;
			for (j = 0; j < 3; j++)
				if (model[pos[j]] < 15)
					model[pos[j]]++;
		} else {				/* remove a present key */
			if (!kbloom_core_remove(core, key, len, NULL))
				ok = fail("op %llu: present key refused",
					  (unsigned long long)i);
			count[k]--;
			for (j = 0; j < 3; j++)
				if (model[pos[j]] < 15 && model[pos[j]] > 0)
					model[pos[j]]--;
		}
		if (i % 997 == 0 || i == 199999) {
			for (k = 0; k < m && ok; k++)
				if (counter(core, k) != model[k])
					ok = fail("op %llu: counter %llu is %u, model %u",
						  (unsigned long long)i,
						  (unsigned long long)k,
						  counter(core, k), model[k]);
		}
	}
	for (k = 0; k < nkeys && ok; k++)
		if (count[k] &&
		    !kbloom_core_query(core, key, kbloom_test_key(key, 23, k)))
			ok = fail("key %llu (count %u) lost",
				  (unsigned long long)k, count[k]);
	free(model);
	free(count);
	core_free(core);
	return ok;
}

static double estimate(u64 x, u64 m, u32 k)
{
	return -(double)m / k * log(1 - (double)x / m);
}

/*
 * Union by OR equals the filter of the union; the estimates of n, of the
 * union and of the intersection are within 5% at design capacity.
 */
static bool merge_and_estimates(void)
{
	const u64 n = 100000, m = 958506;	/* 1% at 100000 keys */
	struct kbloom_core *a = core_new(m, 7, 9, 10), *b = core_new(m, 7, 9, 10);
	struct kbloom_core *u = core_new(m, 7, 9, 10);
	size_t bytes = kbloom_core_bytes(m, 0);
	double ea, eb, eu, ei;
	u64 both, either, i;
	bool ok = true;
	u8 key[32];
	u32 len;

	/* A: keys 0..n, B: keys n/2..3n/2; union 1.5n, intersection n/2. */
	for (i = 0; i < n; i++) {
		len = kbloom_test_key(key, 30, i);
		kbloom_core_add(a, key, len, NULL);
		kbloom_core_add(u, key, len, NULL);
		len = kbloom_test_key(key, 30, i + n / 2);
		kbloom_core_add(b, key, len, NULL);
		kbloom_core_add(u, key, len, NULL);
	}
	kbloom_core_compare(a, b, &both, &either);
	ea = estimate(kbloom_test_weight(a), m, 7);
	eb = estimate(kbloom_test_weight(b), m, 7);
	eu = estimate(either, m, 7);
	ei = ea + eb - eu;
	printf("# estimates: A %.0f B %.0f union %.0f intersection %.0f (truth %llu %llu %llu %llu)\n",
	       ea, eb, eu, ei, (unsigned long long)n, (unsigned long long)n,
	       (unsigned long long)(3 * n / 2), (unsigned long long)(n / 2));
	if (fabs(ea - n) > 0.05 * n || fabs(eb - n) > 0.05 * n ||
	    fabs(eu - 1.5 * n) > 0.05 * 1.5 * n || fabs(ei - n / 2) > 0.05 * n / 2)
		ok = fail("an estimate is off by more than 5%%");
	if (!kbloom_test_merge(a, b))
		ok = fail("merge did not report exactly what it changed");
	if (ok && memcmp(a->bitmap, u->bitmap, bytes))
		ok = fail("merge is not the filter of the union");
	if (ok && kbloom_test_weight(a) != either)
		ok = fail("union weight %llu, compare said %llu",
			  (unsigned long long)kbloom_test_weight(a),
			  (unsigned long long)either);
	core_free(a);
	core_free(b);
	core_free(u);
	return ok;
}

static bool compatibility_and_padding(void)
{
	struct kbloom_core *a = core_new(1000, 3, 1, 2), *b = core_new(1000, 3, 1, 2);
	struct kbloom_core *c = core_new(1000, 3, 1, 3);
	bool ok = true;

	if (!kbloom_core_compatible(a, b) || kbloom_core_compatible(a, c))
		ok = fail("compatibility must follow the seed");
	if (ok && !kbloom_core_padding_clear(a))
		ok = fail("fresh filter has padding set");
	a->bitmap[1000 / BITS_PER_LONG] |= 1UL << (1000 % BITS_PER_LONG);
	if (ok && kbloom_core_padding_clear(a))
		ok = fail("bit m not detected as padding");
	core_free(a);
	core_free(b);
	core_free(c);
	return ok;
}

/*
 * Run @op on keys [from, to) of @keys (packed, @lens) through the batch
 * call, in batches of uneven sizes so that every group boundary of the
 * pipeline is crossed; results into @res (zeroed here). Every other add
 * has no results buffer, as in-kernel callers pass none
 * (kbloom_add_batch()); the others have one, as the ioctl does.
 */
static u32 batch_run(struct kbloom_core *core, enum kbloom_op op,
		     const u8 *keys, const u32 *lens, u32 from, u32 to,
		     u8 *res, struct kbloom_delta *d)
{
	static const u32 sizes[] = { 1, 7, 8, 9, 2, 16, 17, 100, 3 };
	u32 i = 0, s = 0, n, hits = 0, j;

	memset(res, 0, (to - from) / 8 + 1);
	for (j = 0; j < from; j++)
		keys += lens[j];
	for (i = from; i < to; i += n) {
		u8 part[128 / 8 + 1] = { 0 };

		n = sizes[s++ % ARRAY_SIZE(sizes)];
		if (n > to - i)
			n = to - i;
		hits += kbloom_core_do_batch(core, op, keys, lens + i, n,
					     op == KBLOOM_OP_ADD && s % 2 ?
					     NULL : part,
					     d);
		for (j = 0; j < n; j++) {
			if (part[j / 8] & (1U << (j % 8)))
				res[(i - from + j) / 8] |= 1U << ((i - from + j) % 8);
			keys += lens[i + j];
		}
	}
	return hits;
}

/* One key through the one-operation calls, not the batch's dispatch. */
static bool single_op(struct kbloom_core *core, enum kbloom_op op,
		      const u8 *key, u32 len, struct kbloom_delta *d)
{
	switch (op) {
	case KBLOOM_OP_ADD:
		kbloom_core_add(core, key, len, d);
		return false;
	case KBLOOM_OP_QUERY:
		return kbloom_core_query(core, key, len);
	case KBLOOM_OP_TEST_AND_ADD:
		return kbloom_core_test_and_add(core, key, len, d);
	default:
		return kbloom_core_remove(core, key, len, d);
	}
}

/* The same, one key at a time. */
static u32 single_run(struct kbloom_core *core, enum kbloom_op op,
		      const u8 *keys, const u32 *lens, u32 from, u32 to,
		      u8 *res, struct kbloom_delta *d)
{
	u32 i, j, hits = 0;

	memset(res, 0, (to - from) / 8 + 1);
	for (j = 0; j < from; j++)
		keys += lens[j];
	for (i = from; i < to; keys += lens[i], i++) {
		if (single_op(core, op, keys, lens[i], d)) {
			res[(i - from) / 8] |= 1U << ((i - from) % 8);
			hits++;
		}
	}
	return hits;
}

/*
 * Blocked bit filters take a path of their own (kbloom_block_query(),
 * kbloom_block_add()) that never builds the position array: it must set
 * and test exactly the bits kbloom_core_positions() names, which the
 * golden vectors pin down.
 */
static bool blocked_fast_path_matches_positions(void)
{
	static const u32 ks[] = { 1, 6, 7, 8, 14, 15, KBLOOM_CORE_MAX_HASHES };
	enum { M = 512 * 64 };
	u32 seed[4] = { 5, 6, 7, 8 }, ki, i, j, distinct;
	u64 pos[KBLOOM_CORE_MAX_HASHES], x = 12345;
	size_t bytes = kbloom_core_bytes(M, KBLOOM_CORE_BLOCKED);
	unsigned long *ref = zalloc(bytes);
	struct kbloom_core c;
	u8 key[24];
	bool ok = true;

	kbloom_core_init(&c, zalloc(bytes), M, 1, KBLOOM_CORE_BLOCKED, seed);
	for (ki = 0; ok && ki < ARRAY_SIZE(ks); ki++) {
		c.nhashes = ks[ki];
		for (i = 0; ok && i < 2000; i++) {
			u32 len = kbloom_test_key(key, ki, i);
			struct kbloom_delta d = { 0 };

			memset(c.bitmap, 0, bytes);
			memset(ref, 0, bytes);
			kbloom_core_positions(&c, key, len, pos);
			for (j = 0; j < c.nhashes; j++)
				ref[BIT_WORD(pos[j])] |= BIT_MASK(pos[j]);
			for (j = 0, distinct = 0; j < bytes / sizeof(long); j++)
				distinct += hweight_long(ref[j]);
			if (kbloom_core_test_and_add(&c, key, len, &d) ||
			    memcmp(c.bitmap, ref, bytes) || d.set != distinct)
				ok = fail("k %u key %u: an add set other bits than its positions (%llu set, %u distinct)",
					  c.nhashes, i, (unsigned long long)d.set,
					  distinct);
			if (!kbloom_core_query(&c, key, len) ||
			    !kbloom_core_test_and_add(&c, key, len, NULL))
				ok = fail("k %u key %u: absent after its add",
					  c.nhashes, i);
			/* Random words: the query agrees with the positions. */
			for (j = 0; j < bytes / sizeof(long); j++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				c.bitmap[j] = (unsigned long)(x | x >> 7 | x << 9);
			}
			if (kbloom_core_query(&c, key, len) !=
			    kbloom_core_query_at(&c, pos))
				ok = fail("k %u key %u: the query disagrees with its positions",
					  c.nhashes, i);
		}
	}
	free(c.bitmap);
	free(ref);
	return ok;
}

/* Huge-page rounding of storage: whole huge pages only where cheap. */
static bool storage_size_rounding(void)
{
	static const struct {
		size_t bytes, huge, want;
	} t[] = {
		{ 1000, 0, 1000 },
		{ 1000, 2 << 20, 1000 },		/* below one huge page */
		{ 2 << 20, 2 << 20, 2 << 20 },		/* whole already */
		{ (2 << 20) + 1, 2 << 20, (2 << 20) + 1 },	/* +100%: no */
		{ 31 * (2UL << 20) + 1, 2 << 20, 32 * (2UL << 20) },	/* 1/31 */
		{ 15 * (2UL << 20) + 1, 2 << 20, 15 * (2UL << 20) + 1 },	/* 1/15 */
		{ 16 * (2UL << 20) + 1, 2 << 20, 17 * (2UL << 20) },	/* 1/16 */
		{ SIZE_MAX - 5, 2 << 20, SIZE_MAX - 5 },	/* would wrap */
	};
	bool ok = true;
	size_t i, got;

	for (i = 0; i < ARRAY_SIZE(t); i++) {
		got = kbloom_storage_size(t[i].bytes, t[i].huge);
		if (got != t[i].want)
			ok = fail("storage of %zu bytes, huge %zu: %zu, want %zu",
				  t[i].bytes, t[i].huge, got, t[i].want);
	}
	return ok;
}

/*
 * kbloom_core_do_batch() is the one-key calls in order: same results, same
 * bits and counters, same transitions, for every operation and kind, at
 * k from 3 to the largest (groups of 8 keys down to 2), in a small filter
 * where keys share words: N distinct keys, half of them added, so that
 * every answer comes both ways (present and absent, seen and new, removed
 * and refused), and a batch that answered wrongly, or applied a key at
 * another key's positions, differs from the one-key calls.
 */
static bool batch_matches_one_key_calls(void)
{
	static const u32 flagsets[] = {
		0, KBLOOM_CORE_COUNTING, KBLOOM_CORE_SIPHASH,
		KBLOOM_CORE_COUNTING | KBLOOM_CORE_SIPHASH,
		KBLOOM_CORE_BLOCKED, KBLOOM_CORE_BLOCKED | KBLOOM_CORE_COUNTING,
		KBLOOM_CORE_BLOCKED | KBLOOM_CORE_SIPHASH,
	};
	static const u32 ks[] = { 3, 7, 10, 20, KBLOOM_CORE_MAX_HASHES };
	/* M: not a power of two; whole blocks of 512 bits (and 128). */
	enum { N = 3000, M = 20480 };
	u32 seed[4] = { 11, 22, 33, 44 }, lens[N], f, ki, i, ha, hb;
	static u8 keys[N * 24], ra[N / 8 + 1], rb[N / 8 + 1];
	struct kbloom_core a, b;
	size_t bytes, used = 0;
	bool ok = true;

	for (i = 0; i < N; i++) {
		lens[i] = kbloom_test_key(keys + used, 77, i);
		used += lens[i];
	}
	for (f = 0; ok && f < ARRAY_SIZE(flagsets); f++) {
		for (ki = 0; ok && ki < ARRAY_SIZE(ks); ki++) {
			struct kbloom_delta da = { 0 }, db = { 0 };
			/* Removes on bit filters too: both refuse them. */
			static const struct {
				enum kbloom_op op;
				u32 from, to;
			} steps[] = {
				{ KBLOOM_OP_ADD, 0, N / 2 },
				{ KBLOOM_OP_QUERY, 0, N },
				{ KBLOOM_OP_TEST_AND_ADD, N / 4, 3 * N / 4 },
				{ KBLOOM_OP_REMOVE, 0, N / 8 },
				{ KBLOOM_OP_REMOVE, 7 * N / 8, N },
				{ KBLOOM_OP_QUERY, 0, N },
			};
			u32 s;

			bytes = kbloom_core_bytes(M, flagsets[f]);
			kbloom_core_init(&a, zalloc(bytes), M, ks[ki],
					 flagsets[f], seed);
			kbloom_core_init(&b, zalloc(bytes), M, ks[ki],
					 flagsets[f], seed);
			for (s = 0; ok && s < ARRAY_SIZE(steps); s++) {
				ha = single_run(&a, steps[s].op, keys, lens,
						steps[s].from, steps[s].to, ra, &da);
				hb = batch_run(&b, steps[s].op, keys, lens,
					       steps[s].from, steps[s].to, rb, &db);
				/*
				 * Mixed answers, or the step proves little
				 * (removes: all removed in one step, all
				 * refused in the other).
				 */
				if (steps[s].op != KBLOOM_OP_ADD &&
				    steps[s].op != KBLOOM_OP_REMOVE &&
				    (ha == 0 || ha == steps[s].to - steps[s].from) &&
				    ks[ki] < KBLOOM_CORE_MAX_HASHES)
					ok = fail("flags %#x k %u op %d: all %u answers alike",
						  flagsets[f], ks[ki], steps[s].op, ha);
				if (ha != hb ||
				    memcmp(ra, rb, (steps[s].to - steps[s].from) / 8 + 1) ||
				    memcmp(a.bitmap, b.bitmap, bytes) ||
				    memcmp(&da, &db, sizeof(da)))
					ok = fail("flags %#x k %u op %d: batch differs (hits %u, one-key %u)",
						  flagsets[f], ks[ki], steps[s].op,
						  hb, ha);
			}
			free(a.bitmap);
			free(b.bitmap);
		}
	}
	return ok;
}

/*
 * Change marks (struct kbloom_core @changed): after each kind of operation
 * that sets bits (one key, test-and-add, the batch ring, merge, a block
 * ORed in), the marked blocks are exactly those whose bytes changed; and
 * ORing one filter's marked blocks into an empty twin reproduces it.
 */
static bool marks_are_the_changed_blocks(void)
{
	/* 5000 is not a multiple of 512: the last block is short. */
	static const struct { u64 m; u32 flags; } shapes[] = {
		{ 20480, 0 }, { 5000, 0 }, { 20480, KBLOOM_CORE_SIPHASH },
		{ 5000, KBLOOM_CORE_SIPHASH }, { 20480, KBLOOM_CORE_BLOCKED },
	};
	enum { N = 600, B = KBLOOM_BLOCK_BYTES / sizeof(unsigned long) };
	u32 seed[4] = { 5, 6, 7, 8 }, lens[N], f, i, step;
	static u8 keys[N * 24];
	size_t used = 0;

	for (i = 0; i < N; i++) {
		lens[i] = kbloom_test_key(keys + used, 91, i);
		used += lens[i];
	}
	for (f = 0; f < ARRAY_SIZE(shapes); f++) {
		u64 m = shapes[f].m, nb, b, marked, changed;
		u32 flags = shapes[f].flags;
		size_t bytes = kbloom_core_bytes(m, flags);
		struct kbloom_core a, twin, src;
		unsigned long *before, words[B];
		struct kbloom_delta d = {};

		kbloom_core_init(&a, zalloc(bytes), m, 5, flags, seed);
		kbloom_core_init(&twin, zalloc(bytes), m, 5, flags, seed);
		kbloom_core_init(&src, zalloc(bytes), m, 5, flags, seed);
		nb = kbloom_core_blocks(&a);
		a.changed = zalloc((nb / 64 + 1) * sizeof(long));
		before = zalloc(bytes);
		for (step = 0; step < 5; step++) {
			const u8 *k = keys;

			memcpy(before, a.bitmap, bytes);
			memset(a.changed, 0, (nb / 64 + 1) * sizeof(long));
			for (i = 0; i < N; k += lens[i], i++) {
				if (i % 5 != step)
					continue;
				if (step == 0)
					kbloom_core_add(&a, k, lens[i], NULL);
				else if (step == 1)
					kbloom_core_test_and_add(&a, k, lens[i],
								 NULL);
				else
					kbloom_core_add(&src, k, lens[i], NULL);
			}
			if (step == 2)
				kbloom_core_do_batch(&a, KBLOOM_OP_ADD, keys,
						     lens, N, NULL, NULL);
			if (step == 3 && kbloom_core_merge(&a, &src, &d))
				return fail("merge failed");
			if (step == 4) {
				/* A block of ones ORed into block 0. */
				memset(words, 0xff, sizeof(words));
				for (i = 0; i < B; i++)
					if ((i + 1) * BITS_PER_LONG > m)
						words[i] = 0;
				if (!kbloom_core_block_valid(&a, 0, words))
					return fail("a full first block refused");
				kbloom_core_block_or(&a, 0, words, NULL);
			}
			for (b = 0; b < nb; b++) {
				size_t off = b * KBLOOM_BLOCK_BYTES;
				size_t len = bytes - off < KBLOOM_BLOCK_BYTES ?
					     bytes - off : KBLOOM_BLOCK_BYTES;

				marked = test_bit(b, a.changed);
				changed = !!memcmp((u8 *)before + off,
						   (u8 *)a.bitmap + off, len);
				if (marked != changed)
					return fail("flags %#x m %llu step %u block %llu: marked %llu, changed %llu",
						    flags,
						    (unsigned long long)m, step,
						    (unsigned long long)b,
						    (unsigned long long)marked,
						    (unsigned long long)changed);
			}
		}
		/* Blocks carry the whole filter; padding is refused. */
		for (b = 0; b < nb; b++) {
			if (kbloom_core_block_read(&a, b, words) &&
			    kbloom_core_block_new(&twin, b, words) == 0)
				return fail("a non-zero block brings nothing new");
			kbloom_core_block_or(&twin, b, words, NULL);
		}
		if (memcmp(a.bitmap, twin.bitmap, bytes))
			return fail("blocks ORed into a twin: not equal");
		if (kbloom_core_block_valid(&a, nb, words))
			return fail("block %llu of %llu accepted",
				    (unsigned long long)nb,
				    (unsigned long long)nb);
		if (m % 512) {
			kbloom_core_block_read(&a, nb - 1, words);
			words[(m % 512) / BITS_PER_LONG] |=
				1UL << (m % BITS_PER_LONG);
			if (kbloom_core_block_valid(&a, nb - 1, words))
				return fail("a bit past m accepted");
		}
		free(before);
		free(a.changed);
		free(a.bitmap);
		free(twin.bitmap);
		free(src.bitmap);
	}
	return true;
}

/*
 * The fingerprint APPLY checks: the same for the same shape and seed,
 * another for any other m, k, kind, layout, scheme, seed or window.
 */
static bool fingerprint_tells_shapes_apart(void)
{
	static const u32 seed[4] = { 1, 2, 3, 4 }, other[4] = { 1, 2, 3, 5 };
	struct kbloom_core a, b;
	u64 fa;
	u32 i;

	kbloom_core_init(&a, NULL, 4096, 5, KBLOOM_CORE_SIPHASH, seed);
	fa = kbloom_core_fingerprint(&a, 4, 60000);
	kbloom_core_init(&b, NULL, 4096, 5, KBLOOM_CORE_SIPHASH, seed);
	if (kbloom_core_fingerprint(&b, 4, 60000) != fa)
		return fail("the same shape and seed: another fingerprint");
	for (i = 0; i < 8; i++) {
		kbloom_core_init(&b, NULL, i == 0 ? 4160 : 4096, i == 1 ? 6 : 5,
				 i == 2 ? KBLOOM_CORE_SIPHASH | KBLOOM_CORE_BLOCKED :
				 i == 3 ? 0 :
				 i == 4 ? KBLOOM_CORE_SIPHASH | KBLOOM_CORE_COUNTING :
					  KBLOOM_CORE_SIPHASH,
				 i == 5 ? other : seed);
		if (kbloom_core_fingerprint(&b, i == 6 ? 3 : 4,
					    i == 7 ? 60001 : 60000) == fa)
			return fail("change %u of the shape kept the fingerprint", i);
	}
	return true;
}

/* The tests in order; @with, in place of @fn, is run on @arg. */
#define TEST(f)			{ .name = #f, .fn = f }
#define TEST_ON(n, f, a)	{ .name = n, .with = f, .arg = a }

static const struct {
	const char *name;
	bool (*fn)(void);
	bool (*with)(u32 arg);
	u32 arg;
} tests[] = {
	TEST(golden_vectors_match),
	TEST(siphash_reference),
	TEST(positions_in_range_and_uniform),
	TEST(no_false_negatives),
	TEST(fpr_matches_theory),
	TEST(blocked_positions_in_one_block),
	TEST(blocked_fpr_matches_theory),
	TEST(blocked_sizing_is_least),
	TEST(sizing_reproduces_seed_figures),
	TEST(sizing_rejects_bad_input),
	TEST(sizing_agrees_with_libm),
	TEST(window_rate_and_fill),
	TEST(fixed_point_log_exp_accurate),
	TEST(test_and_add_reports_seen),
	TEST(clear_and_weight),
	TEST_ON("concurrent_adds_lose_nothing", adders_lose_nothing, 0),
	TEST_ON("blocked_concurrent_adds_lose_nothing", adders_lose_nothing, 1),
	TEST_ON("lockstep_adds_lose_nothing", adders_lose_nothing, 2),
	TEST_ON("blocked_lockstep_adds_lose_nothing", adders_lose_nothing, 3),
	TEST(counting_saturation_keeps_key),
	TEST(removes_refused_write_nothing),
	TEST_ON("counting_matches_multiset_model", counting_model, 0),
	TEST_ON("blocked_counting_matches_multiset_model", counting_model,
		KBLOOM_CORE_BLOCKED),
	TEST(merge_and_estimates),
	TEST(compatibility_and_padding),
	TEST(batch_matches_one_key_calls),
	TEST(blocked_fast_path_matches_positions),
	TEST(storage_size_rounding),
	TEST(marks_are_the_changed_blocks),
	TEST(fingerprint_tells_shapes_apart),
};

/*
 * kbloom_core_test [-x] [NAME...]: the tests named, or all; -x stops at
 * the first failure (tools/mutate.sh wants one, not all).
 */
int main(int argc, char **argv)
{
	bool stop = argc > 1 && !strcmp(argv[1], "-x");
	int first = stop ? 2 : 1, a;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(tests); i++) {
		for (a = first; a < argc; a++)
			if (!strcmp(argv[a], tests[i].name))
				break;
		if (argc > first && a == argc)
			continue;
		why[0] = '\0';
		if (tests[i].fn ? tests[i].fn() : tests[i].with(tests[i].arg)) {
			passed++;
			printf("ok %d - %s\n", passed + failed, tests[i].name);
		} else {
			failed++;
			printf("not ok %d - %s: %s\n", passed + failed,
			       tests[i].name, why);
		}
		fflush(stdout);
		if (stop && failed)
			break;
	}
	printf("1..%d\n", passed + failed);
	printf("native: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
