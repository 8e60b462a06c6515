// SPDX-License-Identifier: GPL-2.0
/*
 * Named filters.
 *
 * Locking: kbloom_lock (a mutex: creation and destruction sleep) serialises
 * changes to the name table and the sysfs directories. Lookups walk the
 * table under RCU and take a reference with refcount_inc_not_zero(), so
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
 * kobject core calls our release; in-kernel users hold a reference on the
 * module with every filter reference they hold (kbloom_get()), so rmmod
 * is refused, not blocked, while one is held. The memory budget is
 * charged per generation and per filter, from allocation to free, with
 * what they really cost, not only the bits.
 */

#include <linux/ctype.h>
#include <linux/hashtable.h>
#include <linux/jhash.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/u64_stats_sync.h>
#include <linux/xarray.h>

#include "kbloom.h"
#include "kbloom_filter.h"
#include "kbloom_gen.h"
#include "kbloom_storage.h"

static DEFINE_MUTEX(kbloom_lock);
static DEFINE_HASHTABLE(kbloom_table, 8);
/*
 * Filters by number, for callers that look a filter up per packet without
 * taking a reference (the BPF kfuncs' *_id calls): the xarray is read
 * under RCU, and a filter is freed only a grace period after it left it.
 * Ids are handed out cyclically, so a destroyed filter's id does not come
 * back soon and stale ids fail rather than reach a new filter.
 */
static DEFINE_XARRAY_ALLOC1(kbloom_ids);
/* And in front of it, slots (kbloom_filter.h), written under kbloom_lock. */
struct kbloom_filter __rcu *kbloom_id_slots[KBLOOM_ID_SLOTS];
static u32 kbloom_next_id;		/* under kbloom_lock */
static u32 kbloom_count;		/* under kbloom_lock */
unsigned int kbloom_max_filters = 4096;
/* The sysfs layer's (struct kbloom_filter_dir_ops). */
static const struct kbloom_filter_dir_ops *kbloom_dir_ops;

