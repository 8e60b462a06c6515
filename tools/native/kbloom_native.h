/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Just enough of the kernel's API for kmod/kbloom_core.c to build as a
 * userspace object: the types, the bitops with their atomicity, jhash's
 * mixing macros and the 64-bit math helpers, each with the kernel's exact
 * semantics (jhash's macros are copied verbatim from include/linux/jhash.h).
 * The golden-vector tests run against both builds and prove they agree.
 */
#ifndef _KBLOOM_NATIVE_H
#define _KBLOOM_NATIVE_H

#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint8_t u8;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;

#define BIT(nr)			(1UL << (nr))
#define BIT_ULL(nr)		(1ULL << (nr))
#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define DIV_ROUND_UP_ULL(n, d)	DIV_ROUND_UP((unsigned long long)(n), (d))
#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, val)	__atomic_store_n(&(x), (val), __ATOMIC_RELAXED)
#define BITS_PER_LONG		(sizeof(unsigned long) * CHAR_BIT)
#define BIT_WORD(nr)		((nr) / BITS_PER_LONG)
#define BIT_MASK(nr)		(1UL << ((nr) % BITS_PER_LONG))

#define fallthrough		__attribute__((__fallthrough__))
#define prefetch(p)		__builtin_prefetch(p)
#define noinline_for_stack	__attribute__((__noinline__))
#define likely(x)		__builtin_expect(!!(x), 1)
#ifndef __always_inline
#define __always_inline		inline __attribute__((__always_inline__))
#endif
#define cond_resched()		do { } while (0)
/* No signals to honour in a userspace loop over a filter. */
#define current			NULL
#define fatal_signal_pending(p)	((void)(p), 0)

#define min_t(type, a, b)	((type)(a) < (type)(b) ? (type)(a) : (type)(b))
#define max_t(type, a, b)	((type)(a) > (type)(b) ? (type)(a) : (type)(b))
#define clamp_t(type, v, lo, hi) min_t(type, max_t(type, v, lo), hi)
#define check_mul_overflow(a, b, d) __builtin_mul_overflow(a, b, d)

static inline size_t array_size(u64 a, size_t b)
{
	size_t r;

	if (a > SIZE_MAX || __builtin_mul_overflow((size_t)a, b, &r))
		return SIZE_MAX;
	return r;
}

static inline u32 rol32(u32 w, unsigned int s)
{
	return (w << (s & 31)) | (w >> ((-s) & 31));
}

static inline u64 rol64(u64 w, unsigned int s)
{
	return (w << (s & 63)) | (w >> ((-s) & 63));
}

static inline int fls64(u64 x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

static inline u32 get_unaligned_le16(const void *p)
{
	const u8 *b = p;

	return b[0] | (u32)b[1] << 8;
}

static inline u32 get_unaligned_le32(const void *p)
{
	const u8 *b = p;

	return b[0] | (u32)b[1] << 8 | (u32)b[2] << 16 | (u32)b[3] << 24;
}

static inline u64 mul_u64_u64_shr(u64 a, u64 b, unsigned int shift)
{
	return (u64)(((unsigned __int128)a * b) >> shift);
}

static inline u64 mul_u64_u64_div_u64(u64 a, u64 b, u64 c)
{
	return (u64)(((unsigned __int128)a * b) / c);
}

static inline u64 div64_u64(u64 a, u64 b)
{
	return a / b;
}

/* Atomic like the kernel's: set_bit() and test_and_set_bit() are locked. */
static inline void set_bit(u64 nr, unsigned long *addr)
{
	__atomic_fetch_or(&addr[BIT_WORD(nr)], BIT_MASK(nr), __ATOMIC_RELAXED);
}

static inline bool test_and_set_bit(u64 nr, unsigned long *addr)
{
	return __atomic_fetch_or(&addr[BIT_WORD(nr)], BIT_MASK(nr),
				 __ATOMIC_SEQ_CST) & BIT_MASK(nr);
}

static inline bool test_bit(u64 nr, const unsigned long *addr)
{
	return __atomic_load_n(&addr[BIT_WORD(nr)], __ATOMIC_RELAXED) &
	       BIT_MASK(nr);
}

/* The kernel's set_mask_bits() with no bits to clear: an atomic OR. */
#define set_mask_bits(ptr, mask, bits)					\
	__atomic_fetch_or(ptr, (bits) | 0 * (mask), __ATOMIC_SEQ_CST)

static inline unsigned long xchg(unsigned long *p, unsigned long v)
{
	return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
}

/* Like the kernel's: on failure *old is updated with the current value. */
#define try_cmpxchg(ptr, old, new)					\
	__atomic_compare_exchange_n(ptr, old, new, false, __ATOMIC_SEQ_CST, \
				    __ATOMIC_RELAXED)

/* The index of the lowest set bit of @w, which is not 0. */
static inline unsigned long __ffs(unsigned long w)
{
	return __builtin_ctzl(w);
}

static inline unsigned int hweight_long(unsigned long w)
{
	return __builtin_popcountl(w);
}

/* From include/linux/jhash.h, unchanged. */
#define JHASH_INITVAL		0xdeadbeef

#define __jhash_mix(a, b, c)			\
{						\
	a -= c;  a ^= rol32(c, 4);  c += b;	\
	b -= a;  b ^= rol32(a, 6);  a += c;	\
	c -= b;  c ^= rol32(b, 8);  b += a;	\
	a -= c;  a ^= rol32(c, 16); c += b;	\
	b -= a;  b ^= rol32(a, 19); a += c;	\
	c -= b;  c ^= rol32(b, 4);  b += a;	\
}

#define __jhash_final(a, b, c)			\
{						\
	c ^= b; c -= rol32(b, 14);		\
	a ^= c; a -= rol32(c, 11);		\
	b ^= a; b -= rol32(a, 25);		\
	c ^= b; c -= rol32(b, 16);		\
	a ^= c; a -= rol32(c, 4);		\
	b ^= a; b -= rol32(a, 14);		\
	c ^= b; c -= rol32(b, 24);		\
}

/*
 * SipHash-2-4's rounds and constants, from include/linux/siphash.h and
 * lib/siphash.c, unchanged: the core's inline SipHash is built on them.
 */
#define SIPHASH_PERMUTATION(a, b, c, d) ( \
	(a) += (b), (b) = rol64((b), 13), (b) ^= (a), (a) = rol64((a), 32), \
	(c) += (d), (d) = rol64((d), 16), (d) ^= (c), \
	(a) += (d), (d) = rol64((d), 21), (d) ^= (a), \
	(c) += (b), (b) = rol64((b), 17), (b) ^= (c), (c) = rol64((c), 32))

#define SIPHASH_CONST_0 0x736f6d6570736575ULL
#define SIPHASH_CONST_1 0x646f72616e646f6dULL
#define SIPHASH_CONST_2 0x6c7967656e657261ULL
#define SIPHASH_CONST_3 0x7465646279746573ULL

static inline u64 get_unaligned_le64(const void *p)
{
	const u8 *b = p;

	return (u64)get_unaligned_le32(b) | (u64)get_unaligned_le32(b + 4) << 32;
}

#endif /* _KBLOOM_NATIVE_H */
