// SPDX-License-Identifier: GPL-2.0
/*
 * The in-kernel API for other modules (kbloom.h, namespace KBLOOM): what
 * they call, over the registry (kbloom_filter.c) and the generations
 * (kbloom_gen.c). The one-key path is inlined from kbloom_filter.h, so
 * that a call from a packet path is one call into kbloom. kbloom_pin()
 * and kbloom_unpin() are exported by the registry, whose lock and unlink
 * they take.
 */

#include <linux/capability.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/string.h>

#include "kbloom.h"
#include "kbloom_filter.h"
#include "kbloom_gen.h"
#include "kbloom_params.h"

/**
 * kbloom_get() - look a filter up by name and take a reference
 * @name: the filter's name.
 *
 * For other modules. Any context; RCU-safe against concurrent destruction.
 * The reference also holds kbloom.ko: rmmod is refused while it is held,
 * rather than waiting for ever for a user that leaked it.
 *
 * Return: the filter, to be released with kbloom_put(), or NULL if there is
 * no filter of that name.
 */
struct kbloom_filter *kbloom_get(const char *name)
{
	struct kbloom_filter *filter;

	if (!try_module_get(THIS_MODULE))
		return NULL;
	filter = kbloom_filter_get(name);
	if (!filter)
		module_put(THIS_MODULE);
	return filter;
}
EXPORT_SYMBOL_NS_GPL(kbloom_get, KBLOOM);

/**
 * kbloom_get_shaped() - kbloom_get(), making the filter if it is missing
 * @name: the filter's name.
 * @shape: what to make it of, if it has to be made.
 * @created: out: whether this call made it.
 *
 * For rules that carry their filter (xt_bloom): whatever boots first, the
 * rules or the filters, the rules find their filter. One made here is
 * destroyed when its last pin goes (kbloom_unpin()), unless userspace
 * adopted it since (kbloom_filter_adopt()). Making it takes what CREATE
 * takes: CAP_SYS_ADMIN, a valid shape, room in the memory budget and
 * under max_filters. An existing filter is returned whatever its shape:
 * the caller compares (kbloom_shape_of()). Process context.
 *
 * Return: the filter, to be released with kbloom_put(), or an ERR_PTR:
 * -EINVAL (a bad name or shape), -EPERM (no CAP_SYS_ADMIN to make it),
 * or what kbloom_filter_create() returns.
 */
struct kbloom_filter *kbloom_get_shaped(const char *name,
					const struct kbloom_shape *shape,
					bool *created)
{
	struct kbloom_create c = {
		.capacity = shape->capacity,
		.fpr_ppb = shape->fpr_ppb,
		.flags = shape->flags,
		.hash_scheme = shape->hash_scheme,
		.window_ms = shape->window_ms,
		.generations = shape->generations,
	};
	struct kbloom_params p = { .ruled = true };
	struct kbloom_filter *filter;
	int ret;

	*created = false;
	if (!kbloom_name_valid(name) ||
	    shape->flags & ~(KBLOOM_CREATE_COUNTING | KBLOOM_CREATE_BLOCKED))
		return ERR_PTR(-EINVAL);
	filter = kbloom_get(name);
	if (filter)
		return filter;
	if (!capable(CAP_SYS_ADMIN))
		return ERR_PTR(-EPERM);
	p.flags = kbloom_core_flags(c.flags);
	ret = kbloom_create_params(&c, &p);
	if (ret)
		return ERR_PTR(ret);
	if (!try_module_get(THIS_MODULE))
		return ERR_PTR(-ENODEV);
	ret = kbloom_filter_create(name, &p, &filter);
	if (!ret) {
		*created = true;
		return filter;
	}
	module_put(THIS_MODULE);
	/* Made meanwhile by someone else: that one, then. */
	if (ret == -EEXIST)
		filter = kbloom_get(name);
	return filter ? filter : ERR_PTR(ret);
}
EXPORT_SYMBOL_NS_GPL(kbloom_get_shaped, KBLOOM);

/**
 * kbloom_shape_of() - a filter's shape, as kbloom_get_shaped() takes it
 * @filter: a held filter.
 * @shape: out.
 *
 * Process context.
 */
