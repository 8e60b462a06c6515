// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom core: how a key becomes k bit positions, the lock-free bit
 * operations on them, and the sizing arithmetic (fixed point: no FPU in the
 * kernel). Built into kbloom.ko and, unchanged, into the native tests.
 */

#ifdef __KERNEL__
#include <linux/bitmap.h>
#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/jhash.h>
#include <linux/math64.h>
#include <linux/overflow.h>
#include <linux/prefetch.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/siphash.h>
#include <linux/string.h>
#include <asm/unaligned.h>
#endif

#include "kbloom_core.h"

/**
 * kbloom_hash64() - 64-bit hash of a key, one pass
 * @key: the key bytes.
 * @len: its length.
 * @seed: two secret seed words.
 *
 * This is jhash (the kernel's __jhash_mix and __jhash_final, unchanged)
 * carried to 64 bits the way Bob Jenkins' hashlittle2() does it: the second
 * seed word perturbs c and both final words b and c are returned. A single
 * 32-bit hash caps accuracy at large n (two keys share all k positions with
 * probability 2^-32, which at n = 10^8 is already felt), and two jhash()
 * calls would read the key twice.
 *
 * Words are read little-endian whatever the CPU, so a filter image saved on
 * one architecture gives the same positions on another. On little-endian
 * machines the low word is exactly jhash(key, len, seed[0]) when seed[1] is
 * 0; the tests check that.
 *
 * Return: b << 32 | c.
 */
u64 kbloom_hash64(const void *key, u32 len, const u32 seed[2])
{
	return __kbloom_hash64(key, len, seed);
}

/**
 * kbloom_siphash64() - SipHash-2-4 of a key
 * @key: the key bytes.
 * @len: its length.
 * @seed: four secret seed words: the 128-bit SipHash key is
 *	seed[0] | seed[1] << 32, seed[2] | seed[3] << 32, so it is the same
 *	numbers, and the same positions, on every architecture.
 *
 * The kernel's siphash() (computed inline, from the kernel's rounds), a
 * keyed pseudo-random function: unlike jhash, someone who does not know
 * the seed cannot find keys that set chosen bits, however many keys they
 * choose (a packet stream) and however many answers they see.
 *
 * Return: the 64-bit SipHash.
 */
u64 kbloom_siphash64(const void *key, u32 len, const u32 seed[4])
{
	return __kbloom_siphash64(key, len, seed);
}

/**
 * kbloom_core_hash() - the filter's 64-bit hash of a key
 * @core: the filter (its hash scheme and seed).
 * @key: the key bytes.
 * @len: its length, at least 1.
 *
 * Return: kbloom_siphash64() or kbloom_hash64(), by the filter's scheme.
 */
u64 kbloom_core_hash(const struct kbloom_core *core, const void *key, u32 len)
{
	return kbloom_core_hash_inline(core, key, len);
}

/**
 * kbloom_core_probe() - hash a key into its probe sequence
 * @core: the filter (for m and the seed).
 * @key: the key bytes.
 * @len: its length, at least 1.
 * @probe: the result.
 *
 * The first position comes from the whole 64-bit hash, the step from the
 * hash rotated by 32 so that it is dominated by the other jhash output
 * word. The step lies in [1, m): never 0.
 */
void kbloom_core_probe(const struct kbloom_core *core, const void *key,
		       u32 len, struct kbloom_probe *probe)
{
	u64 h = kbloom_core_hash(core, key, len);

	probe->x = kbloom_reduce(h, core->nbits);
	probe->y = 1 + kbloom_reduce(rol64(h, 32), core->nbits - 1);
}

/*
 * Enhanced double hashing (Dillinger and Manolios, 2004), the refinement of
 * Kirsch and Mitzenmacher's g_i = h1 + i * h2: position i is
 * x_i = x_{i-1} + y_{i-1} (mod m) with y_i = y_{i-1} + i (mod m). The
 * growing step breaks the short cycles plain double hashing falls into when
 * gcd(step, m) > 1, which matters because m is not restricted to primes or
 * powers of two. Everything stays below 2m before each conditional
 * subtraction (m >= 64 > k), so there is no division.
 */
