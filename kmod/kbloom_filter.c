// SPDX-License-Identifier: GPL-2.0
/*
 * Named filters.
 *
 * Locking: kbloom_lock (a mutex: creation and destruction sleep) serialises
 * changes to the name table and the sysfs directories. Lookups walk the
 * table under RCU and take a reference with kobject_get_unless_zero(), so
 * the hot path never touches the mutex. A filter's contents live in a
 * generation (struct kbloom_gen) behind an RCU pointer; the hot path reads
 * it under rcu_read_lock(), code that sleeps while using it (popcounts,
 * clear, merge, export) pins it with a reference instead, so no lock is
 * held across a long scan or a copy to userspace. A filter's own mutex
 * only orders a replacement of its generation against its destruction;
 * kbloom_lock is taken before it, never after.
 *
 * Filters and generations are freed from a workqueue one grace period
 * after their last use (queue_rcu_work()): RCU readers may still be
 * looking at them, and the final kbloom_put() may come from softirq, where
 * vfree() and free_percpu() are not welcome. kbloom_live counts what is
 * allocated, so that rmmod can wait for every free, however late the
 * kobject core calls our release. The memory budget is charged per
 * generation, from allocation to free.
 */

#include <linux/ctype.h>
#include <linux/hashtable.h>
#include <linux/jhash.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "kbloom.h"
#include "kbloom_filter.h"
#include "kbloom_sysfs.h"

static DEFINE_MUTEX(kbloom_lock);
static DEFINE_HASHTABLE(kbloom_table, 8);
static u32 kbloom_count;		/* under kbloom_lock */
static atomic64_t kbloom_mem_used = ATOMIC64_INIT(0);
static atomic_t kbloom_live = ATOMIC_INIT(0);	/* filters + generations */
static struct workqueue_struct *kbloom_wq;

unsigned long kbloom_max_memory;
/* 8 GiB, or all a 32-bit machine can address. */
unsigned long kbloom_max_filter_bytes =
	KBLOOM_MAX_BITS / 8 > ULONG_MAX ? ULONG_MAX : KBLOOM_MAX_BITS / 8;

/* One object fewer: kbloom_filter_flush() may be waiting for that. */
static void kbloom_live_dec(void)
{
	atomic_dec(&kbloom_live);
	wake_up_var(&kbloom_live);
}

static u32 kbloom_name_hash(const char *name)
{
	return jhash(name, strlen(name), 0);
}

/**
 * kbloom_name_valid() - is this a name a filter may have?
 * @name: KBLOOM_NAME_MAX bytes from anywhere, not trusted.
 *
 * Names become sysfs directory names, so: 1 to KBLOOM_NAME_MAX - 1 of
 * [A-Za-z0-9_.-], not starting with '.' (no "." or "..", nothing hidden).
 *
 * Return: true if valid.
 */
bool kbloom_name_valid(const char *name)
{
	size_t len = strnlen(name, KBLOOM_NAME_MAX), i;

	if (!len || len == KBLOOM_NAME_MAX || name[0] == '.')
		return false;
	for (i = 0; i < len; i++)
		if (!isascii(name[i]) ||
		    (!isalnum(name[i]) && !strchr("_.-", name[i])))
			return false;
	return true;
}
EXPORT_SYMBOL_NS_GPL(kbloom_name_valid, KBLOOM);

u64 kbloom_memory_budget(void)
{
	unsigned long max = READ_ONCE(kbloom_max_memory);

	/* 0 means half of RAM, read at the time of the check. */
	return max ? max : (u64)totalram_pages() << (PAGE_SHIFT - 1);
}

u64 kbloom_memory_used(void)
{
	return atomic64_read(&kbloom_mem_used);
}
EXPORT_SYMBOL_NS_GPL(kbloom_memory_used, KBLOOM);

