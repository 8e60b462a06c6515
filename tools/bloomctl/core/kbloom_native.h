/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What kmod/kbloom_core.h includes when the core is built into bloomctl:
 * tools/native/kbloom_native.h, the kernel API in userspace, unchanged on
 * 64-bit hosts.
 *
 * i386 (bloomctl32, which tests the module's compat ioctls) has no
 * unsigned __int128, which that header's mul_u64_u64_shr() and
 * mul_u64_u64_div_u64() use. Only for such a target, those two are renamed
 * out of the way (an __int128 spelled long long just lets their unused
 * bodies parse) and given 32-bit-safe bodies with the kernel's semantics,
 * as lib/math/div64.c has them for 32-bit kernels.
 */
#ifndef _BLOOMCTL_KBLOOM_NATIVE_H
#define _BLOOMCTL_KBLOOM_NATIVE_H

#ifdef __SIZEOF_INT128__
#include "../../native/kbloom_native.h"
#else
#define __int128 long long
#define mul_u64_u64_shr		kbloom_native_mul_u64_u64_shr_unused
#define mul_u64_u64_div_u64	kbloom_native_mul_u64_u64_div_u64_unused
#include "../../native/kbloom_native.h"
#undef mul_u64_u64_div_u64
#undef mul_u64_u64_shr
#undef __int128

/* The 128-bit product of a and b, as two 64-bit halves. */
static inline void kbloom_mul_64x64(u64 a, u64 b, u64 *hi, u64 *lo)
{
	u64 a0 = (u32)a, a1 = a >> 32, b0 = (u32)b, b1 = b >> 32;
	u64 p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
	u64 mid = (p00 >> 32) + (u32)p01 + (u32)p10;

	*lo = (mid << 32) | (u32)p00;
	*hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* (a * b) >> shift, 0 < shift <= 64, truncated to 64 bits. */
static inline u64 mul_u64_u64_shr(u64 a, u64 b, unsigned int shift)
{
	u64 hi, lo;

	kbloom_mul_64x64(a, b, &hi, &lo);
	if (shift == 64)
		return hi;
	return (lo >> shift) | (hi << (64 - shift));
}

/* (a * b) / c, the quotient known to fit in 64 bits. */
static inline u64 mul_u64_u64_div_u64(u64 a, u64 b, u64 c)
{
	u64 hi, lo, q = 0, r = 0;
	int i;

	kbloom_mul_64x64(a, b, &hi, &lo);
	/* Restoring division, a bit at a time: only sizing calls this. */
	for (i = 127; i >= 0; i--) {
		u64 bit = i >= 64 ? hi >> (i - 64) & 1 : lo >> i & 1;
		bool carry = r >> 63;

		r = r << 1 | bit;
		q <<= 1;
		if (carry || r >= c) {
			r -= c;
			q |= 1;
		}
	}
	return q;
}
#endif /* __SIZEOF_INT128__ */

#endif /* _BLOOMCTL_KBLOOM_NATIVE_H */
