// SPDX-License-Identifier: GPL-2.0
/*
 * Named filters.
 *
 * Locking: kbloom_lock (a mutex: creation and destruction sleep) serialises
 * changes to the name table, the sysfs directories and the memory account.
 * Lookups walk the table under RCU and take a reference with
 * kobject_get_unless_zero(), so the hot path never touches the mutex. A
 * filter is freed from a workqueue one grace period after its last
 * reference goes (queue_rcu_work()), because RCU readers may still be
 * looking at it in the table, and the final kbloom_put() may come from
 * softirq, where vfree() and free_percpu() are not welcome.
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
static struct workqueue_struct *kbloom_wq;

unsigned long kbloom_max_memory;
unsigned long kbloom_max_filter_bytes = KBLOOM_MAX_BITS / 8;

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

static void kbloom_filter_free(struct work_struct *work)
{
	struct kbloom_filter *filter =
		container_of(to_rcu_work(work), struct kbloom_filter, free_work);

	atomic64_sub(filter->bytes, &kbloom_mem_used);
	vfree(filter->core.bitmap);
	free_percpu(filter->stats);
	kfree(filter);
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

	hash_for_each_possible_rcu(kbloom_table, filter, node,
				   kbloom_name_hash(name))
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
	if (unlikely(!len || len > KBLOOM_KEY_MAX))
		return -EINVAL;
	if (unlikely(READ_ONCE(filter->dead)))
		return -ENOENT;
	kbloom_core_add(&filter->core, key, len);
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

	if (unlikely(!len || len > KBLOOM_KEY_MAX))
		return -EINVAL;
	if (unlikely(READ_ONCE(filter->dead)))
		return -ENOENT;
	hit = kbloom_core_test(&filter->core, key, len);
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

	if (unlikely(!len || len > KBLOOM_KEY_MAX))
		return -EINVAL;
	if (unlikely(READ_ONCE(filter->dead)))
		return -ENOENT;
	seen = kbloom_core_test_and_add(&filter->core, key, len);
	this_cpu_inc(filter->stats->adds);
	this_cpu_inc(filter->stats->queries);
	if (seen)
		this_cpu_inc(filter->stats->hits);
	return seen;
}
EXPORT_SYMBOL_NS_GPL(kbloom_test_and_add, KBLOOM);

/**
 * kbloom_filter_create() - create a named filter
 * @name: a name that passed kbloom_name_valid().
 * @p: its parameters, valid per kbloom_core_valid().
 *
 * Process context. The budget is reserved before the (possibly seconds
 * long) allocation and the mutex is not held across it, so a large create
 * does not stall the others; the name is checked again on insertion.
 *
 * Return: 0, -EFBIG (over the per-filter limit), -ENOSPC (over the budget),
 * -ENOMEM, -EEXIST. On error nothing is left behind.
 */
int kbloom_filter_create(const char *name, const struct kbloom_params *p)
{
	struct kbloom_filter *filter;
	size_t bytes = kbloom_core_bytes(p->nbits);
	unsigned long *bitmap;
	u32 seed[2];
	int ret;

	if (bytes > READ_ONCE(kbloom_max_filter_bytes))
		return -EFBIG;
	if (atomic64_add_return(bytes, &kbloom_mem_used) >
	    kbloom_memory_budget()) {
		ret = -ENOSPC;
		goto err_unreserve;
	}

	filter = kzalloc(sizeof(*filter), GFP_KERNEL_ACCOUNT);
	if (!filter) {
		ret = -ENOMEM;
		goto err_unreserve;
	}
	filter->stats = alloc_percpu_gfp(struct kbloom_stats,
					 GFP_KERNEL_ACCOUNT);
	if (!filter->stats) {
		ret = -ENOMEM;
		goto err_free_filter;
	}
	/* Charged to the creator's memory cgroup; no warning on failure. */
	bitmap = __vmalloc(bytes, GFP_KERNEL_ACCOUNT | __GFP_ZERO |
			   __GFP_NOWARN);
	if (!bitmap) {
		ret = -ENOMEM;
		goto err_free_stats;
	}
	get_random_bytes(seed, sizeof(seed));
	kbloom_core_init(&filter->core, bitmap, p->nbits, p->nhashes, seed);
	memzero_explicit(seed, sizeof(seed));
	filter->capacity = p->capacity;
	filter->fpr_ppb = p->fpr_ppb;
	filter->flags = p->flags;
	filter->bytes = bytes;
	strscpy(filter->name, name, sizeof(filter->name));

	mutex_lock(&kbloom_lock);
	if (kbloom_find_rcu(name)) {
		ret = -EEXIST;
		goto err_unlock;
	}
	ret = kbloom_sysfs_add(filter);
	if (ret) {
		/* The kobject now owns the filter: its release frees it. */
		mutex_unlock(&kbloom_lock);
		kobject_put(&filter->kobj);
		return ret;
	}
	hash_add_rcu(kbloom_table, &filter->node, kbloom_name_hash(name));
	WRITE_ONCE(kbloom_count, kbloom_count + 1);
	mutex_unlock(&kbloom_lock);
	return 0;

err_unlock:
	mutex_unlock(&kbloom_lock);
	vfree(bitmap);
err_free_stats:
	free_percpu(filter->stats);
err_free_filter:
	kfree(filter);
err_unreserve:
	atomic64_sub(bytes, &kbloom_mem_used);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(kbloom_filter_create, KBLOOM);

/* Unlink a filter and drop the table's reference. kbloom_lock held. */
static void kbloom_filter_unlink(struct kbloom_filter *filter)
{
	lockdep_assert_held(&kbloom_lock);
	WRITE_ONCE(filter->dead, true);
	hash_del_rcu(&filter->node);
	WRITE_ONCE(kbloom_count, kbloom_count - 1);
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
	int cpu;

	kbloom_core_clear(&filter->core);
	for_each_possible_cpu(cpu)
		memset(per_cpu_ptr(filter->stats, cpu), 0,
		       sizeof(struct kbloom_stats));
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
 * kbloom_filter_flush() - wait until every destroyed, unreferenced filter
 * has been freed
 *
 * Process context; may sleep for a grace period or more. For tests and
 * for teardown.
 */
void kbloom_filter_flush(void)
{
	/* Let queued rcu_work reach the workqueue, then drain it. */
	rcu_barrier();
	flush_workqueue(kbloom_wq);
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
	kbloom_filter_flush();
	destroy_workqueue(kbloom_wq);
}
