/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Named filters: creation, lookup, reference counting, contents swapped
 * atomically (image load), destruction.
 */
#ifndef _KBLOOM_FILTER_H
#define _KBLOOM_FILTER_H

#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/stddef.h>
#include <linux/u64_stats_sync.h>
#include <linux/workqueue.h>
#include <uapi/linux/kbloom.h>

#include "kbloom_core.h"
#include "kbloom_gen.h"

/*
 * Hot-path counters of a filter's traffic, one set per CPU so that no
 * shared cache line is written per packet. One counter per operation and
 * answer, so that a key costs one counter's increment, not one for each
 * total it counts in (a query that hits is a query and a hit): a packet
 * path pays for every read-modify-write of memory. The totals (struct
 * kbloom_totals) are sums of them, made when read.
 */
enum kbloom_stat {
	KBLOOM_STAT_ADD,
	KBLOOM_STAT_QUERY_MISS,
	KBLOOM_STAT_QUERY_HIT,		/* _MISS + 1: see kbloom_stat_of() */
	KBLOOM_STAT_TEST_AND_ADD_MISS,
	KBLOOM_STAT_TEST_AND_ADD_HIT,
	KBLOOM_STAT_NR
};

/* kbloom_stats_count_op() counts a hit one past its miss. */
static_assert(KBLOOM_STAT_QUERY_HIT - KBLOOM_STAT_QUERY_MISS == 1 &&
	      KBLOOM_STAT_TEST_AND_ADD_HIT - KBLOOM_STAT_TEST_AND_ADD_MISS == 1,
	      "a hit's counter follows its miss's");

/* Summed when read, with u64_stats_sync: a 32-bit reader sees no tear. */
struct kbloom_stats {
	u64_stats_t n[KBLOOM_STAT_NR];
	struct u64_stats_sync syncp;
};

/* Sums of a filter's struct kbloom_stats. */
struct kbloom_totals {
	u64 adds;
	u64 queries;
	u64 hits;
};

/*
 * What a BPF program holds of a filter (kbloom_bpf.c): a type with no
 * members. The verifier lets a program load any member of the struct its
 * pointer's BTF names, and 6.1 does so without CAP_PERFMON; through this
 * type every load is beyond the struct and refused, so no program reaches
 * the seed, the storage or any kernel pointer. The kfuncs find the filter
 * around it (kbloom_bpf_filter_of()).
 */
struct kbloom_bpf_filter {
	/*
	 * Not empty: 6.1 takes any memory pointer for a kfunc argument whose
	 * struct holds only scalars, an empty one too, which would let a
	 * program pass NULL or its stack as a filter. A zero-length array of
	 * pointers makes it no such struct, and still nothing to load.
	 */
	void *opaque[0];
};

/*
 * struct kbloom_filter @bpf_ops: the kfunc operations a filter allows BPF
 * programs, bits of enum kbloom_op (KBLOOM_CREATE_BPF_READ, _WRITE).
 */
#define KBLOOM_BPF_OPS_READ	BIT(KBLOOM_OP_QUERY)
#define KBLOOM_BPF_OPS_WRITE	(KBLOOM_BPF_OPS_READ | BIT(KBLOOM_OP_ADD) | \
				 BIT(KBLOOM_OP_TEST_AND_ADD) | \
				 BIT(KBLOOM_OP_REMOVE))

