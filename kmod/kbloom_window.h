/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Time-windowed filters: G generations of one filter's storage that
 * rotate, so that "seen before" means "seen in the last W". See
 * "Time-windowed filters" in include/uapi/linux/kbloom.h.
 */
#ifndef _KBLOOM_WINDOW_H
#define _KBLOOM_WINDOW_H

#include <linux/ktime.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/rwsem.h>
#include <linux/workqueue.h>
#include <uapi/linux/kbloom.h>

#include "kbloom_core.h"

struct kbloom_occupancy;

/**
 * struct kbloom_slice - one generation
 * @core: its storage.
 * @occ: its occupancy counters.
 * @keep_until: CLOCK_MONOTONIC time before which no timed rotation may
 *	drop it: W (G - 1) / G after it stopped being the newest, so that a
 *	key added up to then is kept as long as promised; under the
 *	window's @lock. 0 for a generation that was never the newest since
 *	the window started.
 */
struct kbloom_slice {
	struct kbloom_core core;
	struct kbloom_occupancy __percpu *occ;
	ktime_t keep_until;
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
 * @fill_every: with rotate-at-fill, how many positions a CPU sets between
 *	two looks at the newest generation's fill.
 * @view: the current view, read under rcu_read_lock() by every operation.
 * @views: the two views @view alternates between: a rotation builds the
 *	next one in the view readers no longer see.
 * @lock: serialises rotations with each other and with whole-filter
 *	operations that hold no user page meanwhile (clear, import).
 * @copying: held for reading by exports while they copy the generations
 *	to userspace, which may fault and take its time, and for writing by
 *	rotations (under @lock): an export waits for a rotation under way and
 *	holds off the next one, so that it copies one set of generations.
 * @work: runs rotations: when the period is due, when asked to
 *	(@requests), or when the newest generation is full.
 * @requests: KBLOOM_WIN_* bits: why @work was kicked before its time.
 * @started: the timer runs (the filter is published); under @lock.
 * @deadline: jiffies of the next periodic rotation; under @lock.
 * @rotations: rotations done; read without the lock.
 * @newest_since: jiffies when the newest generation became the newest;
 *	read without the lock.
 * @age: how old the newest generation already is when the timer starts
 *	(an imported image's), in jiffies; set before kbloom_window_start().
 * @on_full: called, with @on_full_ctx, after a rotation that the newest
 *	generation's fill asked for, while the window runs (process context).
 * @on_full_ctx: its argument.
 * @slices: the G generations' storage, in no particular order.
 */
struct kbloom_window {
	u32 generations;
	u32 window_ms;
	u64 fill_limit;
	u64 fill_every;
	struct kbloom_view __rcu *view;
	struct kbloom_view views[2];
	struct mutex lock;	/* see above */
	struct rw_semaphore copying;
	struct delayed_work work;
	unsigned long requests;
	bool started;
	unsigned long deadline;
	atomic64_t rotations;
	unsigned long newest_since;
	unsigned long age;
	void (*on_full)(void *ctx);
	void *on_full_ctx;
	struct kbloom_slice slices[];
};

/* struct kbloom_window @requests bits. */
#define KBLOOM_WIN_ROTATE	0	/* KBLOOM_IOC_ROTATE asked for one */
#define KBLOOM_WIN_FULL		1	/* the newest generation looked full */

struct kbloom_window *kbloom_window_new(u32 generations, u32 window_ms,
					u64 fill_limit, u64 nbits,
					u32 nhashes, u32 flags,
					const u32 *seed, size_t storage);
void kbloom_window_free(struct kbloom_window *win);
void kbloom_window_set_age(struct kbloom_window *win, u32 age_ms);
void kbloom_window_start(struct kbloom_window *win);
void kbloom_window_stop(struct kbloom_window *win);
void kbloom_window_rotate(struct kbloom_window *win);
void kbloom_window_rotate_now(struct kbloom_window *win);
bool kbloom_window_do(struct kbloom_window *win, enum kbloom_op op,
		      const void *key, u32 len);
struct kbloom_slice *kbloom_window_slice(struct kbloom_window *win, u32 i);
struct kbloom_core *kbloom_window_storage(struct kbloom_window *win, u32 i);
int kbloom_window_copy_begin(struct kbloom_window *win, u32 *age_ms);
void kbloom_window_copy_end(struct kbloom_window *win);
void kbloom_window_info(struct kbloom_window *win, u64 *rotations,
			u64 *newest_age_ms);

#endif /* _KBLOOM_WINDOW_H */
