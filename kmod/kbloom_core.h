/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kbloom filter core's bit operations: a key's positions (from
 * kbloom_hash.h) set, tested and cleared, lock-free, as bits or 4-bit
 * counters; the passes over a whole filter; storage as blocks for change
 * tracking. Above kbloom_hash and kbloom_sizing (kbloom_types.h says how
 * the core is layered); this header brings both, for the core's users.
 */
#ifndef _KBLOOM_CORE_H
#define _KBLOOM_CORE_H

#ifdef __KERNEL__
#include <linux/bitops.h>
#include <linux/build_bug.h>
#include <asm/unaligned.h>
#endif

#include "kbloom_hash.h"
#include "kbloom_sizing.h"

/* The four operations on a key. */
enum kbloom_op {
	KBLOOM_OP_ADD,
	KBLOOM_OP_QUERY,
	KBLOOM_OP_TEST_AND_ADD,
	KBLOOM_OP_REMOVE,
};

/**
 * struct kbloom_delta - what an operation did to a filter's occupancy
 * @set: positions that went from free to occupied (a bit 0 -> 1, or a
 *	counter 0 -> 1).
 * @cleared: positions that went from occupied to free.
 * @stuck: counters that reached KBLOOM_COUNTER_STUCK.
 * @unstuck: stuck counters cleared (only a clear does that).
 *
 * Operations report exactly the transitions they made, each observed by
 * the atomic operation that made it, so the filter layer keeps "bits set"
 * and "saturated" as counters that are exact however callers race,
 * instead of scanning the storage to answer a read.
 */
struct kbloom_delta {
	u64 set;
	u64 cleared;
	u64 stuck;
	u64 unstuck;
};

void kbloom_core_init(struct kbloom_core *core, unsigned long *bitmap,
		      u64 nbits, u32 nhashes, u32 flags, const u32 *seed);
bool kbloom_core_valid(u64 nbits, u32 nhashes, u32 flags);
bool kbloom_params_valid(u64 nbits, u32 nhashes, u32 flags, u64 capacity,
			 u32 fpr_ppb);
size_t kbloom_core_bytes(u64 nbits, u32 flags);
size_t kbloom_storage_size(size_t bytes, size_t huge);
#ifdef KBLOOM_CORE_TESTS
bool kbloom_core_compatible(const struct kbloom_core *a,
			    const struct kbloom_core *b);
#endif

void kbloom_core_add(struct kbloom_core *core, const void *key, u32 len,
		     struct kbloom_delta *d);
bool kbloom_core_query(const struct kbloom_core *core, const void *key,
		       u32 len);
bool kbloom_core_test_and_add(struct kbloom_core *core, const void *key,
			      u32 len, struct kbloom_delta *d);
bool kbloom_core_remove(struct kbloom_core *core, const void *key, u32 len,
			struct kbloom_delta *d);
void kbloom_core_add_at(struct kbloom_core *core, const u64 *pos,
			struct kbloom_delta *d);
bool kbloom_core_query_at(const struct kbloom_core *core, const u64 *pos);
bool kbloom_core_test_and_add_at(struct kbloom_core *core, const u64 *pos,
				 struct kbloom_delta *d);
bool kbloom_core_remove_at(struct kbloom_core *core, const u64 *pos,
			   struct kbloom_delta *d);
bool kbloom_core_do(struct kbloom_core *core, enum kbloom_op op,
		    const void *key, u32 len, struct kbloom_delta *d);
int kbloom_core_clear(struct kbloom_core *core, struct kbloom_delta *d);
void kbloom_core_wipe(struct kbloom_core *core, struct kbloom_delta *d);
int kbloom_core_count(const struct kbloom_core *core, u64 *occupied,
		      u64 *stuck);
int kbloom_core_merge(struct kbloom_core *dst, const struct kbloom_core *src,
		      struct kbloom_delta *d);
int kbloom_core_compare(const struct kbloom_core *a,
			const struct kbloom_core *b, u64 *both, u64 *either);
bool kbloom_core_padding_clear(const struct kbloom_core *core);
u64 kbloom_core_blocks(const struct kbloom_core *core);
u64 kbloom_core_fingerprint(const struct kbloom_core *core, u32 generations,
			    u32 window_ms);
bool kbloom_core_block_read(const struct kbloom_core *core, u64 block,
			    unsigned long *words);
bool kbloom_core_block_valid(const struct kbloom_core *core, u64 block,
			     const unsigned long *words);
u64 kbloom_core_block_new(const struct kbloom_core *core, u64 block,
			  const unsigned long *words);
void kbloom_core_block_or(struct kbloom_core *core, u64 block,
			  const unsigned long *words, struct kbloom_delta *d);

