// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom core: the lock-free bit operations on a key's positions, the
 * passes over a whole filter (clear, count, merge, compare), and storage
 * as blocks for change tracking. Built into kbloom.ko and, unchanged, into
 * the native tests.
 */

#ifdef __KERNEL__
#include <linux/bitmap.h>
#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/math64.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/string.h>
#endif

#include "kbloom_core.h"

/* Report transitions to the caller, who may not want to know (@d NULL). */
static inline void kbloom_delta_set(struct kbloom_delta *d)
{
	if (d)
		d->set++;
}

static inline void kbloom_delta_cleared(struct kbloom_delta *d)
{
	if (d)
		d->cleared++;
}

static inline void kbloom_delta_stuck(struct kbloom_delta *d)
{
	if (d)
		d->stuck++;
}

static inline unsigned int kbloom_counter_shift(u64 pos)
{
	return (pos % KBLOOM_NIBBLES_PER_LONG) * 4;
}

static inline unsigned int kbloom_counter_read(const struct kbloom_core *core,
					       u64 pos)
{
	return (READ_ONCE(*kbloom_cell_word(core, pos)) >>
		kbloom_counter_shift(pos)) & 0xf;
}

/*
 * Counters change by compare-and-swap of their whole word, never by a plain
 * read-modify-write, so concurrent adds and removes on neighbouring (or the
 * same) counters are never lost, from any context. A counter that reaches
 * KBLOOM_COUNTER_STUCK stays there: after it has overflowed, nobody knows
 * how many keys it counts, and decrementing it could make one of them
 * vanish, a false negative.
 */
static inline void kbloom_counter_inc(struct kbloom_core *core, u64 pos,
				      struct kbloom_delta *d)
{
	unsigned long *w = kbloom_cell_word(core, pos), old, new;
	unsigned int shift = kbloom_counter_shift(pos), n;

	old = READ_ONCE(*w);
	do {
		n = (old >> shift) & 0xf;
		if (n == KBLOOM_COUNTER_STUCK)
			return;
		new = old + (1UL << shift);
	} while (!try_cmpxchg(w, &old, new));
	/* The successful swap saw n: exactly one caller makes each change. */
	if (n == 0)
		kbloom_delta_set(d);
	else if (n + 1 == KBLOOM_COUNTER_STUCK)
		kbloom_delta_stuck(d);
}

static inline void kbloom_counter_dec(struct kbloom_core *core, u64 pos,
				      struct kbloom_delta *d)
{
	unsigned long *w = kbloom_cell_word(core, pos), old, new;
	unsigned int shift = kbloom_counter_shift(pos), n;

	old = READ_ONCE(*w);
	do {
		n = (old >> shift) & 0xf;
		/* 0: a racing remove of a colliding key got there first. */
		if (n == KBLOOM_COUNTER_STUCK || n == 0)
			return;
		new = old - (1UL << shift);
	} while (!try_cmpxchg(w, &old, new));
	if (n == 1)
		kbloom_delta_cleared(d);
}

/* Is position @pos set (bit set, or counter non-zero)? */
static inline bool kbloom_cell_test(const struct kbloom_core *core, u64 pos)
{
	if (kbloom_counting(core))
		return kbloom_counter_read(core, pos);
	return test_bit(pos, core->bitmap);
}

/*
 * kbloom_word_or() on a word that lacks some bit of @mask; a word that has
 * them already is only read, not written: once a filter fills up, most
 * adds find their bits set, and skipping the locked write keeps those
 * cache lines shared between CPUs instead of bouncing them.
 *
 * Return: true if this call set some bit.
 */
static inline bool kbloom_word_set(unsigned long *w, unsigned long mask,
				   struct kbloom_delta *d)
{
	if ((READ_ONCE(*w) & mask) == mask)
		return false;
	/* No bit set: a racing adder set them first. */
	return kbloom_word_or(w, mask, d);
}

/* kbloom_block_add(), out of line for the one-key paths. */
bool kbloom_block_set(const struct kbloom_core *core, unsigned long *blk,
		      u64 h, struct kbloom_delta *d)
{
	return kbloom_block_add(core, blk, h, d);
}

