/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * kbloom: named Bloom filters in the kernel, driven through /dev/bloom.
 *
 * Conventions (Documentation/driver-api/ioctl.rst):
 *  - every structure has only fixed-width fields, each naturally aligned,
 *    and a size that is a multiple of 8, so i386 and x86_64 userspace see the
 *    same layout and compat_ptr_ioctl() is all a 32-bit caller needs;
 *  - user pointers travel as __u64 (use (__u64)(uintptr_t)ptr);
 *  - every reserved field and every unused flag bit must be zero, else the
 *    call fails with -EINVAL, so that later versions can give them meaning;
 *  - each structure is copied from userspace exactly once per call;
 *  - an unknown command fails with -ENOTTY;
 *  - KBLOOM_IOC_VERSION tells which API version and features the running
 *    module has: call it first.
 *
 * Errors common to every command: -EFAULT (an unreadable or unwritable
 * pointer), -EINVAL (a malformed argument, a non-zero reserved field),
 * -ENOENT (no filter of that name, or it was destroyed during the call).
 *
 * Who may do what. A read-only fd may VERSION, INFO, LIST and QUERY(_BATCH):
 * each costs O(1) per call beyond the data it carries. A read-write fd may
 * also ADD, TEST_AND_ADD, REMOVE (and their batches), MERGE and COMPARE,
 * which cost at most one pass over the filter and stop on a fatal signal
 * (COMPARE also works on a read-only fd for a caller with CAP_SYS_ADMIN).
 * CREATE, DESTROY, CLEAR, ROTATE, EXPORT, IMPORT, COLLECT and APPLY also
 * need CAP_SYS_ADMIN in the initial user namespace, checked on every call,
 * and all but EXPORT a read-write fd. A missing write mode is reported (-EBADF) before a missing
 * capability (-EPERM).
 *
 * Writes to userspace never lose an operation: every command that changes
 * a filter and writes a result back first checks that it can write there
 * (-EFAULT, nothing changed), and batches count in @done exactly the keys
 * they applied (see struct kbloom_batch).
 *
 * Names are 1 to KBLOOM_NAME_MAX - 1 characters of [A-Za-z0-9_.-], not
 * starting with '.', NUL-terminated inside the KBLOOM_NAME_MAX bytes.
 * Keys are 1 to KBLOOM_KEY_MAX bytes of anything.
 */
#ifndef _UAPI_LINUX_KBLOOM_H
#define _UAPI_LINUX_KBLOOM_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define KBLOOM_API_VERSION	1

#define KBLOOM_NAME_MAX		32
#define KBLOOM_KEY_MAX		4096
#define KBLOOM_MIN_BITS		64ULL
#define KBLOOM_MAX_BITS		(1ULL << 36)
#define KBLOOM_MAX_HASHES	32
/* Most keys one batched call may carry, and most key bytes. */
#define KBLOOM_BATCH_MAX	(1U << 20)
#define KBLOOM_BATCH_BYTES_MAX	(1ULL << 28)
/* A false-positive rate is given in parts per billion: 10000000 is 1%. */
#define KBLOOM_FPR_ONE		1000000000U

/* Features reported by KBLOOM_IOC_VERSION. */
#define KBLOOM_FEATURE_BATCH		(1ULL << 0)
#define KBLOOM_FEATURE_TEST_AND_ADD	(1ULL << 1)
#define KBLOOM_FEATURE_SIZING		(1ULL << 2)
#define KBLOOM_FEATURE_COUNTING		(1ULL << 3)
#define KBLOOM_FEATURE_MERGE		(1ULL << 4)
#define KBLOOM_FEATURE_IMAGE		(1ULL << 5)
/* Hash scheme KBLOOM_HASH_SIPHASH can be chosen per filter. */
#define KBLOOM_FEATURE_SIPHASH		(1ULL << 6)
/* Time-windowed filters and KBLOOM_IOC_ROTATE. */
#define KBLOOM_FEATURE_WINDOW		(1ULL << 7)
/* KBLOOM_IOC_OPEN: file descriptors bound to one filter. */
#define KBLOOM_FEATURE_HANDLE		(1ULL << 8)
/* KBLOOM_CREATE_BLOCKED: the cache-line blocked layout. */
#define KBLOOM_FEATURE_BLOCKED		(1ULL << 9)
/* KBLOOM_CREATE_BPF_READ and _WRITE: filters choose what BPF may do. */
#define KBLOOM_FEATURE_BPF_ACCESS	(1ULL << 10)
/* struct kbloom_image @age_ms: windowed images keep their schedule. */
#define KBLOOM_FEATURE_WINDOW_AGE	(1ULL << 11)
/* Change tracking: KBLOOM_CREATE_TRACK_CHANGES, KBLOOM_IOC_COLLECT, _APPLY. */
#define KBLOOM_FEATURE_CHANGES		(1ULL << 12)

/* Creation flags (struct kbloom_create, struct kbloom_info, images). */
/* 4-bit counters instead of bits: keys can be removed. */
#define KBLOOM_CREATE_COUNTING		(1U << 0)
/* Copy bits, hashes, counting, capacity, fpr_ppb and the seed from @like. */
#define KBLOOM_CREATE_LIKE		(1U << 1)
/* Windowed filters: also rotate when the newest generation is full. */
#define KBLOOM_CREATE_ROTATE_AT_FILL	(1U << 2)
/*
 * The blocked layout: all k positions of a key lie in one 64-byte block
 * (512 bits, or 128 counters), chosen by the key's hash: one cache miss
 * per key instead of k. The positions inside the block are independent
 * and uniform. At equal m it errs more than the plain layout (blocks fill
 * unevenly), so sizing by @capacity and @fpr_ppb uses the blocked rate
 * (Putze, Sanders and Singler, 2007): the sum over the Poisson number i of
 * keys in a block (mean n B / m) of the rate of a B-cell filter holding i
 * keys, computed exactly (E[(S/B)^k] for S the cells its k i draws
 * occupy; the plain formula's (1 - (1 - 1/B)^(k i))^k is low), with the least
 * whole number of blocks that keeps the rate and, for that, the
 * fewest hashes (from the plain layout's k0 down to k0 - k0/2). Given
 * @bits, they must be a multiple of 512 (128 for counting filters). Kept
 * by KBLOOM_CREATE_LIKE, reported by INFO and images, and filters of
 * different layouts are never merged or compared.
 */
