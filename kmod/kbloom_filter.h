/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Named filters: creation, lookup, reference counting, contents swapped
 * atomically (image load), destruction.
 */
#ifndef _KBLOOM_FILTER_H
#define _KBLOOM_FILTER_H

#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/workqueue.h>
#include <uapi/linux/kbloom.h>

#include "kbloom_core.h"

/*
 * Hot-path counters, one set per CPU so that no shared cache line is
 * written per packet. Summed when read; reads may lag writers slightly.
 */
struct kbloom_stats {
	u64 adds;
	u64 queries;
	u64 hits;
};

/**
 * struct kbloom_gen - one generation of a filter's contents
 * @core: bits (or counters) and the parameters and seed they go with.
 * @bytes: memory of the storage, charged to the module's budget.
 * @free_work: frees the generation a grace period after it was replaced.
 *
 * A filter points to its current generation through an RCU pointer, so
 * its whole contents, parameters and seed included, can be swapped for
 * another in one store: a lookup sees the old generation or the new one,
 * never a mix. Loading an image with --replace does that today; a
 * time-windowed (rotating) filter will do the same on every rotation.
 */
struct kbloom_gen {
	struct kbloom_core core;
	size_t bytes;
	struct rcu_work free_work;
};

/**
 * struct kbloom_filter - a named filter
 * @gen: the current generation. Read under rcu_read_lock() on the hot path,
 *	or under @lock by code that sleeps while using it.
 * @stats: per-CPU counters.
 * @dead: set (under kbloom_lock) when destroyed; in-flight users then get
 *	-ENOENT. Read locklessly.
 * @lock: held by whoever uses @gen across a sleep (popcount, clear, merge,
 *	export) and by whoever replaces @gen, which therefore waits for them.
 *	Never taken on the hot path.
 * @kobj: /sys/kernel/bloom/filters/<name>, and the reference count: the
 *	table holds one reference, every user of the filter another.
 * @node: in the name table; RCU readers look filters up through it.
 * @free_work: frees the filter a grace period after the last reference.
 * @capacity: design n, 0 if created by bits.
 * @fpr_ppb: design false-positive rate, 0 if created by bits.
 * @name: NUL-terminated name.
 */
struct kbloom_filter {
	struct kbloom_gen __rcu *gen;
	struct kbloom_stats __percpu *stats;
	bool dead;
	struct mutex lock;	/* pins @gen for sleepers; see above */
	struct kobject kobj;
	struct hlist_node node;
	struct rcu_work free_work;
	u64 capacity;
	u32 fpr_ppb;
	char name[KBLOOM_NAME_MAX];
};

/**
 * struct kbloom_params - what a new generation is made from
 * @nbits: m.
 * @nhashes: k.
 * @flags: KBLOOM_CORE_* bits.
 * @capacity: design n, informational.
 * @fpr_ppb: design rate, informational.
 * @adds: keys already in it (loaded images), informational.
 * @seed: the hash seed to use, or NULL for a fresh random one.
 */
struct kbloom_params {
	u64 nbits;
	u32 nhashes;
	u32 flags;
	u64 capacity;
	u32 fpr_ppb;
	u64 adds;
	const u32 *seed;
};

struct kbloom_totals {
	u64 adds;
	u64 queries;
	u64 hits;
};

/* The current generation: under rcu_read_lock() or filter->lock. */
static inline struct kbloom_gen *kbloom_filter_gen(struct kbloom_filter *f)
{
	return rcu_dereference_check(f->gen, lockdep_is_held(&f->lock));
}

static inline struct kbloom_core *kbloom_filter_core(struct kbloom_filter *f)
{
	return &kbloom_filter_gen(f)->core;
}

int kbloom_filter_init(void);
void kbloom_filter_uninit(void);
void kbloom_filter_flush(void);

bool kbloom_name_valid(const char *name);
struct kbloom_gen *kbloom_gen_new(const struct kbloom_params *p);
void kbloom_gen_destroy(struct kbloom_gen *gen);
int kbloom_filter_add_gen(const char *name, struct kbloom_gen *gen,
			  const struct kbloom_params *p);
int kbloom_filter_replace_gen(const char *name, struct kbloom_gen *gen,
			      const struct kbloom_params *p);
int kbloom_filter_create(const char *name, const struct kbloom_params *p);
int kbloom_filter_create_like(const char *name, const char *like, u32 flags);
int kbloom_filter_destroy(const char *name);
void kbloom_filter_release(struct kobject *kobj);
void kbloom_filter_clear(struct kbloom_filter *filter);
void kbloom_filter_totals(struct kbloom_filter *filter,
			  struct kbloom_totals *t);
int kbloom_filter_names(char **names, u32 *count);
u32 kbloom_filter_mismatch(struct kbloom_filter *a, struct kbloom_filter *b);
void kbloom_filter_lock_two(struct kbloom_filter *a, struct kbloom_filter *b);
void kbloom_filter_unlock_two(struct kbloom_filter *a,
			      struct kbloom_filter *b);

u64 kbloom_memory_used(void);
u64 kbloom_memory_budget(void);
u32 kbloom_filter_count(void);

extern unsigned long kbloom_max_memory;
extern unsigned long kbloom_max_filter_bytes;

#endif /* _KBLOOM_FILTER_H */
