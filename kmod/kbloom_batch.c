// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom batch: one operation on many keys, pipelined, so that the cache
 * misses of several keys overlap. Built into kbloom.ko and, unchanged,
 * into the native tests and benchmarks.
 */

#ifdef __KERNEL__
#include <linux/build_bug.h>
#include <linux/prefetch.h>
#endif

#include "kbloom_batch.h"

/*
 * Positions buffered by kbloom_core_do_batch(): 512 bytes of stack, the
 * positions of 8 keys at k <= 8 and of 2 at the largest k. Eight keys of
 * seven misses each already exceed the misses a core keeps in flight.
 */
#define KBLOOM_CORE_PIPE_POS	64
#define KBLOOM_CORE_PIPE_KEYS	8
/* Every k the core takes fits at least one key in a group. */
static_assert(KBLOOM_CORE_PIPE_POS >= KBLOOM_CORE_MAX_HASHES,
	      "a pipeline group holds at least one key");

/*
 * Blocked filters pipeline deeper, and without a break: a key is one cache
 * line, so the block of the key KBLOOM_CORE_PIPE_BLOCKS places ahead is
 * fetched while this one is worked on, and all a key needs meanwhile is
 * its hash (256 bytes of stack; the block is one multiply away). 32
 * places ahead at about 12 ns a key is 380 ns of lead, more than a miss
 * to DRAM takes; 16 were 10-20% slower past the caches (the batch alone,
 * natively, 50M keys: make bench).
 * Group-wise (hash a group, then work on it) would leave the memory idle
 * while a group is worked on.
 */
#define KBLOOM_CORE_PIPE_BLOCKS	32

/* Key @key of the ring: its hash, and its block on its way. */
static __always_inline u64 kbloom_ring_stage(const struct kbloom_core *core,
					     u64 nblocks, const u8 *key,
					     u32 len)
{
	u64 h = kbloom_core_hash_inline(core, key, len);

	/* For reading: an add that finds its bits set writes nothing. */
	prefetch(kbloom_block_at(core, h, nblocks));
	return h;
}

/*
 * The ring, for one operation and layout: the compiler makes one copy per
 * (op, @pos) it is called with, so that the loop decides nothing per key
 * but the key's own result. Bit filters pass no @pos; counting filters
 * their position array, once per batch rather than per key (a kernel
 * built with INIT_STACK_ALL_ZERO zeroes a local array at every entry to
 * its scope).
 */
static __always_inline u32
__kbloom_core_do_batch_blocked(struct kbloom_core *filter, enum kbloom_op op,
			       u64 *pos, const u8 *keys, const u32 *lens,
			       u32 n, u8 *results, struct kbloom_delta *d)
{
	/*
	 * A copy that nothing else can reach: the stores to @results and
	 * the bitmap could alias *@filter as far as the compiler knows, and
	 * would otherwise have it read k and the flags again for every key.
	 */
	struct kbloom_core copy = *filter, *core = &copy;
	u64 h[KBLOOM_CORE_PIPE_BLOCKS];
	unsigned long *blk;
	u64 nblocks = core->nbits >> kbloom_block_shift(core->flags);
	const u8 *ahead = keys;
	u32 i, s, hits = 0, byte = 0;
	bool r;

	for (i = 0; i < n && i < KBLOOM_CORE_PIPE_BLOCKS; i++) {
		h[i] = kbloom_ring_stage(core, nblocks, ahead, lens[i]);
		ahead += lens[i];
	}
	for (i = 0; i < n; i++) {
		s = i % KBLOOM_CORE_PIPE_BLOCKS;
		blk = kbloom_block_at(core, h[s], nblocks);
		if (pos) {
			kbloom_core_fill_blocked(core, h[s], pos);
			r = kbloom_core_do_at(core, op, pos, d);
		} else if (op == KBLOOM_OP_QUERY) {
			r = kbloom_block_query(core, blk, h[s]);
		} else if (op == KBLOOM_OP_REMOVE) {
			/* Callers refuse it (kbloom_op_check()): never a write. */
			r = false;
		} else {
			/* An add of a key that is there writes nothing. */
			r = kbloom_block_add(core, blk, h[s], d) &&
			    op == KBLOOM_OP_TEST_AND_ADD;
		}
		if (i + KBLOOM_CORE_PIPE_BLOCKS < n) {
			h[s] = kbloom_ring_stage(core, nblocks, ahead,
						 lens[i + KBLOOM_CORE_PIPE_BLOCKS]);
			ahead += lens[i + KBLOOM_CORE_PIPE_BLOCKS];
		}
		/*
		 * A byte of results at a time, not a store per key; none
		 * where all are false (an add, whose caller may pass no
		 * @results at all).
		 */
		hits += r;
		byte |= (u32)r << (i % 8);
		if (i % 8 == 7) {
			if (byte)
				results[i / 8] |= byte;
			byte = 0;
		}
	}
	if (byte)
		results[(n - 1) / 8] |= byte;
	return hits;
}

