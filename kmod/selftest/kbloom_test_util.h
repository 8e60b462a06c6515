/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the KUnit suites and the native tests: a filter's
 * counts, and the inline SipHash against siphash(), the kernel's or the
 * native build's.
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