/**
 * kbloom_core_valid() - are these parameters a filter the core supports?
 * @nbits: m.
 * @nhashes: k.
 * @flags: KBLOOM_CORE_* bits.
 *
 * Return: true if m and k are within the core's limits, the flags known,
 * and a blocked filter's m a whole number of blocks.
 */
bool kbloom_core_valid(u64 nbits, u32 nhashes, u32 flags)
{
	if (flags & KBLOOM_CORE_BLOCKED &&
	    nbits & (kbloom_block_cells(flags) - 1))
		return false;
	return nbits >= KBLOOM_CORE_MIN_BITS && nbits <= KBLOOM_CORE_MAX_BITS &&
	       nhashes >= 1 && nhashes <= KBLOOM_CORE_MAX_HASHES &&
	       !(flags & ~KBLOOM_CORE_FLAGS);
}

/**
 * kbloom_params_valid() - could CREATE have made a filter like this?
 * @nbits: m.
 * @nhashes: k.
 * @flags: KBLOOM_CORE_* bits.
 * @capacity: design n (informational; 0 if none).
 * @fpr_ppb: design rate in parts per billion, 0 if sized by bits.
 *
 * The one rule for every way a filter comes to be (create, create like,
 * image load, and bloomctl's image reader, which builds this same source):
 * m, k and the flags within the core's limits, and a filter that claims a
 * design rate is exactly what sizing gives for its capacity and rate, so
 * that what loads can always be saved again and the rate it reports is
 * the rate it has.
 *
 * Return: true if valid.
 */
bool kbloom_params_valid(u64 nbits, u32 nhashes, u32 flags, u64 capacity,
			 u32 fpr_ppb)
{
	u64 m;
	u32 k;

	if (!kbloom_core_valid(nbits, nhashes, flags))
		return false;
	if (!fpr_ppb)
		return true;
	if (kbloom_size_flags(capacity, fpr_ppb, flags, &m, &k))
		return false;
	return m == nbits && k == nhashes;
}

/* Bits of storage a position takes. */
static inline u64 kbloom_used_bits(u64 nbits, u32 flags)
{
	return flags & KBLOOM_CORE_COUNTING ? nbits * 4 : nbits;
}

/**
 * kbloom_core_bytes() - size of the storage for m positions
 * @nbits: m.
 * @flags: KBLOOM_CORE_* bits (counting filters take 4 bits a position).
 *
 * Always a multiple of 8 bytes, so that the serialised image has the same
 * size on 32- and 64-bit machines.
 *
 * Return: bytes; SIZE_MAX if that does not fit in a size_t (a 32-bit
 * machine), which every allocator refuses.
 */
size_t kbloom_core_bytes(u64 nbits, u32 flags)
{
	/* In 64 bits first: array_size() would truncate on 32-bit. */
	u64 bytes = DIV_ROUND_UP_ULL(kbloom_used_bits(nbits, flags), 64) * 8;

	return bytes > SIZE_MAX ? SIZE_MAX : bytes;
}

/**
 * kbloom_storage_size() - bytes to allocate for a filter's storage
 * @bytes: what kbloom_core_bytes() says it needs.
 * @huge: the size of a huge page mapping (2 MiB on x86-64), or 0.
 *
 * Storage of at least one huge page is mapped with huge pages (see
 * kbloom_storage_alloc()), which needs whole huge pages: rounded up, but
 * only where that costs at most 1/16 of the storage; otherwise exact.
 *
 * Return: @bytes, or @bytes rounded up to a multiple of @huge.
 */
size_t kbloom_storage_size(size_t bytes, size_t huge)
{
	size_t round;

	if (!huge || bytes < huge || !(bytes % huge))
		return bytes;
	round = bytes - bytes % huge + huge;
	/* Not past SIZE_MAX, and cheap enough. */
	return round > bytes && round - bytes <= bytes / 16 ? round : bytes;
}

/* Number of unsigned longs of storage. */
static inline size_t kbloom_core_longs(const struct kbloom_core *core)
{
	return kbloom_core_bytes(core->nbits, core->flags) /
	       sizeof(unsigned long);
}

#ifdef KBLOOM_CORE_TESTS
/**
 * kbloom_core_compatible() - can @a and @b be merged or compared?
 * @a: a filter.
 * @b: another.
 *
 * Return: true if they have the same m, k, flags and seed, that is, every
 * key has the same positions in both.
 */