void kbloom_filter_set_dir_ops(const struct kbloom_filter_dir_ops *ops)
{
	kbloom_dir_ops = ops;
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

u32 kbloom_filter_count(void)
{
	return READ_ONCE(kbloom_count);
}

/*
 * What a filter costs beyond its generation: its structure, its per-CPU
 * traffic counters, and its sysfs directory (a kernfs node per file, the
 * directory and the name).
 */
#define KBLOOM_SYSFS_NODES	20

static size_t kbloom_filter_charge(void)
{
	return kmalloc_size_roundup(sizeof(struct kbloom_filter)) +
	       num_possible_cpus() * sizeof(struct kbloom_stats) +
	       KBLOOM_SYSFS_NODES * sizeof(struct kernfs_node) +
	       KBLOOM_NAME_MAX;
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

static const char *const kbloom_alert_names[KBLOOM_ALERT_NR] = {
	[KBLOOM_ALERT_FULL] = "full",
	[KBLOOM_ALERT_SATURATED] = "saturated",
	[KBLOOM_ALERT_ROTATED] = "rotated",
};

/*
 * The alerts raised since the last run, each a KOBJ_CHANGE uevent with
 * EVENT=, NAME=, and the fill then: BITS_SET= and BITS= (of the newest
 * generation, for a windowed filter). Under kbloom_lock, as every uevent
 * of a filter: a destroyed filter sends none.
 */
static void kbloom_filter_alert_work(struct work_struct *work)
{
	struct kbloom_filter *filter = container_of(work, struct kbloom_filter,
						    alert_work);
	unsigned long pending = xchg(&filter->alerts, 0);
	char event[24], name[8 + KBLOOM_NAME_MAX], bits_set[32], bits[32];
	struct kbloom_gen *gen = kbloom_gen_get(filter);
	u64 occupied, stuck;
	unsigned int a;
	char *envp[5];

	envp[0] = event;
	envp[1] = name;
	envp[2] = bits_set;
	envp[3] = bits;
	envp[4] = NULL;

	kbloom_gen_occupancy(gen, &occupied, &stuck);
	snprintf(name, sizeof(name), "NAME=%s", filter->name);
	snprintf(bits_set, sizeof(bits_set), "BITS_SET=%llu", occupied);
	snprintf(bits, sizeof(bits), "BITS=%llu", gen->core.nbits);
	kbloom_gen_put(gen);
	mutex_lock(&kbloom_lock);
	for_each_set_bit(a, &pending, KBLOOM_ALERT_NR) {
		if (filter->dead)
			break;
		snprintf(event, sizeof(event), "EVENT=%s",
			 kbloom_alert_names[a]);
		kobject_uevent_env(&filter->kobj, KOBJ_CHANGE, envp);
	}
	mutex_unlock(&kbloom_lock);
}

/**
 * kbloom_filter_alert() - have a fill alert sent for a filter
 * @filter: the filter, alive for the caller (held, or in an RCU reader);
 *	NULL for a generation no filter owns: nothing is sent.
 * @a: the alert.
 *
 * Any context but NMI; never sleeps: the uevent goes out from a work item.
 */
void kbloom_filter_alert(struct kbloom_filter *filter, enum kbloom_alert a)
{
	/* A generation of no filter (KUnit's own) alerts nobody. */
	if (filter && !test_and_set_bit(a, &filter->alerts))
		schedule_work(&filter->alert_work);
}

static void kbloom_filter_free(struct work_struct *work)
{
	struct kbloom_filter *filter =
		container_of(to_rcu_work(work), struct kbloom_filter, free_work);
	struct kbloom_gen *gen = rcu_dereference_protected(filter->gen, 1);

	/*
	 * Alerts were raised a grace period ago at the latest, by an
	 * operation or by the window's rotations, which stop here: nothing
	 * raises one now.
	 */
	if (gen && gen->win)
		kbloom_window_stop(gen->win);
	cancel_work_sync(&filter->alert_work);
	if (gen)	/* NULL only if creation failed half-way */
		kbloom_gen_put(gen);
	kbloom_uncharge(filter->charge);
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
 * kbloom_filter_get() - look a filter up by name and take a reference
 * @name: the filter's name.
 *
 * For kbloom's own callers, which run while the module is pinned anyway
 * (an open /dev/bloom, a sysfs file). Any context; RCU-safe against
 * concurrent destruction.
 *
 * Return: the filter, to be released with kbloom_filter_put(), or NULL.
 */
struct kbloom_filter *kbloom_filter_get(const char *name)
{
	struct kbloom_filter *filter;

	rcu_read_lock();
	filter = kbloom_find_rcu(name);
	if (filter && !refcount_inc_not_zero(&filter->ref))
		filter = NULL;
	rcu_read_unlock();
	return filter;
}

void kbloom_filter_put(struct kbloom_filter *filter)
{
	if (filter && refcount_dec_and_test(&filter->ref))
		kobject_put(&filter->kobj);
}

/* kbloom_id_lookup_rcu()'s way when the slot holds another filter. */
struct kbloom_filter *kbloom_id_lookup_xa(u32 id)
{
	return xa_load(&kbloom_ids, id);
}

/* Publish @filter, found by id from now on. kbloom_lock held. */
static void kbloom_id_publish(struct kbloom_filter *filter)
{
	struct kbloom_filter __rcu **slot = kbloom_id_slot(filter->id);

	lockdep_assert_held(&kbloom_lock);
	/* Into the reserved entry: no allocation, so it cannot fail. */
	WARN_ON_ONCE(xa_is_err(xa_store(&kbloom_ids, filter->id, filter,
					GFP_KERNEL_ACCOUNT)));
	if (!rcu_access_pointer(*slot))
		rcu_assign_pointer(*slot, filter);
}

/* Slots of the by-id lookup that hold no filter. */
u32 kbloom_id_slots_free(void)
{
	u32 i, n = 0;

	for (i = 0; i < KBLOOM_ID_SLOTS; i++)
		n += !rcu_access_pointer(kbloom_id_slots[i]);
	return n;
}

/*
 * Reserve an id for @filter (a NULL entry reads as no filter), cyclically,
 * skipping the ids whose slot another live filter holds while a slot is
 * free: else, once KBLOOM_ID_SLOTS filters have been made, a new filter
 * would land on the slot of any older one still alive and take the
 * xarray's way on every packet. Skipped ids are never handed out; they
 * only bring the wrap of the ids closer (at worst a create spends
 * KBLOOM_ID_SLOTS ids: 8M creates before a stale id can name a new
 * filter, against 2G without skipping). kbloom_lock held.
 */
static int kbloom_id_reserve(struct kbloom_filter *filter)
{
	int ret, tries;
	bool full;

	lockdep_assert_held(&kbloom_lock);
	full = !kbloom_id_slots_free();
	for (tries = 1; ; tries++) {
		ret = xa_alloc_cyclic(&kbloom_ids, &filter->id, NULL,
				      XA_LIMIT(1, INT_MAX), &kbloom_next_id,
				      GFP_KERNEL_ACCOUNT);
		if (ret < 0)
			return ret;
		/*
		 * 1 (the ids wrapped) is a success too. A free slot is at
		 * most KBLOOM_ID_SLOTS ids ahead.
		 */
		if (full || tries >= KBLOOM_ID_SLOTS ||
		    !rcu_access_pointer(*kbloom_id_slot(filter->id)))
			return 0;
		xa_erase(&kbloom_ids, filter->id);
	}
}

/*
 * Unpublish @filter: not found by id from now on; readers that found it
 * still hold valid memory until a grace period. kbloom_lock held.
 */
static void kbloom_id_unpublish(struct kbloom_filter *filter)
{
	struct kbloom_filter __rcu **slot = kbloom_id_slot(filter->id);
	struct kbloom_filter *other;
	unsigned long id;

	lockdep_assert_held(&kbloom_lock);
	xa_erase(&kbloom_ids, filter->id);
	if (rcu_access_pointer(*slot) != filter)
		return;
	/*
	 * Hand the slot to another live filter of the same id modulo
	 * KBLOOM_ID_SLOTS, if there is one: else it would take the xarray's
	 * way on every packet for as long as it lives. A walk of at most
	 * max_filters entries, on destroy only.
	 */
	RCU_INIT_POINTER(*slot, NULL);
	xa_for_each(&kbloom_ids, id, other) {
		if (kbloom_id_slot(id) == slot) {
			rcu_assign_pointer(*slot, other);
			break;
		}
	}
}

/**
 * kbloom_filter_by_id_rcu() - the filter of this id, without a reference
 * @id: its number (sysfs "id").
 *
 * In an RCU read-side section (any flavour); the filter stays valid memory
 * until it is dropped. A filter destroyed meanwhile answers -ENOENT to the
 * API calls.
 *
 * Return: the filter, or NULL.
 */
struct kbloom_filter *kbloom_filter_by_id_rcu(u32 id)
{
	RCU_LOCKDEP_WARN(!rcu_read_lock_any_held(),
			 "kbloom id lookup outside RCU");
	return kbloom_id_lookup_rcu(id);
}

/**
 * kbloom_filter_id() - a filter's id, looked up by name, for BPF programs
 * @name: its name.
 *
 * Any context.
 *
 * Return: the id (positive), -ENOENT, or -EACCES if the filter is closed
 * to BPF programs (@bpf_ops).
 */
int kbloom_filter_id(const char *name)
{
	struct kbloom_filter *filter;
	int id = -ENOENT;

	rcu_read_lock();
	filter = kbloom_find_rcu(name);
	if (filter && !READ_ONCE(filter->dead))
		id = filter->bpf_ops ? filter->id : -EACCES;
	rcu_read_unlock();
	return id;
}

static void kbloom_filter_unlink(struct kbloom_filter *filter);

/**
 * kbloom_pin() - keep a filter from being destroyed from userspace
 * @filter: a filter held with kbloom_get().
 *
 * For users whose lifetime an administrator configures, such as a
 * netfilter rule: while pinned, KBLOOM_IOC_DESTROY fails with -EBUSY (so
 * the rule cannot silently stop working) and sysfs "rules" counts the
 * pins. Process context.
 *
 * Return: 0, or -ENOENT if the filter has been destroyed already.
 */
int kbloom_pin(struct kbloom_filter *filter)
{
	int ret = 0;

	mutex_lock(&kbloom_lock);
	if (filter->dead)
		ret = -ENOENT;
	else
		WRITE_ONCE(filter->pins, filter->pins + 1);
	mutex_unlock(&kbloom_lock);
	return ret;
}
EXPORT_SYMBOL_NS_GPL(kbloom_pin, KBLOOM);

/**
 * kbloom_unpin() - undo kbloom_pin()
 * @filter: a pinned filter.
 *
 * The last unpin of a filter a rule made (kbloom_get_shaped()) destroys
 * it. Process context.
 */
void kbloom_unpin(struct kbloom_filter *filter)
{
	mutex_lock(&kbloom_lock);
	if (!WARN_ON_ONCE(!filter->pins))
		WRITE_ONCE(filter->pins, filter->pins - 1);
	/* A rule's own filter goes with its last rule. */
	if (!filter->pins && filter->ruled && !filter->dead)
		kbloom_filter_unlink(filter);
	mutex_unlock(&kbloom_lock);
}
EXPORT_SYMBOL_NS_GPL(kbloom_unpin, KBLOOM);

unsigned int kbloom_filter_pins(struct kbloom_filter *filter)
{
	return READ_ONCE(filter->pins);
}

/* Sum the per-CPU counters as they are, without the baseline. */
static void kbloom_stats_sum(struct kbloom_filter *filter,
			     struct kbloom_totals *t)
{
	int cpu;

	memset(t, 0, sizeof(*t));
	for_each_possible_cpu(cpu) {
		const struct kbloom_stats *s = per_cpu_ptr(filter->stats, cpu);
		u64 v[KBLOOM_STAT_NR], ta;
		unsigned int start;
		int i;

		do {
			start = u64_stats_fetch_begin(&s->syncp);
			for (i = 0; i < KBLOOM_STAT_NR; i++)
				v[i] = u64_stats_read(&s->n[i]);
		} while (u64_stats_fetch_retry(&s->syncp, start));
		/* A test-and-add is an add and a query. */
		ta = v[KBLOOM_STAT_TEST_AND_ADD_MISS] +
		     v[KBLOOM_STAT_TEST_AND_ADD_HIT];
		t->adds += v[KBLOOM_STAT_ADD] + ta;
		t->queries += v[KBLOOM_STAT_QUERY_MISS] +
			      v[KBLOOM_STAT_QUERY_HIT] + ta;
		t->hits += v[KBLOOM_STAT_QUERY_HIT] +
			   v[KBLOOM_STAT_TEST_AND_ADD_HIT];
	}
}

/*
 * Start the statistics over, with @adds keys already in. The per-CPU
 * counters belong to their CPUs and are never written from here: the
 * current sums become the baseline that reads subtract. An increment
 * racing with this lands either in the baseline (and is not reported
 * after the reset) or after it (and is); none is lost or torn.
 * Caller holds filter->lock.
 */
static void kbloom_stats_reset(struct kbloom_filter *filter, u64 adds)
{
	lockdep_assert_held(&filter->lock);
	kbloom_stats_sum(filter, &filter->base);
	filter->base.adds -= adds;
}

/**
 * kbloom_filter_add_gen() - create a named filter around a generation
 * @name: a name that passed kbloom_name_valid().
 * @gen: from kbloom_gen_new(), filled in; on success the filter owns the
 *	caller's reference, on failure the caller still does.
 * @p: the keys already in @gen (@p->adds), for the statistics.
 * @filterp: if not NULL, on success, the new filter with a reference the
 *	caller drops with kbloom_filter_put().
 *
 * Process context.
 *
 * Return: 0, -EEXIST, -EDQUOT (max_filters reached), -ENOSPC (its
 * bookkeeping would exceed the budget), or an allocation or sysfs error.
 */
int kbloom_filter_add_gen(const char *name, struct kbloom_gen *gen,
			  const struct kbloom_params *p,
			  struct kbloom_filter **filterp)
{
	size_t charge = kbloom_filter_charge();
	struct kbloom_filter *filter;
	int ret;

	ret = kbloom_charge(charge);
	if (ret)
		return ret;
	filter = kzalloc(sizeof(*filter), GFP_KERNEL_ACCOUNT);
	if (!filter) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	filter->stats = alloc_percpu_gfp(struct kbloom_stats,
					 GFP_KERNEL_ACCOUNT);
	if (!filter->stats) {
		ret = -ENOMEM;
		goto err_free_filter;
	}
	filter->charge = charge;
	filter->bpf_ops = p->bpf_ops;
	filter->ruled = p->ruled;
	INIT_WORK(&filter->alert_work, kbloom_filter_alert_work);
	gen->owner = filter;
	gen->alert = kbloom_filter_alert;
	mutex_init(&filter->lock);
	refcount_set(&filter->ref, 1);	/* the table's */
	RCU_INIT_POINTER(filter->gen, gen);
	/* Fresh counters are zero: the baseline only carries the image's adds. */
	filter->base.adds = -p->adds;
	atomic_inc(&kbloom_live);
	strscpy(filter->name, name, sizeof(filter->name));

	mutex_lock(&kbloom_lock);
	if (kbloom_find_rcu(name)) {
		ret = -EEXIST;
		goto err_unlock;
	}
	if (kbloom_count >= READ_ONCE(kbloom_max_filters)) {
		ret = -EDQUOT;
		goto err_unlock;
	}
	/*
	 * Reserve the id, so that sysfs can show it; the filter is stored
	 * once it is linked.
	 */
	ret = kbloom_id_reserve(filter);
	if (ret < 0)
		goto err_unlock;
	ret = kbloom_dir_ops->add(filter);
	if (ret) {
		/* Only reserved, not published: no slot to clear. */
		xa_erase(&kbloom_ids, filter->id);
		mutex_unlock(&kbloom_lock);
		/*
		 * The kobject owns the filter now: the last put (the table's
		 * reference, never published) has its release free it and
		 * return its charge; the generation stays the caller's.
		 */
		RCU_INIT_POINTER(filter->gen, NULL);
		kbloom_filter_put(filter);
		return ret;
	}
	/* Before the name: whoever finds the filter by name can use its id. */
	kbloom_id_publish(filter);
	hash_add_rcu(kbloom_table, &filter->node, kbloom_name_hash(name));
	WRITE_ONCE(kbloom_count, kbloom_count + 1);
	if (gen->win)
		kbloom_window_start(gen->win);
	/* Under the lock: a racing destroy cannot free it under us. */
	kobject_uevent(&filter->kobj, KOBJ_ADD);
	if (filterp) {
		refcount_inc(&filter->ref);
		*filterp = filter;
	}
	mutex_unlock(&kbloom_lock);
	return 0;

err_unlock:
	mutex_unlock(&kbloom_lock);
	mutex_destroy(&filter->lock);
	free_percpu(filter->stats);
	kbloom_live_dec();
err_free_filter:
	kfree(filter);
err_uncharge:
	kbloom_uncharge(charge);
	return ret;
}

/**
 * kbloom_filter_create() - create a named, empty filter
 * @name: a name that passed kbloom_name_valid().
 * @p: its parameters, valid per kbloom_core_valid().
 * @filterp: as for kbloom_filter_add_gen().
 *
 * Process context.
 *
 * Return: 0, -EFBIG (over the per-filter limit), -ENOSPC (over the budget),
 * -EDQUOT (max_filters reached), -ENOMEM, -EEXIST. On error nothing is
 * left behind.
 */
int kbloom_filter_create(const char *name, const struct kbloom_params *p,
			 struct kbloom_filter **filterp)
{
	struct kbloom_gen *gen;
	int ret;

	/* Checked again under the lock; this spares a doomed allocation. */
	if (kbloom_filter_count() >= READ_ONCE(kbloom_max_filters))
		return -EDQUOT;
	gen = kbloom_gen_new(p);
	if (IS_ERR(gen))
		return PTR_ERR(gen);
	ret = kbloom_filter_add_gen(name, gen, p, filterp);
	if (ret)
		kbloom_gen_destroy(gen);
	return ret;
}

/**
 * kbloom_filter_create_like() - create an empty filter compatible with another
 * @name: a name that passed kbloom_name_valid().
 * @like: the filter whose size, hashes, flags, capacity and seed to copy.
 * @used: in: @flags, the KBLOOM_CORE_* flags the caller expects @like to
 *	have, and the new filter's @bpf_ops and @track_changes, which are not
 *	copied; out: the parameters of the new filter (its seed pointer is not
 *	valid after return).
 * @filterp: as for kbloom_filter_add_gen().
 *
 * The two can then be merged and compared. Process context.
 *
 * Return: as kbloom_filter_create(), -ENOENT if @like does not exist,
 * -EINVAL if it lacks one of @flags.
 */
int kbloom_filter_create_like(const char *name, const char *like,
			      struct kbloom_params *used,
			      struct kbloom_filter **filterp)
{
	struct kbloom_filter *model = kbloom_filter_get(like);
	struct kbloom_params p;
	struct kbloom_gen *gen;
	u32 seed[4];
	int ret;

	if (!model)
		return -ENOENT;
	gen = kbloom_gen_get(model);
	kbloom_gen_params(gen, &p, seed);
	kbloom_gen_put(gen);
	kbloom_filter_put(model);
	/* The caller's, not the model's. */
	p.bpf_ops = used->bpf_ops;
	p.track_changes = used->track_changes;
	/* Counting filters do not track (kbloom_params_check()). */
	if (used->flags & ~p.flags ||
	    (p.track_changes && p.flags & KBLOOM_CORE_COUNTING))
		ret = -EINVAL;
	else
		ret = kbloom_filter_create(name, &p, filterp);
	memzero_explicit(seed, sizeof(seed));
	p.seed = NULL;
	*used = p;
	return ret;
}

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
	struct kbloom_filter *filter = kbloom_filter_get(name);
	struct kbloom_gen *old;

	if (!filter)
		return -ENOENT;
	mutex_lock(&filter->lock);
	/* Destroyed since the lookup: the new contents would be lost. */
	if (filter->dead) {
		mutex_unlock(&filter->lock);
		kbloom_filter_put(filter);
		return -ENOENT;
	}
	gen->owner = filter;
	gen->alert = kbloom_filter_alert;
	old = rcu_replace_pointer(filter->gen, gen,
				  lockdep_is_held(&filter->lock));
	kbloom_stats_reset(filter, p->adds);
	if (gen->win)
		kbloom_window_start(gen->win);
	mutex_unlock(&filter->lock);
	kbloom_filter_put(filter);
	/* The old one rotates no more (and alerts no more). */
	if (old->win)
		kbloom_window_stop(old->win);
	/* Hot-path readers may still be in the old one: freed later. */
	kbloom_gen_put(old);
	return 0;
}

/* Unlink a filter and drop the table's reference. kbloom_lock held. */
static void kbloom_filter_unlink(struct kbloom_filter *filter)
{
	lockdep_assert_held(&kbloom_lock);
	/* Under the filter's lock: see kbloom_filter_replace_gen(). */
	mutex_lock(&filter->lock);
	WRITE_ONCE(filter->dead, true);
	mutex_unlock(&filter->lock);
	hash_del_rcu(&filter->node);
	kbloom_id_unpublish(filter);
	WRITE_ONCE(kbloom_count, kbloom_count - 1);
	kobject_uevent(&filter->kobj, KOBJ_REMOVE);
	/* Under the lock, so a new filter of this name can reuse the dir. */
	kbloom_dir_ops->del(filter);
	kbloom_filter_put(filter);
}

/* Would @p make @filter's shape again? Under kbloom_lock. */
static bool kbloom_filter_same(struct kbloom_filter *filter,
			       const struct kbloom_params *p)
{
	struct kbloom_gen *gen = rcu_dereference_protected(filter->gen,
				lockdep_is_held(&kbloom_lock));
	struct kbloom_params have;
	u32 seed[4];

	kbloom_gen_params(gen, &have, seed);
	memzero_explicit(seed, sizeof(seed));
	return have.nbits == p->nbits && have.nhashes == p->nhashes &&
	       have.flags == p->flags && have.capacity == p->capacity &&
	       have.fpr_ppb == p->fpr_ppb &&
	       have.generations == p->generations &&
	       have.window_ms == p->window_ms &&
	       have.rotate_at_fill == p->rotate_at_fill &&
	       filter->bpf_ops == p->bpf_ops;
}

/**
 * kbloom_filter_adopt() - take over a filter a rule made
 * @name: its name.
 * @p: the parameters CREATE was asked for.
 * @filterp: on success, the filter with a reference the caller drops.
 *
 * CREATE of the name of a filter that a rule made (kbloom_get_shaped())
 * with the same shape makes it userspace's: it then stays when its last
 * rule goes, as a filter CREATE made. Process context.
 *
 * Return: 0, or -EEXIST if there is a filter of that name that no rule
 * made or of another shape (-ENOENT if there is none).
 */
int kbloom_filter_adopt(const char *name, const struct kbloom_params *p,
			struct kbloom_filter **filterp)
{
	struct kbloom_filter *filter;
	int ret = -EEXIST;

	mutex_lock(&kbloom_lock);
	filter = kbloom_find_rcu(name);
	if (!filter) {
		ret = -ENOENT;
	} else if (filter->ruled && kbloom_filter_same(filter, p)) {
		filter->ruled = false;
		refcount_inc(&filter->ref);
		*filterp = filter;
		ret = 0;
	}
	mutex_unlock(&kbloom_lock);
	return ret;
}

/**
 * kbloom_filter_destroy() - destroy a filter by name
 * @name: its name.
 *
 * Process context. Users holding a reference keep valid memory and get
 * -ENOENT from then on.
 *
 * Return: 0, -ENOENT, or -EBUSY if the filter is pinned (kbloom_pin()).
 */
int kbloom_filter_destroy(const char *name)
{
	struct kbloom_filter *filter;
	int ret = 0;

	mutex_lock(&kbloom_lock);
	filter = kbloom_find_rcu(name);
	if (!filter)
		ret = -ENOENT;
	else if (filter->pins)
		ret = -EBUSY;
	else
		kbloom_filter_unlink(filter);
	mutex_unlock(&kbloom_lock);
	return ret;
}

/**
 * kbloom_filter_unlink_this() - destroy this very filter, if it still exists
 * @filter: a held filter.
 *
 * Unlike kbloom_filter_destroy(), never touches another filter that has
 * since taken the same name. Process context.
 *
 * Return: 0, -ENOENT if it was destroyed already, -EBUSY if pinned.
 */
int kbloom_filter_unlink_this(struct kbloom_filter *filter)
{
	int ret = 0;

	mutex_lock(&kbloom_lock);
	if (filter->dead)
		ret = -ENOENT;
	else if (filter->pins)
		ret = -EBUSY;
	else
		kbloom_filter_unlink(filter);
	mutex_unlock(&kbloom_lock);
	return ret;
}

/**
 * kbloom_filter_clear() - zero a filter's bits and counters
 * @filter: a held filter.
 *
 * Process context; may sleep.
 *
 * Return: 0, or -EINTR if a fatal signal stopped it part-way (the
 * statistics then stay as they were).
 */
int kbloom_filter_clear(struct kbloom_filter *filter)
{
	struct kbloom_gen *gen = kbloom_gen_get(filter);
	u32 i, n = kbloom_gen_slices(gen);
	int ret = 0;

	kbloom_gen_lock(gen);
	for (i = 0; i < n && !ret; i++) {
		struct kbloom_delta d = {};

		ret = kbloom_core_clear(kbloom_gen_slice(gen, i), &d);
		kbloom_occ_account(kbloom_gen_slice_occ(gen, i), &d);
	}
	kbloom_gen_unlock(gen);
	/* Emptied: its alerts may come again. */
	if (!ret)
		WRITE_ONCE(gen->alerted, 0);
	kbloom_gen_put(gen);
	if (ret)
		return ret;
	mutex_lock(&filter->lock);
	kbloom_stats_reset(filter, 0);
	mutex_unlock(&filter->lock);
	return 0;
}

/**
 * kbloom_filter_totals() - a filter's statistics
 * @filter: a held filter.
 * @t: the sums of the per-CPU counters since the last reset.
 *
 * Process context (takes the filter's mutex for the baseline).
 */
void kbloom_filter_totals(struct kbloom_filter *filter,
			  struct kbloom_totals *t)
{
	mutex_lock(&filter->lock);
	kbloom_stats_sum(filter, t);
	t->adds -= filter->base.adds;
	t->queries -= filter->base.queries;
	t->hits -= filter->base.hits;
	mutex_unlock(&filter->lock);
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

int kbloom_filter_init(void)
{
	/*
	 * Frees must not pile up behind unrelated work; rmmod drains it.
	 * Unbound: freeing a filter of gigabytes takes seconds (tens under
	 * KASAN) and must not hold up a CPU's pool of bound workers.
	 */
	kbloom_wq = alloc_workqueue("kbloom", WQ_UNBOUND, 0);
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
