/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the KUnit suites and the native tests: the whole-filter
 * operations with their transition counts checked against a full count, so
 * that every test that clears, merges or counts also proves the counters
 * the module keeps instead of scanning ("bits set", "saturated") exact.
 */
#ifndef _KBLOOM_TEST_UTIL_H
#define _KBLOOM_TEST_UTIL_H

#include "../kbloom_core.h"

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
 * Clear, and return true if the transitions reported are exactly what
 * the filter held: every occupied position freed, every stuck counter
 * reset.
 */
static inline bool kbloom_test_clear(struct kbloom_core *core)
{
	struct kbloom_delta d = {};
	u64 occupied, stuck;

	kbloom_core_count(core, &occupied, &stuck);
	if (kbloom_core_clear(core, &d))
		return false;
	return d.cleared == occupied && d.unstuck == stuck && !d.set &&
	       !d.stuck;
}

/* Merge, and return true if the transitions reported match the counts. */
static inline bool kbloom_test_merge(struct kbloom_core *dst,
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

static inline void kbloom_test_compare(const struct kbloom_core *a,
				       const struct kbloom_core *b,
				       u64 *both, u64 *either)
{
	kbloom_core_compare(a, b, both, either);
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

/* Index of the first reference vector kbloom_siphash64() gets wrong, or -1. */
static inline int kbloom_test_siphash_ref(void)
{
	u8 msg[16];
	int i;

	for (i = 0; i < 16; i++)
		msg[i] = i;
	for (i = 0; i < 16; i++)
		if (kbloom_siphash64(msg, i, kbloom_siphash_ref_seed) !=
		    kbloom_siphash_ref[i])
			return i;
	return -1;
}

/*
 * The inline SipHash of the hot paths against siphash() (the kernel's, or
 * the native build's) at each of 8 offsets (lib/siphash.c reads aligned
 * and unaligned keys apart): every length up to 300 bytes, past 256 where
 * the length byte of the last block wraps, and the 8 longest up to @max.
 * @buf holds @max + 8 bytes; @max is at least 300.
 *
 * Return: length * 8 + offset of the first key that differs, or -1.
 */
static inline int kbloom_test_siphash_any(u8 *buf, u32 max)
{
	static const u32 seed[4] = { 0x01234567, 0x89abcdef, 0xfedcba98,
				     0x76543210 };
	siphash_key_t key = {{ (u64)seed[1] << 32 | seed[0],
			       (u64)seed[3] << 32 | seed[2] }};
	u32 len, off, i;

	for (i = 0; i < max + 8; i++)
		buf[i] = i * 37 + 11;
	for (len = 0; len <= max; len = len == 300 ? max - 7 : len + 1)
		for (off = 0; off < 8; off++)
			if (kbloom_siphash64(buf + off, len, seed) !=
			    siphash(buf + off, len, &key))
				return len * 8 + off;
	return -1;
}

#endif /* _KBLOOM_TEST_UTIL_H */
