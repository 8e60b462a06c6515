/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Generations: a filter's contents, its parameters and seed, swapped as a
 * whole; plain storage or a window of it. Below the filters: a generation
 * reaches its filter only through the callback the filter sets.
 */
#ifndef _KBLOOM_GEN_H
#define _KBLOOM_GEN_H

#include <linux/percpu.h>
#include <linux/refcount.h>
#include <linux/stddef.h>
#include <linux/workqueue.h>
#include <uapi/linux/kbloom.h>

#include "kbloom_core.h"
#include "kbloom_storage.h"
#include "kbloom_window.h"

struct kbloom_filter;

/*
 * Fill alerts, each a KOBJ_CHANGE uevent of the filter with EVENT= its
 * name (kbloom_filter_alert()); bit numbers of struct kbloom_gen @alerted
 * and struct kbloom_filter @alerts.
 */
enum kbloom_alert {
	KBLOOM_ALERT_FULL,		/* past the design capacity */
	KBLOOM_ALERT_SATURATED,		/* a counter stuck at its maximum */
	KBLOOM_ALERT_ROTATED,		/* a window rotated because full */
	KBLOOM_ALERT_NR
};

/**
 * struct kbloom_gen - one generation of a filter's contents
 * @core: bits (or counters) and the parameters and seed they go with.
 * @win: a windowed filter's generations; NULL for a plain filter. Then
 *	@core carries the parameters and seed only (no storage), and @occ is
 *	NULL: each of the window's generations has its own.
 * @occ: per-CPU occupancy counters of @core.
 * @bytes: size of the storage (what an image's payload is).
 * @charge: what the generation is charged against the module's budget:
 *	the storage rounded up to pages, vmalloc's bookkeeping of it, this
 *	structure and its per-CPU counters.
 * @capacity: design n, 0 if created by bits.
 * @fpr_ppb: design false-positive rate, 0 if created by bits.
 * @owner: the filter it belongs to, set before it is published: where its
 *	fill alerts go (kbloom_gen_account()).
 * @alert: what sends them, called with @owner; set with it by the filter
 *	(kbloom_filter_alert()), so that a generation calls nothing of the
 *	layer above it, as a window calls its @on_full. NULL for a generation
 *	no filter owns (KUnit's own): nothing is sent.
 * @full_at: occupied positions at @capacity keys, where the false-positive
 *	rate reaches @fpr_ppb: past it a "full" alert; 0 for none (a filter
 *	created by bits, a windowed one).
 * @alert_every: how many positions a CPU sets between looks at the fill.
 * @alerted: KBLOOM_ALERT_* bits already sent for these contents (a clear
 *	starts them over).
 * @tracking: every storage has change marks, and every operation that
 *	began before they were published has ended (kbloom_gen_track()).
 * @ref: one for the filter that points to it, one for each user that
 *	sleeps while using it (kbloom_gen_get()). The hot path takes none:
 *	it relies on RCU.
 * @free_work: frees the generation a grace period after the last put.
 *
 * A filter points to its current generation through an RCU pointer, so
 * its whole contents, parameters and seed included, can be swapped for
 * another in one store: a lookup sees the old generation or the new one,
 * never a mix. Loading an image with --replace does that today; a
 * time-windowed (rotating) filter will do the same on every rotation.
 */
struct kbloom_gen {
	/*
	 * What a packet's lookup reads comes first, in the first 64 bytes
	 * (one cache line where the allocator aligns the object, as x86-64's
	 * kmalloc-192 does).
	 */
	struct kbloom_core core;
	struct kbloom_window *win;
	struct kbloom_occupancy __percpu *occ;
	size_t bytes;
	size_t charge;
	u64 capacity;
	u32 fpr_ppb;
	struct kbloom_filter *owner;
	void (*alert)(struct kbloom_filter *owner, enum kbloom_alert a);
	u64 full_at;
	u64 alert_every;
	unsigned long alerted;
	refcount_t ref;
	struct rcu_work free_work;
	bool tracking;
};

