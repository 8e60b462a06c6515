// SPDX-License-Identifier: GPL-2.0
/*
 * make bench: the kbloom hot path natively (the very kmod/kbloom_core.c
 * the module runs, built for userspace), side by side with its peers in
 * one run: libbloom, and the kernel's BPF bloom map from a BPF program and
 * through bpf(). Every filter is sized for its keys at 1% by its own
 * sizing; keys are made before any clock starts.
 *
 * For each size and key length, three rounds; in each round every filter
 * kind in turn is created, filled (timed), queried with present and with
 * absent keys (timed), and destroyed, so the kinds see the same machine
 * state; the table gives each figure's median of the three. Then the
 * goals, against these figures. Not a test: timings here vary
 * by tens of percent from run to run; compare the rows of one run.
 *
 * Usage: kbloom_bench [-o DIR] [-q] [-k KIND]... [-l LEN] [KEYS...]
 * (default 1000000 10000000 50000000 keys). -o writes DIR/bench.md (the
 * tables) and DIR/bench.dat (for bench.gp's plot); -q skips the reference
 * lines; -k keeps only the kinds whose short name contains KIND (make
 * bench-vm runs "-k 'BPF program'" in the VM); -l only LEN-byte keys.
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kbloom_batch.h"
#include "kbloom_core.h"
#include "bench.h"

#define ROUNDS		3
/* Queries per measurement: enough for the rate to 0.01% at 1%. */
#define QUERY_KEYS	2000000ULL
#define BATCH		1024	/* keys per kbloom_core_do_batch(), as the ioctl */

static void *xmalloc(size_t bytes)
{
	void *p = malloc(bytes);

	if (!p) {
		perror("kbloom_bench: malloc");
		exit(2);
	}
	return p;
}

/* ---- kbloom's kinds: the core, one key per call or in batches ---- */

/* kind->arg: KBLOOM_CORE_* flags, and these. */
#define BENCH_BATCHED	(1u << 16)
#define BENCH_SMALL	(1u << 17)	/* 4 KiB pages only, for reference */
#define BENCH_TRACK	(1u << 18)	/* change marks, as --track-changes */

#define HUGE_PAGE	(2UL << 20)

struct kb_filter {
	struct kbloom_core core;
	void *bits;
	size_t alloc;
	u32 lens[BATCH];
};

/*
 * Storage as the module allocates it (kbloom_storage_alloc()): touched
 * before use, and mapped with 2 MiB pages where the module's rule
 * (kbloom_storage_size()) says so, which here is transparent huge pages
 * asked for with madvise(). BENCH_SMALL keeps 4 KiB pages, to show what
 * the TLB misses cost past the caches. Without the memory, exits.
 */