bool kbloom_core_compatible(const struct kbloom_core *a,
			    const struct kbloom_core *b)
{
	return a->nbits == b->nbits && a->nhashes == b->nhashes &&
	       a->flags == b->flags &&
	       !memcmp(a->seed, b->seed, sizeof(a->seed));
}
#endif /* KBLOOM_CORE_TESTS */

/**
 * kbloom_core_init() - set up a filter over caller-provided, zeroed memory
 * @core: the filter.
 * @bitmap: kbloom_core_bytes(@nbits, @flags) zeroed bytes.
 * @nbits: m, valid per kbloom_core_valid().
 * @nhashes: k, valid per kbloom_core_valid().
 * @flags: KBLOOM_CORE_* bits.
 * @seed: the hash seed: four words with KBLOOM_CORE_SIPHASH, else two (the
 *	other two are then zero).
 */
void kbloom_core_init(struct kbloom_core *core, unsigned long *bitmap,
		      u64 nbits, u32 nhashes, u32 flags, const u32 *seed)
{
	core->bitmap = bitmap;
	core->nbits = nbits;
	core->nhashes = nhashes;
	core->flags = flags;
	core->seed[0] = seed[0];
	core->seed[1] = seed[1];
	core->seed[2] = flags & KBLOOM_CORE_SIPHASH ? seed[2] : 0;
	core->seed[3] = flags & KBLOOM_CORE_SIPHASH ? seed[3] : 0;
	core->changed = NULL;
}

/*
 * Set the bits at pos[0..k): the positions that share a word are set
 * together, by one atomic OR of their mask (set_mask_bits(), a cmpxchg
 * loop that returns the word it replaced), and a word that already has
 * them all is only read. So a blocked filter, whose k bits lie in 8 words,
 * pays one locked operation per word that changes, not per bit; and,
 * since the OR that made each 0 -> 1 transition saw the old word, @d
 * counts them exactly however callers race. Never a plain
 * read-modify-write: a concurrent adder's bits are never lost.
 *
 * Return: true if this call set no bit (all were set before it, or by a
 * racing adder first): of racing test-and-adds of a new key, at least one
 * sees it new (whichever set some of its bits).
 */
static bool kbloom_bits_set_at(struct kbloom_core *core, const u64 *pos,
			       struct kbloom_delta *d)
{
	u32 i, j, k = core->nhashes, done = 0;
	unsigned long mask;
	bool seen = true;

	for (i = 0; i < k; i++) {
		if (done & BIT(i))
			continue;
		mask = BIT_MASK(pos[i]);
		for (j = i + 1; j < k; j++) {
			if (BIT_WORD(pos[j]) == BIT_WORD(pos[i])) {
				mask |= BIT_MASK(pos[j]);
				done |= BIT(j);
			}
		}
		if (kbloom_word_set(&core->bitmap[BIT_WORD(pos[i])], mask,
				    d)) {
			seen = false;
			kbloom_core_changed(core, BIT_WORD(pos[i]));
		}
	}
	return seen;
}

/**
 * kbloom_core_add() - insert a key
 * @core: the filter.
 * @key: the key bytes.
 * @len: its length, at least 1.
 * @d: if not NULL, counts the positions this call occupied (and, for
 *	counting filters, saturated or freed).
 *
 * Lock-free and safe in any context: bits are set by atomic ORs, one per
 * word (kbloom_bits_set_at()), so concurrent adders never lose each
 * other's bits. A word that already has the bits is only read, not
 * written: once a filter fills up, most probes hit set bits, and skipping
 * the locked write keeps those cache lines shared between CPUs instead of
 * bouncing them. Bits are only ever cleared by kbloom_core_clear(), so a
 * bit seen set stays set. The OR returns the word it replaced, which
 * tells which bits this call set, for @d.
 */
void kbloom_core_add(struct kbloom_core *core, const void *key, u32 len,
		     struct kbloom_delta *d)
{
	u64 pos[KBLOOM_CORE_MAX_HASHES];

	if (kbloom_core_block_bits(core)) {
		kbloom_block_key(core, KBLOOM_OP_ADD, key, len, d);
		return;
	}

