// SPDX-License-Identifier: GPL-2.0
/*
 * Generations: what a filter holds, its parameters and seed included,
 * swapped whole behind the filter's RCU pointer (kbloom_filter.c, whose
 * comment describes the locking and the frees). A generation is plain
 * storage or a window of it (kbloom_window.c); this file hides which from
 * the layers above (kbloom_gen_slice() and the rest), keeps the occupancy
 * counters and fill alerts, and tracks changed blocks. It calls only the
 * window, the storage and the core below it: a fill alert reaches the
 * filter through the callback the filter set (struct kbloom_gen @alert),
 * as a window's rotation reaches the generation through @on_full.
 */

#include <linux/bitmap.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "kbloom_batch.h"
#include "kbloom_gen.h"
#include "kbloom_storage.h"
#include "kbloom_window.h"

/*
 * What a generation of @bytes of storage costs: vmalloc maps whole pages
 * and keeps an array of them plus its own descriptors, and every
 * generation has its structure and its per-CPU counters. A 64-bit filter
 * costs a page and more, not 8 bytes.
 */
static size_t kbloom_gen_charge(size_t bytes)
{
	/* In 64 bits: on 32-bit, a size near 4 GiB must not wrap to small. */
	u64 pages = DIV_ROUND_UP_ULL((u64)bytes, PAGE_SIZE);
	u64 charge = pages * (PAGE_SIZE + sizeof(struct page *)) +
		     sizeof(struct vm_struct) + sizeof(struct vmap_area) +
		     kmalloc_size_roundup(sizeof(struct kbloom_gen)) +
		     num_possible_cpus() * sizeof(struct kbloom_occupancy);

	return charge > SIZE_MAX ? SIZE_MAX : charge;
}

/*
 * Have fill alert @a sent for @gen: through the callback its filter set
 * (struct kbloom_gen @alert), not a call up into the filter's layer.
 */
static void kbloom_gen_alert(struct kbloom_gen *gen, enum kbloom_alert a)
{
	if (gen->alert)
		gen->alert(gen->owner, a);
}

/* A window rotated because its newest generation was full. */
static void kbloom_gen_rotated_full(void *ctx)
{
	struct kbloom_gen *gen = ctx;

	kbloom_gen_alert(gen, KBLOOM_ALERT_ROTATED);
}

/**
 * kbloom_gen_new() - allocate a zeroed generation
 * @p: its parameters, valid per kbloom_core_valid().
 *
 * Process context. The caller holds the one reference; it passes to the
 * filter the generation is given to. Charged to the caller's memory cgroup and reserved
 * against the budget before the (possibly seconds long) allocation.
 *
 * Return: the generation, or ERR_PTR(-EFBIG) (over the per-filter limit),
 * -ENOSPC (over the budget), -ENOMEM.
 */
struct kbloom_gen *kbloom_gen_new(const struct kbloom_params *p)
{
	size_t bytes = kbloom_core_bytes(p->nbits, p->flags);
	u32 nslices = max_t(u32, p->generations, 1);
	size_t charge, total, storage;
	struct kbloom_gen *gen;
	unsigned long *bitmap = NULL;
	u64 fill_limit = 0;
	u32 seed[4];
	int ret;