/*
 * ---- the one-key path of a blocked bit filter, inline ----
 *
 * The hash, the block (both in kbloom_hash.h) and the bit tests, inline
 * for whoever runs one key at a time on a packet path
 * (kbloom_core_do_inline(): the API calls and the BPF kfuncs), as for the
 * batch loops: there a call per key shows. Only the write of new bits,
 * rare once keys repeat, stays out of line (kbloom_block_set()).
 *
 * Blocked bit filters (not counting ones) skip the position array on the
 * way that matters, the query: each of the k bits is tested in the
 * block's word where it lies, without a branch per position (an absent
 * key's first zero bit is a coin toss for the branch predictor), and the
 * positions are generated in registers. An add asks the same question
 * word by word, and writes nothing where the answer is yes.
 */

/* Bit 0 of the result is set if bit @p of the block is set. */
static __always_inline unsigned long
kbloom_block_has(const unsigned long *blk, unsigned int p)
{
	return READ_ONCE(blk[p / BITS_PER_LONG]) >> (p % BITS_PER_LONG);
}

/*
 * Mark the block of storage word @word changed, if @core tracks changes.
 * Called after a fully ordered atomic operation set a bit of the word. A
 * collector clears a mark (fully ordered too) before it reads the block,
 * so if the mark read here was still set, the collector reads this bit;
 * if it was clear, it is set now for the next collection: no change is
 * ever lost. A mark already set costs a read, and a filter that does not
 * track, one predictable branch.
 */
static __always_inline void kbloom_core_changed(const struct kbloom_core *core,
						size_t word)
{
	unsigned long *marks = READ_ONCE(core->changed);
	size_t block = word / KBLOOM_BLOCK_LONGS;

	if (likely(!marks))
		return;
	if (!test_bit(block, marks))
		set_bit(block, marks);
}

#ifdef __KERNEL__
/*
 * Images and blocks travel in a fixed byte order: the storage as
 * little-endian words, which is the in-memory layout of every
 * little-endian machine, whatever its word size.
 */
static inline void kbloom_word_to_le(void *dst, unsigned long w)
{
#if BITS_PER_LONG == 64
	put_unaligned_le64(w, dst);
#else
	put_unaligned_le32(w, dst);
#endif
}

static inline unsigned long kbloom_word_from_le(const void *src)
{
#if BITS_PER_LONG == 64
	return get_unaligned_le64(src);
#else
	return get_unaligned_le32(src);
#endif
}
#endif /* __KERNEL__ */

/* kbloom_block_add() keeps the block's words needing a write in a u32. */
static_assert(KBLOOM_BLOCK_LONGS <= 32, "a block's words fit a mask");

/*
 * A query is a few instructions a bit: the word's index, its load, a shift
 * by the bit's index in the word (which x86-64 takes modulo 64 by itself:
 * no mask) and an AND.
 */
static __always_inline bool kbloom_block_query(const struct kbloom_core *core,
					       const unsigned long *blk, u64 h)
{
	struct kbloom_block_iter it = { .h = h };
	unsigned long have = ~0UL;
	u64 mix;
	u32 i;

#define KBLOOM_BLOCK_STEP(n)						\
	(have &= kbloom_block_has(blk, KBLOOM_BLOCK_POS(mix, n)))
	if (likely(core->nhashes <= KBLOOM_BLOCK_PER_MIX)) {
		mix = kbloom_mix64(h);
		KBLOOM_BLOCK_UNROLL(core->nhashes);
		return have & 1;
	}
#undef KBLOOM_BLOCK_STEP
	for (i = 0; i < core->nhashes; i++)
		have &= kbloom_block_has(blk,
				kbloom_block_next(&it, KBLOOM_BLOCK_SHIFT));
	return have & 1;
}

/*
 * Set the bits of @mask in *@w by one atomic OR, never a plain
 * read-modify-write: a concurrent adder's bits are never lost. The OR
 * returns the word it replaced, which tells which bits this call set, for
 * @d.
 *
 * Return: the bits this call set.
 */
static __always_inline unsigned long
kbloom_word_or(unsigned long *w, unsigned long mask, struct kbloom_delta *d)
{
	unsigned long got = mask & ~set_mask_bits(w, 0UL, mask);

	if (d)
		d->set += hweight_long(got);
	return got;
}

/*
 * Position @p of a key being added: its bit joins the mask of its word in
 * @want, and if the block lacks it, the word joins @words.
 */
static __always_inline void kbloom_block_want(const unsigned long *blk,
					      unsigned int p,
					      unsigned long *want,
					      unsigned int *words)
{
	want[p / BITS_PER_LONG] |= BIT_MASK(p);
	*words |= (unsigned int)(~kbloom_block_has(blk, p) & 1) <<
		  (p / BITS_PER_LONG);
}

/**
 * kbloom_block_add() - set a key's bits in its block
 * @core: a blocked bit filter.
 * @blk: the key's block.
 * @h: the key's hash.
 * @d: if not NULL, counts the bits set.
 *
 * The k bits are gathered by word, and each word that lacks one of them
 * takes one atomic OR; a word that has them all is only read, so a key
 * already present writes nothing (and a full filter's cache lines stay
 * shared between CPUs). Which words lack bits is found as a query tests
 * bits, without a branch per position; only the loop over those words
 * branches.
 *
 * Return: true if this call set no bit (the key was there, or a racing
 * adder set its last bits first).
 */