	kbloom_core_fill(core, key, len, pos);
	kbloom_core_add_at(core, pos, d);
}

/*
 * The _at() variants work on positions computed once by
 * kbloom_core_positions(): a time-windowed filter hashes a key once and
 * probes each of its generations (same m, k and seed) at the same places.
 */
void kbloom_core_add_at(struct kbloom_core *core, const u64 *pos,
			struct kbloom_delta *d)
{
	u32 i;

	if (kbloom_counting(core)) {
		for (i = 0; i < core->nhashes; i++)
			kbloom_counter_inc(core, pos[i], d);
		return;
	}
	kbloom_bits_set_at(core, pos, d);
}

/**
 * kbloom_core_query() - may the key be present?
 * @core: the filter.
 * @key: the key bytes.
 * @len: its length, at least 1.
 *
 * Return: false if the key was certainly never added; true if it may have
 * been. A key whose kbloom_core_add() completed before this call started
 * (in the happens-before sense: same CPU, or ordered by a lock, a release/
 * acquire pair or a syscall boundary) always tests true.
 */
bool kbloom_core_query(const struct kbloom_core *core, const void *key,
		       u32 len)
{
	u64 pos[KBLOOM_CORE_MAX_HASHES], h;

	if (kbloom_core_block_bits(core)) {
		h = kbloom_core_hash(core, key, len);
		return kbloom_block_query(core, kbloom_block_of(core, h), h);
	}

	kbloom_core_fill(core, key, len, pos);
	return kbloom_core_query_at(core, pos);
}

bool kbloom_core_query_at(const struct kbloom_core *core, const u64 *pos)
{
	u32 i;

	for (i = 0; i < core->nhashes; i++)
		if (!kbloom_cell_test(core, pos[i]))
			return false;
	return true;
}

/**
 * kbloom_core_test_and_add() - insert a key, telling whether it was there
 * @core: the filter.
 * @key: the key bytes.
 * @len: its length, at least 1.
 * @d: if not NULL, counts the positions this call occupied (and, for
 *	counting filters, saturated or freed).
 *
 * The "seen before?" primitive. Each of the k bits is set atomically with
 * test_and_set_bit(), and exactly one caller flips each bit from 0 to 1, so
 * of several callers racing on a key none of them had added, at least one
 * is told it is new (both may be). After this returns, the key tests
 * present.
 *
 * Return: true if all k bits were already set (seen before, or a false
 * positive), false if the key is new.
 */
bool kbloom_core_test_and_add(struct kbloom_core *core, const void *key,
			      u32 len, struct kbloom_delta *d)
{
	u64 pos[KBLOOM_CORE_MAX_HASHES];

	if (kbloom_core_block_bits(core))
		return kbloom_block_key(core, KBLOOM_OP_TEST_AND_ADD, key, len,
					d);

	kbloom_core_fill(core, key, len, pos);
	return kbloom_core_test_and_add_at(core, pos, d);
}

bool kbloom_core_test_and_add_at(struct kbloom_core *core, const u64 *pos,
				 struct kbloom_delta *d)
{
	bool seen = true;
	u32 i;

	if (kbloom_counting(core)) {
		for (i = 0; i < core->nhashes; i++)
			if (!kbloom_counter_read(core, pos[i]))
				seen = false;
		for (i = 0; i < core->nhashes; i++)
			kbloom_counter_inc(core, pos[i], d);
		return seen;
	}
	return kbloom_bits_set_at(core, pos, d);
}

/**
 * kbloom_core_remove() - remove a key from a counting filter
 * @core: a counting filter.
 * @key: the key bytes.
 * @len: its length, at least 1.
 * @d: if not NULL, counts the positions this call occupied (and, for
 *	counting filters, saturated or freed).
 *
 * A key the filter reports absent was never added (or was removed as
 * often): decrementing its counters would take counts that belong to other
 * keys, so it is refused and nothing changes. Saturated counters are left
 * alone (see kbloom_counter_inc()). Lock-free, any context.
 *
 * Return: true if removed, false if refused because the key is absent,
 * or because @core has no counters (callers refuse that first; a bit
 * filter's bits read as counters would be corrupted).
 */
