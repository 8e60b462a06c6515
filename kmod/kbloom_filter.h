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
#include <linux/u64_stats_sync.h>
#include <linux/workqueue.h>
#include <uapi/linux/kbloom.h>

#include "kbloom_core.h"
#include "kbloom_window.h"

/*
 * Hot-path counters of a filter's traffic, one set per CPU so that no
 * shared cache line is written per packet. Summed when read, with
 * u64_stats_sync so that a 32-bit reader never sees a torn value.
 */
struct kbloom_stats {
	u64_stats_t adds;
	u64_stats_t queries;
	u64_stats_t hits;
	struct u64_stats_sync syncp;
};

/*
 * A generation's occupancy transitions (struct kbloom_delta), per CPU:
 * "bits set" is set - cleared and "saturated" is stuck - unstuck, kept as
 * the operations happen so that reading them costs O(1), not a scan.
 */
struct kbloom_occupancy {
	u64_stats_t set;
	u64_stats_t cleared;
	u64_stats_t stuck;
	u64_stats_t unstuck;
	struct u64_stats_sync syncp;
};

/**
 * struct kbloom_gen - one generation of a filter's contents
 * @core: bits (or counters) and the parameters and seed they go with.
 * @bytes: size of the storage (what an image's payload is).
 * @charge: what the generation is charged against the module's budget:
 *	the storage rounded up to pages, vmalloc's bookkeeping of it, this
 *	structure and its per-CPU counters.
 * @capacity: design n, 0 if created by bits.
 * @fpr_ppb: design false-positive rate, 0 if created by bits.
 * @occ: per-CPU occupancy counters of @core.
 * @win: a windowed filter's generations; NULL for a plain filter. Then
 *	@core carries the parameters and seed only (no storage), and @occ is
 *	NULL: each of the window's generations has its own.
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
	size_t charge;
	u64 capacity;
	u32 fpr_ppb;
	struct kbloom_occupancy __percpu *occ;
	struct kbloom_window *win;
	refcount_t ref;
	struct rcu_work free_work;
};

/* Sums of a filter's struct kbloom_stats. */
struct kbloom_totals {
	u64 adds;
	u64 queries;
	u64 hits;
};

/**
 * struct kbloom_filter - a named filter
 * @gen: the current generation. Read under rcu_read_lock() on the hot path;
 *	code that sleeps while using it pins it with kbloom_gen_get().
 * @stats: per-CPU traffic counters.
 * @base: under @lock: what the counters held when the statistics were last
 *	started over (clear, image load), subtracted when they are read. The
 *	per-CPU counters themselves are only ever written by their own CPU.
 * @charge: what the filter itself (not its generation) is charged.
 * @pins: under kbloom_lock: long-lived in-kernel users (kbloom_pin(), a
 *	netfilter rule); destroying a pinned filter fails with -EBUSY.
 * @dead: set (under kbloom_lock) when destroyed; in-flight users then get
 *	-ENOENT. Read locklessly; a u8, not a bool: GCC 12 instruments
 *	READ_ONCE() of a _Bool under KCSAN as a plain access.
 * @lock: serialises replacing @gen with destruction (@dead), so that a
 *	replacement never lands in a destroyed filter, and guards @base.
 *	Never taken on the hot path.
 * @kobj: /sys/kernel/bloom/filters/<name>, and the reference count: the
 *	table holds one reference, every user of the filter another.
 * @node: in the name table; RCU readers look filters up through it.
 * @free_work: frees the filter a grace period after the last reference.
 * @id: its number, 1 to INT_MAX, for lookups without a reference (sysfs
 *	"id", the BPF kfuncs); not reused until the ids wrap.
 * @nmi_put: a last reference dropped in NMI context waits here for an
 *	irq_work to drop it (bpf_kbloom_put()).
 * @name: NUL-terminated name.
 */
struct kbloom_filter {
	struct kbloom_gen __rcu *gen;
	struct kbloom_stats __percpu *stats;
	struct kbloom_totals base;
	size_t charge;
	unsigned int pins;
	u8 dead;
	struct mutex lock;	/* see above */
	struct kobject kobj;
	struct hlist_node node;
	struct rcu_work free_work;
	struct llist_node nmi_put;
	u32 id;
	char name[KBLOOM_NAME_MAX];
};

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
};

/*
 * The current generation, for the hot path: under rcu_read_lock(), or any
 * RCU read-side section (bh or preemption off), which the frees wait for.
 */
static inline struct kbloom_gen *kbloom_filter_gen(struct kbloom_filter *f)
{
	return rcu_dereference_check(f->gen, rcu_read_lock_any_held());
}

/* The current generation's core, for the hot path: under rcu_read_lock(). */
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
struct kbloom_gen *kbloom_gen_get(struct kbloom_filter *filter);
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
void kbloom_gen_params(struct kbloom_gen *gen, struct kbloom_params *p,
		       u32 *seed);

size_t kbloom_storage_bytes(size_t bytes);
unsigned long *kbloom_storage_alloc(size_t size);
void kbloom_occ_account(struct kbloom_occupancy __percpu *occ,
			const struct kbloom_delta *d);
void kbloom_occ_read(struct kbloom_occupancy __percpu *occ, u64 *occupied,
		     u64 *stuck);
bool kbloom_occ_crossed(struct kbloom_occupancy __percpu *occ, u64 set,
			u64 every);

struct kbloom_filter *kbloom_filter_get(const char *name);
void kbloom_filter_put(struct kbloom_filter *filter);
struct kbloom_filter *kbloom_filter_by_id_rcu(u32 id);
int kbloom_filter_do_id(u32 id, enum kbloom_op op, const void *key, u32 len);
int kbloom_filter_id(const char *name);
int kbloom_filter_add_gen(const char *name, struct kbloom_gen *gen,
			  const struct kbloom_params *p,
			  struct kbloom_filter **filterp);
int kbloom_filter_replace_gen(const char *name, struct kbloom_gen *gen,
			      const struct kbloom_params *p);
int kbloom_filter_create(const char *name, const struct kbloom_params *p,
			 struct kbloom_filter **filterp);
int kbloom_filter_create_like(const char *name, const char *like, u32 flags,
			      struct kbloom_params *used,
			      struct kbloom_filter **filterp);
int kbloom_filter_destroy(const char *name);
int kbloom_filter_unlink_this(struct kbloom_filter *filter);
void kbloom_filter_release(struct kobject *kobj);
int kbloom_filter_clear(struct kbloom_filter *filter);
void kbloom_filter_account(struct kbloom_filter *filter, u32 adds, u32 queries,
			   u32 hits);
void kbloom_filter_count_op(struct kbloom_filter *filter, enum kbloom_op op,
			    u32 n, u32 hits);
void kbloom_filter_totals(struct kbloom_filter *filter,
			  struct kbloom_totals *t);
unsigned int kbloom_filter_pins(struct kbloom_filter *filter);
int kbloom_filter_names(char **names, u32 *count);

u64 kbloom_memory_used(void);
u64 kbloom_memory_budget(void);
u32 kbloom_filter_count(void);

extern unsigned long kbloom_max_memory;
extern bool kbloom_huge_pages;
extern unsigned long kbloom_max_filter_bytes;
extern unsigned int kbloom_max_filters;

#endif /* _KBLOOM_FILTER_H */