u32 kbloom_filter_count(void)
{
	return READ_ONCE(kbloom_count);
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
	struct kbloom_gen *gen;
	unsigned long *bitmap;
	u32 seed[2];
	int ret;

	if (bytes > READ_ONCE(kbloom_max_filter_bytes))
		return ERR_PTR(-EFBIG);
	if (atomic64_add_return(bytes, &kbloom_mem_used) >
	    kbloom_memory_budget()) {
		ret = -ENOSPC;
		goto err_unreserve;
	}
	gen = kzalloc(sizeof(*gen), GFP_KERNEL_ACCOUNT);
	if (!gen) {
		ret = -ENOMEM;
		goto err_unreserve;
	}
	/* No warning: a failure here is an answer to userspace, not a bug. */
	bitmap = __vmalloc(bytes, GFP_KERNEL_ACCOUNT | __GFP_ZERO |
			   __GFP_NOWARN);
	if (!bitmap) {
		ret = -ENOMEM;
		goto err_free_gen;
	}
	if (p->seed)
		memcpy(seed, p->seed, sizeof(seed));
	else
		get_random_bytes(seed, sizeof(seed));
	kbloom_core_init(&gen->core, bitmap, p->nbits, p->nhashes, p->flags,
			 seed);
	memzero_explicit(seed, sizeof(seed));
	gen->bytes = bytes;
	gen->capacity = p->capacity;
	gen->fpr_ppb = p->fpr_ppb;
	refcount_set(&gen->ref, 1);
	atomic_inc(&kbloom_live);
	return gen;

err_free_gen:
	kfree(gen);
err_unreserve:
	atomic64_sub(bytes, &kbloom_mem_used);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_NS_GPL(kbloom_gen_new, KBLOOM);

/**
 * kbloom_gen_destroy() - free a generation nobody else can see
 * @gen: a generation from kbloom_gen_new() never published, or one whose
 *	last reference went a grace period ago.
 *
 * Process context.
 */
void kbloom_gen_destroy(struct kbloom_gen *gen)
{
	atomic64_sub(gen->bytes, &kbloom_mem_used);
	vfree(gen->core.bitmap);
	/* The seed lives in here: it must not linger in freed memory. */
	kfree_sensitive(gen);
	kbloom_live_dec();
}
EXPORT_SYMBOL_NS_GPL(kbloom_gen_destroy, KBLOOM);

static void kbloom_gen_free_work(struct work_struct *work)
{
	kbloom_gen_destroy(container_of(to_rcu_work(work), struct kbloom_gen,
					free_work));
}

/**
 * kbloom_gen_get() - pin a filter's current generation
 * @filter: a held filter.
 *
 * For code that sleeps while it uses the contents: the generation stays
 * valid until kbloom_gen_put(), even if the filter's contents are replaced
 * or the filter destroyed meanwhile. Any context.
 *
 * Return: the generation.
 */
struct kbloom_gen *kbloom_gen_get(struct kbloom_filter *filter)
{
	struct kbloom_gen *gen;

	rcu_read_lock();
	/* A generation at zero was just replaced: the new one is there. */
	do {
		gen = rcu_dereference(filter->gen);
	} while (!refcount_inc_not_zero(&gen->ref));
	rcu_read_unlock();
	return gen;
}
EXPORT_SYMBOL_NS_GPL(kbloom_gen_get, KBLOOM);

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
EXPORT_SYMBOL_NS_GPL(kbloom_gen_put, KBLOOM);

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
	if (ca->seed[0] != cb->seed[0] || ca->seed[1] != cb->seed[1])
		m |= KBLOOM_MISMATCH_SEED;
	return m;
}
EXPORT_SYMBOL_NS_GPL(kbloom_gen_mismatch, KBLOOM);

static void kbloom_filter_free(struct work_struct *work)
{
	struct kbloom_filter *filter =
		container_of(to_rcu_work(work), struct kbloom_filter, free_work);
	struct kbloom_gen *gen = rcu_dereference_protected(filter->gen, 1);

	if (gen)	/* NULL only if creation failed half-way */
		kbloom_gen_put(gen);
	mutex_destroy(&filter->lock);
	free_percpu(filter->stats);
	kfree(filter);
	kbloom_live_dec();
}

/* kobject release: the last reference is gone, from any context. */
void kbloom_filter_release(struct kobject *kobj)
{
	struct kbloom_filter *filter =
		container_of(kobj, struct kbloom_filter, kobj);

	INIT_RCU_WORK(&filter->free_work, kbloom_filter_free);
	queue_rcu_work(kbloom_wq, &filter->free_work);
}

static struct kbloom_filter *kbloom_find_rcu(const char *name)
{
	struct kbloom_filter *filter;

	/* Called under rcu_read_lock() to look up, or kbloom_lock to change. */
	hash_for_each_possible_rcu(kbloom_table, filter, node,
				   kbloom_name_hash(name),
				   lockdep_is_held(&kbloom_lock))
		if (!strcmp(filter->name, name))
			return filter;
	return NULL;
}