bool kbloom_core_remove(struct kbloom_core *core, const void *key, u32 len,
			struct kbloom_delta *d)
{
	u64 pos[KBLOOM_CORE_MAX_HASHES];

	kbloom_core_fill(core, key, len, pos);
	return kbloom_core_remove_at(core, pos, d);
}

bool kbloom_core_remove_at(struct kbloom_core *core, const u64 *pos,
			   struct kbloom_delta *d)
{
	u32 i;

	/* See kbloom_core_remove(): no counters, nothing to take. */
	if (!kbloom_counting(core))
		return false;
	for (i = 0; i < core->nhashes; i++)
		if (!kbloom_counter_read(core, pos[i]))
			return false;
	for (i = 0; i < core->nhashes; i++)
		kbloom_counter_dec(core, pos[i], d);
	return true;
}

/*
 * Work through a bitmap of up to 8 GiB in 1 MiB pieces: between pieces,
 * yield the CPU and give up if the caller has been killed, so that no pass
 * over a filter holds a CPU for seconds or outlives its caller.
 */
#define KBLOOM_CHUNK_LONGS	((1U << 20) / sizeof(unsigned long))

/**
 * kbloom_core_do_pos() - kbloom_core_do() on a filter that needs positions
 * @core: the filter: not a blocked bit filter.
 * @op: the operation; KBLOOM_OP_REMOVE on counting filters only.
 * @key: the key bytes.
 * @len: its length, at least 1.
 * @d: if not NULL, counts the transitions.
 *
 * In a frame of its own: kernels built with CONFIG_INIT_STACK_ALL_ZERO
 * zero the 256 bytes of positions on every call, which a blocked bit
 * filter's one-key path, with no positions, must not pay.
 *
 * Return: as kbloom_core_do().
 */
noinline_for_stack bool kbloom_core_do_pos(struct kbloom_core *core,
					   enum kbloom_op op, const void *key,
					   u32 len, struct kbloom_delta *d)
{
	u64 pos[KBLOOM_CORE_MAX_HASHES];

	kbloom_core_fill(core, key, len, pos);
	return kbloom_core_do_at(core, op, pos, d);
}

/**
 * kbloom_core_do() - one operation on one key
 * @core: the filter.
 * @op: the operation; KBLOOM_OP_REMOVE on counting filters only.
 * @key: the key bytes.
 * @len: its length, at least 1.
 * @d: if not NULL, counts the transitions.
 *
 * Return: the operation's result: false for add, else as the one-operation
 * calls (kbloom_core_query() and the others).
 */
bool kbloom_core_do(struct kbloom_core *core, enum kbloom_op op,
		    const void *key, u32 len, struct kbloom_delta *d)
{
	return kbloom_core_do_inline(core, op, key, len, d);
}

/* After word @i: 0 to go on, -EINTR to stop. */
static inline int kbloom_core_yield(size_t i)
{
	if ((i + 1) % KBLOOM_CHUNK_LONGS)
		return 0;
	if (fatal_signal_pending(current))
		return -EINTR;
	cond_resched();
	return 0;
}

/* The lowest bit of every counter of a word: 0x1111...1, any word size. */
#define KBLOOM_COUNTER_LSBS	(~0UL / 0xf)

/* Bit 4i of the result: counter i of @w is non-zero. */
static inline unsigned long kbloom_nonzero_counters(unsigned long w)
{
	w |= w >> 1;
	w |= w >> 2;
	return w & KBLOOM_COUNTER_LSBS;
}

/* Bit 4i of the result: counter i of @w is saturated. */
static inline unsigned long kbloom_stuck_counters(unsigned long w)
{
	return w & (w >> 1) & (w >> 2) & (w >> 3) & KBLOOM_COUNTER_LSBS;
}

/* @w reduced to one set bit per occupied position. */
static inline unsigned long kbloom_occupied_word(const struct kbloom_core *core,
						 unsigned long w)
{
	return kbloom_counting(core) ? kbloom_nonzero_counters(w) : w;
}

/* Word @i of @core reduced to one set bit per occupied position. */
static inline unsigned long kbloom_occupied(const struct kbloom_core *core,
					    size_t i)
{
	return kbloom_occupied_word(core, READ_ONCE(core->bitmap[i]));
}