static void *kb_alloc(size_t bytes, bool small, size_t *alloc)
{
	size_t size = kbloom_storage_size(bytes, small ? 0 : HUGE_PAGE);
	bool huge = size >= HUGE_PAGE && !(size % HUGE_PAGE);
	u8 *p;

	/* Room to align to a huge page, as vmalloc_huge() does. */
	*alloc = size + (huge ? HUGE_PAGE : 0);
	p = mmap(NULL, *alloc, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("kbloom_bench: mmap");
		exit(2);
	}
	if (huge) {
		size_t off = (HUGE_PAGE - (uintptr_t)p % HUGE_PAGE) % HUGE_PAGE;

		munmap(p, off);
		munmap(p + off + size, HUGE_PAGE - off);
		p += off;
		*alloc = size;
	}
	madvise(p, *alloc, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	memset(p, 0, *alloc);
	return p;
}

static int kb_create(struct bench_filter *f, const struct bench_keys *keys,
		     uintptr_t arg)
{
	static char detail[8][64];
	static int slot;
	u32 seed[4] = { 1, 2, 3, 4 }, flags = arg & KBLOOM_CORE_FLAGS, k, i;
	struct kb_filter *kb = xmalloc(sizeof(*kb));
	u64 m;

	if (kbloom_size_flags(keys->n, 10000000, flags, &m, &k))
		goto err;
	kb->bits = kb_alloc(kbloom_core_bytes(m, flags), arg & BENCH_SMALL,
			    &kb->alloc);
	/* What the module allocates: sizing's bytes, or whole huge pages. */
	f->bytes = kb->alloc;
	kbloom_core_init(&kb->core, kb->bits, m, k, flags, seed);
	/* A mark per 64-byte block, as the module's kbloom_gen_track(). */
	if (arg & BENCH_TRACK)
		kb->core.changed = calloc(kbloom_core_blocks(&kb->core) / 64 + 1,
					  sizeof(long));
	for (i = 0; i < BATCH; i++)
		kb->lens[i] = keys->len;
	f->priv = kb;
	slot = (slot + 1) % 8;
	snprintf(detail[slot], sizeof(detail[slot]), "m = %llu, k = %u",
		 (unsigned long long)m, k);
	f->detail = detail[slot];
	return 0;
err:
	free(kb);
	return -1;
}

static void kb_destroy(struct bench_filter *f)
{
	struct kb_filter *kb = f->priv;

	munmap(kb->bits, kb->alloc);
	free(kb->core.changed);
	free(kb);
}

/* As the batched ioctls call the core: 1024 keys at a time. */
static u64 kb_batch(struct kb_filter *kb, enum kbloom_op op, const u8 *p,
		    u32 len, u64 count)
{
	u8 results[BATCH / 8];
	u64 i, hits = 0;
	u32 c;

	for (i = 0; i < count; i += c, p += (u64)c * len) {
		c = count - i < BATCH ? count - i : BATCH;
		memset(results, 0, sizeof(results));
		hits += kbloom_core_do_batch(&kb->core, op, p, kb->lens, c,
					     results, NULL);
	}
	return hits;
}

static void kb_add(struct bench_filter *f, const struct bench_keys *keys,
		   u64 first, u64 count)
{
	struct kb_filter *kb = f->priv;
	const u8 *p = keys->buf + first * keys->len;
	u64 i;

	for (i = 0; i < count; i++, p += keys->len)
		kbloom_core_add(&kb->core, p, keys->len, NULL);
}

static u64 kb_query(struct bench_filter *f, const struct bench_keys *keys,
		    u64 first, u64 count)
{
	struct kb_filter *kb = f->priv;
	const u8 *p = keys->buf + first * keys->len;
	u64 i, hits = 0;

	for (i = 0; i < count; i++, p += keys->len)
		hits += kbloom_core_query(&kb->core, p, keys->len);
	return hits;
}

static void kb_add_batch(struct bench_filter *f, const struct bench_keys *keys,
			 u64 first, u64 count)
{
	kb_batch(f->priv, KBLOOM_OP_ADD, keys->buf + first * keys->len,
		 keys->len, count);
}

static u64 kb_query_batch(struct bench_filter *f,
			  const struct bench_keys *keys, u64 first, u64 count)
{
	return kb_batch(f->priv, KBLOOM_OP_QUERY,
			keys->buf + first * keys->len, keys->len, count);
}

#define KB(n, s, a, batched) {						\
	.name = n, .short_name = s, .arg = a,				\
	.create = kb_create, .destroy = kb_destroy,			\
	.add = batched ? kb_add_batch : kb_add,				\
	.query = batched ? kb_query_batch : kb_query,			\
}

/* The kinds, in table order. */
static const struct bench_kind kb_kinds[] = {
	KB("kbloom plain, one key per call", "plain, one key", 0, false),
	KB("kbloom plain, batched", "plain, batched", BENCH_BATCHED, true),
	KB("kbloom blocked, one key per call", "blocked, one key",
	   KBLOOM_CORE_BLOCKED, false),
	KB("kbloom blocked, batched", "blocked, batched",
	   KBLOOM_CORE_BLOCKED | BENCH_BATCHED, true),
	KB("kbloom blocked, batched, SipHash", "blocked, batched, SipHash",
	   KBLOOM_CORE_BLOCKED | KBLOOM_CORE_SIPHASH | BENCH_BATCHED, true),
	KB("kbloom blocked, batched, 4 KiB pages", "blocked, batched, 4 KiB pages",
	   KBLOOM_CORE_BLOCKED | BENCH_BATCHED | BENCH_SMALL, true),
	KB("kbloom plain, one key per call, tracking changes",
	   "plain, one key, tracking", BENCH_TRACK, false),
	KB("kbloom blocked, batched, tracking changes",
	   "blocked, batched, tracking",
	   KBLOOM_CORE_BLOCKED | BENCH_BATCHED | BENCH_TRACK, true),
};

