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
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "kbloom_core.h"
#include "../../kunit/kbloom_vectors.h"

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

/*
 * Deterministic key stream: key i of stream s, 8 to 23 bytes, distinct for
 * every (s, i) with i below 2^32: the first 8 bytes are i and s.
 */
static u32 make_key(u8 *buf, u64 s, u64 i)
{
	u64 x = (s * 0x9e3779b97f4a7c15ULL) ^ (i * 0xbf58476d1ce4e5b9ULL);
	u32 len = 8 + (u32)(i % 16), j, w;

	for (j = 8; j < len; j++) {
		x ^= x >> 31;
		x *= 0x94d049bb133111ebULL;
		buf[j] = (u8)(x >> 56);
	}
	w = (u32)i;
	memcpy(buf, &w, 4);
	w = (u32)s;
	memcpy(buf + 4, &w, 4);
	return len;
}

static struct kbloom_core *core_new(u64 nbits, u32 nhashes, u32 s0, u32 s1)
{
	struct kbloom_core *core = malloc(sizeof(*core));
	u32 seed[2] = { s0, s1 };
	void *bits = calloc(1, kbloom_core_bytes(nbits));

	if (!core || !bits) {
		perror("kbloom_core_test: calloc");
		exit(2);
	}
	kbloom_core_init(core, bits, nbits, nhashes, seed);
	return core;
}

static void core_free(struct kbloom_core *core)
{
	free(core->bitmap);
	free(core);
}

/* The kernel's jhash(), with the CPU-endian reads it does. */
static u32 ref_jhash(const void *key, u32 length, u32 initval)
{
	const u8 *k = key;
	u32 a, b, c, w[3];

	a = b = c = JHASH_INITVAL + length + initval;
	while (length > 12) {
		memcpy(w, k, 12);
		a += w[0];
		b += w[1];
		c += w[2];
		__jhash_mix(a, b, c);
		length -= 12;
		k += 12;
	}
	switch (length) {
	case 12: c += (u32)k[11] << 24; fallthrough;
	case 11: c += (u32)k[10] << 16; fallthrough;
	case 10: c += (u32)k[9] << 8; fallthrough;
	case 9: c += k[8]; fallthrough;
	case 8: b += (u32)k[7] << 24; fallthrough;
	case 7: b += (u32)k[6] << 16; fallthrough;
	case 6: b += (u32)k[5] << 8; fallthrough;
	case 5: b += k[4]; fallthrough;
	case 4: a += (u32)k[3] << 24; fallthrough;
	case 3: a += (u32)k[2] << 16; fallthrough;
	case 2: a += (u32)k[1] << 8; fallthrough;
	case 1: a += k[0];
		__jhash_final(a, b, c);
		break;
	}
	return c;
}

static bool hash_low_word_is_jhash(void)
{
	u8 key[200];
	u32 i, len, seed[2];

	for (i = 0; i < 20000; i++) {
		len = 1 + i % 199;
		make_key(key, i, i);
		memset(key + 20, (int)i, sizeof(key) - 20);
		seed[0] = i * 2654435761U;
		seed[1] = 0;
		if ((u32)kbloom_hash64(key, len, seed) !=
		    ref_jhash(key, len, seed[0]))
			return fail("key %u len %u differs", i, len);
	}
	return true;
}

static bool golden_vectors_match(void)
{
	u64 pos[KBLOOM_CORE_MAX_HASHES];
	struct kbloom_core core;
	size_t i, j;

	for (i = 0; i < sizeof(kbloom_vectors) / sizeof(kbloom_vectors[0]); i++) {
		const struct kbloom_vector *v = &kbloom_vectors[i];

		if (kbloom_hash64(v->key, v->len, v->seed) != v->hash)
			return fail("vector %zu: hash", i);
		kbloom_core_init(&core, NULL, v->nbits, v->nhashes, v->seed);
		kbloom_core_positions(&core, v->key, v->len, pos);
		for (j = 0; j < v->nhashes; j++)
			if (pos[j] != v->pos[j])
				return fail("vector %zu: position %zu", i, j);
	}
	return true;
}