	/* Every generation of a windowed filter is as large as the filter. */
	if (check_mul_overflow(bytes, (size_t)nslices, &total) ||
	    total > READ_ONCE(kbloom_max_filter_bytes))
		return ERR_PTR(-EFBIG);
	storage = kbloom_storage_bytes(bytes);
	charge = kbloom_gen_charge(storage);
	if (check_mul_overflow(charge, (size_t)nslices, &charge))
		return ERR_PTR(-EFBIG);
	ret = kbloom_charge(charge);
	if (ret)
		return ERR_PTR(ret);
	gen = kzalloc(sizeof(*gen), GFP_KERNEL_ACCOUNT);
	if (!gen) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	if (p->seed)
		memcpy(seed, p->seed, sizeof(seed));
	else
		get_random_bytes(seed, sizeof(seed));
	if (p->generations) {
		if (p->rotate_at_fill)
			fill_limit = kbloom_fill_at(p->nbits, p->nhashes,
						    p->capacity, p->flags);
		gen->win = kbloom_window_new(p->generations, p->window_ms,
					     fill_limit, p->nbits,
					     p->nhashes, p->flags, seed,
					     storage);
		if (!gen->win) {
			ret = -ENOMEM;
			goto err_free_gen;
		}
		gen->win->on_full = kbloom_gen_rotated_full;
		gen->win->on_full_ctx = gen;
	} else {
		gen->occ = alloc_percpu_gfp(struct kbloom_occupancy,
					    GFP_KERNEL_ACCOUNT);
		if (!gen->occ) {
			ret = -ENOMEM;
			goto err_free_gen;
		}
		bitmap = kbloom_storage_alloc(storage);
		if (!bitmap) {
			ret = -ENOMEM;
			goto err_free_occ;
		}
	}
	/* A windowed filter's own core: its parameters, without storage. */
	kbloom_core_init(&gen->core, bitmap, p->nbits, p->nhashes, p->flags,
			 seed);
	memzero_explicit(seed, sizeof(seed));
	gen->bytes = total;
	gen->charge = charge;
	gen->capacity = p->capacity;
	gen->fpr_ppb = p->fpr_ppb;
	if (!gen->win && p->capacity) {
		gen->full_at = kbloom_fill_at(p->nbits, p->nhashes,
					      p->capacity, p->flags);
		/* As often as the window looks: at most a quarter over. */
		gen->alert_every = clamp_t(u64,
					   div64_u64(gen->full_at,
						     4 * num_possible_cpus()),
					   1, 256);
	}
	refcount_set(&gen->ref, 1);
	atomic_inc(&kbloom_live);
	if (p->track_changes) {
		ret = kbloom_gen_track(gen, false);
		if (ret) {
			kbloom_gen_destroy(gen);
			return ERR_PTR(ret);
		}
	}
	return gen;

err_free_occ:
	free_percpu(gen->occ);
err_free_gen:
	memzero_explicit(seed, sizeof(seed));
	kfree(gen);
err_uncharge:
	kbloom_uncharge(charge);
	return ERR_PTR(ret);
}

/* The storage of @gen: @i below kbloom_gen_slices(), in no order. */
static struct kbloom_core *kbloom_gen_storage(struct kbloom_gen *gen, u32 i)
{
	return gen->win ? kbloom_window_storage(gen->win, i) : &gen->core;
}

/* What the change marks of one generation's storage take. */
static size_t kbloom_marks_bytes(const struct kbloom_core *core)
{
	return BITS_TO_LONGS(kbloom_core_blocks(core)) * sizeof(unsigned long);
}

/* Serialises kbloom_gen_track() calls, which allocate outside any lock. */
static DEFINE_MUTEX(kbloom_track_lock);

/**
 * kbloom_gen_track() - make a generation track its changed blocks
 * @gen: a bit filter's generation, private or held (kbloom_gen_get()).
 * @published: readers may be operating on it.
 *
 * Every block starts marked: whatever the storage holds is news to whoever
 * collects first, so nothing added before tracking began is missed. On a
 * published generation, operations that began before the marks were
 * published may set bits without marking them; the grace period waited
 * for here ends them, so a collection that follows reads those bits.
 * Every operation runs in an RCU reader (the hot path, batches) or marks
 * after a fully ordered write (merge, apply). Process context.
 *
 * Return: 0 (also if it tracks already), -ENOSPC (the memory budget),
 * -ENOMEM.
 */
