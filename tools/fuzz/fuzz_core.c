// SPDX-License-Identifier: GPL-2.0
/*
 * Harness (c): the kernel's own image validation, kmod/kbloom_core.c built
 * natively: kbloom_params_valid() (the rule CREATE and IMPORT share),
 * kbloom_core_init() and kbloom_core_padding_clear() over a payload, as
 * KBLOOM_IOC_IMPORT runs them on what userspace hands it.
 *
 * Input, little-endian: bits (8 bytes), hashes (4), flags (4: core flags,
 * counting, SipHash and blocked among them), capacity (8), fpr_ppb (4),
 * the seed (16), then the payload. Besides the sanitizers' checks, it
 * compares:
 *  - the sizing with the formulas in floating point, within rounding;
 *  - kbloom_params_valid() with the rules as the uapi words them, and a
 *    blocked filter's sizing with its formula in doubles;
 *  - kbloom_core_padding_clear() with a bytewise reading of the padding;
 *  - every probe position of a key (taken from the input) with [0, m).
 */
#include <math.h>
#include <stdbool.h>

#include "fuzz.h"
#include "kbloom_core.h"

#define HEADER_BYTES	44
/* Payloads beyond this are skipped: the rules do not depend on size. */
#define MAX_BYTES	(1U << 20)

/* kbloom_size() against m = ceil(-n ln(eps) / (ln 2)^2), k = round(m/n ln 2). */
static void check_size(u64 n, u32 ppb)
{
	double m_ref, k_ref;
	u64 m;
	u32 k;

	if (kbloom_size(n, ppb, &m, &k)) {
		/* Refused: bad arguments, or more than the core's bits. */
		CHECK(!n || !ppb || ppb >= 1000000000U ||
		      -(double)n * log(ppb / 1e9) / (M_LN2 * M_LN2) >
		      KBLOOM_CORE_MAX_BITS * (1 - 1e-6));
		return;
	}
	m_ref = ceil(-(double)n * log(ppb / 1e9) / (M_LN2 * M_LN2));
	if (m_ref < KBLOOM_CORE_MIN_BITS)
		m_ref = KBLOOM_CORE_MIN_BITS;
	CHECK(m >= KBLOOM_CORE_MIN_BITS && m <= KBLOOM_CORE_MAX_BITS);
	/*
	 * Bits per key in 32.32 fixed point: log2(1/eps) from two truncated
	 * logarithms (off by under 2^-32), times log2(e) truncated to 32
	 * bits (off by under 2^-32, times log2(1/eps) < 30). So m is within
	 * n * 32 * 2^-32 of the real value, plus the double's own rounding:
	 * e.g. n = 1677721600 at 3e-9 gives 68528460013, not 68528460009.
	 */
	CHECK(fabs((double)m - m_ref) <= 2 + m_ref * 1e-12 + n * 0x1p-27);
	k_ref = round((double)m / (double)n * M_LN2);
	k_ref = k_ref < 1 ? 1 : k_ref > KBLOOM_CORE_MAX_HASHES ?
		KBLOOM_CORE_MAX_HASHES : k_ref;
	CHECK(k >= 1 && k <= KBLOOM_CORE_MAX_HASHES);
	CHECK(fabs((double)k - k_ref) <= 1);
}

/*
 * Blocked sizing: whole blocks, and the rate it promises kept by the
 * formula in doubles: Poisson(n B / m) keys in a block, and a block that
 * took t draws errs with sum over d of P(k query draws hit d distinct
 * cells) P(t draws cover d given cells), each by its recurrence.
 */
static void check_blocked_size(u64 n, u32 ppb, u32 flags, u64 m, u32 k)
{
	double cells = flags & KBLOOM_CORE_COUNTING ? 128 : 512;
	double lambda = n * cells / m, pd[33] = { 1 }, g[33] = { 1 }, sum = 0;
	double i, f;
	u64 t = 0;
	u32 j, d;

	CHECK(m % (u64)cells == 0);
	if ((double)k * n / m >= 48)
		return;		/* certainty: the core says 1 too */
	for (j = 1; j <= k; j++) {
		for (d = j; d >= 1; d--)
			pd[d] = pd[d] * d / cells +
				pd[d - 1] * (cells - d + 1) / cells;
		pd[0] = 0;
	}
	for (i = 0; i < lambda + 40 * sqrt(lambda) + 60; i++) {
		for (; t < k * (u64)i; t++)
			for (d = k; d >= 1; d--)
				g[d] = g[d] * (1 - d / cells) +
				       g[d - 1] * d / cells;
		for (f = 0, d = 1; d <= k; d++)
			f += pd[d] * g[d];
		sum += exp(-lambda + i * log(lambda) - lgamma(i + 1)) * f;
	}
	CHECK(sum <= ppb / 1e9 * (1 + 1e-6) + 1e-15);
}