#define NKB	(sizeof(kb_kinds) / sizeof(kb_kinds[0]))
#define MAXKINDS	(NKB + 3)

/* ---- one configuration: all kinds, interleaved rounds ---- */

struct result {
	const struct bench_kind *kind;
	double add[ROUNDS], present[ROUNDS], absent[ROUNDS];
	u64 fp, queried, fneg;
	size_t bytes;
	char detail[64];
	double add_ns, present_ns, absent_ns;	/* medians */
};

static void run_kind(struct result *r, const struct bench_keys *keys, int round)
{
	const struct bench_kind *kind = r->kind;
	u64 n = keys->n, timed = n, q;
	struct bench_filter f = { 0 };
	double t0, t1, t2, t3;

	if (kind->create(&f, keys, kind->arg)) {
		fprintf(stderr, "kbloom_bench: %s: cannot create a filter of %llu keys: %s\n",
			kind->name, (unsigned long long)n, strerror(errno));
		exit(2);
	}
	if (kind->max_timed && timed > kind->max_timed)
		timed = kind->max_timed;
	q = timed < QUERY_KEYS ? timed : QUERY_KEYS;
	t0 = bench_now_ns();
	kind->add(&f, keys, 0, timed);
	t1 = bench_now_ns();
	if (timed < n)
		kind->fill(&f, keys, timed, n - timed);
	t2 = bench_now_ns();
	r->fneg += q - kind->query(&f, keys, 0, q);
	t3 = bench_now_ns();
	r->fp += kind->query(&f, keys, n, q);
	r->absent[round] = (bench_now_ns() - t3) / q;
	r->present[round] = (t3 - t2) / q;
	r->add[round] = (t1 - t0) / timed;
	r->queried += q;
	r->bytes = f.bytes;
	snprintf(r->detail, sizeof(r->detail), "%s", f.detail ? f.detail : "");
	kind->destroy(&f);
}

static u8 *make_keys(u64 n, u32 len)
{
	u8 *buf = xmalloc(2 * n * len);
	u64 i;

	for (i = 0; i < 2 * n; i++)
		bench_key(buf + i * len, i, len);
	return buf;
}

static FILE *md, *dat;

/* Both to stdout and, with -o, to bench.md. */
static void __attribute__((format(printf, 1, 2))) out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	if (md) {
		va_start(ap, fmt);
		vfprintf(md, fmt, ap);
		va_end(ap);
	}
	fflush(stdout);
}

/*
 * bench.dat, for bench.gp: a block per kind (gnuplot's "index"), a line
 * per size, 8-byte keys.
 */
static void write_dat(struct result (*all)[MAXKINDS], int nconf,
		      const u64 *conf_n, const u32 *conf_len, int nkinds)
{
	int c, i;

	fprintf(dat, "# kind keylen keys bytes add_ns present_ns absent_ns fpr_percent\n");
	for (i = 0; i < nkinds; i++) {
		/* The block's first line names it (gnuplot's columnhead). */
		fprintf(dat, "\"%s\" keylen keys bytes add present absent fpr\n",
			all[0][i].kind->short_name);
		for (c = 0; c < nconf; c++) {
			struct result *r = &all[c][i];

			if (conf_len[c] != 8)
				continue;

			fprintf(dat, "\"%s\" %u %llu %zu %.2f %.2f %.2f %.5f\n",
				r->kind->short_name, conf_len[c],
				(unsigned long long)conf_n[c], r->bytes,
				r->add_ns, r->present_ns, r->absent_ns,
				100.0 * r->fp / r->queried);
		}
		if (i + 1 < nkinds)
			fprintf(dat, "\n\n");
	}
}

