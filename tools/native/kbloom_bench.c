// SPDX-License-Identifier: GPL-2.0
/*
 * Native benchmark of the kbloom hot path: the very core the module runs
 * (kmod/kbloom_core.c), timed on the host CPU instead of under emulation.
 * Also times one bare system call (ioctl FIONREAD on a pipe), the fixed
 * cost that a one-key ioctl pays on top of the core and a batch spreads
 * over thousands of keys.
 *
 * Usage: kbloom_bench [KEYS]   (default 1000000)
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kbloom_core.h"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * Keys like the demo's, decimal numbers as `seq` prints them, made before
 * the clock starts so that only the filter is timed: key i is at
 * keys + 24 * i.
 */
static char *make_keys(u64 count, u32 **lens)
{
	char *keys = malloc(count * 24);
	u64 i;

	*lens = malloc(count * sizeof(**lens));
	if (!keys || !*lens) {
		perror("kbloom_bench: malloc");
		exit(2);
	}
	for (i = 0; i < count; i++)
		(*lens)[i] = (u32)snprintf(keys + 24 * i, 24, "%llu",
					   (unsigned long long)i);
	return keys;
}

/* Keys @first.. @first + @n of make_keys(), back to back, as a batch. */
static u8 *pack_keys(const char *keys, const u32 *lens, u64 first, u64 n)
{
	u8 *packed = malloc(n * 24), *p = packed;
	u64 i;

	if (!packed) {
		perror("kbloom_bench: malloc");
		exit(2);
	}
	for (i = first; i < first + n; i++) {
		memcpy(p, keys + 24 * i, lens[i]);
		p += lens[i];
	}
	return packed;
}

/*
 * kbloom_core_do_batch() over @n packed keys in batches of 1024 keys, as
 * the module's batched ioctls call it. Returns the true results.
 */
static u64 run_batch(struct kbloom_core *core, enum kbloom_op op,
		     const u8 *packed, const u32 *lens, u64 n)
{
	u8 results[1024 / 8];
	u64 i, hits = 0;
	u32 c, j;

	for (i = 0; i < n; i += c) {
		c = n - i < 1024 ? n - i : 1024;
		hits += kbloom_core_do_batch(core, op, packed, lens + i, c,
					     results, NULL);
		for (j = 0; j < c; j++)
			packed += lens[i + j];
	}
	return hits;
}

/* One-key queries of keys [first, first + n): ns per key. */
static double time_single(struct kbloom_core *core, const char *keys,
			  const u32 *lens, u64 first, u64 n, u64 *hits)
{
	double t0 = now_ns();
	u64 i;

	*hits = 0;
	for (i = first; i < first + n; i++)
		*hits += kbloom_core_query(core, keys + 24 * i, lens[i]);
	return (now_ns() - t0) / n;
}

static double time_batch(struct kbloom_core *core, enum kbloom_op op,
			 const u8 *packed, const u32 *lens, u64 n, u64 *hits)
{
	double t0 = now_ns();

	*hits = run_batch(core, op, packed, lens, n);
	return (now_ns() - t0) / n;
}

#define MIN(a, b)	((a) < (b) ? (a) : (b))

/*
 * The same filter through kbloom_core_do_batch() and the one-key calls,
 * interleaved three times (best of three each), so that the two see the
 * same caches and clock; then a batched add into a wiped filter, which
 * must give the same bits as the one-key adds did.
 */
static void bench_batch(struct kbloom_core *core, const char *keys,
			const u32 *lens, u64 n)
{
	u8 *in = pack_keys(keys, lens, 0, n), *out = pack_keys(keys, lens, n, n);
	size_t bytes = kbloom_core_bytes(core->nbits, core->flags);
	double sp = 1e9, sa = 1e9, bp = 1e9, ba = 1e9, add;
	u64 h[4], ok = 1;
	void *copy = malloc(bytes);
	int r;

	if (!copy) {
		perror("kbloom_bench: malloc");
		exit(2);
	}
	for (r = 0; r < 3; r++) {
		sp = MIN(sp, time_single(core, keys, lens, 0, n, &h[0]));
		bp = MIN(bp, time_batch(core, KBLOOM_OP_QUERY, in, lens, n, &h[1]));
		sa = MIN(sa, time_single(core, keys, lens, n, n, &h[2]));
		ba = MIN(ba, time_batch(core, KBLOOM_OP_QUERY, out, lens + n, n,
					&h[3]));
		ok &= h[0] == n && h[1] == n && h[2] == h[3];
	}
	memcpy(copy, core->bitmap, bytes);
	memset(core->bitmap, 0, bytes);
	add = time_batch(core, KBLOOM_OP_ADD, in, lens, n, &h[0]);
	ok &= !memcmp(copy, core->bitmap, bytes);
	printf("    best of 3, interleaved: query present %5.1f ns one-key, %5.1f ns batched (%.2fx); absent %5.1f ns, %5.1f ns (%.2fx); batched add %5.1f ns%s\n",
	       sp, bp, sp / bp, sa, ba, sa / ba, add,
	       ok ? "" : " (MISMATCH with the one-key calls)");
	free(copy);
	free(in);
	free(out);
}

/*
 * Back the filter with transparent huge pages: for reference only, the
 * module's vmalloc'd storage is mapped with 4 KiB pages, whose TLB misses
 * (page walks, of which a core runs few at once) are part of what a
 * query of a large filter waits for in the kernel as well.
 */
static bool huge_pages;

static void *alloc_filter(size_t bytes)
{
	size_t huge = 2UL << 20, rounded = (bytes + huge - 1) / huge * huge;
	void *p;

	if (!huge_pages)
		return calloc(1, bytes);
	p = aligned_alloc(huge, rounded);
	if (p) {
		madvise(p, rounded, MADV_HUGEPAGE);
		memset(p, 0, rounded);
	}
	return p;
}