#define KBLOOM_CREATE_BLOCKED		(1U << 3)
/*
 * What BPF programs may do with the filter through kbloom's kfuncs
 * (XDP, tc and syscall programs; see "BPF programs" in the admin guide,
 * Documentation/admin-guide.md). Neither flag (the default): nothing, a
 * program cannot even obtain the filter (bpf_kbloom_get() gives NULL,
 * bpf_kbloom_id() and the calls by id -EACCES). KBLOOM_CREATE_BPF_READ:
 * query. KBLOOM_CREATE_BPF_WRITE: query, add, test-and-add and remove; it
 * implies KBLOOM_CREATE_BPF_READ, and both are reported. The default is
 * none because loading a program that calls the kfuncs takes less than
 * changing a filter through /dev/bloom (CAP_BPF, with CAP_NET_ADMIN for
 * XDP and tc, against CAP_SYS_ADMIN or a writable device): a filter that
 * an iptables rule relies on is reachable from BPF only if its creator
 * says so. Chosen at creation, never changed; kept by EXPORT and IMPORT
 * (an IMPORT with KBLOOM_IMPORT_REPLACE keeps the existing filter's), not
 * copied by KBLOOM_CREATE_LIKE (give them with it).
 */
#define KBLOOM_CREATE_BPF_READ		(1U << 4)
#define KBLOOM_CREATE_BPF_WRITE		(1U << 5)
/*
 * Track which blocks of the filter change, for KBLOOM_IOC_COLLECT (see
 * struct kbloom_blocks). Plain and blocked bit filters, windowed or not;
 * not counting filters. Reported by INFO and images; an IMPORT with it
 * creates a tracking filter, an IMPORT with KBLOOM_IMPORT_REPLACE keeps
 * the existing filter's tracking (and marks every block of the new
 * contents changed). A filter also starts tracking on its first COLLECT.
 */
#define KBLOOM_CREATE_TRACK_CHANGES	(1U << 6)

/*
 * Time-windowed filters ("seen in the last W"). A windowed filter is
 * @generations (2 to KBLOOM_MAX_GENERATIONS) filters of the same size,
 * hashes, kind and seed, and a window W of @window_ms milliseconds. Every
 * W / @generations the oldest generation is cleared and becomes the newest
 * (a rotation): from a timer, never on the hot path, and atomically to
 * readers (each operation runs wholly before or wholly after a rotation;
 * the leaving generation is cleared only once no reader can see it).
 * A window of 0 rotates only on KBLOOM_IOC_ROTATE.
 *
 * Guarantee: a key whose add started at time t is reported present by
 * every query that ends by t + W (G - 1) / G (CLOCK_MONOTONIC), whatever
 * the generations' size and the load, and, barring false positives,
 * never after t + W (unless added again), give or take the slack below.
 * Add puts a key in the newest generation; query answers "maybe" when any
 * generation has it; test-and-add of a key found only in an older
 * generation also adds it to the newest and answers "seen", so a flow that
 * keeps sending stays remembered (seen within W of its last packet). Remove
 * (counting filters) removes the key from the newest generation in which it
 * tests present, only: one remove undoes one add (removing it from every
 * generation that tests present would take counts from other keys wherever
 * it is only a false positive).
 *
 * Sizing by capacity n and rate eps means n keys per window at a total
 * false-positive rate of at most eps over all generations: each generation
 * is sized for n keys at eps / G (a union of G filters errs at most G
 * times as often as one; eps / G is rounded down, and at least 1 ppb, so
 * an eps below G ppb cannot be kept), and @bits and @hashes report one
 * generation's. Memory is G times that. Windowed filters are not merged
 * or compared.
 *
 * The period W / G is rounded up to the timer's resolution (a jiffy). Keys
 * land in the newest generation until a rotation ends, so a timed
 * rotation drops a generation only once W (G - 1) / G has passed since it
 * stopped being the newest, and waits if need be: a key may stay up to
 * G jiffies past W, plus the time rotations take (two RCU grace periods
 * and a clear of one generation each, and any EXPORT copying meanwhile).
 * KBLOOM_CREATE_ROTATE_AT_FILL rotates early, at most once per time the
 * newest generation is seen full; the fill is looked at often enough
 * that all CPUs together overshoot it by at most a quarter.
 */
#define KBLOOM_MAX_GENERATIONS		16

/*
 * Counting filters: a counter that reaches KBLOOM_COUNTER_MAX sticks there
 * and is never decremented again, so saturation can cause a false
 * positive but never a false negative.
 */
#define KBLOOM_COUNTER_MAX		15

/* Why two filters cannot be merged or compared (struct kbloom_merge). */
#define KBLOOM_MISMATCH_BITS		(1U << 0)
#define KBLOOM_MISMATCH_HASHES		(1U << 1)
#define KBLOOM_MISMATCH_COUNTING	(1U << 2)
#define KBLOOM_MISMATCH_SEED		(1U << 3)
#define KBLOOM_MISMATCH_HASH_SCHEME	(1U << 4)
#define KBLOOM_MISMATCH_LAYOUT		(1U << 5)

/*
 * Hash schemes: how a key becomes bit positions, chosen per filter at
 * creation and carried in images. Part of the ABI because a filter image
 * saved by one version must give the same positions when loaded by
 * another. Both feed the same 64-bit hash to enhanced double hashing
 * modulo m.
 *
 * KBLOOM_HASH_JHASH (1): a one-pass 64-bit jhash (the kernel's
 * __jhash_mix/__jhash_final, little-endian word reads, seeded with the two
 * 32-bit words seed[0], seed[1]; seed_hi[] is zero). Fast, but not a keyed
 * pseudo-random function: someone who sees which keys collide can learn
 * enough to pollute the filter.
 *
 * KBLOOM_HASH_SIPHASH (2): SipHash-2-4 (the kernel's siphash()) keyed with
 * the 128 bits seed[0] | seed[1] << 32, seed_hi[0] | seed_hi[1] << 32.
 * A keyed PRF: without the seed, an adversary choosing keys (a packet
 * stream) cannot aim them at chosen bits. For filters fed by untrusted
 * input.
 */