/**
 * struct kbloom_filter - a named filter
 * @gen: the current generation. Read in an RCU read-side section on the hot
 *	path; code that sleeps while using it pins it with kbloom_gen_get().
 * @stats: per-CPU traffic counters.
 * @id: its number, 1 to INT_MAX, for lookups without a reference (sysfs
 *	"id", the BPF kfuncs); not reused until the ids wrap.
 * @dead: set (under kbloom_lock) when destroyed; in-flight users then get
 *	-ENOENT. Read locklessly; a u8, not a bool: GCC 12 instruments
 *	READ_ONCE() of a _Bool under KCSAN as a plain access.
 * @bpf_ops: KBLOOM_BPF_OPS_*: what BPF programs may do with it; 0, none
 *	(they cannot even obtain it). Set at creation, never changed.
 * @base: under @lock: what the counters held when the statistics were last
 *	started over (clear, image load), subtracted when they are read. The
 *	per-CPU counters themselves are only ever written by their own CPU.
 * @charge: what the filter itself (not its generation) is charged.
 * @pins: under kbloom_lock: long-lived in-kernel users (kbloom_pin(), a
 *	netfilter rule); destroying a pinned filter fails with -EBUSY.
 * @ruled: under kbloom_lock: made by a rule (kbloom_get_shaped()) and not
 *	adopted by userspace since: destroyed when its last pin goes.
 * @lock: serialises replacing @gen with destruction (@dead), so that a
 *	replacement never lands in a destroyed filter, and guards @base.
 *	Never taken on the hot path.
 * @ref: the reference count: the table holds one reference, every user
 *	of the filter another. The last put drops the kobject's.
 * @kobj: /sys/kernel/bloom/filters/<name>. Its own count stays at one
 *	while @ref lives, so only the table's owner, under kbloom_lock,
 *	and the very last put touch it: kobject_put() reads state bits that
 *	kobject_uevent() and kobject_del() write, and users' puts racing
 *	with those is a data race (KCSAN reported one).
 * @node: in the name table; RCU readers look filters up through it.
 * @free_work: frees the filter a grace period after the last reference.
 * @nmi_put: a last reference dropped in NMI context waits here for an
 *	irq_work to drop it (bpf_kbloom_put()).
 * @alerts: KBLOOM_ALERT_* bits raised, from any context, for @alert_work
 *	to send as uevents (process context: they sleep).
 * @alert_work: sends them.
 * @name: NUL-terminated name.
 * @bpf: what BPF programs hold (no bytes of its own).
 */
struct kbloom_filter {
	/*
	 * What a packet's lookup reads comes first, in the first 64 bytes
	 * (one cache line where the allocator aligns the object, as x86-64's
	 * kmalloc-512 does); nothing a packet writes lies there.
	 */
	struct kbloom_gen __rcu *gen;
	struct kbloom_stats __percpu *stats;
	u32 id;
	u8 dead;
	u8 bpf_ops;
	struct kbloom_totals base;
	size_t charge;
	unsigned int pins;
	bool ruled;
	struct mutex lock;	/* see above */
	refcount_t ref;
	struct kobject kobj;
	struct hlist_node node;
	struct rcu_work free_work;
	struct llist_node nmi_put;
	unsigned long alerts;
	struct work_struct alert_work;
	char name[KBLOOM_NAME_MAX];
	struct kbloom_bpf_filter bpf;
};

static_assert(offsetofend(struct kbloom_filter, bpf_ops) <= 64,
	      "a lookup reads the first 64 bytes of its filter");

/*
 * The current generation, for the hot path: under rcu_read_lock(), or any
 * RCU read-side section (bh or preemption off), which the frees wait for.
 */
static inline struct kbloom_gen *kbloom_filter_gen(struct kbloom_filter *f)
{
	return rcu_dereference_check(f->gen, rcu_read_lock_any_held());
}

/* The current generation's core, for the hot path: in an RCU reader. */
static inline struct kbloom_core *kbloom_filter_core(struct kbloom_filter *f)
{
	return &kbloom_filter_gen(f)->core;
}

int kbloom_filter_init(void);
void kbloom_filter_uninit(void);
void kbloom_filter_flush(void);

bool kbloom_name_valid(const char *name);
struct kbloom_gen *kbloom_gen_get(struct kbloom_filter *filter);
void kbloom_filter_alert(struct kbloom_filter *filter, enum kbloom_alert a);

struct kbloom_filter *kbloom_filter_get(const char *name);
void kbloom_filter_put(struct kbloom_filter *filter);
struct kbloom_filter *kbloom_filter_by_id_rcu(u32 id);
int kbloom_filter_id(const char *name);
int kbloom_filter_add_gen(const char *name, struct kbloom_gen *gen,
			  const struct kbloom_params *p,
			  struct kbloom_filter **filterp);
int kbloom_filter_replace_gen(const char *name, struct kbloom_gen *gen,
			      const struct kbloom_params *p);
int kbloom_filter_create(const char *name, const struct kbloom_params *p,
			 struct kbloom_filter **filterp);
