/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kbloom sizing: m and k for n keys at a false-positive rate, and the
 * rates and fills a filter has, in fixed point (no FPU in the kernel).
 * Above kbloom_types.h only.
 */
#ifndef _KBLOOM_SIZING_H
#define _KBLOOM_SIZING_H

#include "kbloom_types.h"

/* Fixed-point numbers in [0, 1] with 32 fractional bits: 1.0 is 1 << 32. */
#define KBLOOM_Q32_ONE		BIT_ULL(32)

int kbloom_size(u64 capacity, u32 fpr_ppb, u64 *nbits, u32 *nhashes);
int kbloom_size_flags(u64 capacity, u32 fpr_ppb, u32 flags, u64 *nbits,
		      u32 *nhashes);
u32 kbloom_block_cells(u32 flags);
u64 kbloom_fpr_blocked_q62(u64 nbits, u32 nhashes, u64 nkeys, u32 flags);
u32 kbloom_optimal_hashes(u64 nbits, u64 capacity);
#ifdef KBLOOM_CORE_TESTS
u64 kbloom_fpr_q32(u64 nbits, u32 nhashes, u64 nkeys);
#endif
u64 kbloom_fill_at(u64 nbits, u32 nhashes, u64 nkeys, u32 flags);
u32 kbloom_window_fpr(u32 fpr_ppb, u32 generations);
u64 kbloom_log2_q32(u64 x);
u64 kbloom_exp_neg_q32(u64 x);

#endif /* _KBLOOM_SIZING_H */