static bool positions_in_range_and_step_nonzero(void)
{
	static const u64 ms[] = { 64, 65, 1000, 4099, 9585059,
				  (1ULL << 32) + 3, 1ULL << 36 };
	u64 pos[KBLOOM_CORE_MAX_HASHES];
	struct kbloom_probe p;
	struct kbloom_core core;
	u32 seed[2] = { 11, 12 }, len, j;
	size_t mi;
	u8 key[32];
	u64 i;

	for (mi = 0; mi < sizeof(ms) / sizeof(ms[0]); mi++) {
		kbloom_core_init(&core, NULL, ms[mi], 32, seed);
		for (i = 0; i < 100000; i++) {
			len = make_key(key, mi, i);
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
	}
	return true;
}

/*
 * Every bit must be reachable, and roughly evenly: an off-by-one in the
 * range reduction starves the last bit or the first.
 */
static bool every_bit_reachable_and_uniform(void)
{
	static const u64 ms[] = { 64, 65, 1000, 4099 };
	struct kbloom_core core;
	u32 seed[2] = { 5, 6 }, len, *hits;
	u64 pos[3], i, b, n;
	size_t mi;
	u8 key[32];

	for (mi = 0; mi < sizeof(ms) / sizeof(ms[0]); mi++) {
		hits = calloc(ms[mi], sizeof(*hits));
		kbloom_core_init(&core, NULL, ms[mi], 3, seed);
		n = ms[mi] * 1000;
		for (i = 0; i < n; i++) {
			len = make_key(key, 100 + mi, i);
			kbloom_core_positions(&core, key, len, pos);
			hits[pos[0]]++;
			hits[pos[1]]++;
			hits[pos[2]]++;
		}
		/* 3000 expected per bit; 6 sigma is about 330. */
		for (b = 0; b < ms[mi]; b++) {
			if (hits[b] < 2600 || hits[b] > 3400) {
				fail("m %llu: bit %llu hit %u times of 3000",
				     (unsigned long long)ms[mi],
				     (unsigned long long)b, hits[b]);
				free(hits);
				return false;
			}
		}
		free(hits);
	}
	return true;
}

static bool no_false_negatives(void)
{
	static const struct { u64 m; u32 k; u64 n; } sw[] = {
		{ 64, 1, 5 }, { 64, 32, 3 }, { 1000, 32, 20 }, { 4099, 7, 400 },
		{ (1 << 20) + 7, 7, 100000 }, { (1ULL << 32) + 64, 4, 100000 },
	};
	struct kbloom_core *core;
	size_t s;
	u8 key[32];
	u64 i;

	for (s = 0; s < sizeof(sw) / sizeof(sw[0]); s++) {
		core = core_new(sw[s].m, sw[s].k, (u32)s, 99);
		for (i = 0; i < sw[s].n; i++)
			kbloom_core_add(core, key, make_key(key, s, i));
		for (i = 0; i < sw[s].n; i++) {
			if (!kbloom_core_test(core, key, make_key(key, s, i))) {
				core_free(core);
				return fail("m %llu k %u: key %llu lost",
					    (unsigned long long)sw[s].m,
					    sw[s].k, (unsigned long long)i);
			}
		}
		core_free(core);
	}
	return true;
}

/* Measured FPR of 10^6 absent keys within 3 binomial sigma of theory. */
static bool fpr_matches_theory(void)
{
	static const u32 bpk[] = { 4, 6, 8, 10, 16 };
	const u64 n = 100000, queries = 1000000;
	struct kbloom_core *core;
	double p, sigma, got;
	u64 i, fp, m;
	u32 k;
	size_t b;
	u8 key[32];

	for (b = 0; b < sizeof(bpk) / sizeof(bpk[0]); b++) {
		m = n * bpk[b] + 13;	/* not a power of two */
		k = kbloom_optimal_hashes(m, n);
		core = core_new(m, k, 1000 + (u32)b, 7);
		for (i = 0; i < n; i++)
			kbloom_core_add(core, key, make_key(key, 1, i));
		for (fp = 0, i = 0; i < queries; i++)
			fp += kbloom_core_test(core, key, make_key(key, 2, i));
		core_free(core);
		p = pow(1 - exp(-(double)k * n / m), k);
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

static bool sizing_reproduces_seed_figures(void)
{
	u64 m;
	u32 k;
	double fpr;

	if (kbloom_size(1000000, 10000000, &m, &k) || k != 7 ||
	    m != 9585059)
		return fail("1%%: m %llu k %u, want 9585059 and 7",
			    (unsigned long long)m, k);
	if (kbloom_size(1000000, 1000000, &m, &k) || k != 10 ||
	    m != 14377588)
		return fail("0.1%%: m %llu k %u, want 14377588 and 10",
			    (unsigned long long)m, k);
	fpr = (double)kbloom_fpr_q32(10000, 10, 1000) / KBLOOM_Q32_ONE;
	if (fabs(fpr - 0.0102) > 0.0001)
		return fail("m 10000 k 10 n 1000: fpr %g, want ~1.02%%", fpr);
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
		for (p = 0; p < sizeof(ppbs) / sizeof(ppbs[0]); p++) {
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
		len = make_key(key, 3, i);
		if (kbloom_core_test_and_add(core, key, len))
			ok = fail("new key %llu reported seen",
				  (unsigned long long)i);
		else if (!kbloom_core_test_and_add(core, key, len) ||
			 !kbloom_core_test(core, key, len))
			ok = fail("key %llu not seen after add",
				  (unsigned long long)i);
	}
	core_free(core);
	return ok;
}

static bool clear_and_weight(void)
{
	struct kbloom_core *core = core_new(100003, 5, 3, 4);
	u64 pos[5], distinct = 0, i;
	u8 key[32], *seen = calloc(1, 100003);
	bool ok = true;
	u32 len, j;

	for (i = 0; i < 5000; i++) {
		len = make_key(key, 4, i);
		kbloom_core_add(core, key, len);
		kbloom_core_positions(core, key, len, pos);
		for (j = 0; j < 5; j++)
			if (!seen[pos[j]]++)
				distinct++;
	}
	if (kbloom_core_weight(core) != distinct)
		ok = fail("weight %llu, want %llu",
			  (unsigned long long)kbloom_core_weight(core),
			  (unsigned long long)distinct);
	kbloom_core_clear(core);
	if (ok && kbloom_core_weight(core))
		ok = fail("weight after clear not 0");
	free(seen);
	core_free(core);
	return ok;
}

struct adder {
	struct kbloom_core *core;
	u64 stream;
};

static void *adder_fn(void *arg)
{
	struct adder *a = arg;
	u8 key[32];
	u64 i;

	for (i = 0; i < 200000; i++)
		kbloom_core_add(a->core, key, make_key(key, a->stream, i));
	return NULL;
}

/* Small, dense filter so that the threads really fight over words. */
static bool concurrent_adds_lose_nothing(void)
{
	struct kbloom_core *core = core_new(1 << 16, 3, 9, 9);
	struct adder a[4];
	pthread_t t[4];
	bool ok = true;
	u8 key[32];
	int i;
	u64 j;

	for (i = 0; i < 4; i++) {
		a[i].core = core;
		a[i].stream = 50 + i;
		pthread_create(&t[i], NULL, adder_fn, &a[i]);
	}
	for (i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < 4 && ok; i++)
		for (j = 0; j < 200000 && ok; j++)
			if (!kbloom_core_test(core, key,
					      make_key(key, 50 + i, j)))
				ok = fail("thread %d key %llu lost", i,
					  (unsigned long long)j);
	core_free(core);
	return ok;
}

static const struct {
	const char *name;
	bool (*fn)(void);
} tests[] = {
	{ "hash_low_word_is_jhash", hash_low_word_is_jhash },
	{ "golden_vectors_match", golden_vectors_match },
	{ "positions_in_range_and_step_nonzero",
	  positions_in_range_and_step_nonzero },
	{ "every_bit_reachable_and_uniform", every_bit_reachable_and_uniform },
	{ "no_false_negatives", no_false_negatives },
	{ "fpr_matches_theory", fpr_matches_theory },
	{ "sizing_reproduces_seed_figures", sizing_reproduces_seed_figures },
	{ "sizing_agrees_with_libm", sizing_agrees_with_libm },
	{ "fixed_point_log_exp_accurate", fixed_point_log_exp_accurate },
	{ "test_and_add_reports_seen", test_and_add_reports_seen },
	{ "clear_and_weight", clear_and_weight },
	{ "concurrent_adds_lose_nothing", concurrent_adds_lose_nothing },
};

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		why[0] = '\0';
		if (tests[i].fn()) {
			passed++;
			printf("ok %zu - %s\n", i + 1, tests[i].name);
		} else {
			failed++;
			printf("not ok %zu - %s: %s\n", i + 1, tests[i].name,
			       why);
		}
		fflush(stdout);
	}
	printf("native: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