int kbloom_filter_create_like(const char *name, const char *like,
			      struct kbloom_params *used,
			      struct kbloom_filter **filterp);
int kbloom_filter_adopt(const char *name, const struct kbloom_params *p,
			struct kbloom_filter **filterp);
int kbloom_filter_destroy(const char *name);
int kbloom_filter_unlink_this(struct kbloom_filter *filter);
void kbloom_filter_release(struct kobject *kobj);
int kbloom_filter_clear(struct kbloom_filter *filter);
void kbloom_filter_totals(struct kbloom_filter *filter,
			  struct kbloom_totals *t);
unsigned int kbloom_filter_pins(struct kbloom_filter *filter);
int kbloom_filter_names(char **names, u32 *count);

u32 kbloom_filter_count(void);

/*
 * A filter's sysfs directory, made as the filter is linked and removed as
 * it is unlinked, under kbloom_lock: the sysfs layer above the registry
 * hands it these (kbloom_sysfs_init(), before any filter can be made), so
 * that the registry calls nothing above it, as a generation reaches its
 * filter through struct kbloom_gen @alert.
 */
struct kbloom_filter_dir_ops {
	int (*add)(struct kbloom_filter *filter);
	void (*del)(struct kbloom_filter *filter);
};

void kbloom_filter_set_dir_ops(const struct kbloom_filter_dir_ops *ops);

extern unsigned int kbloom_max_filters;

/* ---- the one-key path, inlined into the API calls and the kfuncs ---- */

/*
 * Filters by id modulo KBLOOM_ID_SLOTS, in front of the id xarray, so that
 * a per-packet lookup by id is one load and one compare: the xarray walk
 * is three calls and an RCU section of its own, more than the filter's
 * own work. A slot holds a live filter whose id falls on it: set when the
 * filter is published if free, and when it is unlinked handed to another
 * live filter of the slot or cleared (both under the registry's lock); a
 * filter whose slot was taken is found in the xarray.
 */
#define KBLOOM_ID_SLOTS		256
extern struct kbloom_filter __rcu *kbloom_id_slots[KBLOOM_ID_SLOTS];
struct kbloom_filter *kbloom_id_lookup_xa(u32 id);
u32 kbloom_id_slots_free(void);

/* The slot of filter id @id. */
static inline struct kbloom_filter __rcu **kbloom_id_slot(u32 id)
{
	return &kbloom_id_slots[id % KBLOOM_ID_SLOTS];
}

/* Its slot if the filter holds it (ids are set before publication). */
static __always_inline struct kbloom_filter *kbloom_id_lookup_rcu(u32 id)
{
	struct kbloom_filter *filter;

	filter = rcu_dereference_check(*kbloom_id_slot(id),
				       rcu_read_lock_any_held());
	if (likely(filter && filter->id == id))
		return filter;
	return kbloom_id_lookup_xa(id);
}

/* The counter of a query or test-and-add's miss; its hit's is the next. */
static __always_inline enum kbloom_stat kbloom_stat_of(enum kbloom_op op)
{
	return op == KBLOOM_OP_QUERY ? KBLOOM_STAT_QUERY_MISS :
				       KBLOOM_STAT_TEST_AND_ADD_MISS;
}

/*
 * kbloom_stats_count_op() - count @n keys of one operation
 * @s: this CPU's counters of the filter, preemption off.
 * @op: the operation.
 * @n: keys.
 * @hits: of them, those that answered 1 (query, test-and-add).
 *
 * Adds count as adds, queries as queries, test-and-adds as both (when
 * summed); removes are not counted. One key is one increment; a batch
 * writes only the counters it changes.
 */
static __always_inline void kbloom_stats_count_op(struct kbloom_stats *s,
						  enum kbloom_op op, u32 n,
						  u32 hits)
{
	unsigned long flags;
	enum kbloom_stat miss;

	if (op == KBLOOM_OP_REMOVE)
		return;
	flags = u64_stats_update_begin_irqsave(&s->syncp);
	if (op == KBLOOM_OP_ADD) {
		u64_stats_add(&s->n[KBLOOM_STAT_ADD], n);
	} else if (__builtin_constant_p(n) && n == 1) {
		/* A hit's counter follows its miss's: no branch on it. */
		u64_stats_inc(&s->n[kbloom_stat_of(op) + !!hits]);
	} else {
		miss = kbloom_stat_of(op);
		if (hits)
			u64_stats_add(&s->n[miss + 1], hits);
		if (n - hits)
			u64_stats_add(&s->n[miss], n - hits);
	}
	u64_stats_update_end_irqrestore(&s->syncp, flags);
}

