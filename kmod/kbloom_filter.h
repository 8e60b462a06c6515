/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Named filters: creation, lookup, reference counting and destruction.
 */
#ifndef _KBLOOM_FILTER_H
#define _KBLOOM_FILTER_H

#include <linux/kobject.h>
#include <linux/list.h>
#include <linux/percpu.h>
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
 * struct kbloom_filter - a named filter
 * @core: bits and parameters; everything the hot path reads.
 * @stats: per-CPU counters.
 * @dead: set (under kbloom_lock) when destroyed; in-flight users then get
 *	-ENOENT. Read locklessly.
 * @kobj: /sys/kernel/bloom/filters/<name>, and the reference count: the
 *	table holds one reference, every user of the filter another.
 * @node: in the name table; RCU readers look filters up through it.
 * @free_work: frees the filter a grace period after the last reference.
 * @capacity: design n, 0 if created by bits.
 * @fpr_ppb: design false-positive rate, 0 if created by bits.
 * @flags: creation flags.
 * @bytes: memory charged to the module's budget.
 * @name: NUL-terminated name.
 */
struct kbloom_filter {
	struct kbloom_core core;
	struct kbloom_stats __percpu *stats;
	bool dead;
	struct kobject kobj;
	struct hlist_node node;
	struct rcu_work free_work;
	u64 capacity;
	u32 fpr_ppb;
	u32 flags;
	size_t bytes;
	char name[KBLOOM_NAME_MAX];
};

/**
 * struct kbloom_params - what a new filter is made from
 * @nbits: m.
 * @nhashes: k.
 * @capacity: design n, informational.
 * @fpr_ppb: design rate, informational.
 * @flags: creation flags.
 */
struct kbloom_params {
	u64 nbits;
	u32 nhashes;
	u64 capacity;
	u32 fpr_ppb;
	u32 flags;
};

struct kbloom_totals {
	u64 adds;
	u64 queries;
	u64 hits;
};

int kbloom_filter_init(void);
void kbloom_filter_uninit(void);

bool kbloom_name_valid(const char *name);
void kbloom_filter_release(struct kobject *kobj);
int kbloom_filter_create(const char *name, const struct kbloom_params *p);
int kbloom_filter_destroy(const char *name);
void kbloom_filter_flush(void);
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