#define KBLOOM_HASH_JHASH	1
#define KBLOOM_HASH_SIPHASH	2
/* The only scheme of API version 1 modules before KBLOOM_FEATURE_SIPHASH. */
#define KBLOOM_HASH_SCHEME	KBLOOM_HASH_JHASH

/**
 * struct kbloom_version - KBLOOM_IOC_VERSION argument (all fields out)
 * @api_version: KBLOOM_API_VERSION of the module.
 * @hash_scheme: KBLOOM_HASH_JHASH: the scheme every module has.
 *	KBLOOM_FEATURE_SIPHASH says KBLOOM_HASH_SIPHASH exists too.
 * @features: KBLOOM_FEATURE_* bits.
 * @min_bits: smallest filter, in bits.
 * @max_bits: largest filter, in bits (before the memory limits apply).
 * @max_hashes: largest number of hash functions.
 * @max_key_len: longest key, in bytes.
 * @max_batch: most keys in one batched call.
 * @name_max: size of a name field, NUL included.
 * @default_hash_scheme: the scheme KBLOOM_IOC_CREATE gives a filter when
 *	its @hash_scheme is 0 (0 from modules without KBLOOM_FEATURE_SIPHASH:
 *	then it is @hash_scheme).
 * @max_generations: most generations of a windowed filter (0 without
 *	KBLOOM_FEATURE_WINDOW).
 * @reserved: set to zero by the kernel.
 *
 * Never fails once the device is open (except -EFAULT).
 */
struct kbloom_version {
	__u32 api_version;
	__u32 hash_scheme;
	__u64 features;
	__u64 min_bits;
	__u64 max_bits;
	__u32 max_hashes;
	__u32 max_key_len;
	__u32 max_batch;
	__u32 name_max;
	__u32 default_hash_scheme;
	__u32 max_generations;
	__u64 reserved[3];
};

/**
 * struct kbloom_create - KBLOOM_IOC_CREATE argument
 * @name: in: the new filter's name.
 * @bits: in/out: m, the size in bits; 0 to derive it from @capacity and
 *	@fpr_ppb. On return, the size used.
 * @hashes: in/out: k; 0 to derive it (the optimal k = (m/n) ln 2 when
 *	@capacity is set). On return, the k used.
 * @fpr_ppb: in: target false-positive rate in parts per billion (1 to
 *	KBLOOM_FPR_ONE - 1), used with @capacity when @bits is 0.
 * @capacity: in: the number of keys the filter is designed for (n); 0 if
 *	sized by @bits and @hashes alone. Reported back by KBLOOM_IOC_INFO.
 * @flags: in/out: KBLOOM_CREATE_* bits. With KBLOOM_CREATE_LIKE, @bits,
 *	@hashes, @fpr_ppb, @capacity and @hash_scheme must be 0 and
 *	everything, the secret seed and hash scheme included, is copied from
 *	the filter @like: that is how to make filters that can be merged and
 *	compared. KBLOOM_CREATE_COUNTING (KBLOOM_CREATE_BLOCKED) may then be
 *	given only if @like is counting (blocked) too; the BPF access
 *	(KBLOOM_CREATE_BPF_READ, _WRITE) is the call's, not @like's.
 * @hash_scheme: in/out: KBLOOM_HASH_JHASH or KBLOOM_HASH_SIPHASH, or 0 for
 *	the module's default (struct kbloom_version @default_hash_scheme).
 *	On return, the scheme used.
 * @like: in: with KBLOOM_CREATE_LIKE, the filter to copy; else all zero.
 * @window_ms: in: the window W of a windowed filter, in milliseconds (0:
 *	rotate only on KBLOOM_IOC_ROTATE); must be 0 when @generations is.
 * @generations: in: 0 for a plain filter, else 2 to KBLOOM_MAX_GENERATIONS
 *	(see "Time-windowed filters" above). KBLOOM_CREATE_ROTATE_AT_FILL
 *	needs @generations and @capacity.
 * @reserved: must be 0.
 *
 * Requires CAP_SYS_ADMIN and a read-write fd. Either give @bits and
 * @hashes (and optionally @capacity, informational, which gives the
 * optimal k when @hashes is 0, by the plain layout's formula), or
 * @capacity and @fpr_ppb (then @bits and @hashes are computed as
 * m = ceil(-n ln(eps) / (ln 2)^2), k = round((m/n) ln 2); with
 * KBLOOM_CREATE_BLOCKED, by the blocked layout's own rate, see there).
 * These rules are also what IMPORT checks.
 *
 * Errors: -EBADF (read-only fd), -EPERM (no CAP_SYS_ADMIN), -EINVAL (bad
 * name, bits outside [KBLOOM_MIN_BITS, KBLOOM_MAX_BITS], hashes outside
 * [1, KBLOOM_MAX_HASHES], neither or both ways of sizing given, fpr_ppb
 * out of range, an unknown hash scheme, unknown flags, a blocked filter's
 * bits not a whole number of blocks), -ENOENT (no filter
 * @like), -EEXIST (the name is taken; but a filter an iptables rule made,
 * of the shape asked for, BPF access included, is adopted instead: it then
 * stays when its last rule goes, see <linux/netfilter/xt_bloom.h>), -EFBIG
 * (larger than the module's per-filter limit, the max_filter_bytes
 * parameter), -ENOSPC (the module's memory budget, the max_memory
 * parameter, would be exceeded: every filter is charged its storage rounded
 * to pages plus its bookkeeping), -EDQUOT (the module already has
 * max_filters filters), -ENOMEM (the allocation failed), -EFAULT (the
 * structure cannot be written back: this is checked before anything is
 * created). On any error nothing is created (but for one race: if the
 * structure is unmapped during the call and an in-kernel user such as an
 * iptables rule pinned the new filter in the meantime, the filter stays, in
 * use, and the call fails with -EFAULT).
 */
