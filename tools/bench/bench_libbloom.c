// SPDX-License-Identifier: GPL-2.0
/*
 * make bench's peer in userspace: libbloom (Debian's libbloom-dev), a
 * plain Bloom filter sized by its own formula, k positions by double
 * hashing of MurmurHash2.
 */
#include "bench.h"

#ifdef BENCH_LIBBLOOM
#include <bloom.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int lb_create(struct bench_filter *f, const struct bench_keys *keys,
		     uintptr_t arg)
{
	static char detail[64];
	struct bloom *b = calloc(1, sizeof(*b));

	(void)arg;

	if (!b || keys->n > INT32_MAX ||
	    bloom_init(b, (int)keys->n, BENCH_FPR)) {
		free(b);
		return -1;
	}
	/* Touched before the clock starts, as every other kind's storage. */
	memset(b->bf, 0, (size_t)b->bytes);
	f->priv = b;
	f->bytes = (size_t)b->bytes;
	snprintf(detail, sizeof(detail), "m = %d, k = %d", b->bits, b->hashes);
	f->detail = detail;
	return 0;
}

static void lb_destroy(struct bench_filter *f)
{
	bloom_free(f->priv);
	free(f->priv);
}

static void lb_add(struct bench_filter *f, const struct bench_keys *keys,
		   uint64_t first, uint64_t count)
{
	const uint8_t *p = keys->buf + first * keys->len;
	uint64_t i;

	for (i = 0; i < count; i++, p += keys->len)
		bloom_add(f->priv, p, (int)keys->len);
}

static uint64_t lb_query(struct bench_filter *f, const struct bench_keys *keys,
			 uint64_t first, uint64_t count)
{
	const uint8_t *p = keys->buf + first * keys->len;
	uint64_t i, hits = 0;

	for (i = 0; i < count; i++, p += keys->len)
		hits += bloom_check(f->priv, p, (int)keys->len) == 1;
	return hits;
}

static const struct bench_kind lb_kind = {
	.name = "libbloom 1.6, one key per call",
	.short_name = "libbloom",
	.create = lb_create,
	.destroy = lb_destroy,
	.add = lb_add,
	.query = lb_query,
};

const struct bench_kind *bench_libbloom_kind(const char **why)
{
	(void)why;
	return &lb_kind;
}
#else
const struct bench_kind *bench_libbloom_kind(const char **why)
{
	*why = "not built (apt-get install libbloom-dev)";
	return NULL;
}
#endif
