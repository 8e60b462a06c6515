// SPDX-License-Identifier: GPL-2.0
/*
 * Storage: the memory budget that every filter, generation and change
 * mark is charged against, from allocation to free; the bit (or counter)
 * arrays themselves, on huge pages where that pays; and the per-CPU
 * occupancy counters that make "bits set" a read of a few counters, not a
 * scan. It knows nothing of filters, generations or windows, so the
 * windows (kbloom_window.c) and the generations (kbloom_gen.c) above it
 * can both allocate and account with it. The locking and the life cycle
 * of what it counts are described in kbloom_filter.c.
 */

#include <linux/atomic.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/u64_stats_sync.h>
#include <linux/vmalloc.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>
#include <uapi/linux/kbloom.h>

#include "kbloom_storage.h"

static atomic64_t kbloom_mem_used = ATOMIC64_INIT(0);
atomic_t kbloom_live = ATOMIC_INIT(0);	/* filters + generations */
struct workqueue_struct *kbloom_wq;

unsigned long kbloom_max_memory;
/* 8 GiB, or all a 32-bit machine can address. */
unsigned long kbloom_max_filter_bytes =
	KBLOOM_MAX_BITS / 8 > ULONG_MAX ? ULONG_MAX : KBLOOM_MAX_BITS / 8;

/* One object fewer: kbloom_filter_flush() may be waiting for that. */
void kbloom_live_dec(void)
{
	atomic_dec(&kbloom_live);
	wake_up_var(&kbloom_live);
}

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

/* Take @bytes from the budget, or fail with -ENOSPC. */
int kbloom_charge(size_t bytes)
{
	if (atomic64_add_return(bytes, &kbloom_mem_used) >
	    kbloom_memory_budget()) {
		atomic64_sub(bytes, &kbloom_mem_used);
		return -ENOSPC;
	}
	return 0;
}

void kbloom_uncharge(size_t bytes)
{
	atomic64_sub(bytes, &kbloom_mem_used);
}

/*
 * Past the caches, what a query waits for is its TLB miss as much as its
 * cache miss: with 4 KiB pages, a 60 MB filter needs a page walk for
 * nearly every key, and a core runs few walks at once (make bench: the
 * same batched query 2-4x slower than on 2 MiB pages). So storage of at
 * least a huge page is mapped with huge pages where the architecture
 * allows (vmalloc_huge(), which falls back to 4 KiB pages when no huge
 * page is free), rounded up to whole huge pages where that costs at most
 * 1/16 of it (kbloom_storage_size()). huge_pages=0 turns it off.
 */
bool kbloom_huge_pages = IS_ENABLED(CONFIG_HAVE_ARCH_HUGE_VMALLOC);

/* What to allocate for @bytes of storage; pass it to kbloom_storage_alloc(). */
size_t kbloom_storage_bytes(size_t bytes)
{
	return kbloom_storage_size(bytes,
				   READ_ONCE(kbloom_huge_pages) ? PMD_SIZE : 0);
}

/* Zeroed storage of kbloom_storage_bytes() @size, or NULL; vfree() it. */
unsigned long *kbloom_storage_alloc(size_t size)
{
	/* No warning: a failure is an answer to userspace, not a bug. */
	gfp_t gfp = GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_NOWARN;

	if (size >= PMD_SIZE && !(size % PMD_SIZE) &&
	    READ_ONCE(kbloom_huge_pages))
		return vmalloc_huge(size, gfp);
	return __vmalloc(size, gfp);
}

/* u64_stats_add() takes an unsigned long: feed it 64-bit amounts in parts. */
static void kbloom_stat_add(u64_stats_t *stat, u64 v)
{
	while (v > ULONG_MAX) {
		u64_stats_add(stat, ULONG_MAX);
		v -= ULONG_MAX;
	}
	u64_stats_add(stat, v);
}

/**
 * kbloom_occ_account() - record what an operation did to some storage
 * @occ: the occupancy counters of the storage the operation ran on.
 * @d: its transitions.
 *
 * Any context: the counters are this CPU's, updated with interrupts off
 * where a 64-bit update is not atomic (32-bit), so a softirq on the same
 * CPU cannot interleave.
 */
void kbloom_occ_account(struct kbloom_occupancy __percpu *occ,
			const struct kbloom_delta *d)
{
	struct kbloom_occupancy *o;
	unsigned long flags;

	if (!(d->set | d->cleared | d->stuck | d->unstuck))
		return;
	o = get_cpu_ptr(occ);
	flags = u64_stats_update_begin_irqsave(&o->syncp);
	kbloom_stat_add(&o->set, d->set);
	kbloom_stat_add(&o->cleared, d->cleared);
	kbloom_stat_add(&o->stuck, d->stuck);
	kbloom_stat_add(&o->unstuck, d->unstuck);
	u64_stats_update_end_irqrestore(&o->syncp, flags);
	put_cpu_ptr(occ);
}

/*
 * Did this CPU's count of set positions just pass a multiple of @every
 * (it went up by @set, already accounted)? Cheap: this CPU's counter only.
 */
bool kbloom_occ_crossed(struct kbloom_occupancy __percpu *occ, u64 set,
			u64 every)
{
	u64 now = u64_stats_read(&raw_cpu_ptr(occ)->set);

	return div64_u64(now, every) != div64_u64(now - set, every);
}

void kbloom_occ_read(struct kbloom_occupancy __percpu *occ, u64 *occupied,
		     u64 *stuck)
{
	u64 set = 0, cleared = 0, st = 0, unst = 0;
	int cpu;

	for_each_possible_cpu(cpu) {
		const struct kbloom_occupancy *o = per_cpu_ptr(occ, cpu);
		u64 a, b, c, d;
		unsigned int start;

		do {
			start = u64_stats_fetch_begin(&o->syncp);
			a = u64_stats_read(&o->set);
			b = u64_stats_read(&o->cleared);
			c = u64_stats_read(&o->stuck);
			d = u64_stats_read(&o->unstuck);
		} while (u64_stats_fetch_retry(&o->syncp, start));
		set += a;
		cleared += b;
		st += c;
		unst += d;
	}
	/* A CPU's "cleared" may count a bit another CPU's "set" has not yet. */
	*occupied = set > cleared ? set - cleared : 0;
	*stuck = st > unst ? st - unst : 0;
}