static_assert(offsetofend(struct kbloom_gen, occ) <= 64,
	      "a lookup reads the first 64 bytes of its generation");
/**
 * struct kbloom_params - what a new generation is made from
 * @nbits: m.
 * @nhashes: k.
 * @flags: KBLOOM_CORE_* bits (counting, hash scheme).
 * @capacity: design n, informational.
 * @fpr_ppb: design rate, informational.
 * @adds: keys already in it (loaded images), informational.
 * @seed: the four hash seed words to use, or NULL for a fresh random one.
 * @generations: 0 for a plain filter, else G of a windowed one (@nbits
 *	and @nhashes are then each generation's).
 * @window_ms: W of a windowed filter.
 * @rotate_at_fill: a windowed filter also rotates when its newest
 *	generation holds @capacity keys' worth of positions.
 * @bpf_ops: KBLOOM_BPF_OPS_* of the filter (not of its contents: an image
 *	loaded over a filter keeps the filter's).
 * @ruled: the filter is made by a rule (struct kbloom_filter @ruled).
 * @track_changes: its generation tracks changed blocks from the start
 *	(KBLOOM_CREATE_TRACK_CHANGES).
 */
struct kbloom_params {
	u64 nbits;
	u32 nhashes;
	u32 flags;
	u64 capacity;
	u32 fpr_ppb;
	u64 adds;
	const u32 *seed;
	u32 generations;
	u32 window_ms;
	bool rotate_at_fill;
	u8 bpf_ops;
	bool ruled;
	bool track_changes;
};

struct kbloom_gen *kbloom_gen_new(const struct kbloom_params *p);
void kbloom_gen_destroy(struct kbloom_gen *gen);
int kbloom_gen_track(struct kbloom_gen *gen, bool published);
bool kbloom_gen_tracking(struct kbloom_gen *gen);
void kbloom_gen_put(struct kbloom_gen *gen);
u32 kbloom_gen_mismatch(const struct kbloom_gen *a, const struct kbloom_gen *b);
void kbloom_gen_occupancy(struct kbloom_gen *gen, u64 *occupied, u64 *stuck);
int kbloom_gen_recount(struct kbloom_gen *gen);
bool kbloom_gen_do(struct kbloom_gen *gen, enum kbloom_op op, const void *key,
		   u32 len);
u32 kbloom_gen_do_batch(struct kbloom_gen *gen, enum kbloom_op op,
			const u8 *keys, const u32 *lens, u32 n, u8 *results);
u32 kbloom_gen_slices(struct kbloom_gen *gen);
void kbloom_gen_lock(struct kbloom_gen *gen);
void kbloom_gen_unlock(struct kbloom_gen *gen);
struct kbloom_core *kbloom_gen_slice(struct kbloom_gen *gen, u32 i);
struct kbloom_occupancy __percpu *
kbloom_gen_slice_occ(struct kbloom_gen *gen, u32 i);
u64 kbloom_gen_slice_set(struct kbloom_gen *gen, u32 i);
void kbloom_gen_slice_account(struct kbloom_gen *gen, u32 i,
			      const struct kbloom_delta *d);
void kbloom_gen_params(struct kbloom_gen *gen, struct kbloom_params *p,
		       u32 *seed);
void kbloom_gen_account(struct kbloom_gen *gen, const struct kbloom_delta *d);

/* kbloom_gen_do(), inlined into the one-key calls. */
static __always_inline bool __kbloom_gen_do(struct kbloom_gen *gen,
					    enum kbloom_op op,
					    const void *key, u32 len)
{
	struct kbloom_delta d = {};
	bool ret;

	if (unlikely(gen->win))
		return kbloom_window_do(gen->win, op, key, len);
	ret = kbloom_core_do_inline(&gen->core, op, key, len,
				    op == KBLOOM_OP_QUERY ? NULL : &d);
	/* Most adds change nothing once a key was seen: no call then. */
	if (op != KBLOOM_OP_QUERY && (d.set | d.cleared | d.stuck | d.unstuck))
		kbloom_gen_account(gen, &d);
	return ret;
}

#endif /* _KBLOOM_GEN_H */