static inline void kbloom_probe_next(struct kbloom_probe *p, u64 m, u32 i)
{
	p->x += p->y;
	if (p->x >= m)
		p->x -= m;
	p->y += i;
	if (p->y >= m)
		p->y -= m;
}

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

/*
 * Counting filters keep a 4-bit counter per position, packed in the same
 * unsigned longs the bitmap uses, so the file/image byte order and the
 * allocation are shared with plain filters.
 */
#define KBLOOM_NIBBLES_PER_LONG	(BITS_PER_LONG / 4)

static inline bool kbloom_counting(const struct kbloom_core *core)
{
	return core->flags & KBLOOM_CORE_COUNTING;
}

/* The word holding position @pos: bit @pos, or counter @pos. */
static inline unsigned long *kbloom_cell_word(const struct kbloom_core *core,
					      u64 pos)
{
	if (kbloom_counting(core))
		return &core->bitmap[pos / KBLOOM_NIBBLES_PER_LONG];
	return &core->bitmap[BIT_WORD(pos)];
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

/**
 * kbloom_block_cells() - positions in a block of a blocked filter
 * @flags: KBLOOM_CORE_* bits.
 *
 * Return: 512 bits, or 128 counters for a counting filter: 64 bytes.
 */
u32 kbloom_block_cells(u32 flags)
{
	return 1U << kbloom_block_shift(flags);
}

static inline void kbloom_core_fill_blocked(const struct kbloom_core *core,
					    u64 h, u64 *pos)
{
	unsigned int shift = kbloom_block_shift(core->flags);
	u64 base = kbloom_reduce(h, core->nbits >> shift) << shift;
	struct kbloom_block_iter it = { .h = h };
	u32 i;

	prefetch(kbloom_cell_word(core, base));
	for (i = 0; i < core->nhashes; i++)
		pos[i] = base + kbloom_block_next(&it, shift);
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

/* Fill pos[0..k) and start fetching the words they live in. */
static inline void kbloom_core_fill(const struct kbloom_core *core,
				    const void *key, u32 len, u64 *pos)
{
	struct kbloom_probe p;
	u32 i;

	if (core->flags & KBLOOM_CORE_BLOCKED) {
		kbloom_core_fill_blocked(core, kbloom_core_hash(core, key, len),
					 pos);
		return;
	}

	kbloom_core_probe(core, key, len, &p);
	for (i = 0; i < core->nhashes; i++) {
		pos[i] = p.x;
		/*
		 * The k words are in unrelated cache lines of a bitmap that
		 * may be far larger than the caches: asking for all of them
		 * before touching any overlaps the k misses.
		 */
		prefetch(kbloom_cell_word(core, p.x));
		kbloom_probe_next(&p, core->nbits, i + 1);
	}
}

/**
 * kbloom_core_positions() - the k bit positions of a key
 * @core: the filter.
 * @key: the key bytes.
 * @len: its length, at least 1.
 * @pos: room for core->nhashes positions, each in [0, m).
 */
void kbloom_core_positions(const struct kbloom_core *core, const void *key,
			   u32 len, u64 *pos)
{
	kbloom_core_fill(core, key, len, pos);
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
 * kbloom_window_fpr() - the rate each generation of a windowed filter is
 * sized for
 * @fpr_ppb: the target rate of the whole filter, parts per billion.
 * @generations: G; 0 (or 1) for a plain filter.
 *
 * A key absent from all G generations is reported present if any of them
 * errs: at most G times the rate of one. Sizing each for eps / G keeps the
 * whole filter at eps.
 *
 * Return: the per-generation rate, at least 1 ppb.
 */
u32 kbloom_window_fpr(u32 fpr_ppb, u32 generations)
{
	if (generations < 2 || !fpr_ppb)
		return fpr_ppb;
	return max_t(u32, fpr_ppb / generations, 1);
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

/*
 * Sizing arithmetic. Numbers in [0, 1] (and logarithms) are fixed point
 * with 32 fractional bits; intermediate products go through the 128-bit
 * helpers of math64.h, so nothing overflows for any m up to 2^36.
 */
#define KBLOOM_LN2_Q32		2977044472ULL	/* ln 2 */
#define KBLOOM_LOG2E_Q32	6196328019ULL	/* log2 e = 1 / ln 2 */
#define KBLOOM_Q62_ONE		BIT_ULL(62)

/* 2^(-2^-(j+1)) for j = 0..31, with 62 fractional bits. */
static const u64 kbloom_exp2_neg_q62[32] = {
	0x2d413cccfe779921ULL, 0x35d13f32b5a75abdULL, 0x3ab031b9f7490e4cULL,
	0x3d495f454921b30bULL, 0x3ea0ecb6dc8a80cfULL, 0x3f4f83033d21b05dULL,
	0x3fa784571ee3e213ULL, 0x3fd3b2d65447b229ULL, 0x3fe9d59487236bb4ULL,
	0x3ff4e9d4703df843ULL, 0x3ffa74acbdf6c9d5ULL, 0x3ffd3a46ffc6e30fULL,
	0x3ffe9d1fa8010199ULL, 0x3fff4e8ede053ad5ULL, 0x3fffa747318376acULL,
	0x3fffd3a38961e6ffULL, 0x3fffe9d1c0d8fd14ULL, 0x3ffff4e8df7680c5ULL,
	0x3ffffa746f7dc0ecULL, 0x3ffffd3a37af8098ULL, 0x3ffffe9d1bd3e854ULL,
	0x3fffff4e8de8fe2cULL, 0x3fffffa746f44197ULL, 0x3fffffd3a37a116bULL,
	0x3fffffe9d1bd04deULL, 0x3ffffff4e8de8179ULL, 0x3ffffffa746f407fULL,
	0x3ffffffd3a37a030ULL, 0x3ffffffe9d1bd014ULL, 0x3fffffff4e8de809ULL,
	0x3fffffffa746f404ULL, 0x3fffffffd3a37a02ULL,
};

/**
 * kbloom_log2_q32() - log2 of an integer, 32 fractional bits
 * @x: at least 1.
 *
 * The integer part is the top set bit; each fractional bit comes from
 * squaring the mantissa (in [1, 2), 62 fractional bits) and seeing whether
 * it reached 2.
 *
 * Return: log2(@x) * 2^32, truncated; 0 for @x == 0.
 */
u64 kbloom_log2_q32(u64 x)
{
	u64 result, m;
	int ip, i;

	if (!x)
		return 0;
	ip = fls64(x) - 1;
	m = ip > 62 ? x >> (ip - 62) : x << (62 - ip);
	result = (u64)ip << 32;
	for (i = 31; i >= 0; i--) {
		m = mul_u64_u64_shr(m, m, 62);
		if (m >= 2 * KBLOOM_Q62_ONE) {
			m >>= 1;
			result |= 1ULL << i;
		}
	}
	return result;
}

/* e^-x for x * 2^32, as e^-x * 2^62 (truncated). */
static u64 kbloom_exp_neg_q62(u64 x)
{
	u64 t = mul_u64_u64_shr(x, KBLOOM_LOG2E_Q32, 32);
	u64 r = KBLOOM_Q62_ONE;
	u32 ip = t >> 32, frac = (u32)t;
	int j;

	if (ip >= 62)
		return 0;
	for (j = 0; j < 32; j++)
		if (frac & (1U << (31 - j)))
			r = mul_u64_u64_shr(r, kbloom_exp2_neg_q62[j], 62);
	return r >> ip;
}

/**
 * kbloom_exp_neg_q32() - e^-x in fixed point
 * @x: x * 2^32.
 *
 * e^-x = 2^-t with t = x log2 e: the integer part of t is a shift, the
 * fraction a product of table entries, one per set bit.
 *
 * Return: e^-x * 2^32, rounded.
 */
u64 kbloom_exp_neg_q32(u64 x)
{
	return (kbloom_exp_neg_q62(x) + (1ULL << 29)) >> 30;
}

#ifdef KBLOOM_CORE_TESTS
/**
 * kbloom_fpr_q32() - theoretical false-positive rate (1 - e^(-kn/m))^k
 * @nbits: m, at least 1.
 * @nhashes: k.
 * @nkeys: n, the number of distinct keys added.
 *
 * Return: the rate * 2^32 (KBLOOM_Q32_ONE is certainty).
 */
u64 kbloom_fpr_q32(u64 nbits, u32 nhashes, u64 nkeys)
{
	u64 kn, p, r = KBLOOM_Q32_ONE;
	u32 i;

	if (!nkeys)
		return 0;
	/* Beyond kn/m = 48, e^(-kn/m) is below 2^-64: certainty. */
	if (check_mul_overflow(nkeys, (u64)nhashes, &kn) ||
	    div64_u64(kn, nbits) >= 48)
		return KBLOOM_Q32_ONE;
	p = KBLOOM_Q32_ONE -
	    kbloom_exp_neg_q32(mul_u64_u64_div_u64(kn, KBLOOM_Q32_ONE, nbits));
	if (p >= KBLOOM_Q32_ONE)
		return KBLOOM_Q32_ONE;
	/* r and p are both below 2^32 here, so r * p fits in 64 bits. */
	for (i = 0; i < nhashes; i++)
		r = (r * p + (1ULL << 31)) >> 32;
	return r;
}
#endif /* KBLOOM_CORE_TESTS */

/**
 * kbloom_fill_at() - positions expected set after n distinct keys
 * @nbits: m.
 * @nhashes: k.
 * @nkeys: n.
 * @flags: KBLOOM_CORE_* bits: the layout.
 *
 * m (1 - e^(-kn/m)): the fill a filter has at its design capacity, which a
 * time-windowed filter with rotate-at-fill watches for. A blocked filter
 * fills a little more slowly (a key's draws repeat cells of its block):
 * with Poisson(lambda = nB/m) keys in a block of B cells, a cell stays
 * empty with probability E[(1-1/B)^(ki)] = e^(-lambda (1 - (1-1/B)^k)).
 *
 * Return: the expected number of occupied positions, rounded down.
 */
u64 kbloom_fill_at(u64 nbits, u32 nhashes, u64 nkeys, u32 flags)
{
	unsigned int shift = kbloom_block_shift(flags);
	u64 kn, empty, x, q = KBLOOM_Q62_ONE, miss;
	u32 i;

	if (check_mul_overflow(nkeys, (u64)nhashes, &kn) ||
	    div64_u64(kn, nbits) >= 48)
		return nbits;
	if (flags & KBLOOM_CORE_BLOCKED) {
		/* (1-1/B)^k, then lambda (1 - that), in 2^32. */
		miss = KBLOOM_Q62_ONE - (KBLOOM_Q62_ONE >> shift);
		for (i = 0; i < nhashes; i++)
			q = mul_u64_u64_shr(q, miss, 62);
		x = mul_u64_u64_shr(mul_u64_u64_div_u64(nkeys, 1ULL << (32 + shift),
							nbits),
				    KBLOOM_Q62_ONE - q, 62);
	} else {
		/* The fraction still empty: e^(-kn/m). */
		x = mul_u64_u64_div_u64(kn, KBLOOM_Q32_ONE, nbits);
	}
	empty = kbloom_exp_neg_q32(x);
	return nbits - mul_u64_u64_shr(nbits, empty, 32);
}

/**
 * kbloom_optimal_hashes() - k = round((m/n) ln 2), clamped to [1, 32]
 * @nbits: m.
 * @capacity: n, at least 1.
 *
 * Return: the k that minimises the false-positive rate at n keys.
 */
u32 kbloom_optimal_hashes(u64 nbits, u64 capacity)
{
	u64 k;

	if (!capacity)
		return 1;
	/* Past m/n = 48, k is clamped anyway; this also bounds the quotient. */
	if (div64_u64(nbits, capacity) >= 48)
		return KBLOOM_CORE_MAX_HASHES;
	k = mul_u64_u64_div_u64(nbits, KBLOOM_LN2_Q32, capacity);
	k = (k + (1ULL << 31)) >> 32;
	return clamp_t(u64, k, 1, KBLOOM_CORE_MAX_HASHES);
}

/**
 * kbloom_size() - size a filter for n keys at a target false-positive rate
 * @capacity: n, at least 1.
 * @fpr_ppb: the target rate eps in parts per billion, 1 to 10^9 - 1.
 * @nbits: out: m = ceil(-n ln(eps) / (ln 2)^2), at least 64.
 * @nhashes: out: k = round((m/n) ln 2).
 *
 * -ln(eps) / (ln 2)^2 = log2(1/eps) * log2(e), and log2(1/eps) is
 * log2(10^9) - log2(ppb): no floating point anywhere.
 *
 * Return: 0, or -EINVAL for arguments out of range or an m above
 * KBLOOM_CORE_MAX_BITS.
 */
int kbloom_size(u64 capacity, u32 fpr_ppb, u64 *nbits, u32 *nhashes)
{
	u64 l2, bpk, m;

	if (!capacity || !fpr_ppb || fpr_ppb >= 1000000000U)
		return -EINVAL;
	l2 = kbloom_log2_q32(1000000000U) - kbloom_log2_q32(fpr_ppb);
	bpk = mul_u64_u64_shr(l2, KBLOOM_LOG2E_Q32, 32);	/* bits per key */
	if (div64_u64(KBLOOM_CORE_MAX_BITS, capacity) < (bpk >> 32))
		return -EINVAL;
	m = mul_u64_u64_shr(capacity, bpk, 32);
	if ((u32)(capacity * bpk) != 0)	/* a fraction was cut off */
		m++;
	m = max_t(u64, m, KBLOOM_CORE_MIN_BITS);
	if (m > KBLOOM_CORE_MAX_BITS)
		return -EINVAL;
	*nbits = m;
	*nhashes = kbloom_optimal_hashes(m, capacity);
	return 0;
}

/*
 * The rate of a block of B cells whose keys made t uniform draws: the
 * chance that k uniform query positions all land on occupied cells,
 * E[(S/B)^k] for S the occupied cells, computed exactly and in positive
 * terms only (no alternating sums), so that fixed point keeps it even at
 * 1 ppb: the k query draws hit d distinct cells with probability pd[d],
 * and d given cells are all hit by t draws with probability g[d](t), where
 * g[d](t) = (1 - d/B) g[d](t-1) + (d/B) g[d-1](t-1) (the draw misses
 * them, or covers one). The plain formula's (E[S]/B)^k is 2-9% low at the
 * loads blocks have, and more at large k: S varies much more over 128 or
 * 512 cells than over a whole filter.
 */
struct kbloom_block_rate {
	u64 pd[KBLOOM_CORE_MAX_HASHES + 1];
	u64 g[KBLOOM_CORE_MAX_HASHES + 1];
	u64 t;
	u32 k;
	unsigned int shift;
};

static void kbloom_block_rate_init(struct kbloom_block_rate *br, u32 nhashes,
				   unsigned int shift)
{
	u64 *pd = br->pd;
	u32 j, d;

	memset(br, 0, sizeof(*br));
	br->k = nhashes;
	br->shift = shift;
	br->g[0] = KBLOOM_Q62_ONE;
	/* Distinct cells after j query draws: pd[d] over d = 0..j. */
	pd[0] = KBLOOM_Q62_ONE;
	for (j = 1; j <= nhashes; j++) {
		for (d = j; d >= 1; d--)
			pd[d] = mul_u64_u64_shr(pd[d], (u64)d << (62 - shift),
						62) +
				mul_u64_u64_shr(pd[d - 1],
						KBLOOM_Q62_ONE - ((u64)(d - 1) <<
								  (62 - shift)),
						62);
		pd[0] = 0;
	}
}

/* The rate, * 2^62, after @t draws (t never decreases between calls). */
static u64 kbloom_block_rate_at(struct kbloom_block_rate *br, u64 t)
{
	u64 r = 0, hit;
	u32 d;

	for (; br->t < t; br->t++) {
		for (d = br->k; d >= 1; d--) {
			hit = (u64)d << (62 - br->shift);
			br->g[d] = mul_u64_u64_shr(br->g[d],
						   KBLOOM_Q62_ONE - hit, 62) +
				   mul_u64_u64_shr(br->g[d - 1], hit, 62);
		}
	}
	for (d = 1; d <= br->k; d++)
		r += mul_u64_u64_shr(br->pd[d], br->g[d], 62);
	return min_t(u64, r, KBLOOM_Q62_ONE);
}

/* ln(lambda / j) * 2^32, lambda * 2^32 given: one Poisson ratio, in logs. */
static s64 kbloom_ln_ratio_q32(u64 lambda, u64 j)
{
	s64 l2 = (s64)kbloom_log2_q32(lambda) - (32LL << 32) -
		 (s64)kbloom_log2_q32(j);

	return l2 < 0 ? -(s64)mul_u64_u64_shr(-l2, KBLOOM_LN2_Q32, 32) :
			(s64)mul_u64_u64_shr(l2, KBLOOM_LN2_Q32, 32);
}

/* Poisson weights below e^-40 of the mode's are left out of the sum. */
#define KBLOOM_POISSON_CUT	(40LL << 32)

/**
 * kbloom_fpr_blocked_q62() - theoretical false-positive rate, blocked layout
 * @nbits: m, a whole number of blocks.
 * @nhashes: k.
 * @nkeys: n, the number of distinct keys added.
 * @flags: KBLOOM_CORE_* bits (the block has 512 bits, or 128 counters).
 *
 * With N = m / B blocks of B cells, the keys in the block a query lands in
 * are Poisson with mean lambda = n / N, and a block holding i keys (k i
 * draws) answers "maybe" at the rate kbloom_block_rate_at() computes
 * (Putze, Sanders and Singler, "Cache-, Hash- and Space-Efficient Bloom
 * Filters", 2007, with that rate exact). The weights are taken relative to
 * the mode's, from their logarithms (no e^-lambda, which underflows, and
 * no error that grows along the sum), from where they fall below e^-40 on
 * one side to where they do on the other. All in fixed point.
 *
 * Return: the rate * 2^62.
 */
u64 kbloom_fpr_blocked_q62(u64 nbits, u32 nhashes, u64 nkeys, u32 flags)
{
	unsigned int shift = kbloom_block_shift(flags);
	u64 lambda, mode, i, w, sum_w = 0, sum_f = 0, kn;
	struct kbloom_block_rate br;
	s64 lw = 0;

	if (!nkeys)
		return 0;
	/* Beyond kn/m = 48 every block is full: certainty (as the plain one). */
	if (check_mul_overflow(nkeys, (u64)nhashes, &kn) ||
	    div64_u64(kn, nbits) >= 48)
		return KBLOOM_Q62_ONE;
	lambda = mul_u64_u64_div_u64(nkeys, 1ULL << (32 + shift), nbits);
	mode = lambda >> 32;
	/* Down from the mode to the first weight that counts. */
	for (i = mode; i > 0; i--) {
		s64 step = kbloom_ln_ratio_q32(lambda, i);

		if (lw - step < -KBLOOM_POISSON_CUT)
			break;
		lw -= step;	/* ln w(i - 1) = ln w(i) - ln(lambda / i) */
	}
	kbloom_block_rate_init(&br, nhashes, shift);
	/* Up from there; every weight at most 2^52, their sum below 2^63. */
	for (; lw >= -KBLOOM_POISSON_CUT; i++) {
		w = kbloom_exp_neg_q62(-lw) >> 10;
		sum_w += w;
		sum_f += mul_u64_u64_shr(w, kbloom_block_rate_at(&br,
								 nhashes * i),
					 62);
		lw += kbloom_ln_ratio_q32(lambda, i + 1);
	}
	return mul_u64_u64_div_u64(sum_f, KBLOOM_Q62_ONE, sum_w);
}

/*
 * The least m (whole blocks) at which k keeps n keys at @eps (2^62). The
 * search starts at the plain layout's @m0, which a blocked filter never
 * needs less than: a rate is then never computed for a filter crammed
 * far past its capacity, where the sum is longest.
 */
static u64 kbloom_blocked_bits_for(u64 capacity, u32 nhashes, u64 eps,
				   u32 flags, u64 m0)
{
	u64 cells = kbloom_block_cells(flags);
	u64 max = KBLOOM_CORE_MAX_BITS / cells;
	u64 hi = clamp_t(u64, m0 / cells, 1, max), lo = (hi + 1) / 2;

	while (kbloom_fpr_blocked_q62(hi * cells, nhashes, capacity, flags) >
	       eps) {
		if (hi == max)
			return 0;
		lo = hi + 1;
		hi = min_t(u64, hi * 2, max);
	}
	/* At lo - 1 the rate must be missed: else search from 1. */
	if (lo > 1 && kbloom_fpr_blocked_q62((lo - 1) * cells, nhashes,
					     capacity, flags) <= eps)
		lo = 1;
	while (lo < hi) {
		u64 mid = lo + (hi - lo) / 2;

		if (kbloom_fpr_blocked_q62(mid * cells, nhashes, capacity,
					   flags) > eps)
			lo = mid + 1;
		else
			hi = mid;
	}
	return hi * cells;
}

/**
 * kbloom_size_flags() - size a filter of either layout
 * @capacity: n, at least 1.
 * @fpr_ppb: the target rate in parts per billion, 1 to 10^9 - 1.
 * @flags: KBLOOM_CORE_* bits: the layout, and counting (a blocked counting
 *	filter has 128-counter blocks).
 * @nbits: out: m.
 * @nhashes: out: k.
 *
 * The plain layout is kbloom_size(). A blocked filter errs more than a
 * plain one of the same m (its blocks fill unevenly), so it is sized by its
 * own formula, kbloom_fpr_blocked_q62(): for each k from the plain
 * optimum k0 down to k0 - k0/2 (a blocked filter wants fewer hashes),
 * the least whole number of blocks that keeps the rate, and of those the
 * smallest m, then the fewest hashes. A deterministic function of n and
 * the rate, as IMPORT's check of the sizing rule needs.
 *
 * Return: 0, or -EINVAL for arguments out of range or an m above
 * KBLOOM_CORE_MAX_BITS.
 */
int kbloom_size_flags(u64 capacity, u32 fpr_ppb, u32 flags, u64 *nbits,
		      u32 *nhashes)
{
	u64 m, best_m = 0, eps;
	u32 k0, k, best_k = 0;
	int ret;

	ret = kbloom_size(capacity, fpr_ppb, nbits, nhashes);
	if (ret || !(flags & KBLOOM_CORE_BLOCKED))
		return ret;
	eps = mul_u64_u64_div_u64(fpr_ppb, KBLOOM_Q62_ONE, 1000000000U);
	k0 = *nhashes;
	for (k = k0; k >= 1 && k >= k0 - k0 / 2; k--) {
		m = kbloom_blocked_bits_for(capacity, k, eps, flags, *nbits);
		if (m && (!best_m || m <= best_m)) {
			best_m = m;
			best_k = k;
		}
	}
	if (!best_m)
		return -EINVAL;
	*nbits = best_m;
	*nhashes = best_k;
	return 0;
}
