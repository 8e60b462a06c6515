/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the KUnit suites and the native tests: a key stream,
 * a filter's counts and the golden vectors.
 */
#ifndef _KBLOOM_TEST_UTIL_H
#define _KBLOOM_TEST_UTIL_H

#include "../kbloom_core.h"
#include "kbloom_vectors.h"

/*
 * Key @i of stream @s: 8 to 23 bytes, distinct for every (s, i) with i
 * below 2^32: the first 8 bytes are i and s.
 */
static inline u32 kbloom_test_key(u8 *buf, u64 s, u64 i)
{
	u64 x = (s * 0x9e3779b97f4a7c15ULL) ^ (i * 0xbf58476d1ce4e5b9ULL);
	u32 len = 8 + (u32)i % 16, j, w;

	for (j = 8; j < len; j++) {
		x ^= x >> 31;
		x *= 0x94d049bb133111ebULL;
		buf[j] = x >> 56;
	}
	w = i;
	memcpy(buf, &w, 4);
	w = s;
	memcpy(buf + 4, &w, 4);
	return len;
}

static inline u64 kbloom_test_weight(const struct kbloom_core *core)
{
	u64 occupied, stuck;

	kbloom_core_count(core, &occupied, &stuck);
	return occupied;
}

static inline u64 kbloom_test_saturated(const struct kbloom_core *core)
{
	u64 occupied, stuck;

	kbloom_core_count(core, &occupied, &stuck);
	return stuck;
}

/*
 * The build's hash and positions against the golden vectors, which
 * tools/native/kbloom_vectors_gen.c printed from the native build.
 *
 * Return: vector * 64 + the first position that differs (32: the hash),
 * or -1.
 */
static inline int kbloom_test_vectors(void)
{
	u64 pos[KBLOOM_CORE_MAX_HASHES];
	struct kbloom_core core;
	u32 i, j;

	for (i = 0; i < sizeof(kbloom_vectors) / sizeof(*kbloom_vectors); i++) {
		const struct kbloom_vector *v = &kbloom_vectors[i];

		kbloom_core_init(&core, NULL, v->nbits, v->nhashes, v->flags,
				 v->seed);
		if (kbloom_core_hash(&core, v->key, v->len) != v->hash)
			return i * 64 + 32;
		kbloom_core_positions(&core, v->key, v->len, pos);
		for (j = 0; j < v->nhashes; j++)
			if (pos[j] != v->pos[j])
				return i * 64 + j;
	}
	return -1;
}

#endif /* _KBLOOM_TEST_UTIL_H */