/*
 * One function per copy of the ring, so that each has its own frame
 * rather than one frame holding all three (the batch calls run in
 * softirq, on the interrupted task's stack): bit filters' queries, their
 * other operations, and counting filters through the position array.
 */
static noinline_for_stack u32
kbloom_core_do_batch_blocked_query(struct kbloom_core *core, const u8 *keys,
				   const u32 *lens, u32 n, u8 *results,
				   struct kbloom_delta *d)
{
	return __kbloom_core_do_batch_blocked(core, KBLOOM_OP_QUERY, NULL, keys,
					      lens, n, results, d);
}

static noinline_for_stack u32
kbloom_core_do_batch_blocked_bits(struct kbloom_core *core, enum kbloom_op op,
				  const u8 *keys, const u32 *lens, u32 n,
				  u8 *results, struct kbloom_delta *d)
{
	return __kbloom_core_do_batch_blocked(core, op, NULL, keys, lens, n,
					      results, d);
}

static noinline_for_stack u32
kbloom_core_do_batch_blocked_counting(struct kbloom_core *core,
				      enum kbloom_op op, const u8 *keys,
				      const u32 *lens, u32 n, u8 *results,
				      struct kbloom_delta *d)
{
	u64 pos[KBLOOM_CORE_MAX_HASHES];

	return __kbloom_core_do_batch_blocked(core, op, pos, keys, lens, n,
					      results, d);
}

static u32 kbloom_core_do_batch_blocked(struct kbloom_core *core,
					enum kbloom_op op, const u8 *keys,
					const u32 *lens, u32 n, u8 *results,
					struct kbloom_delta *d)
{
	if (kbloom_counting(core))
		return kbloom_core_do_batch_blocked_counting(core, op, keys,
							     lens, n, results,
							     d);
	if (op == KBLOOM_OP_QUERY)
		return kbloom_core_do_batch_blocked_query(core, keys, lens, n,
							  results, d);
	return kbloom_core_do_batch_blocked_bits(core, op, keys, lens, n,
						 results, d);
}

/**
 * kbloom_core_do_batch() - one operation on many keys, pipelined
 * @core: the filter.
 * @op: the operation; KBLOOM_OP_REMOVE on counting filters only.
 * @keys: the keys' bytes, back to back.
 * @lens: their lengths, each at least 1.
 * @n: how many keys.
 * @results: bit i (bit i % 8 of byte i / 8) is set where key i's result
 *	is true; other bits are left alone. Never touched for an add (whose
 *	results are all false): may then be NULL.
 * @d: if not NULL, counts the transitions of all the keys.
 *
 * Keys go in groups: every position of a group is computed (and its word
 * prefetched) before any word is read or changed, so that the cache
 * misses of a group's keys overlap instead of following one another,
 * which is what a query of a filter larger than the caches waits for
 * (a blocked filter's keys go through a ring instead, see
 * kbloom_core_do_batch_blocked()).
 * Each key's operation is exactly the one-key call's, with the same
 * atomicity; keys are applied in order.
 *
 * Return: the number of true results.
 */
u32 kbloom_core_do_batch(struct kbloom_core *core, enum kbloom_op op,
			 const u8 *keys, const u32 *lens, u32 n, u8 *results,
			 struct kbloom_delta *d)
{
	u64 pos[KBLOOM_CORE_PIPE_POS];
	u32 k = core->nhashes, group, g, i, j, hits = 0;

	if (core->flags & KBLOOM_CORE_BLOCKED)
		return kbloom_core_do_batch_blocked(core, op, keys, lens, n,
						    results, d);
	group = KBLOOM_CORE_PIPE_POS / k;
	if (group > KBLOOM_CORE_PIPE_KEYS)
		group = KBLOOM_CORE_PIPE_KEYS;
	for (i = 0; i < n; i += g) {
		g = n - i < group ? n - i : group;
		for (j = 0; j < g; j++) {
			kbloom_core_fill(core, keys, lens[i + j], pos + j * k);
			keys += lens[i + j];
		}
		for (j = 0; j < g; j++) {
			if (kbloom_core_do_at(core, op, pos + j * k, d)) {
				results[(i + j) / 8] |= 1U << ((i + j) % 8);
				hits++;
			}
		}
	}
	return hits;
}