struct kbloom_create {
	char name[KBLOOM_NAME_MAX];
	__u64 bits;
	__u32 hashes;
	__u32 fpr_ppb;
	__u64 capacity;
	__u32 flags;
	__u32 hash_scheme;
	char like[KBLOOM_NAME_MAX];
	__u32 window_ms;
	__u32 generations;
	__u64 reserved[2];
};

/**
 * struct kbloom_name - argument of the commands that take only a name
 * @name: in: the filter's name.
 * @reserved: must be 0.
 *
 * KBLOOM_IOC_ROTATE rotates a windowed filter now (its timer, if any,
 * starts its period over); -EINVAL on a plain filter.
 *
 * KBLOOM_IOC_DESTROY removes the filter: it disappears from lookups and
 * sysfs at once; callers in the middle of an operation on it finish it, and
 * its memory is freed when the last in-kernel reference is dropped.
 * KBLOOM_IOC_CLEAR zeroes every bit and starts the statistics over. A key
 * added concurrently may or may not survive; it is counted in @adds after
 * the clear only if its add was counted after the clear's snapshot of the
 * counters (no increment is lost: counters are never written by the
 * clear, which records a baseline instead), and @bits_set stays exact.
 *
 * All require CAP_SYS_ADMIN and a read-write fd. Errors: -EBADF, -EPERM,
 * -EINVAL, -ENOENT, -EBUSY (DESTROY: in-kernel users such as iptables
 * rules pin the filter; sysfs "rules" counts them), -EINTR (CLEAR: a
 * fatal signal arrived; the filter is partly cleared, which loses no key
 * that was not meant to go).
 */
struct kbloom_name {
	char name[KBLOOM_NAME_MAX];
	__u64 reserved[2];
};

/**
 * struct kbloom_info - KBLOOM_IOC_INFO argument
 * @name: in: the filter's name.
 * @bits: out: m.
 * @hashes: out: k.
 * @flags: out: the flags it was created with.
 * @capacity: out: design capacity n, 0 if created by bits.
 * @fpr_ppb: out: design false-positive rate, 0 if created by bits.
 * @hash_scheme: out: the KBLOOM_HASH_* scheme the filter uses.
 * @bits_set: out: number of bits set (X); fill ratio is X/m. A counter
 *	kept as bits go from 0 to 1 (and back, for counting filters), not a
 *	scan: reading it costs O(1).
 * @adds: out: keys added (add and test-and-add calls).
 * @queries: out: keys queried (query and test-and-add calls).
 * @hits: out: queries that answered "maybe present".
 * @memory_bytes: out: memory the filter's bitmap (or counters) occupies.
 * @saturated: out: counting filters: counters stuck at KBLOOM_COUNTER_MAX;
 *	0 for plain filters. For counting filters @bits_set counts non-zero
 *	counters. Also a counter.
 * @window_ms: out: windowed filters: W in milliseconds; else 0.
 * @generations: out: windowed filters: G; else 0. For them @bits_set and
 *	@saturated are those of the newest generation, and @memory_bytes is
 *	all generations'.
 * @rotations: out: rotations since creation (or image load).
 * @newest_age_ms: out: milliseconds since the newest generation became
 *	the newest.
 *
 * On input, @window_ms through @newest_age_ms (once reserved) must be 0.
 *
 * @adds, @queries and @hits count since creation, the last CLEAR or the
 * last IMPORT (which starts @adds at the image's count). @memory_bytes is
 * the size of the storage (an image's payload); what the filter is charged
 * against the max_memory budget, its storage rounded up to pages plus its
 * bookkeeping, is in sysfs (memory_charged).
 *
 * The seed is never reported. Errors: -EINVAL, -ENOENT.
 */
struct kbloom_info {
	char name[KBLOOM_NAME_MAX];
	__u64 bits;
	__u32 hashes;
	__u32 flags;
	__u64 capacity;
	__u32 fpr_ppb;
	__u32 hash_scheme;
	__u64 bits_set;
	__u64 adds;
	__u64 queries;
	__u64 hits;
	__u64 memory_bytes;
	__u64 saturated;
	__u32 window_ms;
	__u32 generations;
	__u64 rotations;
	__u64 newest_age_ms;
};

/**
 * struct kbloom_list - KBLOOM_IOC_LIST argument
 * @names: in: pointer to an array of @count names of KBLOOM_NAME_MAX bytes
 *	each, filled in name order; may be 0 when @count is 0.
 * @count: in: room in @names; out: the number of filters. When out > in,
 *	only the first @count names were written: call again, larger.
 * @reserved: must be 0.
 *
 * Errors: -EINVAL, -EFAULT, -ENOMEM.
 */
struct kbloom_list {
	__u64 names;
	__u32 count;
	__u32 reserved;
};

/**
 * struct kbloom_key - argument of the one-key commands
 * @name: in: the filter's name.
 * @key: in: pointer to the key bytes.
 * @len: in: key length, 1 to KBLOOM_KEY_MAX.
 * @result: out: KBLOOM_IOC_QUERY: 1 if the key may be present, 0 if it
 *	is certainly absent; KBLOOM_IOC_TEST_AND_ADD: 1 if every bit of the
 *	key was already set (seen before), 0 if it is new; KBLOOM_IOC_ADD: 0;
 *	KBLOOM_IOC_REMOVE: 1 if the key was removed, 0 if it was refused
 *	because the filter reports it absent (nothing was changed). Removing
 *	a key that was never added but tests present (a false positive)
 *	takes counts that belong to other keys and can make them absent:
 *	remove only keys you added. The absence check and the decrements are
 *	each atomic but not together: two racing removes of a key added
 *	once can both succeed.
 *	ADD, TEST_AND_ADD and REMOVE first check that @result can be
 *	written (-EFAULT, nothing changed); if another thread unmaps the
 *	structure during the call, the operation stands and only its result
 *	is lost.
 * @reserved: must be 0.
 *
 * KBLOOM_IOC_ADD, KBLOOM_IOC_TEST_AND_ADD and KBLOOM_IOC_REMOVE need the
 * device opened for writing (else -EBADF); KBLOOM_IOC_QUERY works on a
 * read-only fd. KBLOOM_IOC_REMOVE works on counting filters only.
 * Errors: -EBADF, -EINVAL (bad name, len 0 or over KBLOOM_KEY_MAX,
 * reserved), -EFAULT, -ENOENT, -EOPNOTSUPP (remove on a plain filter),
 * -ENOMEM (no memory to copy a long key in: nothing done).
 */