/**
 * kbloom_get() - look a filter up by name and take a reference
 * @name: the filter's name.
 *
 * Any context; RCU-safe against concurrent destruction.
 *
 * Return: the filter, to be released with kbloom_put(), or NULL if there is
 * no filter of that name.
 */
struct kbloom_filter *kbloom_get(const char *name)
{
	struct kbloom_filter *filter;

	rcu_read_lock();
	filter = kbloom_find_rcu(name);
	if (filter && !kobject_get_unless_zero(&filter->kobj))
		filter = NULL;
	rcu_read_unlock();
	return filter;
}
EXPORT_SYMBOL_NS_GPL(kbloom_get, KBLOOM);

/**
 * kbloom_put() - drop a reference taken by kbloom_get()
 * @filter: the filter; NULL is ignored.
 *
 * Any context. The last reference to a destroyed filter frees it, after an
 * RCU grace period, from process context.
 */
void kbloom_put(struct kbloom_filter *filter)
{
	if (filter)
		kobject_put(&filter->kobj);
}
EXPORT_SYMBOL_NS_GPL(kbloom_put, KBLOOM);

/* What every in-kernel API call checks first: the length, then liveness. */
static inline int kbloom_api_check(struct kbloom_filter *filter, u32 len)
{
	if (unlikely(!len || len > KBLOOM_KEY_MAX))
		return -EINVAL;
	if (unlikely(READ_ONCE(filter->dead)))
		return -ENOENT;
	return 0;
}

/**
 * kbloom_add() - insert a key
 * @filter: a filter held with kbloom_get().
 * @key: the key bytes.
 * @len: its length, 1 to KBLOOM_KEY_MAX.
 *
 * Any context, lock-free, never sleeps. Once this returns, the key tests
 * present in every later kbloom_test() ordered after it.
 *
 * Return: 0, -EINVAL for a bad length, -ENOENT if the filter was destroyed.
 */
int kbloom_add(struct kbloom_filter *filter, const void *key, u32 len)
{
	int ret;

	ret = kbloom_api_check(filter, len);
	if (unlikely(ret))
		return ret;
	rcu_read_lock();
	kbloom_core_add(kbloom_filter_core(filter), key, len);
	rcu_read_unlock();
	this_cpu_inc(filter->stats->adds);
	return 0;
}
EXPORT_SYMBOL_NS_GPL(kbloom_add, KBLOOM);

/**
 * kbloom_test() - may the key be present?
 * @filter: a filter held with kbloom_get().
 * @key: the key bytes.
 * @len: its length, 1 to KBLOOM_KEY_MAX.
 *
 * Any context, lock-free, never sleeps.
 *
 * Return: 1 if the key may be present, 0 if it certainly is not, -EINVAL
 * for a bad length, -ENOENT if the filter was destroyed.
 */
int kbloom_test(struct kbloom_filter *filter, const void *key, u32 len)
{
	bool hit;
	int ret;

	ret = kbloom_api_check(filter, len);
	if (unlikely(ret))
		return ret;
	rcu_read_lock();
	hit = kbloom_core_test(kbloom_filter_core(filter), key, len);
	rcu_read_unlock();
	this_cpu_inc(filter->stats->queries);
	if (hit)
		this_cpu_inc(filter->stats->hits);
	return hit;
}
EXPORT_SYMBOL_NS_GPL(kbloom_test, KBLOOM);

/**
 * kbloom_test_and_add() - insert a key, telling whether it was seen before
 * @filter: a filter held with kbloom_get().
 * @key: the key bytes.
 * @len: its length, 1 to KBLOOM_KEY_MAX.
 *
 * Any context, lock-free, never sleeps. See kbloom_core_test_and_add() for
 * what racing callers are told.
 *
 * Return: 1 if seen before (or a false positive), 0 if new, -EINVAL for a
 * bad length, -ENOENT if the filter was destroyed.
 */
int kbloom_test_and_add(struct kbloom_filter *filter, const void *key,
			u32 len)
{
	bool seen;
	int ret;

	ret = kbloom_api_check(filter, len);
	if (unlikely(ret))
		return ret;
	rcu_read_lock();
	seen = kbloom_core_test_and_add(kbloom_filter_core(filter), key, len);
	rcu_read_unlock();
	this_cpu_inc(filter->stats->adds);
	this_cpu_inc(filter->stats->queries);
	if (seen)
		this_cpu_inc(filter->stats->hits);
	return seen;
}
EXPORT_SYMBOL_NS_GPL(kbloom_test_and_add, KBLOOM);