static int run_config(struct result *res, const struct bench_kind **kinds,
		      int nkinds, u64 n, u32 len)
{
	struct bench_keys keys = { .len = len, .n = n };
	int i, round;
	u8 *buf;

	buf = make_keys(n, len);
	keys.buf = buf;
	memset(res, 0, sizeof(*res) * nkinds);
	for (i = 0; i < nkinds; i++)
		res[i].kind = kinds[i];
	for (round = 0; round < ROUNDS; round++)
		for (i = 0; i < nkinds; i++)
			run_kind(&res[i], &keys, round);
	free(buf);

	out("\n### %llu keys of %u bytes, sized for 1%%\n\n",
	    (unsigned long long)n, len);
	out("| filter | memory | add | query (present) | query (absent) | false positives | |\n");
	out("| --- | --- | --- | --- | --- | --- | --- |\n");
	for (i = 0; i < nkinds; i++) {
		struct result *r = &res[i];

		r->add_ns = bench_median(r->add, ROUNDS);
		r->present_ns = bench_median(r->present, ROUNDS);
		r->absent_ns = bench_median(r->absent, ROUNDS);
		out("| %s | %.2f MiB | %.1f ns | %.1f ns | %.1f ns | %.3f%% | %s%s |\n",
		    r->kind->name, r->bytes / 1048576.0, r->add_ns,
		    r->present_ns, r->absent_ns, 100.0 * r->fp / r->queried,
		    r->detail, r->fneg ? " **FALSE NEGATIVES**" : "");
	}
	for (i = 0; i < nkinds; i++)
		if (res[i].fneg)
			return 1;
	return 0;
}

/* ---- reference lines ---- */

/* A system call that does nothing: what every one-key call pays. */
static void ref_syscalls(void)
{
	int p[2], avail, i, rounds = 1000000;
	double t0, t1;

	if (pipe(p)) {
		perror("kbloom_bench: pipe");
		exit(2);
	}
	t0 = bench_now_ns();
	for (i = 0; i < rounds; i++)
		getppid();
	t1 = bench_now_ns();
	for (i = 0; i < rounds; i++)
		if (ioctl(p[0], FIONREAD, &avail))
			exit(2);
	out("- one bare system call: getppid() %.0f ns, ioctl(FIONREAD) %.0f ns\n",
	    (t1 - t0) / rounds, (bench_now_ns() - t1) / rounds);
	close(p[0]);
	close(p[1]);
}

/*
 * The 2 MiB pages asked for with madvise() come only where transparent
 * huge pages are not "never"; and the AnonHugePages this process got says
 * whether they came.
 */
static void ref_thp(void)
{
	char line[256] = "", mode[64] = "?";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	char *a, *z;

	if (f && fgets(line, sizeof(line), f)) {
		a = strchr(line, '[');
		z = a ? strchr(a, ']') : NULL;
		if (a && z && z - a < (long)sizeof(mode)) {
			memcpy(mode, a + 1, z - a - 1);
			mode[z - a - 1] = 0;
		}
	}
	if (f)
		fclose(f);
	out("- transparent huge pages: %s%s\n", mode,
	    strcmp(mode, "never") ? "" :
	    " (the \"2 MiB pages\" filters and lines below are on 4 KiB pages)");
}

/*
 * Memory, 512 MiB past the caches, on 4 KiB and on 2 MiB pages (a TLB
 * miss and page walk per load, or neither): one load that depends
 * on the last (a pointer chase through a random cycle of cache lines: the
 * latency), and independent loads of random lines (what a core overlaps).
 */