struct kbloom_key {
	char name[KBLOOM_NAME_MAX];
	__u64 key;
	__u32 len;
	__u32 result;
	__u64 reserved[2];
};

/**
 * struct kbloom_batch - argument of the batched commands
 * @name: in: the filter's name.
 * @keys: in: pointer to the keys, packed end to end.
 * @lens: in: pointer to @count __u32 key lengths, each 1 to KBLOOM_KEY_MAX.
 * @results: in: pointer to a bitmap of ceil(@count / 8) bytes, or 0 if the
 *	caller wants only @hits. Out: bit i (byte i / 8, bit i % 8, least
 *	significant first) is the result of key i, as in struct kbloom_key;
 *	bits from @done on are zero in the last byte written. Each chunk's
 *	result bytes are zeroed (which proves them writable) before any of
 *	its keys is applied; bytes after the last chunk are untouched.
 * @keys_bytes: in: size of the @keys buffer; the lengths must fit in it.
 * @count: in: number of keys, 1 to KBLOOM_BATCH_MAX.
 * @done: out: number of keys processed. On success equal to @count; on an
 *	error, exactly the keys before @done were applied (and counted in the
 *	statistics) and no key from @done on was, so a caller may retry from
 *	@done. Their results were written, except when the results buffer
 *	was unmapped by another thread during the call (-EFAULT): then the
 *	last chunk's results may be missing, never its keys' effects.
 * @hits: out: number of keys whose result bit is 1.
 * @reserved0: must be 0.
 * @reserved: must be 0.
 *
 * KBLOOM_IOC_ADD_BATCH, KBLOOM_IOC_TEST_AND_ADD_BATCH and
 * KBLOOM_IOC_REMOVE_BATCH need the device opened for writing (else -EBADF).
 * The structure is written back even on error, so @done is valid whenever
 * the call reached the keys; that it can be written is checked before any
 * key is applied (-EFAULT with nothing done). Keys are processed in chunks (at most 1024
 * keys, 64 KiB) and each chunk runs on one generation of the filter's
 * contents (see KBLOOM_IMPORT_REPLACE).
 * Errors: as struct kbloom_key, plus -E2BIG (@count over KBLOOM_BATCH_MAX,
 * @keys_bytes over KBLOOM_BATCH_BYTES_MAX), -EINVAL (@count 0, a length out
 * of range or past @keys_bytes: @done tells which), -EINTR (a fatal signal
 * arrived: @done tells how far it got), -ENOMEM (no memory for the chunk
 * buffer: nothing done).
 */
struct kbloom_batch {
	char name[KBLOOM_NAME_MAX];
	__u64 keys;
	__u64 lens;
	__u64 results;
	__u64 keys_bytes;
	__u32 count;
	__u32 done;
	__u32 hits;
	__u32 reserved0;
	__u64 reserved[2];
};

/**
 * struct kbloom_merge - argument of KBLOOM_IOC_MERGE and KBLOOM_IOC_COMPARE
 * @dst: in: MERGE: the filter that receives the union; COMPARE: filter A.
 * @src: in: MERGE: the filter ORed into @dst (unchanged); COMPARE: B.
 * @bits_dst: out (COMPARE): bits set in A (non-zero counters).
 * @bits_src: out (COMPARE): bits set in B.
 * @bits_union: out (COMPARE): bits set in A or B.
 * @bits_inter: out (COMPARE): bits set in both.
 * @mismatch: out: on -EINVAL for incompatible filters, the
 *	KBLOOM_MISMATCH_* bits of every parameter that differs (size, hashes,
 *	counting, seed, hash scheme); else 0.
 * @reserved0: must be 0.
 * @reserved: must be 0.
 *
 * Two filters are compatible when they have the same bits, hashes,
 * counting flag and seed: create one with KBLOOM_CREATE_LIKE from the
 * other, or load both from images of filters that were. MERGE makes @dst
 * the union: bits are ORed, counters added (saturating at
 * KBLOOM_COUNTER_MAX); keys added to either concurrently may or may not be
 * included; @dst equal to @src changes nothing. Both need the device
 * opened for writing: they cost a pass over the filters (yielding, and
 * stopping with -EINTR on a fatal signal; a merge so stopped has merged a
 * prefix of @src, which loses nothing). COMPARE gives the counts from which userspace
 * estimates set sizes with n(X) = -(m/k) ln(1 - X/m): n(@bits_dst), n(@bits_src), the union
 * n(@bits_union), and the intersection by inclusion-exclusion,
 * n(@bits_dst) + n(@bits_src) - n(@bits_union) (n(@bits_inter) is biased
 * upwards by bits that A-only and B-only keys happen to share). Both
 * write the structure back on success; MERGE checks it can before it
 * merges.
 *
 * The structure is written back on -EINVAL so @mismatch can be read.
 * Errors: -EBADF, -EINVAL (bad names, reserved, incompatible: see
 * @mismatch), -ENOENT, -EINTR, -EOPNOTSUPP (a windowed filter: their
 * generations rotate on their own clocks, so no union is meaningful).
 */
struct kbloom_merge {
	char dst[KBLOOM_NAME_MAX];
	char src[KBLOOM_NAME_MAX];
	__u64 bits_dst;
	__u64 bits_src;
	__u64 bits_union;
	__u64 bits_inter;
	__u32 mismatch;
	__u32 reserved0;
	__u64 reserved[2];
};

/* struct kbloom_image @import_flags. */
/* Swap the contents of the existing filter @name atomically. */
#define KBLOOM_IMPORT_REPLACE		(1U << 0)