int kbloom_gen_track(struct kbloom_gen *gen, bool published)
{
	u32 i, n = kbloom_gen_slices(gen);
	struct kbloom_core *core;
	unsigned long *marks;
	size_t bytes;
	int ret = 0;

	mutex_lock(&kbloom_track_lock);
	for (i = 0; i < n && !ret; i++) {
		core = kbloom_gen_storage(gen, i);
		if (core->changed)
			continue;
		bytes = kbloom_marks_bytes(core);
		ret = kbloom_charge(bytes);
		if (ret)
			break;
		marks = kvmalloc(bytes, GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
		if (!marks) {
			kbloom_uncharge(bytes);
			ret = -ENOMEM;
			break;
		}
		bitmap_fill(marks, kbloom_core_blocks(core));
		/* Filled before readers can find it. */
		smp_store_release(&core->changed, marks);
	}
	/*
	 * Under the lock: a second caller must not find it tracking before
	 * the operations that may have missed the marks have ended (the
	 * batch ring works on a copy of the core, taken before).
	 */
	if (!ret && !gen->tracking) {
		if (published)
			synchronize_rcu();
		/* Pairs with kbloom_gen_tracking(): the marks before it. */
		smp_store_release(&gen->tracking, true);
	}
	mutex_unlock(&kbloom_track_lock);
	return ret;
}

/*
 * Does @gen track changes, every storage's marks readable after this?
 * Any context. A kbloom_gen_track() that failed half-way does not count.
 */
bool kbloom_gen_tracking(struct kbloom_gen *gen)
{
	/* Pairs with kbloom_gen_track(): then every core->changed. */
	return smp_load_acquire(&gen->tracking);
}

/* The marks go with the generation: on its way out, nobody else sees it. */
static void kbloom_gen_untrack(struct kbloom_gen *gen)
{
	u32 i, n = kbloom_gen_slices(gen);
	struct kbloom_core *core;

	for (i = 0; i < n; i++) {
		core = kbloom_gen_storage(gen, i);
		if (!core->changed)
			continue;
		kvfree(core->changed);
		kbloom_uncharge(kbloom_marks_bytes(core));
		core->changed = NULL;
	}
}

/**
 * kbloom_gen_destroy() - free a generation nobody else can see
 * @gen: a generation from kbloom_gen_new() never published, or one whose
 *	last reference went a grace period ago.
 *
 * Process context.
 */
void kbloom_gen_destroy(struct kbloom_gen *gen)
{
	kbloom_gen_untrack(gen);
	if (gen->win)
		kbloom_window_free(gen->win);
	vfree(gen->core.bitmap);
	free_percpu(gen->occ);
	/* Given back once it really is back. */
	kbloom_uncharge(gen->charge);
	/* The seed lives in here: it must not linger in freed memory. */
	kfree_sensitive(gen);
	kbloom_live_dec();
}

static void kbloom_gen_free_work(struct work_struct *work)
{
	kbloom_gen_destroy(container_of(to_rcu_work(work), struct kbloom_gen,
					free_work));
}

/**
 * kbloom_gen_put() - drop a reference to a generation
 * @gen: the generation.
 *
 * Any context. The last reference frees it after a grace period, since
 * the hot path may still be reading it under RCU.
 */
void kbloom_gen_put(struct kbloom_gen *gen)
{
	if (refcount_dec_and_test(&gen->ref)) {
		INIT_RCU_WORK(&gen->free_work, kbloom_gen_free_work);
		queue_rcu_work(kbloom_wq, &gen->free_work);
	}
}

/**
 * kbloom_gen_mismatch() - why two generations cannot be merged
 * @a: a pinned generation.
 * @b: another.
 *
 * Return: KBLOOM_MISMATCH_* bits of what differs, 0 if compatible.
 */
u32 kbloom_gen_mismatch(const struct kbloom_gen *a, const struct kbloom_gen *b)
{
	const struct kbloom_core *ca = &a->core, *cb = &b->core;
	u32 m = 0;

	if (ca->nbits != cb->nbits)
		m |= KBLOOM_MISMATCH_BITS;
	if (ca->nhashes != cb->nhashes)
		m |= KBLOOM_MISMATCH_HASHES;
	if ((ca->flags ^ cb->flags) & KBLOOM_CORE_COUNTING)
		m |= KBLOOM_MISMATCH_COUNTING;
	if ((ca->flags ^ cb->flags) & KBLOOM_CORE_BLOCKED)
		m |= KBLOOM_MISMATCH_LAYOUT;
	if ((ca->flags ^ cb->flags) & KBLOOM_CORE_SIPHASH)
		m |= KBLOOM_MISMATCH_HASH_SCHEME;
	if (memcmp(ca->seed, cb->seed, sizeof(ca->seed)))
		m |= KBLOOM_MISMATCH_SEED;
	return m;
}

/**
 * kbloom_gen_account() - kbloom_occ_account() of a plain generation, and
 * its fill alerts
 * @gen: the generation.
 * @d: what an operation (or a batch) did.
 *
 * Raises KBLOOM_ALERT_FULL when the generation first reaches its design
 * fill, KBLOOM_ALERT_SATURATED when a first counter sticks, once each for
 * these contents: a flag test, and the fill summed every @alert_every
 * positions this CPU sets, never per key. Any context, never sleeps.
 */
void kbloom_gen_account(struct kbloom_gen *gen, const struct kbloom_delta *d)
{
	u64 occupied, stuck;

	kbloom_occ_account(gen->occ, d);
	if (d->stuck && !test_bit(KBLOOM_ALERT_SATURATED, &gen->alerted) &&
	    !test_and_set_bit(KBLOOM_ALERT_SATURATED, &gen->alerted))
		kbloom_gen_alert(gen, KBLOOM_ALERT_SATURATED);
	if (!gen->full_at || !d->set ||
	    test_bit(KBLOOM_ALERT_FULL, &gen->alerted) ||
	    !kbloom_occ_crossed(gen->occ, d->set, gen->alert_every))
		return;
	kbloom_occ_read(gen->occ, &occupied, &stuck);
	if (occupied >= gen->full_at &&
	    !test_and_set_bit(KBLOOM_ALERT_FULL, &gen->alerted))
		kbloom_gen_alert(gen, KBLOOM_ALERT_FULL);
}

/**
 * kbloom_gen_occupancy() - positions occupied and counters stuck
 * @gen: a pinned generation.
 * @occupied: out: bits set, or non-zero counters.
 * @stuck: out: saturated counters (0 for a plain filter).
 *
 * O(number of CPUs), whatever the filter's size: this is what sysfs and
 * INFO report, so reading them costs nobody a scan. Exact once the
 * operations counted have returned.
 */
void kbloom_gen_occupancy(struct kbloom_gen *gen, u64 *occupied, u64 *stuck)
{
	struct kbloom_occupancy __percpu *occ = gen->occ;

	/* A windowed filter: its newest generation's. */
	if (gen->win) {
		rcu_read_lock();
		occ = rcu_dereference(gen->win->view)->s[0]->occ;
		kbloom_occ_read(occ, occupied, stuck);
		rcu_read_unlock();
		return;
	}
	kbloom_occ_read(occ, occupied, stuck);
}

/**
 * kbloom_gen_recount() - set a private generation's counters from a scan
 * @gen: a generation filled wholesale (an image) and not yet published.
 *
 * Process context; may sleep.
 *
 * Return: 0 or -EINTR.
 */
int kbloom_gen_recount(struct kbloom_gen *gen)
{
	u32 i, n = kbloom_gen_slices(gen);
	int ret = 0;

	kbloom_gen_lock(gen);
	for (i = 0; i < n && !ret; i++) {
		struct kbloom_delta d = {};

		ret = kbloom_core_count(kbloom_gen_slice(gen, i), &d.set,
					&d.stuck);
		if (!ret)
			kbloom_occ_account(kbloom_gen_slice_occ(gen, i), &d);
	}
	kbloom_gen_unlock(gen);
	return ret;
}

/* Generations of storage: G for a windowed filter, else 1. */
u32 kbloom_gen_slices(struct kbloom_gen *gen)
{
	return gen->win ? gen->win->generations : 1;
}

/*
 * Whole-filter operations (clear, export, import, recount) walk the
 * storage with kbloom_gen_slice() between these: a windowed filter does not
 * rotate meanwhile. Process context.
 */
void kbloom_gen_lock(struct kbloom_gen *gen)
{
	if (gen->win)
		mutex_lock(&gen->win->lock);
}

void kbloom_gen_unlock(struct kbloom_gen *gen)
{
	if (gen->win)
		mutex_unlock(&gen->win->lock);
}

/* Storage @i, newest generation first; under kbloom_gen_lock(). */
struct kbloom_core *kbloom_gen_slice(struct kbloom_gen *gen, u32 i)
{
	return gen->win ? &kbloom_window_slice(gen->win, i)->core :
			  &gen->core;
}

/* The occupancy counters of storage @i; under kbloom_gen_lock(). */
struct kbloom_occupancy __percpu *
kbloom_gen_slice_occ(struct kbloom_gen *gen, u32 i)
{
	return gen->win ? kbloom_window_slice(gen->win, i)->occ : gen->occ;
}

/*
 * Bits set in storage @i (newest first), and accounting a change made to
 * it outside the key operations (blocks applied); under kbloom_gen_lock()
 * or between kbloom_window_copy_begin() and _end().
 */
u64 kbloom_gen_slice_set(struct kbloom_gen *gen, u32 i)
{
	u64 occupied, stuck;

	kbloom_occ_read(kbloom_gen_slice_occ(gen, i), &occupied, &stuck);
	return occupied;
}

void kbloom_gen_slice_account(struct kbloom_gen *gen, u32 i,
			      const struct kbloom_delta *d)
{
	if (gen->win)
		kbloom_occ_account(kbloom_gen_slice_occ(gen, i), d);
	else
		kbloom_gen_account(gen, d);
}

/* What a filter like @gen is made of; @seed receives its four words. */
void kbloom_gen_params(struct kbloom_gen *gen, struct kbloom_params *p,
		       u32 *seed)
{
	memset(p, 0, sizeof(*p));
	p->nbits = gen->core.nbits;
	p->nhashes = gen->core.nhashes;
	p->flags = gen->core.flags;
	p->capacity = gen->capacity;
	p->fpr_ppb = gen->fpr_ppb;
	memcpy(seed, gen->core.seed, sizeof(gen->core.seed));
	p->seed = seed;
	if (gen->win) {
		p->generations = gen->win->generations;
		p->window_ms = gen->win->window_ms;
		p->rotate_at_fill = gen->win->fill_limit;
	}
}

/**
 * kbloom_gen_do() - run one operation on one key
 * @gen: the generation, in an RCU read-side section.
 * @op: the operation; KBLOOM_OP_REMOVE only on counting filters.
 * @key: the key bytes.
 * @len: its length, 1 to KBLOOM_KEY_MAX.
 *
 * Any context, lock-free, never sleeps. Keeps the occupancy counters.
 *
 * Return: the result bit: "may be present", "seen", "removed"; false
 * for add.
 */
bool kbloom_gen_do(struct kbloom_gen *gen, enum kbloom_op op, const void *key,
		   u32 len)
{
	return __kbloom_gen_do(gen, op, key, len);
}

/**
 * kbloom_gen_do_batch() - run one operation on many keys
 * @gen: the generation, in an RCU read-side section.
 * @op: the operation; KBLOOM_OP_REMOVE only on counting filters.
 * @keys: the keys' bytes, back to back.
 * @lens: their lengths, each 1 to KBLOOM_KEY_MAX.
 * @n: how many keys.
 * @results: bit i is set where key i's result is true; other bits are
 *	left alone. Never touched for an add: may then be NULL.
 *
 * As kbloom_gen_do() on each key in turn, pipelined for a plain filter
 * (kbloom_core_do_batch()). Any context, lock-free, never sleeps.
 *
 * Return: the number of true results.
 */
u32 kbloom_gen_do_batch(struct kbloom_gen *gen, enum kbloom_op op,
			const u8 *keys, const u32 *lens, u32 n, u8 *results)
{
	struct kbloom_delta d = {};
	u32 i, hits = 0;

	if (unlikely(gen->win)) {
		for (i = 0; i < n; keys += lens[i], i++) {
			if (kbloom_window_do(gen->win, op, keys, lens[i])) {
				results[i / 8] |= 1U << (i % 8);
				hits++;
			}
		}
		return hits;
	}
	hits = kbloom_core_do_batch(&gen->core, op, keys, lens, n, results,
				    &d);
	if (op != KBLOOM_OP_QUERY)
		kbloom_gen_account(gen, &d);
	return hits;
}