static void ref_memory(bool small)
{
	u64 lines = (512ULL << 20) / 64, steps = 4000000, i, j, t, sum = 0;
	size_t alloc;
	u64 *mem = kb_alloc(lines * 64, small, &alloc);
	u32 *idx = xmalloc(steps * sizeof(*idx));
	u64 x = 88172645463325252ULL;
	volatile u64 sink;
	double t0, t1;

	/* Sattolo's shuffle: one cycle through every line. */
	for (i = 0; i < lines; i++)
		mem[i * 8] = i;
	for (i = lines - 1; i > 0; i--) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		j = x % i;
		t = mem[i * 8], mem[i * 8] = mem[j * 8], mem[j * 8] = t;
	}
	for (i = 0; i < steps; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		idx[i] = (u32)(x % lines);
	}
	t0 = bench_now_ns();
	for (i = 0, j = 0; i < steps; i++)
		j = mem[j * 8];
	t1 = bench_now_ns();
	for (i = 0; i < steps; i++)
		sum += mem[(u64)idx[i] * 8];
	sink = j + sum;
	(void)sink;
	out("- memory (512 MiB, %s pages): one dependent load %.0f ns; independent random cache-line loads %.1f ns each\n",
	    small ? "4 KiB" : "2 MiB", (t1 - t0) / steps,
	    (bench_now_ns() - t1) / steps);
	munmap(mem, alloc);
	free(idx);
}

/*
 * The memory work of an add alone, for reference: what a 50M-key blocked
 * filter at 1% (60 MiB, k = 6) does to memory, without the hash. 50M
 * keys, each 6 bits in a random 64-byte line (its positions from
 * kbloom_mix64(), as the blocked layout takes them), on 2 MiB pages, the
 * line fetched 32 keys ahead, its key's mix kept in a ring until then, as
 * the batch does: the line only read (a query), its words ORed with
 * plain stores, and ORed atomically, one fully ordered compare-and-swap
 * per word that lacks bits, returning the bits it set (kbloom's add: a
 * racing adder's bits are never lost, and bits_set stays exact). The
 * same keys into the same empty area each time: the two that write differ
 * only in the stores, and fill the area as the filter fills.
 */
enum { RMW_READ, RMW_PLAIN, RMW_ATOMIC };

#define RMW_KEYS	50000000ULL
#define RMW_BYTES	(60ULL << 20)

#define RMW_AHEAD	32

/* Key @i's stand-in for a hash, and where its line begins in @mem. */
static u64 rmw_stage(unsigned long *mem, u64 lines, u64 i,
		     unsigned long **line)
{
	u64 h = kbloom_mix64(i * 0x9e3779b97f4a7c15ULL);

	*line = mem + (u64)(((unsigned __int128)h * lines) >> 64) *
		      KBLOOM_BLOCK_LONGS;
	__builtin_prefetch(*line);
	return h;
}

/*
 * The positions, their test and their writes are kbloom's own
 * (KBLOOM_BLOCK_POS(), kbloom_block_has(), kbloom_block_want(),
 * kbloom_word_or()), so that the reference stays what the add does.
 */
static double rmw_ns(unsigned long *mem, u64 lines, int mode)
{
	unsigned long *at[RMW_AHEAD];
	struct kbloom_delta d = {};
	u64 ring[RMW_AHEAD], i, bits = 0;
	volatile u64 sink;
	double t0;

	t0 = bench_now_ns();
	for (i = 0; i < RMW_AHEAD; i++)
		ring[i] = rmw_stage(mem, lines, i, &at[i]);
	for (i = 0; i < RMW_KEYS; i++) {
		unsigned long *b = at[i % RMW_AHEAD];
		u64 mix = kbloom_mix64(ring[i % RMW_AHEAD]);
		unsigned long want[KBLOOM_BLOCK_LONGS] = {}, have = ~0UL;
		unsigned int words = 0, j;

		ring[i % RMW_AHEAD] = rmw_stage(mem, lines, i + RMW_AHEAD,
						&at[i % RMW_AHEAD]);
		for (j = 0; j < 6; j++) {
			if (mode == RMW_READ)
				have &= kbloom_block_has(b,
						KBLOOM_BLOCK_POS(mix, j));
			else
				kbloom_block_want(b, KBLOOM_BLOCK_POS(mix, j),
						  want, &words);
		}
		if (mode == RMW_READ) {
			bits += have & 1;
			continue;
		}
		while (words) {
			j = __builtin_ctz(words);
			words &= words - 1;
			if (mode == RMW_PLAIN)
				b[j] |= want[j];
			else
				kbloom_word_or(&b[j], want[j], &d);
		}
	}
	sink = bits + d.set;
	(void)sink;
	return (bench_now_ns() - t0) / RMW_KEYS;
}