/**
 * kbloom_remove() - remove a key from a counting filter
 * @filter: a counting filter held with kbloom_get().
 * @key: the key bytes.
 * @len: its length, 1 to KBLOOM_KEY_MAX.
 *
 * Any context, lock-free, never sleeps. A key the filter reports absent is
 * refused and nothing changes; counters saturated at 15 stay (see
 * kbloom_core_remove()).
 *
 * Return: 0 if removed, -ENOENT if the key is absent (or the filter was
 * destroyed), -EOPNOTSUPP if the filter is not a counting one, -EINVAL for
 * a bad length.
 */
int kbloom_remove(struct kbloom_filter *filter, const void *key, u32 len)
{
	struct kbloom_core *core;
	int ret;

	ret = kbloom_api_check(filter, len);
	if (unlikely(ret))
		return ret;
	rcu_read_lock();
	core = kbloom_filter_core(filter);
	if (!(core->flags & KBLOOM_CORE_COUNTING))
		ret = -EOPNOTSUPP;
	else if (!kbloom_core_remove(core, key, len))
		ret = -ENOENT;
	rcu_read_unlock();
	return ret;
}
EXPORT_SYMBOL_NS_GPL(kbloom_remove, KBLOOM);

/* Start the per-CPU counters over, with @adds keys already in. */
static void kbloom_stats_reset(struct kbloom_filter *filter, u64 adds)
{
	int cpu;

	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(filter->stats, cpu), 0,
		       sizeof(struct kbloom_stats));
	per_cpu_ptr(filter->stats, raw_smp_processor_id())->adds = adds;
}

/**
 * kbloom_filter_add_gen() - create a named filter around a generation
 * @name: a name that passed kbloom_name_valid().
 * @gen: from kbloom_gen_new(), filled in; on success the filter owns the
 *	caller's reference, on failure the caller still does.
 * @p: the keys already in @gen (@p->adds), for the statistics.
 *
 * Process context.
 *
 * Return: 0, -EEXIST, or an allocation or sysfs error.
 */