/* The rule in words: core limits, and a design rate that sizes exactly. */
static bool ref_valid(u64 bits, u32 hashes, u32 flags, u64 cap, u32 ppb)
{
	u64 m;
	u32 k;

	if (bits < KBLOOM_CORE_MIN_BITS || bits > KBLOOM_CORE_MAX_BITS ||
	    !hashes || hashes > KBLOOM_CORE_MAX_HASHES ||
	    flags & ~KBLOOM_CORE_FLAGS)
		return false;
	/* Blocked: whole 64-byte blocks of 512 bits or 128 counters. */
	if (flags & KBLOOM_CORE_BLOCKED &&
	    bits % (flags & KBLOOM_CORE_COUNTING ? 128 : 512))
		return false;
	if (!ppb)
		return true;
	if (!cap || ppb >= 1000000000U ||
	    kbloom_size_flags(cap, ppb, flags, &m, &k))
		return false;
	if (flags & KBLOOM_CORE_BLOCKED)
		check_blocked_size(cap, ppb, flags, m, k);
	return m == bits && k == hashes;
}

/* Padding, byte by byte: every bit from bits * width on must be 0. */
static bool ref_padding_clear(const uint8_t *p, size_t bytes, u64 used)
{
	size_t i;

	for (i = used / 8; i < bytes; i++) {
		uint8_t pad = i * 8 >= used ? 0xff : 0xff << (used - i * 8);

		if (p[i] & pad)
			return false;
	}
	return true;
}

static void check_payload(const uint8_t *data, size_t size, u64 bits,
			  u32 hashes, u32 flags, const u32 seed[4])
{
	size_t bytes = kbloom_core_bytes(bits, flags), klen;
	u64 used = bits * (flags & KBLOOM_CORE_COUNTING ? 4 : 1);
	u64 pos[KBLOOM_CORE_MAX_HASHES];
	struct kbloom_core core;
	unsigned long *bitmap;
	u32 i;

	CHECK(bytes % 8 == 0 && bytes * 8 >= used && bytes * 8 - used < 64);
	if (bytes > MAX_BYTES)
		return;
	bitmap = calloc(1, bytes);
	CHECK(bitmap);
	memcpy(bitmap, data, size < bytes ? size : bytes);
	kbloom_core_init(&core, bitmap, bits, hashes, flags, seed);
	/* Words and bytes agree on a little-endian host, as images assume. */
	if (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
		CHECK(kbloom_core_padding_clear(&core) ==
		      ref_padding_clear((const uint8_t *)bitmap, bytes, used));
	/* A key: whatever follows the payload, else a fixed one. */
	klen = size > bytes ? size - bytes : 0;
	kbloom_core_positions(&core, klen ? data + bytes : (const void *)"k",
			      klen ? klen : 1, pos);
	for (i = 0; i < hashes; i++)
		CHECK(pos[i] < bits);
	free(bitmap);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	u64 bits, capacity;
	u32 hashes, flags, ppb, seed[4];
	bool valid;
	int i;

	if (size < HEADER_BYTES)
		return 0;
	bits = get_unaligned_le64(data);
	hashes = get_unaligned_le32(data + 8);
	flags = get_unaligned_le32(data + 12);
	capacity = get_unaligned_le64(data + 16);
	ppb = get_unaligned_le32(data + 24);
	for (i = 0; i < 4; i++)
		seed[i] = get_unaligned_le32(data + 28 + 4 * i);
	/* Small sizes are where the edges are: fold most inputs there. */
	if (!(flags & 0x80000000U))
		bits %= 1U << 16;
	flags &= ~0x80000000U;
	check_size(capacity, ppb);
	valid = kbloom_params_valid(bits, hashes, flags, capacity, ppb);
	CHECK(valid == ref_valid(bits, hashes, flags, capacity, ppb));
	if (valid)
		check_payload(data + HEADER_BYTES, size - HEADER_BYTES, bits,
			      hashes, flags, seed);
	return 0;
}