void kbloom_shape_of(struct kbloom_filter *filter, struct kbloom_shape *shape)
{
	struct kbloom_gen *gen = kbloom_gen_get(filter);

	memset(shape, 0, sizeof(*shape));
	shape->capacity = gen->capacity;
	shape->fpr_ppb = gen->fpr_ppb;
	shape->flags = kbloom_uapi_flags(gen->core.flags);
	shape->hash_scheme = kbloom_flags_scheme(gen->core.flags);
	if (gen->win) {
		shape->window_ms = gen->win->window_ms;
		shape->generations = gen->win->generations;
	}
	kbloom_gen_put(gen);
}
EXPORT_SYMBOL_NS_GPL(kbloom_shape_of, KBLOOM);

/**
 * kbloom_put() - drop a reference taken by kbloom_get()
 * @filter: the filter; NULL is ignored.
 *
 * Any context. The last reference to a destroyed filter frees it, after an
 * RCU grace period, from process context.
 */
void kbloom_put(struct kbloom_filter *filter)
{
	if (filter) {
		kbloom_filter_put(filter);
		module_put(THIS_MODULE);
	}
}
EXPORT_SYMBOL_NS_GPL(kbloom_put, KBLOOM);

/**
 * kbloom_is_counting() - can keys be removed from this filter?
 * @filter: a held filter.
 *
 * Any context.
 *
 * Return: true for a counting filter.
 */
bool kbloom_is_counting(struct kbloom_filter *filter)
{
	bool counting;

	rcu_read_lock();
	counting = kbloom_filter_core(filter)->flags & KBLOOM_CORE_COUNTING;
	rcu_read_unlock();
	return counting;
}
EXPORT_SYMBOL_NS_GPL(kbloom_is_counting, KBLOOM);

static __always_inline int kbloom_filter_do(struct kbloom_filter *filter,
					    enum kbloom_op op,
					    const void *key, u32 len)
{
	int ret;

	/* As kbloom_filter_do_id(): one inline section, preemption off. */
	rcu_read_lock_sched();
	ret = kbloom_filter_do_rcu(filter, op, key, len);
	rcu_read_unlock_sched();
	return ret;
}

/**
 * kbloom_add() - insert a key
 * @filter: a filter held with kbloom_get().
 * @key: the key bytes.
 * @len: its length, 1 to KBLOOM_KEY_MAX.
 *
 * Any context, lock-free, never sleeps. Once this returns, the key tests
 * present in every later kbloom_query() ordered after it.
 *
 * Return: 0, -EINVAL for a bad length, -ENOENT if the filter was destroyed.
 */
int kbloom_add(struct kbloom_filter *filter, const void *key, u32 len)
{
	return kbloom_filter_do(filter, KBLOOM_OP_ADD, key, len);
}
EXPORT_SYMBOL_NS_GPL(kbloom_add, KBLOOM);

/**
 * kbloom_query() - may the key be present?
 * @filter: a filter held with kbloom_get().
 * @key: the key bytes.
 * @len: its length, 1 to KBLOOM_KEY_MAX.
 *
 * Any context, lock-free, never sleeps.
 *
 * Return: 1 if the key may be present, 0 if it certainly is not, -EINVAL
 * for a bad length, -ENOENT if the filter was destroyed.
 */
int kbloom_query(struct kbloom_filter *filter, const void *key, u32 len)
{
	return kbloom_filter_do(filter, KBLOOM_OP_QUERY, key, len);
}
EXPORT_SYMBOL_NS_GPL(kbloom_query, KBLOOM);

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
	return kbloom_filter_do(filter, KBLOOM_OP_TEST_AND_ADD, key, len);
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
	return kbloom_filter_do(filter, KBLOOM_OP_REMOVE, key, len);
}
EXPORT_SYMBOL_NS_GPL(kbloom_remove, KBLOOM);

/*
 * The batch calls: check every length first (nothing is done if one is
 * bad), then run @op on all the keys on one generation, pipelined.
 */