static __always_inline bool kbloom_block_add(const struct kbloom_core *core,
					     unsigned long *blk, u64 h,
					     struct kbloom_delta *d)
{
	unsigned long want[KBLOOM_BLOCK_LONGS] = {}, got = 0;
	struct kbloom_block_iter it = { .h = h };
	unsigned int words = 0;
	u64 mix;
	u32 i;

#define KBLOOM_BLOCK_STEP(n)						\
	kbloom_block_want(blk, KBLOOM_BLOCK_POS(mix, n), want, &words)
	if (likely(core->nhashes <= KBLOOM_BLOCK_PER_MIX)) {
		mix = kbloom_mix64(h);
		KBLOOM_BLOCK_UNROLL(core->nhashes);
	} else {
		for (i = 0; i < core->nhashes; i++)
			kbloom_block_want(blk,
					  kbloom_block_next(&it,
							    KBLOOM_BLOCK_SHIFT),
					  want, &words);
	}
#undef KBLOOM_BLOCK_STEP
	while (words) {
		i = __ffs(words);
		words &= words - 1;
		got |= kbloom_word_or(&blk[i], want[i], d);
	}
	if (got)
		kbloom_core_changed(core, blk - core->bitmap);
	return !got;
}

bool kbloom_block_set(const struct kbloom_core *core, unsigned long *blk,
		      u64 h, struct kbloom_delta *d);
bool kbloom_core_do_pos(struct kbloom_core *core, enum kbloom_op op,
			const void *key, u32 len, struct kbloom_delta *d);

/*
 * One operation of a blocked bit filter on the key hashing to @h: query,
 * add or test-and-add (remove is for counting filters, which never come
 * here; callers check, kbloom_op_check()).
 */
static __always_inline bool kbloom_block_do(const struct kbloom_core *core,
					    enum kbloom_op op,
					    unsigned long *blk, u64 h,
					    struct kbloom_delta *d)
{
	/*
	 * Callers refuse a remove (kbloom_op_check()); were one to come, it
	 * answers false and writes nothing, as in the batch.
	 */
	if (op == KBLOOM_OP_REMOVE)
		return false;
	/* An add whose bits are all set writes nothing. */
	if (kbloom_block_query(core, blk, h))
		return op != KBLOOM_OP_ADD;
	if (op == KBLOOM_OP_QUERY)
		return false;
	return kbloom_block_set(core, blk, h, d) &&
	       op == KBLOOM_OP_TEST_AND_ADD;
}

/* Blocked bit filters take kbloom_block_do(); the others, positions. */
static inline bool kbloom_core_block_bits(const struct kbloom_core *core)
{
	return (core->flags & (KBLOOM_CORE_BLOCKED | KBLOOM_CORE_COUNTING)) ==
	       KBLOOM_CORE_BLOCKED;
}

/* Inline: the one-key path of a blocked filter is one call, not four. */
static __always_inline bool kbloom_block_key(const struct kbloom_core *core,
					     enum kbloom_op op,
					     const void *key, u32 len,
					     struct kbloom_delta *d)
{
	u64 h = kbloom_core_hash_inline(core, key, len);

	return kbloom_block_do(core, op, kbloom_block_of(core, h), h, d);
}

/**
 * kbloom_core_do_inline() - kbloom_core_do(), inline for a blocked filter
 * @core: the filter.
 * @op: the operation; KBLOOM_OP_REMOVE on counting filters only.
 * @key: the key bytes.
 * @len: its length, at least 1.
 * @d: if not NULL, counts the transitions.
 *
 * Return: as kbloom_core_do().
 */
static __always_inline bool kbloom_core_do_inline(struct kbloom_core *core,
						  enum kbloom_op op,
						  const void *key, u32 len,
						  struct kbloom_delta *d)
{
	if (likely(kbloom_core_block_bits(core)))
		return kbloom_block_key(core, op, key, len, d);
	return kbloom_core_do_pos(core, op, key, len, d);
}

/* One operation on a key whose positions are known. */
static inline bool kbloom_core_do_at(struct kbloom_core *core,
				     enum kbloom_op op, const u64 *pos,
				     struct kbloom_delta *d)
{
	switch (op) {
	case KBLOOM_OP_ADD:
		kbloom_core_add_at(core, pos, d);
		return false;
	case KBLOOM_OP_QUERY:
		return kbloom_core_query_at(core, pos);
	case KBLOOM_OP_TEST_AND_ADD:
		return kbloom_core_test_and_add_at(core, pos, d);
	default:	/* KBLOOM_OP_REMOVE, on counting filters only */
		return kbloom_core_remove_at(core, pos, d);
	}
}

#endif /* _KBLOOM_CORE_H */
