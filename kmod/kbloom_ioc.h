/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the ioctl commands of /dev/bloom share (kbloom_dev.c says how they
 * are laid out): checks of an argument, and what INFO, EXPORT, CREATE and
 * IMPORT report of a filter's change tracking.
 */
#ifndef _KBLOOM_IOC_H
#define _KBLOOM_IOC_H

#include <linux/string.h>
#include <linux/types.h>

#include "kbloom_filter.h"
#include "kbloom_gen.h"

static inline bool kbloom_zeroed(const void *p, size_t size)
{
	return !memchr_inv(p, 0, size);
}

/* What INFO and EXPORT report of a generation's change tracking. */
static inline u32 kbloom_track_flags(struct kbloom_gen *gen)
{
	return kbloom_gen_tracking(gen) ? KBLOOM_CREATE_TRACK_CHANGES : 0;
}

static inline bool kbloom_filter_tracking(struct kbloom_filter *filter)
{
	struct kbloom_gen *gen = kbloom_gen_get(filter);
	bool tracking = kbloom_gen_tracking(gen);

	kbloom_gen_put(gen);
	return tracking;
}

#endif /* _KBLOOM_IOC_H */