static int kbloom_api_batch(struct kbloom_filter *filter, enum kbloom_op op,
			    const void *keys, const u32 *lens, u32 n,
			    u8 *results)
{
	struct kbloom_gen *gen;
	u32 i, hits = 0;
	int ret = 0;

	if (unlikely(n > KBLOOM_BATCH_MAX))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		ret = kbloom_api_check(filter, lens[i]);
		if (unlikely(ret))
			return ret;
	}
	if (results)
		memset(results, 0, DIV_ROUND_UP(n, 8));
	rcu_read_lock();
	gen = kbloom_filter_gen(filter);
	if (op == KBLOOM_OP_REMOVE && !(gen->core.flags & KBLOOM_CORE_COUNTING))
		ret = -EOPNOTSUPP;
	else if (unlikely(READ_ONCE(filter->dead)))
		ret = -ENOENT;
	else if (n)
		hits = kbloom_gen_do_batch(gen, op, keys, lens, n, results);
	rcu_read_unlock();
	if (ret)
		return ret;
	kbloom_filter_count_op(filter, op, n, hits);
	return hits;
}

/**
 * kbloom_add_batch() - insert many keys
 * @filter: a filter held with kbloom_get().
 * @keys: the keys' bytes, back to back.
 * @lens: their lengths, each 1 to KBLOOM_KEY_MAX.
 * @n: how many keys, at most KBLOOM_BATCH_MAX.
 *
 * What kbloom_add() does to each key, in order, with the keys' cache
 * misses overlapped (for a NAPI poll's or a GRO batch's worth of keys).
 * Any context, lock-free, never sleeps. A bad length anywhere fails the
 * call before any key is added.
 *
 * Return: 0, -EINVAL (a bad length, or @n too large), -ENOENT (destroyed).
 */
int kbloom_add_batch(struct kbloom_filter *filter, const void *keys,
		     const u32 *lens, u32 n)
{
	int ret = kbloom_api_batch(filter, KBLOOM_OP_ADD, keys, lens, n, NULL);

	return ret < 0 ? ret : 0;
}
EXPORT_SYMBOL_NS_GPL(kbloom_add_batch, KBLOOM);

/**
 * kbloom_query_batch() - which of many keys may be present?
 * @filter: a filter held with kbloom_get().
 * @keys: the keys' bytes, back to back.
 * @lens: their lengths, each 1 to KBLOOM_KEY_MAX.
 * @n: how many keys, at most KBLOOM_BATCH_MAX.
 * @results: (@n + 7) / 8 bytes: bit i % 8 of byte i / 8 (the layout of
 *	the batch ioctls' results, whatever the CPU) is set if key i may be
 *	present, clear if it certainly is not.
 *
 * As kbloom_query() on each key, pipelined. Any context, never sleeps.
 *
 * Return: the number of keys that may be present, -EINVAL, -ENOENT.
 */
int kbloom_query_batch(struct kbloom_filter *filter, const void *keys,
		       const u32 *lens, u32 n, u8 *results)
{
	return kbloom_api_batch(filter, KBLOOM_OP_QUERY, keys, lens, n,
				results);
}
EXPORT_SYMBOL_NS_GPL(kbloom_query_batch, KBLOOM);

/**
 * kbloom_test_and_add_batch() - add many keys, saying which were seen
 * @filter: a filter held with kbloom_get().
 * @keys: the keys' bytes, back to back.
 * @lens: their lengths, each 1 to KBLOOM_KEY_MAX.
 * @n: how many keys, at most KBLOOM_BATCH_MAX.
 * @results: (@n + 7) / 8 bytes: bit i % 8 of byte i / 8 is set if key i
 *	was (maybe) present before, clear if it was new. A key repeated in the batch is
 *	seen by its later copies.
 *
 * As kbloom_test_and_add() on each key in order, pipelined. Any context,
 * never sleeps.
 *
 * Return: the number of keys seen before, -EINVAL, -ENOENT.
 */
int kbloom_test_and_add_batch(struct kbloom_filter *filter, const void *keys,
			      const u32 *lens, u32 n, u8 *results)
{
	return kbloom_api_batch(filter, KBLOOM_OP_TEST_AND_ADD, keys, lens, n,
				results);
}
EXPORT_SYMBOL_NS_GPL(kbloom_test_and_add_batch, KBLOOM);
