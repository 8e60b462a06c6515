// SPDX-License-Identifier: GPL-2.0
/*
 * bloomctl's window onto kmod/kbloom_core.c, which is compiled into it
 * (against tools/native/kbloom_native.h, through core/kbloom_native.h):
 * the only file of bloomctl that sees the core's header, whose kernel-style
 * names (u64, BIT, min_t) stay out of the rest.
 *
 * The flags taken here are the uapi's (KBLOOM_CREATE_COUNTING,
 * KBLOOM_CREATE_BLOCKED), translated to the core's.
 */
#include <inttypes.h>
#include <stdio.h>

#include <linux/kbloom.h>

#include "kbloom_core.h"
#include "sizing.h"

static u32 core_flags(uint32_t flags)
{
	return (flags & KBLOOM_CREATE_COUNTING ? KBLOOM_CORE_COUNTING : 0) |
	       (flags & KBLOOM_CREATE_BLOCKED ? KBLOOM_CORE_BLOCKED : 0);
}

/**
 * sizing_size() - what KBLOOM_IOC_CREATE makes of --capacity and --fpr
 * @capacity: n.
 * @fpr_ppb: the rate in parts per billion.
 * @flags: KBLOOM_CREATE_BLOCKED (and _COUNTING, whose blocks are 128
 *	counters), or 0.
 * @bits: out: m.
 * @hashes: out: k.
 *
 * Return: 0, or -1 if the module would refuse (m above its 2^36 bits).
 */
int sizing_size(uint64_t capacity, uint32_t fpr_ppb, uint32_t flags,
		uint64_t *bits, uint32_t *hashes)
{
	u64 m;
	u32 k;

	if (kbloom_size_flags(capacity, fpr_ppb, core_flags(flags), &m, &k))
		return -1;
	*bits = m;
	*hashes = k;
	return 0;
}

/* Positions in a block of a blocked filter: 512 bits or 128 counters. */
uint32_t sizing_block_cells(uint32_t flags)
{
	return kbloom_block_cells(core_flags(flags));
}

/* The module's blocked false-positive rate (kbloom_fpr_blocked_q62()). */
double sizing_fpr_blocked(uint64_t bits, uint32_t hashes, uint64_t keys,
			  uint32_t flags)
{
	return (double)kbloom_fpr_blocked_q62(bits, hashes, keys,
					      core_flags(flags)) /
	       0x1p62;
}

/*
 * The payload's size, KBLOOM_IOC_EXPORT's payload_len: the core's storage.
 * UINT64_MAX when that does not fit in this bloomctl's size_t (the core
 * then says SIZE_MAX, which no allocator grants).
 */
uint64_t sizing_bytes(uint64_t bits, uint32_t flags)
{
	size_t bytes = kbloom_core_bytes(bits, core_flags(flags));

	return bytes == SIZE_MAX ? UINT64_MAX : bytes;
}

/* A windowed filter's per-generation rate: the module's kbloom_window_fpr(). */
uint32_t sizing_window_fpr(uint32_t fpr_ppb, uint32_t generations)
{
	return kbloom_window_fpr(fpr_ppb, generations);
}

/**
 * sizing_params_valid() - would the module create a filter like this?
 * @bits: m.
 * @hashes: k.
 * @flags: KBLOOM_CREATE_COUNTING and KBLOOM_CREATE_BLOCKED bits.
 * @capacity: design n.
 * @fpr_ppb: design rate, 0 if none.
 * @why: out: if not, which rule it breaks.
 * @whylen: its size.
 *
 * kbloom_params_valid(), which CREATE and IMPORT both apply. The reason is
 * worked out here only to explain a refusal.
 *
 * Return: true if valid.
 */
bool sizing_params_valid(uint64_t bits, uint32_t hashes, uint32_t flags,
			 uint64_t capacity, uint32_t fpr_ppb, char *why,
			 size_t whylen)
{
	u64 m;
	u32 k;

	if (kbloom_params_valid(bits, hashes, core_flags(flags), capacity,
				fpr_ppb))
		return true;
	if (flags & KBLOOM_CREATE_BLOCKED &&
	    bits % sizing_block_cells(flags))
		snprintf(why, whylen, "%" PRIu64 " bits are not a whole number of %" PRIu32 "-position blocks",
			 bits, sizing_block_cells(flags));
	else if (!kbloom_core_valid(bits, hashes, core_flags(flags)))
		snprintf(why, whylen, "%" PRIu64 " bits, %" PRIu32 " hashes are outside the core's limits",
			 bits, hashes);
	else if (!capacity)
		snprintf(why, whylen, "a design rate (fpr_ppb %" PRIu32 ") without a capacity",
			 fpr_ppb);
	else if (kbloom_size_flags(capacity, fpr_ppb, core_flags(flags), &m,
				   &k))
		snprintf(why, whylen, "capacity %" PRIu64 " at fpr_ppb %" PRIu32 " needs more than %llu bits",
			 capacity, fpr_ppb, (unsigned long long)KBLOOM_MAX_BITS);
	else
		snprintf(why, whylen, "capacity %" PRIu64 " at fpr_ppb %" PRIu32 " sizes a filter of %" PRIu64 " bits and %" PRIu32 " hashes, not %" PRIu64 " bits and %" PRIu32,
			 capacity, fpr_ppb, (uint64_t)m, k, bits, hashes);
	return false;
}

/**
 * sizing_padding_clear() - the core's check of a payload's padding
 * @payload: sizing_bytes(@bits, @flags) bytes, 8-byte aligned.
 * @bits: m.
 * @flags: KBLOOM_CREATE_COUNTING or 0.
 *
 * kbloom_core_padding_clear() over the payload as the module sees it
 * after KBLOOM_IOC_IMPORT. The payload's byte order is the core's word
 * order only on a little-endian host, so elsewhere this is not called.
 *
 * Return: true if every bit past the positions is zero.
 */
bool sizing_padding_clear(const void *payload, uint64_t bits, uint32_t flags)
{
	static const u32 seed[4];
	struct kbloom_core core;

	kbloom_core_init(&core, (unsigned long *)payload, bits, 1,
			 core_flags(flags), seed);
	return kbloom_core_padding_clear(&core);
}