static void ref_rmw(void)
{
	u64 lines = RMW_BYTES / 64;
	double r[3][3];
	size_t alloc;
	unsigned long *mem = kb_alloc(RMW_BYTES, false, &alloc);
	int m, k;

	/* Interleaved, each from an empty area. */
	for (k = 0; k < 3; k++)
		for (m = 0; m < 3; m++) {
			memset(mem, 0, RMW_BYTES);
			r[m][k] = rmw_ns(mem, lines, m);
		}
	out("- the memory work of a 50M-key add alone, no hash (6 bits in random 64-byte lines of 60 MiB, 2 MiB pages, 32 lines ahead): read %.1f ns, plain OR %.1f ns (%.2fx), atomic OR %.1f ns (%.2fx)\n",
	    bench_median(r[RMW_READ], 3), bench_median(r[RMW_PLAIN], 3),
	    bench_median(r[RMW_PLAIN], 3) / bench_median(r[RMW_READ], 3),
	    bench_median(r[RMW_ATOMIC], 3),
	    bench_median(r[RMW_ATOMIC], 3) / bench_median(r[RMW_READ], 3));
	munmap(mem, alloc);
}

/*
 * The hash alone, per scheme and key length: what SipHash costs over
 * jhash before any memory is touched. Median of five, interleaved.
 */
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
	t0 = bench_now_ns();
	for (r = 0; r < 4000000; r++)
		sink += kbloom_core_hash(&core, keys + (r & 4095), len);
	(void)sink;
	return (bench_now_ns() - t0) / 4000000;
}

static void ref_hashes(void)
{
	static const u32 lens[] = { 8, 13, 64 };
	double j[5], s[5];
	u32 l, r;

	for (l = 0; l < 3; l++) {
		for (r = 0; r < 5; r++) {
			j[r] = hash_ns(0, lens[l]);
			s[r] = hash_ns(KBLOOM_CORE_SIPHASH, lens[l]);
		}
		out("- hash of a %u-byte key: jhash %.1f ns, SipHash %.1f ns\n",
		    lens[l], bench_median(j, 5), bench_median(s, 5));
	}
}

/* ---- the goals, against this run ---- */

static struct result *find(struct result *res, int nkinds, const char *name)
{
	int i;

	for (i = 0; i < nkinds; i++)
		if (!strcmp(res[i].kind->name, name))
			return &res[i];
	return NULL;
}

static void goals(struct result *res, int nkinds, u64 n)
{
	struct result *blk = find(res, nkinds, "kbloom blocked, batched");
	struct result *bpf = find(res, nkinds,
				  "BPF bloom map, from a BPF program (bpf_loop)");
	double q;

	if (!blk)
		return;
	q = blk->present_ns > blk->absent_ns ? blk->present_ns : blk->absent_ns;
	if (n >= 50000000) {
		out("- batched query, %llu keys: %.1f ns present, %.1f ns absent (goal: at most 15 ns): %s\n",
		    (unsigned long long)n, blk->present_ns, blk->absent_ns,
		    q <= 15 ? "met" : "NOT met");
		out("- batched add, %llu keys: %.1f ns, %.2fx the query (goal: at most 2x): %s\n",
		    (unsigned long long)n, blk->add_ns, blk->add_ns / q,
		    blk->add_ns <= 2 * q ? "met" : "NOT met");
		if (bpf)
			out("- against the BPF map from a BPF program: query %.1fx faster (present), %.1fx (absent) (goal: about 20x)\n",
			    bpf->present_ns / blk->present_ns,
			    bpf->absent_ns / blk->absent_ns);
	} else if (n <= 1000000) {
		out("- batched query in the caches, %llu keys: %.1f ns present, %.1f ns absent (goal: at most 12 ns): %s\n",
		    (unsigned long long)n, blk->present_ns, blk->absent_ns,
		    q <= 12 ? "met" : "NOT met");
	}
	if (bpf)
		out("- memory, %llu keys: kbloom blocked %.2f MiB (what sizing says, in whole 2 MiB pages where that costs at most 1/16), the BPF map %.2f MiB (a power of two)\n",
		    (unsigned long long)n, blk->bytes / 1048576.0,
		    bpf->bytes / 1048576.0);
}

