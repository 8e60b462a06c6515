/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kbloom batch: one operation on many keys, their cache misses overlapped.
 * Above kbloom_core.
 */
#ifndef _KBLOOM_BATCH_H
#define _KBLOOM_BATCH_H

#include "kbloom_core.h"

u32 kbloom_core_do_batch(struct kbloom_core *core, enum kbloom_op op,
			 const u8 *keys, const u32 *lens, u32 n, u8 *results,
			 struct kbloom_delta *d);

#endif /* _KBLOOM_BATCH_H */
