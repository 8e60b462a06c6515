/* SPDX-License-Identifier: GPL-2.0 */
/*
 * make bench: the filters it times side by side, each behind the same
 * few calls (kbloom_bench.c is the driver; bench_libbloom.c and
 * bench_bpf.c are the peers).
 */
#ifndef _KBLOOM_BENCH_H
#define _KBLOOM_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/*
 * The keys of one configuration, all @len bytes: key i is bench_key(),
 * the keys [0, n) are added, [n, 2n) are never added (the absent keys
 * that give the false-positive rate).
 */
struct bench_keys {
	const uint8_t *buf;	/* key i at buf + i * len, i < 2n */
	uint32_t len;		/* 8 or 13 */
	uint64_t n;
};

/*
 * Key @i: its index little-endian, then (13-byte keys) the five bytes of
 * an IPv4 5-tuple's tail (BENCH_KEY_TAIL: 10.0.0.1, TCP). The BPF
 * program builds the same bytes from the index (bench_bpf.bpf.c).
 */
#define BENCH_KEY_TAIL	{ 10, 0, 0, 1, 6 }

static inline void bench_key(uint8_t *p, uint64_t i, uint32_t len)
{
	static const uint8_t tail[] = BENCH_KEY_TAIL;
	uint32_t b;

	for (b = 0; b < 8; b++)
		p[b] = (uint8_t)(i >> (8 * b));
	for (b = 8; b < len; b++)
		p[b] = tail[b - 8];
}

/* CLOCK_MONOTONIC in nanoseconds, for the benches' timings. */
static inline double bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The median of @n timings (sorts them). */
static inline double bench_median(double *v, int n)
{
	qsort(v, n, sizeof(*v), bench_cmp_double);
	return v[n / 2];
}

/* The false-positive rate every filter is sized for: 1%. */
#define BENCH_FPR	0.01

/*
 * A filter kind. create() sizes a filter for @n keys at BENCH_FPR, as its
 * own sizing does, given the kind's arg; add() and query() work on keys
 * [first, first + count) and query() returns how many tested present. fill() (optional) adds
 * keys untimed, for a kind too slow to add them all in the time taken
 * (one bpf() per key); then only max_timed keys are timed.
 */
struct bench_filter {
	void *priv;
	size_t bytes;		/* the filter's memory, as measured */
	const char *detail;	/* m, k and the like, for the table */
};

struct bench_kind {
	const char *name;
	const char *short_name;	/* for the plot's key */
	uint64_t max_timed;	/* 0: all keys */
	uintptr_t arg;		/* the kind's own: kbloom's flags */
	int (*create)(struct bench_filter *f, const struct bench_keys *keys,
		      uintptr_t arg);
	void (*destroy)(struct bench_filter *f);
	void (*add)(struct bench_filter *f, const struct bench_keys *keys,
		    uint64_t first, uint64_t count);
	void (*fill)(struct bench_filter *f, const struct bench_keys *keys,
		     uint64_t first, uint64_t count);
	uint64_t (*query)(struct bench_filter *f, const struct bench_keys *keys,
			  uint64_t first, uint64_t count);
};

/*
 * The peers register themselves here; a peer not built (its library
 * missing) gives NULL and says why in *why. The BPF map's: from a BPF
 * program, or (@syscall) one bpf() per key.
 */
const struct bench_kind *bench_libbloom_kind(const char **why);
const struct bench_kind *bench_bpf_kind(bool syscall, const char **why);

#endif /* _KBLOOM_BENCH_H */