/**
 * struct kbloom_image - argument of KBLOOM_IOC_EXPORT and KBLOOM_IOC_IMPORT
 * @name: in: the filter.
 * @bits: EXPORT out, IMPORT in: m.
 * @hashes: EXPORT out, IMPORT in: k.
 * @flags: EXPORT out, IMPORT in: KBLOOM_CREATE_COUNTING,
 *	KBLOOM_CREATE_BLOCKED, KBLOOM_CREATE_ROTATE_AT_FILL,
 *	KBLOOM_CREATE_BPF_READ, KBLOOM_CREATE_BPF_WRITE or 0. IMPORT with
 *	KBLOOM_IMPORT_REPLACE keeps the filter's own BPF access.
 * @seed: EXPORT out, IMPORT in: the secret hash seed, low 64 bits.
 * @adds: EXPORT out, IMPORT in: keys added (informational).
 * @capacity: EXPORT out, IMPORT in: design n (informational).
 * @fpr_ppb: EXPORT out, IMPORT in: design rate (informational).
 * @hash_scheme: EXPORT out, IMPORT in: KBLOOM_HASH_JHASH or
 *	KBLOOM_HASH_SIPHASH.
 * @payload: in: pointer to the payload buffer.
 * @payload_len: EXPORT in: size of the buffer; out: the payload's size
 *	(if the buffer was too small, nothing is copied and the call fails
 *	with -ENOBUFS: call again with this size). IMPORT in: the payload's
 *	size, which must be exactly what @bits and @flags imply.
 * @import_flags: IMPORT in: KBLOOM_IMPORT_REPLACE or 0; EXPORT: must be 0.
 * @age_ms: EXPORT out (in: must be 0): a windowed filter's, how long ago
 *	its newest generation became the newest, in ms, read with the copy
 *	(INFO's @newest_age_ms); 0 for a plain filter. IMPORT in: how old
 *	the image's newest generation already is: the first rotation comes
 *	W / G - @age_ms after the load (at once if that is past), so a
 *	restored filter keeps the schedule it had; 0 starts a fresh period.
 *	At most INT_MAX; must be 0 for a plain filter. Modules without
 *	KBLOOM_FEATURE_WINDOW_AGE take it as a reserved field (must be 0).
 * @seed_hi: EXPORT out, IMPORT in: KBLOOM_HASH_SIPHASH: the high 64 bits
 *	of the 128-bit seed; KBLOOM_HASH_JHASH: zero.
 * @generations: EXPORT out, IMPORT in: 0 for a plain filter, else G; the
 *	payload is then G generations' storage one after the other, newest
 *	first, each as described below.
 * @window_ms: EXPORT out, IMPORT in: W; 0 if @generations is 0. A loaded
 *	windowed filter's timer starts at the load, @age_ms into its period.
 *	EXPORT of a windowed filter waits for a rotation under way (a
 *	fatal signal ends the wait: -EINTR) and holds off the next one
 *	while it copies, so that the image is of one set of generations.
 *
 * The payload is the filter's contents in a fixed byte order, whatever the
 * architecture: plain filters, bit i of the filter is bit (i % 8) of byte
 * i / 8; counting filters, counter i is bits 4 * (i % 2) .. +3 of byte
 * i / 2. It is padded to a multiple of 8 bytes with zero bits, which
 * IMPORT checks. An EXPORT taken while keys are being added contains every
 * key whose add returned before the call began.
 *
 * Both need CAP_SYS_ADMIN: the image carries the seed; IMPORT also needs
 * a read-write fd. IMPORT validates every field exactly as CREATE does
 * (@bits, @hashes, the sizing rule that ties @capacity and @fpr_ppb to
 * them when @fpr_ppb is set, @hash_scheme, @seed_hi) and the payload
 * before it touches any filter: without KBLOOM_IMPORT_REPLACE it
 * creates @name (-EEXIST if it exists); with it, it replaces the contents
 * of @name atomically (-ENOENT if it does not exist): a query sees the old
 * contents or the new, never a mix, and the filter is never missing.
 *
 * Errors: -EBADF (IMPORT on a read-only fd), -EPERM, -EINVAL (bad name,
 * parameters, hash scheme, payload size or padding, flags, reserved),
 * -ENOBUFS (EXPORT buffer too small), -EEXIST, -ENOENT (also: destroyed
 * during the call), -EFBIG, -ENOSPC, -EDQUOT, -ENOMEM, -EFAULT, -EINTR (a
 * fatal signal arrived during the copy; nothing was created or replaced).
 */
struct kbloom_image {
	char name[KBLOOM_NAME_MAX];
	__u64 bits;
	__u32 hashes;
	__u32 flags;
	__u32 seed[2];
	__u64 adds;
	__u64 capacity;
	__u32 fpr_ppb;
	__u32 hash_scheme;
	__u64 payload;
	__u64 payload_len;
	__u32 import_flags;
	__u32 age_ms;
	__u32 seed_hi[2];
	__u32 generations;
	__u32 window_ms;
};

/*
 * Changes as blocks. A filter that tracks changes (KBLOOM_CREATE_TRACK_CHANGES)
 * keeps one mark per block of KBLOOM_BLOCK_BYTES bytes of its storage (512
 * bits; in the image byte order, block i is payload bytes 64 i .. 64 i + 63,
 * zero past the payload's end). An operation that sets a bit (0 -> 1) marks
 * the bit's block, after the bit is set; an add that finds its bits set
 * writes nothing, mark included, and a filter that does not track pays one
 * predictable branch per bit it sets. Marks cost m / 512 bits per
 * generation, charged against max_memory.
 *
 * KBLOOM_IOC_COLLECT hands out marked blocks: for each, it clears the mark,
 * then copies the block, so a bit set at any time is in a block of this
 * collection or is marked for the next one: no change is ever lost between
 * two collections (a block may be sent twice). If the blocks cannot all be
 * written to userspace, the marks of every block the call took are set
 * again. KBLOOM_IOC_APPLY ORs blocks into a filter of the same shape and
 * seed (@fingerprint): OR is idempotent and order-free, so blocks may come
 * late, twice or out of order. Bits are only ever added, never cleared: a
 * CLEAR, or a key that left a window, is not a change that can be sent,
 * and windowed filters forget by rotating in step (@rotations, @age_ms).
 *
 * Counting filters do not track (-EOPNOTSUPP): a counter's value cannot be
 * merged idempotently when a block may arrive twice, and a remove is not an
 * OR. Share a bit filter fed the same keys instead.
 */
