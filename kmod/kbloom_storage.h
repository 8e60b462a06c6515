/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the contents of filters are made of, below the windows and the
 * generations that use it: the memory budget, storage allocation, the
 * occupancy counters, and the accounting of what is allocated.
 */
#ifndef _KBLOOM_STORAGE_H
#define _KBLOOM_STORAGE_H

#include <linux/atomic.h>
#include <linux/percpu.h>
#include <linux/types.h>
#include <linux/u64_stats_sync.h>
#include <linux/workqueue.h>

#include "kbloom_core.h"

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

/*
 * Filters and generations allocated (kbloom_filter_flush() waits for
 * them), and the workqueue their frees run on (kbloom_filter_init() makes
 * it): shared by the generations and the registry above them.
 */
extern atomic_t kbloom_live;
extern struct workqueue_struct *kbloom_wq;
void kbloom_live_dec(void);

int kbloom_charge(size_t bytes);
void kbloom_uncharge(size_t bytes);
u64 kbloom_memory_used(void);
u64 kbloom_memory_budget(void);

size_t kbloom_storage_bytes(size_t bytes);
unsigned long *kbloom_storage_alloc(size_t size);
void kbloom_occ_account(struct kbloom_occupancy __percpu *occ,
			const struct kbloom_delta *d);
void kbloom_occ_read(struct kbloom_occupancy __percpu *occ, u64 *occupied,
		     u64 *stuck);
bool kbloom_occ_crossed(struct kbloom_occupancy __percpu *occ, u64 set,
			u64 every);

extern unsigned long kbloom_max_memory;
extern bool kbloom_huge_pages;
extern unsigned long kbloom_max_filter_bytes;

#endif /* _KBLOOM_STORAGE_H */
