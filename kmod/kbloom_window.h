/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Time-windowed filters: G generations of one filter's storage that
 * rotate, so that "seen before" means "seen in the last W". See
 * "Time-windowed filters" in include/uapi/linux/kbloom.h.
 */
#ifndef _KBLOOM_WINDOW_H
#define _KBLOOM_WINDOW_H

#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/workqueue.h>
#include <uapi/linux/kbloom.h>

#include "kbloom_core.h"

struct kbloom_occupancy;

/* One generation: its storage and its occupancy counters. */
struct kbloom_slice {
	struct kbloom_core core;
	struct kbloom_occupancy __percpu *occ;
};

/* What readers see: the generations in use, newest first. */
struct kbloom_view {
	u32 n;
	struct kbloom_slice *s[KBLOOM_MAX_GENERATIONS];
};

/**
 * struct kbloom_window - the generations of a windowed filter
 * @generations: G.
 * @window_ms: W; 0 if only KBLOOM_IOC_ROTATE rotates.
 * @fill_limit: with rotate-at-fill, the occupied positions at which the
 *	newest generation holds its design capacity; else 0.
 * @view: the current view, read under rcu_read_lock() by every operation.
 * @views: the two views @view alternates between: a rotation builds the
 *	next one in the view readers no longer see.
 * @lock: serialises rotations with each other and with whole-filter
 *	operations (clear, export), which see the generations in one order.
 * @work: the rotation timer (and rotations on demand or on fill).
 * @started: the timer runs (the filter is published); under @lock.
 * @rotations: rotations done.
 * @newest_since: jiffies when the newest generation became the newest.
 * @slices: the G generations' storage, in no particular order.
 */
struct kbloom_window {
	u32 generations;
	u32 window_ms;
	u64 fill_limit;
	struct kbloom_view __rcu *view;
	struct kbloom_view views[2];
	struct mutex lock;	/* see above */
	struct delayed_work work;
	bool started;
	u64 rotations;
	unsigned long newest_since;
	struct kbloom_slice slices[];
};

struct kbloom_window *kbloom_window_new(u32 generations, u32 window_ms,
					u64 fill_limit, u64 nbits,
					u32 nhashes, u32 flags,
					const u32 *seed);
void kbloom_window_free(struct kbloom_window *win);
void kbloom_window_start(struct kbloom_window *win);
void kbloom_window_stop(struct kbloom_window *win);
void kbloom_window_rotate(struct kbloom_window *win);
void kbloom_window_rotate_now(struct kbloom_window *win);
bool kbloom_window_do(struct kbloom_window *win, enum kbloom_op op,
		      const void *key, u32 len);
struct kbloom_slice *kbloom_window_slice(struct kbloom_window *win, u32 i);
void kbloom_window_info(struct kbloom_window *win, u64 *rotations,
			u64 *newest_age_ms);

#endif /* _KBLOOM_WINDOW_H */
