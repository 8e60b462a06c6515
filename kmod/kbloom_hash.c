// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom hashing: a key's 64-bit hash, and from it the key's probe
 * sequence and positions. Built into kbloom.ko and, unchanged, into the
 * native tests.
 */

#include "kbloom_hash.h"

/**
 * kbloom_hash64() - 64-bit hash of a key, one pass
 * @key: the key bytes.
 * @len: its length.
 * @seed: two secret seed words.
 *
 * This is jhash (the kernel's __jhash_mix and __jhash_final, unchanged)
 * carried to 64 bits the way Bob Jenkins' hashlittle2() does it: the second
 * seed word perturbs c and both final words b and c are returned. A single
 * 32-bit hash caps accuracy at large n (two keys share all k positions with
 * probability 2^-32, which at n = 10^8 is already felt), and two jhash()
 * calls would read the key twice.
 *
 * Words are read little-endian whatever the CPU, so a filter image saved on
 * one architecture gives the same positions on another. On little-endian
 * machines the low word is exactly jhash(key, len, seed[0]) when seed[1] is
 * 0; the tests check that.
 *
 * Return: b << 32 | c.
 */
u64 kbloom_hash64(const void *key, u32 len, const u32 seed[2])
{
	return __kbloom_hash64(key, len, seed);
}

/**
 * kbloom_siphash64() - SipHash-2-4 of a key
 * @key: the key bytes.
 * @len: its length.
 * @seed: four secret seed words: the 128-bit SipHash key is
 *	seed[0] | seed[1] << 32, seed[2] | seed[3] << 32, so it is the same
 *	numbers, and the same positions, on every architecture.
 *
 * The kernel's siphash() (computed inline, from the kernel's rounds), a
 * keyed pseudo-random function: unlike jhash, someone who does not know
 * the seed cannot find keys that set chosen bits, however many keys they
 * choose (a packet stream) and however many answers they see.
 *
 * Return: the 64-bit SipHash.
 */
u64 kbloom_siphash64(const void *key, u32 len, const u32 seed[4])
{
	return __kbloom_siphash64(key, len, seed);
}

/**
 * kbloom_core_hash() - the filter's 64-bit hash of a key
 * @core: the filter (its hash scheme and seed).
 * @key: the key bytes.
 * @len: its length, at least 1.
 *
 * Return: kbloom_siphash64() or kbloom_hash64(), by the filter's scheme.
 */
u64 kbloom_core_hash(const struct kbloom_core *core, const void *key, u32 len)
{
	return kbloom_core_hash_inline(core, key, len);
}

/**
 * kbloom_core_probe() - hash a key into its probe sequence
 * @core: the filter (for m and the seed).
 * @key: the key bytes.
 * @len: its length, at least 1.
 * @probe: the result.
 *
 * The first position comes from the whole 64-bit hash, the step from the
 * hash rotated by 32 so that it is dominated by the other jhash output
 * word. The step lies in [1, m): never 0.
 */
void kbloom_core_probe(const struct kbloom_core *core, const void *key,
		       u32 len, struct kbloom_probe *probe)
{
	u64 h = kbloom_core_hash(core, key, len);

	probe->x = kbloom_reduce(h, core->nbits);
	probe->y = 1 + kbloom_reduce(rol64(h, 32), core->nbits - 1);
}

/**
 * kbloom_core_positions() - the k bit positions of a key
 * @core: the filter.
 * @key: the key bytes.
 * @len: its length, at least 1.
 * @pos: room for core->nhashes positions, each in [0, m).
 */
void kbloom_core_positions(const struct kbloom_core *core, const void *key,
			   u32 len, u64 *pos)
{
	kbloom_core_fill(core, key, len, pos);
}