static void bench(u64 n, u32 ppb, u32 flags)
{
	struct kbloom_core core;
	u32 seed[4] = { 1, 2, 3, 4 }, k, *lens;
	u64 m, i, hits = 0;
	double t0, t1, t2, t3;
	char *keys;
	void *bits;

	if (kbloom_size_flags(n, ppb, flags, &m, &k))
		return;
	bits = alloc_filter(kbloom_core_bytes(m, flags));
	if (!bits) {
		perror("kbloom_bench: calloc");
		exit(2);
	}
	kbloom_core_init(&core, bits, m, k, flags, seed);
	keys = make_keys(2 * n, &lens);
	t0 = now_ns();
	for (i = 0; i < n; i++)
		kbloom_core_add(&core, keys + 24 * i, lens[i], NULL);
	t1 = now_ns();
	for (i = 0; i < n; i++)
		hits += kbloom_core_query(&core, keys + 24 * i, lens[i]);
	t2 = now_ns();
	for (i = n; i < 2 * n; i++)
		hits += kbloom_core_query(&core, keys + 24 * i, lens[i]);
	t3 = now_ns();
	printf("%-8s %-7s %-7s n=%-9llu m=%-10llu k=%-2u %6.1f MiB%s: add %5.1f ns, query present %5.1f ns, query absent %5.1f ns (fpr %.3f%%)\n",
	       flags & KBLOOM_CORE_COUNTING ? "counting" : "bits",
	       flags & KBLOOM_CORE_BLOCKED ? "blocked" : "plain",
	       flags & KBLOOM_CORE_SIPHASH ? "siphash" : "jhash",
	       (unsigned long long)n,
	       (unsigned long long)m, k, kbloom_core_bytes(m, flags) / 1048576.0,
	       huge_pages ? " (huge pages)" : "", (t1 - t0) / n, (t2 - t1) / n, (t3 - t2) / n,
	       100.0 * (hits - n) / n);
	bench_batch(&core, keys, lens, n);
	free(keys);
	free(lens);
	free(bits);
}

/*
 * The hash alone, per scheme and key length: what choosing SipHash over
 * jhash costs a key before any memory is touched. Median of five runs,
 * the schemes interleaved so that frequency changes hit both alike.
 */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double hash_ns(u32 flags, u32 len)
{
	static u8 keys[4096 + 64];
	u32 seed[4] = { 1, 2, 3, 4 };
	struct kbloom_core core;
	volatile u64 sink = 0;
	double t0;
	u32 i, r;

	kbloom_core_init(&core, NULL, 1 << 20, 7, flags, seed);
	for (i = 0; i < sizeof(keys); i++)
		keys[i] = (u8)(i * 131 + 7);
	t0 = now_ns();
	for (r = 0; r < 4000000; r++)
		sink += kbloom_core_hash(&core, keys + (r & 4095), len);
	(void)sink;
	return (now_ns() - t0) / 4000000;
}

static void bench_hashes(void)
{
	static const u32 lens[] = { 8, 16, 64 };
	double j[5], s[5];
	u32 l, r;

	for (l = 0; l < 3; l++) {
		for (r = 0; r < 5; r++) {
			j[r] = hash_ns(0, lens[l]);
			s[r] = hash_ns(KBLOOM_CORE_SIPHASH, lens[l]);
		}
		qsort(j, 5, sizeof(j[0]), cmp_double);
		qsort(s, 5, sizeof(s[0]), cmp_double);
		printf("hash of a %2u-byte key: jhash %5.1f ns, siphash %5.1f ns (+%.1f ns, %.2fx)\n",
		       lens[l], j[2], s[2], s[2] - j[2], s[2] / j[2]);
	}
}

int main(int argc, char **argv)
{
	u64 n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	int p[2], avail, i, rounds = 1000000;
	double t0, syscall_ns;

	if (pipe(p)) {
		perror("kbloom_bench: pipe");
		return 2;
	}
	t0 = now_ns();
	for (i = 0; i < rounds; i++)
		if (ioctl(p[0], FIONREAD, &avail))
			return 2;
	syscall_ns = (now_ns() - t0) / rounds;
	printf("one bare ioctl system call: %.1f ns\n", syscall_ns);
	bench_hashes();
	/* Each size in both layouts, one after the other. */
	bench(n, 10000000, 0);
	bench(n, 10000000, KBLOOM_CORE_BLOCKED);
	bench(n, 10000000, KBLOOM_CORE_SIPHASH);
	bench(n, 10000000, KBLOOM_CORE_SIPHASH | KBLOOM_CORE_BLOCKED);
	bench(n, 1000000, 0);
	bench(n, 1000000, KBLOOM_CORE_BLOCKED);
	bench(10 * n, 10000000, 0);
	bench(10 * n, 10000000, KBLOOM_CORE_BLOCKED);
	bench(10 * n, 10000000, KBLOOM_CORE_SIPHASH);
	/* Far past the caches: where a query waits on DRAM. */
	bench(50 * n, 10000000, 0);
	bench(50 * n, 10000000, KBLOOM_CORE_BLOCKED);
	/* The same two on 2 MiB pages: what the 4 KiB pages cost. */
	huge_pages = true;
	bench(50 * n, 10000000, 0);
	bench(50 * n, 10000000, KBLOOM_CORE_BLOCKED);
	huge_pages = false;
	bench(n, 10000000, KBLOOM_CORE_COUNTING);
	bench(n, 10000000, KBLOOM_CORE_COUNTING | KBLOOM_CORE_BLOCKED);
	bench(n, 10000000, KBLOOM_CORE_COUNTING | KBLOOM_CORE_SIPHASH);
	return 0;
}
