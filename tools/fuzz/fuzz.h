/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the harnesses share: a check that survives NDEBUG and says what
 * failed, and a small deterministic generator to cut inputs into reads.
 */
#ifndef KBLOOM_FUZZ_H
#define KBLOOM_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: check failed: %s\n",	\
				__FILE__, __LINE__, #cond);		\
			abort();					\
		}							\
	} while (0)

/* xorshift64: the same cuts for the same input, so crashes reproduce. */
static inline uint64_t fuzz_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/*
 * Input handed out in pieces of 1 to @max bytes, as read(2) from a pipe
 * may: readers must not care how their input was cut.
 */
struct fuzz_src {
	const uint8_t *p;
	size_t len;
	size_t max;
	uint64_t rng;
};

static inline ssize_t fuzz_read(void *ctx, void *buf, size_t len)
{
	struct fuzz_src *s = ctx;
	size_t n = 1 + fuzz_next(&s->rng) % s->max;

	if (n > len)
		n = len;
	if (n > s->len)
		n = s->len;
	memcpy(buf, s->p, n);
	s->p += n;
	s->len -= n;
	return n;
}

#endif /* KBLOOM_FUZZ_H */