#define KBLOOM_BLOCK_BYTES	64
/* Most blocks one COLLECT or APPLY carries. */
#define KBLOOM_BLOCKS_MAX	4096

/**
 * struct kbloom_block - one block of a filter's storage
 * @index: which block: payload bytes KBLOOM_BLOCK_BYTES * @index onwards.
 * @generation: 0 for a plain filter; for a windowed one, which generation,
 *	0 the newest, relative to struct kbloom_blocks @rotations.
 * @reserved: must be 0.
 * @data: the block's bytes, in the image byte order; bytes past the
 *	payload's end and bits past m are zero.
 */
struct kbloom_block {
	__u64 index;
	__u32 generation;
	__u32 reserved;
	__u8 data[KBLOOM_BLOCK_BYTES];
};

/* struct kbloom_blocks @flags, COLLECT only. */
/* Every non-zero block, marked or not (a snapshot), clearing the marks. */
#define KBLOOM_COLLECT_ALL	(1U << 0)

/**
 * struct kbloom_blocks - argument of KBLOOM_IOC_COLLECT and KBLOOM_IOC_APPLY
 * @name: in: the filter; all zero on a handle (see struct kbloom_open).
 * @blocks: in: pointer to an array of @count struct kbloom_block.
 * @count: in: COLLECT: room in @blocks; APPLY: entries in @blocks. 1 to
 *	KBLOOM_BLOCKS_MAX.
 * @done: out: COLLECT: blocks written; APPLY: blocks applied (@count).
 * @flags: in: COLLECT: KBLOOM_COLLECT_ALL or 0; APPLY: 0.
 * @reserved0: must be 0.
 * @cursor: COLLECT in: where to look first, 0 to start a pass; out: where
 *	to go on, or 0 once the pass reached the end. Opaque but for 0.
 *	APPLY: must be 0.
 * @rotations: COLLECT out: the filter's rotations (INFO's @rotations)
 *	when the blocks were copied: block generations are relative to it.
 *	APPLY in: the rotations the blocks' @generation is relative to; if
 *	the filter has rotated since (or ever, for a number it never had),
 *	-ESTALE and nothing applied: read INFO and map the generations again.
 *	0 for a plain filter.
 * @age_ms: COLLECT out: a windowed filter's newest generation's age
 *	(INFO's @newest_age_ms) at that moment; 0 for a plain one. APPLY: 0.
 * @fingerprint: COLLECT out: a keyed hash (SipHash, keyed with the seed)
 *	of the filter's shape (bits, hashes, layout, hash scheme, window,
 *	generations); it tells nothing of the seed. APPLY in: the
 *	fingerprint of the filter the blocks came from: it must be the
 *	target's (-EXDEV, nothing applied).
 * @max_set: APPLY in: if not 0, refuse (-ENOSPC, nothing applied) blocks
 *	that would leave a generation with more than @max_set bits set,
 *	counted before they are applied: a peer's all-ones block would make
 *	the filter answer "maybe" to every key. COLLECT: 0.
 * @set: APPLY out: bits the call set (0 -> 1). COLLECT: 0.
 * @reserved: must be 0.
 *
 * COLLECT reports the marked blocks (KBLOOM_COLLECT_ALL: every non-zero
 * block) from @cursor on, at most @count, generations in order newest
 * first, and clears their marks (see "Changes as blocks" above); a filter
 * that does not track changes starts tracking, and its first COLLECT
 * reports every non-zero block, as with KBLOOM_COLLECT_ALL. A windowed
 * filter does not rotate during the call. A pass over a large filter takes
 * several calls: keep calling with the returned @cursor until it is 0 (a
 * rotation between two calls shows in @rotations).
 *
 * APPLY checks every entry (@index within the filter, @generation below
 * G, @reserved, padding past m) and copies the whole list in before it
 * changes anything: a bad entry or an unreadable buffer half-way changes
 * nothing. Then it ORs each block into its generation atomically per word,
 * as concurrent adds set bits, marking blocks where bits are set if the
 * target tracks changes.
 *
 * Both need CAP_SYS_ADMIN and a read-write fd (COLLECT changes the marks).
 * Fields that are out only for the command (@done and @set, and COLLECT's
 * @rotations, @age_ms and @fingerprint) must be 0 on the way in, as
 * reserved ones. The structure is written back on success. Errors: -EBADF, -EPERM,
 * -EINVAL (bad name, @count 0, @flags, reserved fields, an entry out of
 * range or with padding bits set), -E2BIG (@count over
 * KBLOOM_BLOCKS_MAX), -ENOENT, -EOPNOTSUPP (a counting filter), -ESTALE,
 * -EXDEV, -ENOSPC (see @max_set), -ENOMEM, -EFAULT, -EINTR.
 */
struct kbloom_blocks {
	char name[KBLOOM_NAME_MAX];
	__u64 blocks;
	__u32 count;
	__u32 done;
	__u32 flags;
	__u32 reserved0;
	__u64 cursor;
	__u64 rotations;
	__u64 age_ms;
	__u64 fingerprint;
	__u64 max_set;
	__u64 set;
	__u64 reserved[2];
};

/*
 * Flow keys: the bytes the `bloom` iptables match (xt_bloom) builds from a
 * packet and `bloomctl --key FIELDS --flow VALUES` builds from text, so
 * that a filter filled by one answers the other. One layout, version 1:
 *
 *	byte 0		family: KBLOOM_FLOW_IPV4 (4) or KBLOOM_FLOW_IPV6 (6)
 *	byte 1		the KBLOOM_FLOW_* bits of the fields that follow
 *	then, for each selected field in this fixed order (whatever order
 *	the user listed them in):
 *	saddr		4 (IPv4) or 16 (IPv6) bytes, network byte order,
 *			bits past the source prefix (--src-prefix) zeroed
 *	daddr		likewise, with the destination prefix
 *	proto		1 byte: the transport protocol (IPPROTO_*); for IPv6
 *			the upper-layer header found after the extension
 *			headers
 *	sport		2 bytes, network byte order
 *	dport		2 bytes, network byte order
 *
 * Ports are read for TCP, UDP, UDP-Lite, SCTP and DCCP. For any other
 * protocol, and for every fragment but the first, sport and dport are
 * zero: such packets key on addresses and protocol only. An IPv6 fragment
 * other than the first whose fragmentable part starts with another
 * extension header does not show its upper-layer protocol: it keys as
 * protocol 44 (IPPROTO_FRAGMENT), ports zero. A packet too short for the
 * ports its protocol promises is dropped (hotdrop), as other matches do.
 * At most KBLOOM_FLOW_KEY_MAX bytes.
 */