int main(int argc, char **argv)
{
	static const u64 def_sizes[] = { 1000000, 10000000, 50000000 };
	static const u32 key_lens[] = { 8, 13 };
	const struct bench_kind *kinds[MAXKINDS], *peer;
	static struct result all[32][MAXKINDS];
	u64 conf_n[32];
	u32 conf_len[32];
	int nconf = 0;
	const char *dir = NULL, *why;
	u64 sizes[16];
	int nsizes = 0, nkinds = 0, s, l, opt, bad = 0;
	const char *only[8];
	int nonly = 0, keylen = 0, j;
	bool quick = false;
	char path[4096];
	size_t i;

	while ((opt = getopt(argc, argv, "o:qk:l:")) != -1) {
		if (opt == 'o') {
			dir = optarg;
		} else if (opt == 'q') {
			quick = true;
		} else if (opt == 'k' && nonly < 8) {
			only[nonly++] = optarg;
		} else if (opt == 'l') {
			keylen = atoi(optarg);
		} else {
			fprintf(stderr, "usage: kbloom_bench [-o DIR] [-q] [-k KIND]... [-l LEN] [KEYS...]\n");
			return 2;
		}
	}
	for (; optind < argc && nsizes < 16; optind++)
		sizes[nsizes++] = strtoull(argv[optind], NULL, 10);
	if (!nsizes)
		for (s = 0; s < 3; s++)
			sizes[nsizes++] = def_sizes[s];
	if (dir) {
		snprintf(path, sizeof(path), "%s/bench.md", dir);
		md = fopen(path, "w");
		snprintf(path, sizeof(path), "%s/bench.dat", dir);
		dat = fopen(path, "w");
		if (!md || !dat) {
			perror(path);
			return 2;
		}
	}

	for (i = 0; i < NKB; i++)
		kinds[nkinds++] = &kb_kinds[i];
	out("## make bench\n\n");
	if (!quick) {
		ref_syscalls();
		ref_thp();
		ref_memory(true);
		ref_memory(false);
		ref_rmw();
		ref_hashes();
	}
	peer = bench_libbloom_kind(&why);
	if (peer)
		kinds[nkinds++] = peer;
	else
		out("- libbloom: %s\n", why);
	peer = bench_bpf_kind(false, &why);
	if (peer) {
		kinds[nkinds++] = peer;
		kinds[nkinds++] = bench_bpf_kind(true, &why);
	} else {
		out("- BPF bloom map: %s\n", why);
	}

	/* -k: the kinds asked for only. */
	for (i = 0, j = 0; nonly && i < (size_t)nkinds; i++) {
		for (s = 0; s < nonly; s++)
			if (strstr(kinds[i]->short_name, only[s]))
				break;
		if (s < nonly)
			kinds[j++] = kinds[i];
	}
	if (nonly)
		nkinds = j;
	for (s = 0; s < nsizes; s++) {
		for (l = 0; l < 2; l++) {
			if (keylen && key_lens[l] != (u32)keylen)
				continue;
			conf_n[nconf] = sizes[s];
			conf_len[nconf] = key_lens[l];
			bad |= run_config(all[nconf], kinds, nkinds, sizes[s],
					  key_lens[l]);
			if (key_lens[l] == 8) {
				out("\n");
				goals(all[nconf], nkinds, sizes[s]);
			}
			nconf++;
		}
	}
	if (md)
		fclose(md);
	if (dat) {
		write_dat(all, nconf, conf_n, conf_len, nkinds);
		fclose(dat);
	}
	return bad;
}