int kbloom_filter_add_gen(const char *name, struct kbloom_gen *gen,
			  const struct kbloom_params *p)
{
	struct kbloom_filter *filter;
	int ret;

	filter = kzalloc(sizeof(*filter), GFP_KERNEL_ACCOUNT);
	if (!filter)
		return -ENOMEM;
	filter->stats = alloc_percpu_gfp(struct kbloom_stats,
					 GFP_KERNEL_ACCOUNT);
	if (!filter->stats) {
		ret = -ENOMEM;
		goto err_free_filter;
	}
	mutex_init(&filter->lock);
	RCU_INIT_POINTER(filter->gen, gen);
	kbloom_stats_reset(filter, p->adds);
	atomic_inc(&kbloom_live);
	strscpy(filter->name, name, sizeof(filter->name));

	mutex_lock(&kbloom_lock);
	if (kbloom_find_rcu(name)) {
		ret = -EEXIST;
		goto err_unlock;
	}
	ret = kbloom_sysfs_add(filter);
	if (ret) {
		mutex_unlock(&kbloom_lock);
		/*
		 * The kobject owns the filter now and its release frees it;
		 * the generation stays the caller's.
		 */
		RCU_INIT_POINTER(filter->gen, NULL);
		kobject_put(&filter->kobj);
		return ret;
	}
	hash_add_rcu(kbloom_table, &filter->node, kbloom_name_hash(name));
	WRITE_ONCE(kbloom_count, kbloom_count + 1);
	mutex_unlock(&kbloom_lock);
	kobject_uevent(&filter->kobj, KOBJ_ADD);
	return 0;

err_unlock:
	mutex_unlock(&kbloom_lock);
	mutex_destroy(&filter->lock);
	free_percpu(filter->stats);
	kbloom_live_dec();
err_free_filter:
	kfree(filter);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(kbloom_filter_add_gen, KBLOOM);

/**
 * kbloom_filter_create() - create a named, empty filter
 * @name: a name that passed kbloom_name_valid().
 * @p: its parameters, valid per kbloom_core_valid().
 *
 * Process context.
 *
 * Return: 0, -EFBIG (over the per-filter limit), -ENOSPC (over the budget),
 * -ENOMEM, -EEXIST. On error nothing is left behind.
 */
int kbloom_filter_create(const char *name, const struct kbloom_params *p)
{
	struct kbloom_gen *gen = kbloom_gen_new(p);
	int ret;

	if (IS_ERR(gen))
		return PTR_ERR(gen);
	ret = kbloom_filter_add_gen(name, gen, p);
	if (ret)
		kbloom_gen_destroy(gen);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(kbloom_filter_create, KBLOOM);

/**
 * kbloom_filter_create_like() - create an empty filter compatible with another
 * @name: a name that passed kbloom_name_valid().
 * @like: the filter whose size, hashes, flags, capacity and seed to copy.
 * @flags: KBLOOM_CORE_* flags the caller expects @like to have.
 * @used: out: the parameters of the new filter (its seed pointer is not
 *	valid after return).
 *
 * The two can then be merged and compared. Process context.
 *
 * Return: as kbloom_filter_create(), -ENOENT if @like does not exist,
 * -EINVAL if it lacks one of @flags.
 */
int kbloom_filter_create_like(const char *name, const char *like, u32 flags,
			      struct kbloom_params *used)
{
	struct kbloom_filter *model = kbloom_get(like);
	struct kbloom_params p = {};
	struct kbloom_gen *gen;
	u32 seed[2];
	int ret;

	if (!model)
		return -ENOENT;
	gen = kbloom_gen_get(model);
	p.nbits = gen->core.nbits;
	p.nhashes = gen->core.nhashes;
	p.flags = gen->core.flags;
	p.capacity = gen->capacity;
	p.fpr_ppb = gen->fpr_ppb;
	memcpy(seed, gen->core.seed, sizeof(seed));
	kbloom_gen_put(gen);
	kbloom_put(model);
	p.seed = seed;
	if (flags & ~p.flags)
		ret = -EINVAL;
	else
		ret = kbloom_filter_create(name, &p);
	memzero_explicit(seed, sizeof(seed));
	p.seed = NULL;
	*used = p;
	return ret;
}
EXPORT_SYMBOL_NS_GPL(kbloom_filter_create_like, KBLOOM);

/**
 * kbloom_filter_replace_gen() - swap a filter's contents atomically
 * @name: the filter.
 * @gen: the new generation, filled in; on success the filter owns the
 *	caller's reference, on failure the caller still does.
 * @p: the keys already in @gen (@p->adds), for the statistics.
 *
 * Lookups never miss the filter, and every operation runs wholly on the
 * old generation or wholly on the new one. The statistics start over.
 * Process context.
 *
 * Return: 0, or -ENOENT if there is no such filter or it is destroyed
 * before the swap.
 */
int kbloom_filter_replace_gen(const char *name, struct kbloom_gen *gen,
			      const struct kbloom_params *p)
{
	struct kbloom_filter *filter = kbloom_get(name);
	struct kbloom_gen *old;

	if (!filter)
		return -ENOENT;
	mutex_lock(&filter->lock);
	/* Destroyed since the lookup: the new contents would be lost. */
	if (filter->dead) {
		mutex_unlock(&filter->lock);
		kbloom_put(filter);
		return -ENOENT;
	}
	old = rcu_replace_pointer(filter->gen, gen,
				  lockdep_is_held(&filter->lock));
	kbloom_stats_reset(filter, p->adds);
	mutex_unlock(&filter->lock);
	kbloom_put(filter);
	/* Hot-path readers may still be in the old one: freed later. */
	kbloom_gen_put(old);
	return 0;
}
EXPORT_SYMBOL_NS_GPL(kbloom_filter_replace_gen, KBLOOM);

/* Unlink a filter and drop the table's reference. kbloom_lock held. */
static void kbloom_filter_unlink(struct kbloom_filter *filter)
{
	lockdep_assert_held(&kbloom_lock);
	/* Under the filter's lock: see kbloom_filter_replace_gen(). */
	mutex_lock(&filter->lock);
	WRITE_ONCE(filter->dead, true);
	mutex_unlock(&filter->lock);
	hash_del_rcu(&filter->node);
	WRITE_ONCE(kbloom_count, kbloom_count - 1);
	kobject_uevent(&filter->kobj, KOBJ_REMOVE);
	/* Under the lock, so a new filter of this name can reuse the dir. */
	kbloom_sysfs_del(filter);
	kobject_put(&filter->kobj);
}

/**
 * kbloom_filter_destroy() - destroy a filter by name
 * @name: its name.
 *
 * Process context. Users holding a reference keep valid memory and get
 * -ENOENT from then on.
 *
 * Return: 0 or -ENOENT.
 */
int kbloom_filter_destroy(const char *name)
{
	struct kbloom_filter *filter;

	mutex_lock(&kbloom_lock);
	filter = kbloom_find_rcu(name);
	if (filter)
		kbloom_filter_unlink(filter);
	mutex_unlock(&kbloom_lock);
	return filter ? 0 : -ENOENT;
}
EXPORT_SYMBOL_NS_GPL(kbloom_filter_destroy, KBLOOM);

/**
 * kbloom_filter_clear() - zero a filter's bits and counters
 * @filter: a held filter.
 *
 * Process context; may sleep.
 */
void kbloom_filter_clear(struct kbloom_filter *filter)
{
	struct kbloom_gen *gen = kbloom_gen_get(filter);

	kbloom_core_clear(&gen->core);
	kbloom_gen_put(gen);
	kbloom_stats_reset(filter, 0);
}

/**
 * kbloom_filter_totals() - sum the per-CPU counters
 * @filter: a held filter.
 * @t: the sums.
 */
void kbloom_filter_totals(struct kbloom_filter *filter,
			  struct kbloom_totals *t)
{
	int cpu;

	memset(t, 0, sizeof(*t));
	for_each_possible_cpu(cpu) {
		const struct kbloom_stats *s = per_cpu_ptr(filter->stats, cpu);

		t->adds += READ_ONCE(s->adds);
		t->queries += READ_ONCE(s->queries);
		t->hits += READ_ONCE(s->hits);
	}
}

static int kbloom_name_cmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/**
 * kbloom_filter_names() - snapshot of all names, sorted
 * @names: out: @count names of KBLOOM_NAME_MAX bytes each, kvmalloc'd, to
 *	be kvfree'd; NULL when @count is 0.
 * @count: out: number of names.
 *
 * Return: 0 or -ENOMEM.
 */
int kbloom_filter_names(char **names, u32 *count)
{
	struct kbloom_filter *filter;
	char *out = NULL;
	u32 n = 0;
	int bkt;

	mutex_lock(&kbloom_lock);
	if (kbloom_count) {
		out = kvcalloc(kbloom_count, KBLOOM_NAME_MAX, GFP_KERNEL);
		if (!out) {
			mutex_unlock(&kbloom_lock);
			return -ENOMEM;
		}
		hash_for_each(kbloom_table, bkt, filter, node)
			strscpy(out + KBLOOM_NAME_MAX * n++, filter->name,
				KBLOOM_NAME_MAX);
	}
	mutex_unlock(&kbloom_lock);
	sort(out, n, KBLOOM_NAME_MAX, kbloom_name_cmp, NULL);
	*names = out;
	*count = n;
	return 0;
}

/**
 * kbloom_filter_flush() - wait until every destroyed filter and replaced
 * generation has been freed
 *
 * Process context; may sleep for seconds (grace periods, and the kobject
 * core may call our release late). Whoever calls it must hold no
 * reference to a destroyed filter or a replaced generation, or it waits
 * for ever: it is for tests and for teardown.
 */
void kbloom_filter_flush(void)
{
	wait_var_event(&kbloom_live, atomic_read(&kbloom_live) ==
				     2 * READ_ONCE(kbloom_count));
}
EXPORT_SYMBOL_NS_GPL(kbloom_filter_flush, KBLOOM);

int kbloom_filter_init(void)
{
	/* Frees must not pile up behind unrelated work; rmmod drains it. */
	kbloom_wq = alloc_workqueue("kbloom", 0, 0);
	if (!kbloom_wq)
		return -ENOMEM;
	return 0;
}

void kbloom_filter_uninit(void)
{
	struct kbloom_filter *filter;
	struct hlist_node *tmp;
	int bkt;

	mutex_lock(&kbloom_lock);
	hash_for_each_safe(kbloom_table, bkt, tmp, filter, node)
		kbloom_filter_unlink(filter);
	mutex_unlock(&kbloom_lock);
	/* Every free runs on kbloom_wq: wait for all of them before it goes. */
	kbloom_filter_flush();
	destroy_workqueue(kbloom_wq);
}