#define KBLOOM_FLOW_SADDR	(1U << 0)
#define KBLOOM_FLOW_DADDR	(1U << 1)
#define KBLOOM_FLOW_PROTO	(1U << 2)
#define KBLOOM_FLOW_SPORT	(1U << 3)
#define KBLOOM_FLOW_DPORT	(1U << 4)
#define KBLOOM_FLOW_FIELDS	0x1fU
#define KBLOOM_FLOW_IPV4	4
#define KBLOOM_FLOW_IPV6	6
#define KBLOOM_FLOW_KEY_MAX	(2 + 16 + 16 + 1 + 2 + 2)

/**
 * struct kbloom_open - KBLOOM_IOC_OPEN argument
 * @name: in: the filter.
 * @flags: in: must be 0.
 * @fd: out: a new file descriptor (close-on-exec) bound to the filter: a
 *	"handle". It is writable (opened read-write) if the device fd the
 *	call was made on is writable, else read-only.
 * @reserved: must be 0.
 *
 * On a handle, the key commands (KBLOOM_IOC_ADD, _QUERY, _TEST_AND_ADD,
 * _REMOVE) and their batches work on the handle's filter with no name:
 * their @name must be all zero (else -EINVAL). There is no string to copy
 * or check and no lookup: the cheapest way to send keys one at a time.
 * The access rules are the device's (-EBADF for a change on a read-only
 * handle). KBLOOM_IOC_COLLECT and KBLOOM_IOC_APPLY also work on a handle,
 * with their @name all zero. Any other command on a handle fails with
 * -ENOTTY.
 *
 * A handle keeps its filter's memory until it is closed, as an open file
 * keeps a deleted file's blocks: once the filter is destroyed, the key
 * commands on the handle fail with -ENOENT, and a new filter of the same
 * name is another filter. /proc/PID/fdinfo/FD of a handle names its
 * filter ("kbloom-filter:") and says whether it was destroyed
 * ("kbloom-destroyed: 1"), so that whoever holds a destroyed filter's
 * memory can be found. While a handle is open, the module cannot be
 * unloaded.
 *
 * Errors: -EINVAL (bad name, @flags or @reserved), -ENOENT (no such
 * filter), -EMFILE/-ENFILE, -ENOMEM, -EFAULT (@fd cannot be written: no
 * descriptor is created).
 */
struct kbloom_open {
	char name[KBLOOM_NAME_MAX];
	__u32 flags;
	__s32 fd;
	__u64 reserved[2];
};

#define KBLOOM_IOC_MAGIC	0xBF

#define KBLOOM_IOC_VERSION	_IOR(KBLOOM_IOC_MAGIC, 0x00, struct kbloom_version)
#define KBLOOM_IOC_CREATE	_IOWR(KBLOOM_IOC_MAGIC, 0x01, struct kbloom_create)
#define KBLOOM_IOC_DESTROY	_IOW(KBLOOM_IOC_MAGIC, 0x02, struct kbloom_name)
#define KBLOOM_IOC_CLEAR	_IOW(KBLOOM_IOC_MAGIC, 0x03, struct kbloom_name)
#define KBLOOM_IOC_INFO		_IOWR(KBLOOM_IOC_MAGIC, 0x04, struct kbloom_info)
#define KBLOOM_IOC_LIST		_IOWR(KBLOOM_IOC_MAGIC, 0x05, struct kbloom_list)
#define KBLOOM_IOC_ROTATE	_IOW(KBLOOM_IOC_MAGIC, 0x06, struct kbloom_name)
#define KBLOOM_IOC_OPEN		_IOWR(KBLOOM_IOC_MAGIC, 0x07, struct kbloom_open)
#define KBLOOM_IOC_ADD		_IOWR(KBLOOM_IOC_MAGIC, 0x10, struct kbloom_key)
#define KBLOOM_IOC_QUERY	_IOWR(KBLOOM_IOC_MAGIC, 0x11, struct kbloom_key)
#define KBLOOM_IOC_TEST_AND_ADD	_IOWR(KBLOOM_IOC_MAGIC, 0x12, struct kbloom_key)
#define KBLOOM_IOC_REMOVE	_IOWR(KBLOOM_IOC_MAGIC, 0x13, struct kbloom_key)
#define KBLOOM_IOC_ADD_BATCH	_IOWR(KBLOOM_IOC_MAGIC, 0x20, struct kbloom_batch)
#define KBLOOM_IOC_QUERY_BATCH	_IOWR(KBLOOM_IOC_MAGIC, 0x21, struct kbloom_batch)
#define KBLOOM_IOC_TEST_AND_ADD_BATCH _IOWR(KBLOOM_IOC_MAGIC, 0x22, struct kbloom_batch)
#define KBLOOM_IOC_REMOVE_BATCH	_IOWR(KBLOOM_IOC_MAGIC, 0x23, struct kbloom_batch)
#define KBLOOM_IOC_MERGE	_IOWR(KBLOOM_IOC_MAGIC, 0x30, struct kbloom_merge)
#define KBLOOM_IOC_COMPARE	_IOWR(KBLOOM_IOC_MAGIC, 0x31, struct kbloom_merge)
#define KBLOOM_IOC_EXPORT	_IOWR(KBLOOM_IOC_MAGIC, 0x40, struct kbloom_image)
#define KBLOOM_IOC_IMPORT	_IOW(KBLOOM_IOC_MAGIC, 0x41, struct kbloom_image)
#define KBLOOM_IOC_COLLECT	_IOWR(KBLOOM_IOC_MAGIC, 0x50, struct kbloom_blocks)
#define KBLOOM_IOC_APPLY	_IOWR(KBLOOM_IOC_MAGIC, 0x51, struct kbloom_blocks)

#endif /* _UAPI_LINUX_KBLOOM_H */
