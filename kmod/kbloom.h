/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kbloom's in-kernel API, for other modules (a netfilter hook, a driver)
 * that want the "seen before?" check on a filter userspace manages.
 *
 * Look the filter up once (process context), keep the reference, and call
 * kbloom_add()/kbloom_query()/kbloom_test_and_add() per packet from any
 * context but NMI, softirq and hard irq included: they take no lock and
 * never sleep (in NMI, a 32-bit kernel's statistics could tear; BPF
 * programs, which may run there, have their own calls). Drop the
 * reference with kbloom_put() when done, not in NMI either. A filter
 * destroyed from userspace while you hold it stays valid memory; the
 * calls then return -ENOENT.
 *
 * A long-lived user (a netfilter rule) also pins the filter with
 * kbloom_pin() (process context): while pinned, destroying the filter from
 * userspace fails with -EBUSY, and sysfs "rules" counts the pins. Unpin
 * with kbloom_unpin() before kbloom_put().
 *
 * kbloom_get() takes a reference on kbloom.ko as well: rmmod kbloom is
 * refused (the module is in use) while any in-kernel reference is held.
 *
 * A rule that carries its filter's shape uses kbloom_get_shaped(): it
 * creates the filter if it is missing, and a filter made so is destroyed
 * when its last pin goes, unless userspace adopted it since (CREATE of
 * the same name and shape). kbloom_shape_of() tells an existing filter's
 * shape, to compare.
 *
 * Symbols are in the KBLOOM namespace: MODULE_IMPORT_NS(KBLOOM).
 */
#ifndef _KBLOOM_H
#define _KBLOOM_H

#include <linux/types.h>

struct kbloom_filter;

/*
 * A filter's shape, as a rule gives it: the fields of struct
 * kbloom_create that size a filter by capacity and rate.
 * @flags: KBLOOM_CREATE_COUNTING, KBLOOM_CREATE_BLOCKED.
 * @hash_scheme: KBLOOM_HASH_*; 0 for the module's default.
 * @window_ms, @generations: a windowed filter's; 0 for a plain one.
 */
struct kbloom_shape {
	u64 capacity;
	u32 fpr_ppb;
	u32 flags;
	u32 hash_scheme;
	u32 window_ms;
	u32 generations;
};

struct kbloom_filter *kbloom_get(const char *name);
struct kbloom_filter *kbloom_get_shaped(const char *name,
					const struct kbloom_shape *shape,
					bool *created);
void kbloom_shape_of(struct kbloom_filter *filter, struct kbloom_shape *shape);
void kbloom_put(struct kbloom_filter *filter);
int kbloom_add(struct kbloom_filter *filter, const void *key, u32 len);
int kbloom_query(struct kbloom_filter *filter, const void *key, u32 len);
int kbloom_test_and_add(struct kbloom_filter *filter, const void *key,
			u32 len);
int kbloom_remove(struct kbloom_filter *filter, const void *key, u32 len);
/* Many keys at once (bytes back to back), their cache misses overlapped. */
int kbloom_add_batch(struct kbloom_filter *filter, const void *keys,
		     const u32 *lens, u32 n);
int kbloom_query_batch(struct kbloom_filter *filter, const void *keys,
		       const u32 *lens, u32 n, u8 *results);
int kbloom_test_and_add_batch(struct kbloom_filter *filter, const void *keys,
			      const u32 *lens, u32 n, u8 *results);
int kbloom_pin(struct kbloom_filter *filter);
void kbloom_unpin(struct kbloom_filter *filter);
bool kbloom_is_counting(struct kbloom_filter *filter);

#endif /* _KBLOOM_H */