/* Positions stuck in @w (0 for a plain filter). */
static inline unsigned long kbloom_stuck_word(const struct kbloom_core *core,
					      unsigned long w)
{
	return kbloom_counting(core) ? kbloom_stuck_counters(w) : 0;
}

/* Account the change of one word from @old to @new in @d. */
static inline void kbloom_delta_word(const struct kbloom_core *core,
				     unsigned long old, unsigned long new,
				     struct kbloom_delta *d)
{
	unsigned long o = kbloom_occupied_word(core, old);
	unsigned long n = kbloom_occupied_word(core, new);
	unsigned long so = kbloom_stuck_word(core, old);
	unsigned long sn = kbloom_stuck_word(core, new);

	d->set += hweight_long(n & ~o);
	d->cleared += hweight_long(o & ~n);
	d->stuck += hweight_long(sn & ~so);
	d->unstuck += hweight_long(so & ~sn);
}

/**
 * kbloom_core_clear() - zero every bit
 * @core: the filter.
 * @d: out: the positions this call freed (and stuck counters it reset).
 *
 * Each non-zero word is swapped for zero atomically, so @d is exactly
 * what was cleared even while others add: a key added concurrently may or
 * may not survive, but the accounting of its bits stays right. May sleep.
 *
 * Return: 0, or -EINTR if the caller got a fatal signal (the filter is
 * then partly cleared, and @d says how much).
 */
