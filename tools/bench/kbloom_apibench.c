// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_apibench: make bench-vm's in-kernel part. Times kbloom's
 * in-kernel API on an existing filter, as another module (a netfilter
 * match, a NAPI poll) would call it: kbloom_query() per key and
 * kbloom_query_batch() on batches of 64, over the keys make bench uses
 * (key i is i little-endian, 8 bytes): [0, keys) present, [keys, 2 keys)
 * absent. Prints one line per way to the kernel log, "kbloom_apibench:",
 * and stays loaded until removed. A module of its own (Kbuild), built
 * only by tools/bench/vm.sh, never installed.
 *
 *   insmod kbloom_apibench.ko name=FILTER keys=N
 */
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/vmalloc.h>
#include <asm/unaligned.h>

#include "kbloom.h"

static char *kbloom_apibench_name = "apibench";
module_param_named(name, kbloom_apibench_name, charp, 0444);
MODULE_PARM_DESC(name, "The filter to look keys up in");
static uint kbloom_apibench_keys = 100000;
module_param_named(keys, kbloom_apibench_keys, uint, 0444);
MODULE_PARM_DESC(keys, "Keys of each kind (present, absent)");

/* Keys per kbloom_query_batch(): a NAPI poll's worth. */
#define KBLOOM_APIBENCH_BATCH	64

/* Tenths of ns per key of @count keys from @first; *hits: how many hit. */
static u64 kbloom_apibench_run(struct kbloom_filter *filter, const u8 *keys,
			       const u32 *lens, u32 first, u32 count,
			       bool batched, u32 *hits)
{
	u8 results[KBLOOM_APIBENCH_BATCH / 8];
	u64 t0 = ktime_get_ns();
	u32 i, c, j;
	int ret;

	*hits = 0;
	for (i = first; i < first + count; i += c) {
		c = min_t(u32, first + count - i, KBLOOM_APIBENCH_BATCH);
		if (batched) {
			memset(results, 0, sizeof(results));
			ret = kbloom_query_batch(filter, keys + (size_t)i * 8,
						 lens, c, results);
			if (ret > 0)
				*hits += ret;
		} else {
			for (j = i; j < i + c; j++)
				*hits += kbloom_query(filter,
						      keys + (size_t)j * 8,
						      8) == 1;
		}
		cond_resched();
	}
	return div_u64(10 * (ktime_get_ns() - t0), count);
}

static int __init kbloom_apibench_init(void)
{
	u32 lens[KBLOOM_APIBENCH_BATCH], n = kbloom_apibench_keys, i, hits;
	static const char *const way[] = { "one key per call",
					   "batches of 64 keys" };
	struct kbloom_filter *filter;
	u64 ns[2][2];
	int w, p;
	u8 *keys;

	if (!n || n > (1U << 24))
		return -EINVAL;
	filter = kbloom_get(kbloom_apibench_name);
	if (!filter)
		return -ENOENT;
	keys = vmalloc(array_size(2 * (size_t)n, 8));
	if (!keys) {
		kbloom_put(filter);
		return -ENOMEM;
	}
	for (i = 0; i < 2 * n; i++)
		put_unaligned_le64(i, keys + (size_t)i * 8);
	for (i = 0; i < KBLOOM_APIBENCH_BATCH; i++)
		lens[i] = 8;
	for (w = 0; w < 2; w++) {
		for (p = 0; p < 2; p++) {
			ns[w][p] = kbloom_apibench_run(filter, keys, lens,
						       p * n, n, w, &hits);
			if (!p && hits != n)
				pr_warn("kbloom_apibench: %s: %u of %u present keys found\n",
					way[w], hits, n);
		}
		pr_info("kbloom_apibench: in-kernel API, %s: present %llu.%llu ns/key, absent %llu.%llu ns/key (%u keys each)\n",
			way[w], ns[w][0] / 10, ns[w][0] % 10, ns[w][1] / 10,
			ns[w][1] % 10, n);
	}
	vfree(keys);
	kbloom_put(filter);
	return 0;
}

static void __exit kbloom_apibench_exit(void)
{
}

module_init(kbloom_apibench_init);
module_exit(kbloom_apibench_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kbloom: time the in-kernel API (make bench-vm)");
MODULE_IMPORT_NS(KBLOOM);
