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
#include <linux/refcount.h>
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
 * @capacity: design n, 0 if created by bits.
 * @fpr_ppb: design false-positive rate, 0 if created by bits.
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
	struct kbloom_core core;
	size_t bytes;
	u64 capacity;
	u32 fpr_ppb;
	refcount_t ref;
	struct rcu_work free_work;
};

/**
 * struct kbloom_filter - a named filter
 * @gen: the current generation. Read under rcu_read_lock() on the hot path;
 *	code that sleeps while using it pins it with kbloom_gen_get().
 * @stats: per-CPU counters.
 * @dead: set (under kbloom_lock) when destroyed; in-flight users then get
 *	-ENOENT. Read locklessly.
 * @lock: serialises replacing @gen with destruction (@dead), so that a
 *	replacement never lands in a destroyed filter. Held only for a few
 *	stores; never taken on the hot path or by readers.
 * @kobj: /sys/kernel/bloom/filters/<name>, and the reference count: the
 *	table holds one reference, every user of the filter another.
 * @node: in the name table; RCU readers look filters up through it.
 * @free_work: frees the filter a grace period after the last reference.
 * @name: NUL-terminated name.
 */
struct kbloom_filter {
	struct kbloom_gen __rcu *gen;
	struct kbloom_stats __percpu *stats;
	bool dead;
	struct mutex lock;	/* see above */
	struct kobject kobj;
	struct hlist_node node;
	struct rcu_work free_work;
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

/* The current generation's core, for the hot path: under rcu_read_lock(). */
static inline struct kbloom_core *kbloom_filter_core(struct kbloom_filter *f)
{
	return &rcu_dereference(f->gen)->core;
}

int kbloom_filter_init(void);
void kbloom_filter_uninit(void);
void kbloom_filter_flush(void);

bool kbloom_name_valid(const char *name);
struct kbloom_gen *kbloom_gen_new(const struct kbloom_params *p);
void kbloom_gen_destroy(struct kbloom_gen *gen);
struct kbloom_gen *kbloom_gen_get(struct kbloom_filter *filter);
void kbloom_gen_put(struct kbloom_gen *gen);
u32 kbloom_gen_mismatch(const struct kbloom_gen *a, const struct kbloom_gen *b);
int kbloom_filter_add_gen(const char *name, struct kbloom_gen *gen,
			  const struct kbloom_params *p);
int kbloom_filter_replace_gen(const char *name, struct kbloom_gen *gen,
			      const struct kbloom_params *p);
int kbloom_filter_create(const char *name, const struct kbloom_params *p);
int kbloom_filter_create_like(const char *name, const char *like, u32 flags,
			      struct kbloom_params *used);
int kbloom_filter_destroy(const char *name);
void kbloom_filter_release(struct kobject *kobj);
void kbloom_filter_clear(struct kbloom_filter *filter);
void kbloom_filter_totals(struct kbloom_filter *filter,
			  struct kbloom_totals *t);
int kbloom_filter_names(char **names, u32 *count);

u64 kbloom_memory_used(void);
u64 kbloom_memory_budget(void);
u32 kbloom_filter_count(void);

extern unsigned long kbloom_max_memory;
extern unsigned long kbloom_max_filter_bytes;

#endif /* _KBLOOM_FILTER_H */