int kbloom_core_clear(struct kbloom_core *core, struct kbloom_delta *d)
{
	size_t longs = kbloom_core_longs(core), i;
	unsigned long old;
	int ret;

	for (i = 0; i < longs; i++) {
		if (READ_ONCE(core->bitmap[i])) {
			old = xchg(&core->bitmap[i], 0);
			kbloom_delta_word(core, old, 0, d);
		}
		ret = kbloom_core_yield(i);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * kbloom_core_wipe() - zero every bit of storage nobody else can reach
 * @core: the filter, private to the caller (a generation leaving a
 *	windowed filter's view).
 * @d: out: the positions freed and stuck counters reset.
 *
 * Like kbloom_core_clear(), but plain stores, and never stopped by a
 * signal: the caller needs the storage wholly clear. May sleep.
 */
void kbloom_core_wipe(struct kbloom_core *core, struct kbloom_delta *d)
{
	size_t longs = kbloom_core_longs(core), i;
	unsigned long old;

	for (i = 0; i < longs; i++) {
		old = core->bitmap[i];
		if (old) {
			core->bitmap[i] = 0;
			kbloom_delta_word(core, old, 0, d);
		}
		if (!((i + 1) % KBLOOM_CHUNK_LONGS))
			cond_resched();
	}
}

/**
 * kbloom_core_count() - count occupied positions and stuck counters
 * @core: the filter.
 * @occupied: out: bits set, or non-zero counters (X; the fill is X / m).
 * @stuck: out: counters stuck at KBLOOM_COUNTER_STUCK (0 if plain).
 *
 * A full scan, for code that builds a filter wholesale (an image load)
 * and the tests; readers use the counters the filter layer keeps. Padding
 * past m is always zero, so whole words count. May sleep.
 *
 * Return: 0, or -EINTR if the caller got a fatal signal.
 */
int kbloom_core_count(const struct kbloom_core *core, u64 *occupied,
		      u64 *stuck)
{
	size_t longs = kbloom_core_longs(core), i;
	unsigned long w;
	int ret;

	*occupied = 0;
	*stuck = 0;
	for (i = 0; i < longs; i++) {
		w = READ_ONCE(core->bitmap[i]);
		*occupied += hweight_long(kbloom_occupied_word(core, w));
		*stuck += hweight_long(kbloom_stuck_word(core, w));
		ret = kbloom_core_yield(i);
		if (ret)
			return ret;
	}
	return 0;
}

/* Counter-wise a + b, saturating at KBLOOM_COUNTER_STUCK. */
static unsigned long kbloom_counters_add(unsigned long a, unsigned long b)
{
	unsigned long r = 0, x;
	unsigned int shift;

	for (shift = 0; shift < BITS_PER_LONG; shift += 4) {
		x = ((a >> shift) & 0xf) + ((b >> shift) & 0xf);
		r |= min_t(unsigned long, x, KBLOOM_COUNTER_STUCK) << shift;
	}
	return r;
}

/**
 * kbloom_core_merge() - make @dst the union of @dst and @src
 * @dst: the filter that receives.
 * @src: a compatible filter (kbloom_core_compatible()), unchanged.
 * @d: out: the transitions the merge made in @dst.
 *
 * Bits are ORed, counters added with saturation. Each word is updated by
 * compare-and-swap, so adds to @dst running at the same time are kept and
 * @d is exact. May sleep.
 *
 * Return: 0, or -EINTR if the caller got a fatal signal: a prefix of @src
 * was merged, which loses no key of @dst.
 */
int kbloom_core_merge(struct kbloom_core *dst, const struct kbloom_core *src,
		      struct kbloom_delta *d)
{
	size_t longs = kbloom_core_longs(dst), i;
	unsigned long s, old, new;
	int ret;

	for (i = 0; i < longs; i++) {
		s = READ_ONCE(src->bitmap[i]);
		if (s) {
			old = READ_ONCE(dst->bitmap[i]);
			do {
				new = kbloom_counting(dst) ?
				      kbloom_counters_add(old, s) : old | s;
			} while (new != old &&
				 !try_cmpxchg(&dst->bitmap[i], &old, new));
			kbloom_delta_word(dst, old, new, d);
			if (new != old)
				kbloom_core_changed(dst, i);
		}
		ret = kbloom_core_yield(i);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * kbloom_core_compare() - positions set in both, and in either
 * @a: a filter.
 * @b: a compatible filter.
 * @both: out: positions set in @a and in @b.
 * @either: out: positions set in @a or in @b (the union's weight).
 *
 * With the weights of @a and @b, enough to estimate the sizes of the union
 * and intersection of the two key sets. One pass over both. May sleep.
 *
 * Return: 0, or -EINTR if the caller got a fatal signal.
 */
int kbloom_core_compare(const struct kbloom_core *a,
			const struct kbloom_core *b, u64 *both, u64 *either)
{
	size_t longs = kbloom_core_longs(a), i;
	unsigned long wa, wb;
	int ret;

	*both = 0;
	*either = 0;
	for (i = 0; i < longs; i++) {
		wa = kbloom_occupied(a, i);
		wb = kbloom_occupied(b, i);
		*both += hweight_long(wa & wb);
		*either += hweight_long(wa | wb);
		ret = kbloom_core_yield(i);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * kbloom_core_padding_clear() - are the storage bits past m all zero?
 * @core: the filter.
 *
 * They always are for a filter the core filled; an image loaded from a
 * file must be checked, or it would count positions that do not exist.
 *
 * Return: true if they are.
 */
bool kbloom_core_padding_clear(const struct kbloom_core *core)
{
	u64 used = kbloom_used_bits(core->nbits, core->flags);
	size_t longs = kbloom_core_longs(core), i = used / BITS_PER_LONG;

	if (used % BITS_PER_LONG &&
	    core->bitmap[i++] & ~(~0UL >> (BITS_PER_LONG - used % BITS_PER_LONG)))
		return false;
	for (; i < longs; i++)
		if (core->bitmap[i])
			return false;
	return true;
}

/*
 * Storage as blocks of KBLOOM_BLOCK_BYTES, for change tracking (struct
 * kbloom_core @changed): the unit in which changes are collected from one
 * filter and ORed into another of the same shape and seed. The last block
 * may be short: its words past the storage read as zero.
 */

/* Blocks of storage: a plain filter's m need not fill the last one. */
u64 kbloom_core_blocks(const struct kbloom_core *core)
{
	return DIV_ROUND_UP_ULL(kbloom_core_longs(core), KBLOOM_BLOCK_LONGS);
}

/* The bits of storage word @i that hold positions. */
static unsigned long kbloom_word_used(const struct kbloom_core *core, size_t i)
{
	u64 used = kbloom_used_bits(core->nbits, core->flags);

	if ((u64)(i + 1) * BITS_PER_LONG <= used)
		return ~0UL;
	if ((u64)i * BITS_PER_LONG >= used)
		return 0;
	return ~0UL >> (BITS_PER_LONG - used % BITS_PER_LONG);
}

/**
 * kbloom_core_block_read() - copy a block's words
 * @core: the filter.
 * @block: below kbloom_core_blocks().
 * @words: out: KBLOOM_BLOCK_LONGS words, zero past the storage.
 *
 * Return: true if some bit is set.
 */
bool kbloom_core_block_read(const struct kbloom_core *core, u64 block,
			    unsigned long *words)
{
	size_t first = block * KBLOOM_BLOCK_LONGS, longs = kbloom_core_longs(core);
	unsigned long any = 0;
	size_t i;

	for (i = 0; i < KBLOOM_BLOCK_LONGS; i++) {
		words[i] = first + i < longs ? READ_ONCE(core->bitmap[first + i]) :
					       0;
		any |= words[i];
	}
	return any;
}

/**
 * kbloom_core_block_valid() - could @words be block @block of @core?
 * @core: the filter.
 * @block: the block's number.
 * @words: KBLOOM_BLOCK_LONGS words.
 *
 * Return: true if @block exists and no bit is set past m (as
 * kbloom_core_padding_clear() requires of a whole image).
 */
bool kbloom_core_block_valid(const struct kbloom_core *core, u64 block,
			     const unsigned long *words)
{
	size_t i;

	if (block >= kbloom_core_blocks(core))
		return false;
	for (i = 0; i < KBLOOM_BLOCK_LONGS; i++)
		if (words[i] & ~kbloom_word_used(core, block * KBLOOM_BLOCK_LONGS + i))
			return false;
	return true;
}

/**
 * kbloom_core_block_new() - bits a block would set
 * @core: the filter.
 * @block: a valid block number.
 * @words: the block to OR in.
 *
 * Return: the bits of @words not set in @core now.
 */
u64 kbloom_core_block_new(const struct kbloom_core *core, u64 block,
			  const unsigned long *words)
{
	unsigned long cur[KBLOOM_BLOCK_LONGS];
	u64 n = 0;
	size_t i;

	kbloom_core_block_read(core, block, cur);
	for (i = 0; i < KBLOOM_BLOCK_LONGS; i++)
		n += hweight_long(words[i] & ~cur[i]);
	return n;
}

/**
 * kbloom_core_block_or() - OR a block into a bit filter
 * @core: a bit filter.
 * @block: a block for which kbloom_core_block_valid() holds.
 * @words: the block.
 * @d: counts the bits set.
 *
 * Word by word with the atomic OR adds use, so concurrent adds lose
 * nothing, and the block is marked changed where a bit was set. Lock-free.
 */
void kbloom_core_block_or(struct kbloom_core *core, u64 block,
			  const unsigned long *words, struct kbloom_delta *d)
{
	size_t first = block * KBLOOM_BLOCK_LONGS, i;

	for (i = 0; i < KBLOOM_BLOCK_LONGS; i++) {
		if (!words[i])
			continue;
		if (kbloom_word_set(&core->bitmap[first + i], words[i], d))
			kbloom_core_changed(core, first + i);
	}
}

/**
 * kbloom_core_fingerprint() - which filters blocks of @core may go into
 * @core: the filter (its shape and seed; no storage needed).
 * @generations: G of a windowed filter, else 0.
 * @window_ms: its W, else 0.
 *
 * SipHash-2-4 keyed with the seed (kbloom_siphash64(), the kernel's
 * siphash()) of m, k and the core flags (kind, layout, hash scheme), and
 * the window, as three little-endian words: equal for filters whose keys
 * land on the same bits and that rotate alike, and, being keyed, telling
 * nothing of the seed. KBLOOM_IOC_COLLECT reports it, KBLOOM_IOC_APPLY
 * checks it.
 *
 * Return: the fingerprint.
 */
u64 kbloom_core_fingerprint(const struct kbloom_core *core, u32 generations,
			    u32 window_ms)
{
	const u64 words[3] = {
		core->nbits, (u64)core->nhashes << 32 | core->flags,
		(u64)generations << 32 | window_ms,
	};
	u8 shape[sizeof(words)];
	u32 i;

	for (i = 0; i < sizeof(shape); i++)
		shape[i] = (u8)(words[i / 8] >> (8 * (i % 8)));
	return kbloom_siphash64(shape, sizeof(shape), core->seed);
}