/*
 * kbloom_filter_count_op() - kbloom_stats_count_op() on this CPU's
 * counters of @filter. Any context.
 */
static inline void kbloom_filter_count_op(struct kbloom_filter *filter,
					  enum kbloom_op op, u32 n, u32 hits)
{
	kbloom_stats_count_op(get_cpu_ptr(filter->stats), op, n, hits);
	put_cpu_ptr(filter->stats);
}

/* What every in-kernel API call checks first: the length, then liveness. */
static inline int kbloom_api_check(struct kbloom_filter *filter, u32 len)
{
	if (unlikely(!len || len > KBLOOM_KEY_MAX))
		return -EINVAL;
	if (unlikely(READ_ONCE(filter->dead)))
		return -ENOENT;
	return 0;
}

/*
 * One key, in an RCU-sched read-side section (preemption off): what the
 * one-key calls share, inlined into each, so that a call from a packet
 * path (a kfunc, a netfilter match) is one call into the filter, not a
 * chain of them. Adds and lookups count in this CPU's statistics, which
 * the section keeps this CPU's; removes do not count.
 *
 * Return: as the calls: 0 for add and remove, the result bit for query
 * and test-and-add; -EINVAL, -ENOENT; -EOPNOTSUPP (remove, not counting).
 */
static __always_inline int kbloom_filter_do_rcu(struct kbloom_filter *filter,
						enum kbloom_op op,
						const void *key, u32 len)
{
	struct kbloom_gen *gen;
	bool ret;
	int err;

	err = kbloom_api_check(filter, len);
	if (unlikely(err))
		return err;
	gen = kbloom_filter_gen(filter);
	if (op == KBLOOM_OP_REMOVE) {
		if (!(gen->core.flags & KBLOOM_CORE_COUNTING))
			return -EOPNOTSUPP;
		return __kbloom_gen_do(gen, op, key, len) ? 0 : -ENOENT;
	}
	ret = __kbloom_gen_do(gen, op, key, len);
	kbloom_stats_count_op(this_cpu_ptr(filter->stats), op, 1, ret);
	return op == KBLOOM_OP_ADD ? 0 : ret;
}

/**
 * kbloom_filter_do_id() - one operation on one key of the filter of an id
 * @id: the filter's id (sysfs "id").
 * @op: the operation.
 * @key: the key bytes.
 * @len: its length, 1 to KBLOOM_KEY_MAX.
 *
 * kbloom_add(), kbloom_query(), kbloom_test_and_add() or kbloom_remove()
 * on the filter of this id, found without a reference, for the BPF
 * kfuncs' *_id calls: inlined into each with its @op, one RCU section,
 * and on a blocked filter no call until new bits are written. Any
 * context, never sleeps.
 *
 * Return: as the call of @op; -ENOENT also if no filter has this id,
 * -EACCES if the filter does not allow BPF programs @op (@bpf_ops).
 */
static __always_inline int kbloom_filter_do_id(u32 id, enum kbloom_op op,
					       const void *key, u32 len)
{
	struct kbloom_filter *filter;
	int ret = -ENOENT;

	/*
	 * An RCU-sched section, preemption off: since the RCU flavours were
	 * consolidated (4.20) it is a read-side section that call_rcu() and
	 * synchronize_rcu(), which free filters and generations, wait for,
	 * as they do for rcu_read_lock(). rcu_read_lock_sched() is inline,
	 * where a preemptible kernel's rcu_read_lock() and rcu_read_unlock()
	 * are two calls per packet.
	 */
	rcu_read_lock_sched();
	filter = kbloom_id_lookup_rcu(id);
	if (filter)
		ret = likely(filter->bpf_ops & BIT(op)) ?
		      kbloom_filter_do_rcu(filter, op, key, len) : -EACCES;
	rcu_read_unlock_sched();
	return ret;
}

#endif /* _KBLOOM_FILTER_H */
