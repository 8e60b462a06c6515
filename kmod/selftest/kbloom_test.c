// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for kbloom, built into kbloom.ko itself when the kernel has
 * KUnit (the WireGuard way: the tests see the module's internals without
 * a single export existing for them, and none of this ships in a module
 * built for a kernel without KUnit). They run when the module is loaded
 * with kunit=1, after the module is set up (see kbloom_kunit_run()): the
 * harness does that under the debug kernel with KASAN (vmalloc
 * included), lockdep and kmemleak. Seeds are fixed so that any failure
 * reproduces.
 *
 * Only what needs a kernel is here: the core built by kbuild against the
 * golden vectors and the kernel's own jhash() and siphash(), the registry,
 * windows, and CPUs racing in kthreads. The core's arithmetic (sizing,
 * rates, probe sequences, counters, set operations, the blocked layout)
 * is the same source built natively, and tools/native/kbloom_core_test.c
 * tests it there, where sweeps are cheap.
 */

#include <kunit/test.h>
#include <linux/bottom_half.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/jhash.h>
#include <linux/kthread.h>
#include <linux/sched/task.h>
#include <linux/math64.h>
#include <linux/slab.h>

#include "../kbloom.h"
#include "../kbloom_core.h"
#include "../kbloom_filter.h"
#include "../kbloom_gen.h"
#include "../kbloom_kunit.h"
#include "../kbloom_storage.h"
#include "kbloom_test_util.h"

/* ---- kbloom_hash ---- */

/*
 * The kernel's build of the core gives the positions the native build
 * gave when it wrote the vectors (kbloom_vectors_gen): the kernel's
 * helpers (the 128-bit multiply of the range reduction, unaligned reads,
 * rotations) are not the native shims, and a filter must mean the same
 * in both (images, the fake device, bloomsync).
 */
static void kbloom_hash_matches_golden_vectors(struct kunit *test)
{
	int i = kbloom_test_vectors();

	KUNIT_EXPECT_EQ_MSG(test, i, -1, "vector %d, position %d (32: hash)",
			    i / 64, i % 64);
}

/* Every length up to 199: each tail case, and up to 16 whole rounds. */
static void kbloom_hash_low_word_is_jhash(struct kunit *test)
{
	u32 seed[2] = { 0, 0 }, i, len;
	u8 key[200];

	for (i = 0; i < 20000; i++) {
		len = 1 + i % 199;
		kbloom_test_key(key, i, i);
		memset(key + 20, i, sizeof(key) - 20);
		seed[0] = i * 2654435761U;
		KUNIT_ASSERT_EQ_MSG(test, (u32)kbloom_hash64(key, len, seed),
				    jhash(key, len, seed[0]), "key %u", i);
	}
}

/*
 * The hot paths' inline SipHash is siphash() at each of 8 offsets
 * (lib/siphash.c reads aligned and unaligned keys apart): every length
 * up to 300 bytes, past 256 where the length byte of the last block
 * wraps, and the 8 longest keys.
 */
static void kbloom_hash_siphash_is_kernels(struct kunit *test)
{
	static const u32 seed[4] = { 0x01234567, 0x89abcdef, 0xfedcba98,
				     0x76543210 };
	const siphash_key_t key = {{ (u64)seed[1] << 32 | seed[0],
				     (u64)seed[3] << 32 | seed[2] }};
	const u32 max = KBLOOM_KEY_MAX;
	u8 *buf = kunit_kmalloc(test, max + 8, GFP_KERNEL);
	u32 len, off, i;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	for (i = 0; i < max + 8; i++)
		buf[i] = i * 37 + 11;
	for (len = 0; len <= max; len = len == 300 ? max - 7 : len + 1)
		for (off = 0; off < 8; off++)
			KUNIT_ASSERT_EQ_MSG(test,
					    kbloom_siphash64(buf + off, len,
							     seed),
					    siphash(buf + off, len, &key),
					    "%u bytes at offset %u", len, off);
}

static struct kunit_case kbloom_hash_cases[] = {
	KUNIT_CASE(kbloom_hash_matches_golden_vectors),
	KUNIT_CASE(kbloom_hash_siphash_is_kernels),
	KUNIT_CASE(kbloom_hash_low_word_is_jhash),
	{}
};

static struct kunit_suite kbloom_hash_suite = {
	.name = "kbloom_hash",
	.test_cases = kbloom_hash_cases,
};

/* ---- kbloom_registry ---- */

static const struct kbloom_test_name {
	const char *name;
	bool valid;
} kbloom_names[] = {
	{ "", false }, { ".hidden", false }, { "a b", false },
	{ "x/y", false }, { "tab\t", false }, { "\xc3\xa9t\xc3\xa9", false },
	{ "0123456789012345678901234567890123", false },
	{ "a", true }, { "flows.v4_in-1", true },
	{ "0123456789012345678901234567890", true },
};

static void kbloom_name_desc(const struct kbloom_test_name *n, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "\"%.20s\" %s", n->name,
		 n->valid ? "valid" : "refused");
}

KUNIT_ARRAY_PARAM(kbloom_name, kbloom_names, kbloom_name_desc);

static void kbloom_registry_name_valid(struct kunit *test)
{
	const struct kbloom_test_name *n = test->param_value;
	char name[KBLOOM_NAME_MAX + 8] = {};

	strscpy(name, n->name, sizeof(name));
	KUNIT_EXPECT_EQ(test, kbloom_name_valid(name), n->valid);
}

/* Open to BPF programs for writing: the id slots test calls the kfuncs'. */
static const struct kbloom_params kbloom_test_params = {
	.nbits = 1 << 16, .nhashes = 5, .bpf_ops = KBLOOM_BPF_OPS_WRITE,
};

static void kbloom_registry_lookup_and_duplicate(struct kunit *test)
{
	struct kbloom_filter *f;
	u8 key[32];
	u32 len = kbloom_test_key(key, 9, 1);

	KUNIT_EXPECT_NULL(test, kbloom_get("kunit_none"));
	KUNIT_ASSERT_EQ(test,
			kbloom_filter_create("kunit_reg", &kbloom_test_params, NULL), 0);
	KUNIT_EXPECT_EQ(test,
			kbloom_filter_create("kunit_reg", &kbloom_test_params, NULL),
			-EEXIST);
	f = kbloom_get("kunit_reg");
	KUNIT_ASSERT_NOT_NULL(test, f);
	rcu_read_lock();
	KUNIT_EXPECT_EQ(test, kbloom_filter_core(f)->nbits, 1ULL << 16);
	rcu_read_unlock();
	KUNIT_EXPECT_EQ(test, kbloom_query(f, key, len), 0);
	KUNIT_EXPECT_EQ(test, kbloom_add(f, key, len), 0);
	KUNIT_EXPECT_EQ(test, kbloom_query(f, key, len), 1);
	KUNIT_EXPECT_EQ(test, kbloom_test_and_add(f, key, len), 1);
	KUNIT_EXPECT_EQ(test, kbloom_add(f, key, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, kbloom_add(f, key, KBLOOM_KEY_MAX + 1), -EINVAL);
	kbloom_put(f);
	KUNIT_EXPECT_EQ(test, kbloom_filter_destroy("kunit_reg"), 0);
	KUNIT_EXPECT_EQ(test, kbloom_filter_destroy("kunit_reg"), -ENOENT);
	KUNIT_EXPECT_NULL(test, kbloom_get("kunit_reg"));
}

/*
 * A filter destroyed while another module holds it stays valid memory (KASAN
 * would catch a use after free) and answers -ENOENT; its memory is given
 * back once the last reference goes.
 */
static void kbloom_registry_destroy_while_referenced(struct kunit *test)
{
	struct kbloom_filter *f;
	u8 key[32];
	u32 len = kbloom_test_key(key, 9, 2);
	u64 before;

	/* Let earlier cases' filters finish freeing first. */
	kbloom_filter_flush();
	before = kbloom_memory_used();

	KUNIT_ASSERT_EQ(test,
			kbloom_filter_create("kunit_ref", &kbloom_test_params, NULL), 0);
	KUNIT_EXPECT_GT(test, kbloom_memory_used(), before);
	f = kbloom_get("kunit_ref");
	KUNIT_ASSERT_NOT_NULL(test, f);
	/*
	 * Users count in the filter, not in its kobject: a user's put must
	 * not race with the uevents and kobject_del() of the table's owner.
	 */
	KUNIT_EXPECT_EQ(test, refcount_read(&f->ref), 2);
	KUNIT_EXPECT_EQ(test, kref_read(&f->kobj.kref), 1);
	/* Another user comes and goes: the first's reference stays. */
	kbloom_put(kbloom_get("kunit_ref"));
	KUNIT_EXPECT_EQ(test, refcount_read(&f->ref), 2);
	KUNIT_EXPECT_EQ(test, kref_read(&f->kobj.kref), 1);
	KUNIT_EXPECT_EQ(test, kbloom_add(f, key, len), 0);
	KUNIT_EXPECT_EQ(test, kbloom_filter_destroy("kunit_ref"), 0);
	KUNIT_EXPECT_EQ(test, refcount_read(&f->ref), 1);
	KUNIT_EXPECT_EQ(test, kref_read(&f->kobj.kref), 1);
	KUNIT_EXPECT_EQ(test, kbloom_add(f, key, len), -ENOENT);
	KUNIT_EXPECT_EQ(test, kbloom_query(f, key, len), -ENOENT);
	KUNIT_EXPECT_EQ(test, kbloom_test_and_add(f, key, len), -ENOENT);
	/* Still readable: the bits are there until the last put. */
	rcu_read_lock();
	KUNIT_EXPECT_TRUE(test, kbloom_core_query(kbloom_filter_core(f), key,
						  len));
	rcu_read_unlock();
	/* Not freed while referenced (flushing now would wait for ever). */
	msleep(100);
	KUNIT_EXPECT_GT(test, kbloom_memory_used(), before);
	/* The same name can be created again at once. */
	KUNIT_EXPECT_EQ(test,
			kbloom_filter_create("kunit_ref", &kbloom_test_params, NULL), 0);
	KUNIT_EXPECT_EQ(test, kbloom_filter_destroy("kunit_ref"), 0);
	kbloom_put(f);
	/* Freed a grace period later, from a workqueue. */
	kbloom_filter_flush();
	KUNIT_EXPECT_EQ(test, kbloom_memory_used(), before);
}

/*
 * The hot path runs with bottom halves off (softirq) without sleeping:
 * a lookup and a put, and the batch API against the one-key calls, on a
 * plain and a blocked filter: the same answers, new keys new, the keys of
 * a failed call (a bad length at the end) not added, and the statistics
 * counted.
 */
static void kbloom_registry_batch_api_in_softirq(struct kunit *test)
{
	static const u32 flags[] = { 0, KBLOOM_CORE_BLOCKED };
	enum { N = 300 };
	struct kbloom_params p = kbloom_test_params;
	u8 *keys = kunit_kzalloc(test, N * 32, GFP_KERNEL);
	u32 *lens = kunit_kcalloc(test, N, sizeof(*lens), GFP_KERNEL);
	u8 res[N / 8 + 1];
	struct kbloom_totals t;
	struct kbloom_filter *f, *g;
	u32 i, fl, last, extra, used = 0;
	int hits, one, two;
	u8 other[32];

	KUNIT_ASSERT_NOT_NULL(test, keys);
	KUNIT_ASSERT_NOT_NULL(test, lens);
	for (i = 0; i < N; i++) {
		lens[i] = kbloom_test_key(keys + used, 31, i);
		used += lens[i];
	}
	for (fl = 0; fl < ARRAY_SIZE(flags); fl++) {
		p.flags = flags[fl];
		KUNIT_ASSERT_EQ(test, kbloom_filter_create("kunit_batch", &p,
							   NULL), 0);
		f = kbloom_get("kunit_batch");
		KUNIT_ASSERT_NOT_NULL(test, f);
		local_bh_disable();
		/* Another user comes and goes, beside this one. */
		rcu_read_lock();
		g = kbloom_get("kunit_batch");
		rcu_read_unlock();
		KUNIT_EXPECT_PTR_EQ(test, g, f);
		kbloom_put(g);
		/* The first half, then all: the first half seen, not the rest. */
		KUNIT_EXPECT_EQ(test, kbloom_add_batch(f, keys, lens, N / 2), 0);
		hits = kbloom_test_and_add_batch(f, keys, lens, N, res);
		KUNIT_EXPECT_EQ(test, hits, N / 2);
		for (i = 0, used = 0; i < N; used += lens[i], i++) {
			KUNIT_EXPECT_EQ(test, !!(res[i / 8] & BIT(i % 8)),
					i < N / 2);
			KUNIT_EXPECT_EQ(test, kbloom_query(f, keys + used, lens[i]),
					1);
		}
		KUNIT_EXPECT_EQ(test, kbloom_query_batch(f, keys, lens, N, res),
				N);
		last = lens[N - 1];
		lens[N - 1] = 0;
		KUNIT_EXPECT_EQ(test, kbloom_query_batch(f, keys, lens, N, res),
				-EINVAL);
		lens[N - 1] = last;
		/* A key never added, by the one-key calls: a miss (or a FP). */
		extra = kbloom_test_key(other, 31, N + 1);
		one = kbloom_query(f, other, extra);
		KUNIT_EXPECT_GE(test, one, 0);
		two = kbloom_test_and_add(f, other, extra);
		KUNIT_EXPECT_EQ(test, two, one);
		KUNIT_EXPECT_EQ(test, kbloom_test_and_add(f, other, extra), 1);
		local_bh_enable();
		kbloom_filter_totals(f, &t);
		/*
		 * N/2 + N + 2 adds (test-and-add counts), 3N + 3 queries, and
		 * each hit once: each total sums several per-CPU counters.
		 */
		KUNIT_EXPECT_EQ(test, t.adds, (u64)N / 2 + N + 2);
		KUNIT_EXPECT_EQ(test, t.queries, (u64)N + N + N + 3);
		KUNIT_EXPECT_EQ(test, t.hits, (u64)hits + N + N + one + two + 1);
		kbloom_put(f);
		KUNIT_EXPECT_EQ(test, kbloom_filter_destroy("kunit_batch"), 0);
	}
}

/* CREATE --like: @flags the caller expects of @like, no BPF, no tracking. */
static int kbloom_test_like(const char *name, const char *like, u32 flags,
			    struct kbloom_params *used,
			    struct kbloom_filter **filterp)
{
	memset(used, 0, sizeof(*used));
	used->flags = flags;
	return kbloom_filter_create_like(name, like, used, filterp);
}

/* A filter made --like another shares its seed: they merge and compare. */
static void kbloom_registry_like_shares_seed(struct kunit *test)
{
	struct kbloom_params used;
	struct kbloom_filter *a, *b;
	struct kbloom_gen *ga, *gb;

	KUNIT_ASSERT_EQ(test,
			kbloom_filter_create("kunit_a", &kbloom_test_params, NULL), 0);
	KUNIT_ASSERT_EQ(test,
			kbloom_test_like("kunit_b", "kunit_a", 0, &used, NULL),
			0);
	KUNIT_EXPECT_EQ(test, used.nbits, kbloom_test_params.nbits);
	KUNIT_EXPECT_EQ(test, used.nhashes, kbloom_test_params.nhashes);
	KUNIT_EXPECT_EQ(test,
			kbloom_test_like("kunit_c", "kunit_a",
					 KBLOOM_CORE_COUNTING, &used, NULL),
			-EINVAL);
	KUNIT_EXPECT_EQ(test,
			kbloom_test_like("kunit_c", "kunit_none", 0, &used,
					 NULL),
			-ENOENT);
	KUNIT_ASSERT_EQ(test,
			kbloom_filter_create("kunit_c", &kbloom_test_params, NULL), 0);
	a = kbloom_get("kunit_a");
	b = kbloom_get("kunit_b");
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);
	ga = kbloom_gen_get(a);
	gb = kbloom_gen_get(b);
	KUNIT_EXPECT_EQ(test, kbloom_gen_mismatch(ga, gb), 0U);
	kbloom_gen_put(gb);
	kbloom_put(b);
	b = kbloom_get("kunit_c");
	KUNIT_ASSERT_NOT_NULL(test, b);
	gb = kbloom_gen_get(b);
	/* Independent filters: different random seeds (2^-64 to collide). */
	KUNIT_EXPECT_EQ(test, kbloom_gen_mismatch(ga, gb),
			(u32)KBLOOM_MISMATCH_SEED);
	kbloom_gen_put(gb);
	kbloom_gen_put(ga);
	kbloom_put(a);
	kbloom_put(b);
	KUNIT_EXPECT_EQ(test, kbloom_filter_destroy("kunit_a"), 0);
	KUNIT_EXPECT_EQ(test, kbloom_filter_destroy("kunit_b"), 0);
	KUNIT_EXPECT_EQ(test, kbloom_filter_destroy("kunit_c"), 0);
}

/*
 * Replacing a filter's generation while the hot path runs on it: every
 * lookup finds the filter, every test runs wholly on one generation (the
 * old holds key X only, the new key Y only), and the old one is freed.
 */
static void kbloom_registry_replace_is_atomic(struct kunit *test)
{
	struct kbloom_params p = kbloom_test_params;
	struct kbloom_filter *f;
	struct kbloom_gen *gen;
	u8 x[32], y[32];
	u32 lx = kbloom_test_key(x, 11, 1), ly = kbloom_test_key(y, 11, 2);
	u64 before;

	kbloom_filter_flush();
	before = kbloom_memory_used();
	KUNIT_ASSERT_EQ(test, kbloom_filter_create("kunit_rep", &p, NULL), 0);
	f = kbloom_get("kunit_rep");
	KUNIT_ASSERT_NOT_NULL(test, f);
	KUNIT_EXPECT_EQ(test, kbloom_add(f, x, lx), 0);

	p.nbits = 100003;	/* the new contents may have other parameters */
	gen = kbloom_gen_new(&p);
	KUNIT_ASSERT_FALSE(test, IS_ERR(gen));
	kbloom_core_add(&gen->core, y, ly, NULL);
	rcu_read_lock();
	/* A reader inside the old generation... */
	KUNIT_EXPECT_TRUE(test, kbloom_core_query(kbloom_filter_core(f), x, lx));
	rcu_read_unlock();
	KUNIT_ASSERT_EQ(test, kbloom_filter_replace_gen("kunit_rep", gen, &p), 0);
	/* ...and every reader after the swap sees only the new one. */
	KUNIT_EXPECT_EQ(test, kbloom_query(f, y, ly), 1);
	KUNIT_EXPECT_EQ(test, kbloom_query(f, x, lx), 0);
	rcu_read_lock();
	KUNIT_EXPECT_EQ(test, kbloom_filter_core(f)->nbits, 100003ULL);
	rcu_read_unlock();
	KUNIT_EXPECT_EQ(test, kbloom_filter_replace_gen("kunit_none", gen, &p),
			-ENOENT);
	kbloom_put(f);
	KUNIT_EXPECT_EQ(test, kbloom_filter_destroy("kunit_rep"), 0);
	kbloom_filter_flush();
	KUNIT_EXPECT_EQ(test, kbloom_memory_used(), before);
}

/* A pinned filter (a netfilter rule uses it) cannot be destroyed. */
static void kbloom_registry_pin_blocks_destroy(struct kunit *test)
{
	struct kbloom_filter *f;

	KUNIT_ASSERT_EQ(test, kbloom_filter_create("kunit_pin",
						   &kbloom_test_params, NULL),
			0);
	f = kbloom_get("kunit_pin");
	KUNIT_ASSERT_NOT_NULL(test, f);
	KUNIT_EXPECT_EQ(test, kbloom_pin(f), 0);
	KUNIT_EXPECT_EQ(test, kbloom_pin(f), 0);
	KUNIT_EXPECT_EQ(test, kbloom_filter_pins(f), 2U);
	KUNIT_EXPECT_EQ(test, kbloom_filter_destroy("kunit_pin"), -EBUSY);
	KUNIT_EXPECT_EQ(test, kbloom_filter_unlink_this(f), -EBUSY);
	kbloom_unpin(f);
	KUNIT_EXPECT_EQ(test, kbloom_filter_destroy("kunit_pin"), -EBUSY);
	kbloom_unpin(f);
	KUNIT_EXPECT_EQ(test, kbloom_filter_destroy("kunit_pin"), 0);
	/* Destroyed: pinning now fails, and the memory stays valid. */
	KUNIT_EXPECT_EQ(test, kbloom_pin(f), -ENOENT);
	KUNIT_EXPECT_EQ(test, kbloom_filter_unlink_this(f), -ENOENT);
	kbloom_put(f);
}

/*
 * Ids (the BPF kfuncs' reference-free lookup): one per live filter, found
 * under RCU, gone at destroy, not handed to the next filter of the name.
 */
static void kbloom_registry_ids(struct kunit *test)
{
	struct kbloom_filter *f, *g;
	int id, id2;

	KUNIT_ASSERT_EQ(test, kbloom_filter_create("kunit_id",
						   &kbloom_test_params, &f),
			0);
	id = kbloom_filter_id("kunit_id");
	KUNIT_ASSERT_GT(test, id, 0);
	KUNIT_EXPECT_EQ(test, id, (int)f->id);
	rcu_read_lock();
	KUNIT_EXPECT_PTR_EQ(test, kbloom_filter_by_id_rcu(id), f);
	rcu_read_unlock();
	KUNIT_EXPECT_EQ(test, kbloom_filter_id("kunit_no_such"), -ENOENT);
	KUNIT_EXPECT_EQ(test, kbloom_filter_destroy("kunit_id"), 0);
	rcu_read_lock();
	KUNIT_EXPECT_TRUE(test, !kbloom_filter_by_id_rcu(id));
	rcu_read_unlock();
	KUNIT_EXPECT_EQ(test, kbloom_filter_id("kunit_id"), -ENOENT);
	kbloom_filter_put(f);
	/* The name again: a new filter, a new id. */
	KUNIT_ASSERT_EQ(test, kbloom_filter_create("kunit_id",
						   &kbloom_test_params, &g),
			0);
	id2 = kbloom_filter_id("kunit_id");
	KUNIT_EXPECT_GT(test, id2, 0);
	KUNIT_EXPECT_NE(test, id2, id);
	rcu_read_lock();
	KUNIT_EXPECT_PTR_EQ(test, kbloom_filter_by_id_rcu(id2), g);
	KUNIT_EXPECT_TRUE(test, !kbloom_filter_by_id_rcu(id));
	rcu_read_unlock();
	KUNIT_EXPECT_EQ(test, kbloom_filter_destroy("kunit_id"), 0);
	kbloom_filter_put(g);
}

/*
 * A new filter takes a free slot of the by-id lookup while there is one,
 * however many filters were made before; once every slot is held, two
 * live filters can share one (ids modulo KBLOOM_ID_SLOTS): both are
 * found, by the slot or the xarray, the by-id call reaches each, and
 * when the slot's holder goes the other takes the slot over and is still
 * found; the gone one is not.
 */
static void kbloom_registry_id_slots(struct kunit *test)
{
	struct kbloom_filter *x, *y = NULL, *f, *held;
	char yname[KBLOOM_NAME_MAX] = "";
	u32 slot, nfree, tid;
	int i, made = 0;

	/* x, up to 2 * KBLOOM_ID_SLOTS + 1 fillers, and one more. */
	if (READ_ONCE(kbloom_max_filters) <
	    kbloom_filter_count() + 2 * KBLOOM_ID_SLOTS + 3)
		kunit_skip(test, "max_filters leaves no room for %d filters",
			   2 * KBLOOM_ID_SLOTS + 3);
	KUNIT_ASSERT_EQ(test, kbloom_filter_create("kunit_slot_x",
						   &kbloom_test_params, &x),
			0);
	slot = x->id % KBLOOM_ID_SLOTS;
	KUNIT_EXPECT_PTR_EQ(test, rcu_access_pointer(kbloom_id_slots[slot]),
			    x);
	/*
	 * Burn ids until the next one falls on x's slot: the next filter
	 * skips it, to a free slot. Failures below are EXPECTs and skip
	 * ahead, never an ASSERT that would leave a reference held (and
	 * rmmod waiting for it).
	 */
	for (i = 1; i < KBLOOM_ID_SLOTS; i++) {
		if (kbloom_filter_create("kunit_slot_t", &kbloom_test_params,
					 &f)) {
			KUNIT_FAIL(test, "creating filter %d failed", i);
			goto out_fill;
		}
		tid = f->id;
		KUNIT_EXPECT_EQ(test, kbloom_filter_destroy("kunit_slot_t"), 0);
		kbloom_filter_put(f);
		if ((tid + 1) % KBLOOM_ID_SLOTS == slot)
			break;
	}
	if (kbloom_filter_create("kunit_slot_t", &kbloom_test_params, &f)) {
		KUNIT_FAIL(test, "creating kunit_slot_t failed");
		goto out_fill;
	}
	KUNIT_EXPECT_NE_MSG(test, f->id % KBLOOM_ID_SLOTS, slot,
			    "id %u took x's held slot", f->id);
	KUNIT_EXPECT_PTR_EQ(test, rcu_access_pointer(*kbloom_id_slot(f->id)),
			    f);
	KUNIT_EXPECT_EQ(test, kbloom_filter_destroy("kunit_slot_t"), 0);
	kbloom_filter_put(f);
	/* Fill every slot, then go on until a filter shares x's. */
	for (i = 0; i < 2 * KBLOOM_ID_SLOTS + 1; i++) {
		char name[KBLOOM_NAME_MAX];

		snprintf(name, sizeof(name), "kunit_slot_f%d", i);
		nfree = kbloom_id_slots_free();
		if (kbloom_filter_create(name, &kbloom_test_params, &f)) {
			KUNIT_FAIL(test, "creating filter %d failed", i);
			goto out_fill;
		}
		made++;
		held = rcu_access_pointer(*kbloom_id_slot(f->id));
		if (nfree)
			KUNIT_EXPECT_PTR_EQ_MSG(test, held, f,
						"filter %d (id %u), %u slots free",
						i, f->id, nfree);
		if (f->id % KBLOOM_ID_SLOTS == slot) {
			y = f;
			strscpy(yname, name, sizeof(yname));
			break;
		}
		kbloom_filter_put(f);
	}
	if (!y) {
		KUNIT_FAIL(test, "no filter shares slot %u", slot);
		goto out_fill;
	}
	KUNIT_EXPECT_EQ(test, kbloom_id_slots_free(), 0);
	rcu_read_lock();
	KUNIT_EXPECT_PTR_EQ(test, kbloom_filter_by_id_rcu(x->id), x);
	KUNIT_EXPECT_PTR_EQ(test, kbloom_filter_by_id_rcu(y->id), y);
	KUNIT_EXPECT_PTR_EQ(test, rcu_dereference(kbloom_id_slots[slot]), x);
	rcu_read_unlock();
	/* The kfuncs' call, on each: a key added to y is in y only. */
	KUNIT_EXPECT_EQ(test, kbloom_filter_do_id(y->id, KBLOOM_OP_ADD, "k", 1),
			0);
	KUNIT_EXPECT_EQ(test, kbloom_filter_do_id(y->id, KBLOOM_OP_QUERY,
						  "k", 1), 1);
	KUNIT_EXPECT_EQ(test, kbloom_filter_do_id(x->id, KBLOOM_OP_TEST_AND_ADD,
						  "k", 1), 0);
	KUNIT_EXPECT_EQ(test, kbloom_filter_do_id(x->id, KBLOOM_OP_QUERY,
						  "k", 1), 1);
	KUNIT_EXPECT_EQ(test, kbloom_filter_do_id(y->id, KBLOOM_OP_QUERY,
						  "k", 0), -EINVAL);
	/* x goes: y is still found, now by the slot; x's id is not. */
	KUNIT_EXPECT_EQ(test, kbloom_filter_destroy("kunit_slot_x"), 0);
	rcu_read_lock();
	KUNIT_EXPECT_TRUE(test, !kbloom_filter_by_id_rcu(x->id));
	KUNIT_EXPECT_PTR_EQ(test, kbloom_filter_by_id_rcu(y->id), y);
	KUNIT_EXPECT_PTR_EQ(test, rcu_dereference(kbloom_id_slots[slot]), y);
	rcu_read_unlock();
	KUNIT_EXPECT_EQ(test, kbloom_filter_do_id(x->id, KBLOOM_OP_QUERY,
						  "k", 1), -ENOENT);
	KUNIT_EXPECT_EQ(test, kbloom_filter_do_id(y->id, KBLOOM_OP_QUERY,
						  "k", 1), 1);
	/* y goes too: another filter of its slot may take it, not y. */
	KUNIT_EXPECT_EQ(test, kbloom_filter_destroy(yname), 0);
	KUNIT_EXPECT_PTR_NE(test, rcu_access_pointer(kbloom_id_slots[slot]),
			    y);
	KUNIT_EXPECT_EQ(test, kbloom_filter_do_id(y->id, KBLOOM_OP_QUERY,
						  "k", 1), -ENOENT);
	kbloom_filter_put(y);
out_fill:
	while (made--) {
		char name[KBLOOM_NAME_MAX];

		snprintf(name, sizeof(name), "kunit_slot_f%d", made);
		kbloom_filter_destroy(name);	/* -ENOENT for y */
	}
	kbloom_filter_destroy("kunit_slot_x");	/* -ENOENT if gone already */
	kbloom_filter_put(x);
}

/*
 * "bits set" and "saturated" are counters kept by the operations, never a
 * scan: after any mix of adds, test-and-adds, removes, a merge and a
 * clear, they equal a full count of the storage.
 */
static void kbloom_registry_occupancy_is_exact(struct kunit *test)
{
	struct kbloom_params p = {
		.nbits = 4096, .nhashes = 4, .flags = KBLOOM_CORE_COUNTING,
	};
	struct kbloom_filter *f, *g;
	struct kbloom_delta d = {};
	struct kbloom_gen *gen, *gg;
	u64 occ, stuck, o2, s2;
	u8 key[32];
	u32 len, i;

	KUNIT_ASSERT_EQ(test, kbloom_filter_create("kunit_occ", &p, &f), 0);
	KUNIT_ASSERT_EQ(test,
			kbloom_test_like("kunit_occ2", "kunit_occ", 0, &p, &g),
			0);
	for (i = 0; i < 3000; i++) {
		len = kbloom_test_key(key, 50, i % 700);
		if (i % 5 == 4)
			kbloom_remove(f, key, len);
		else if (i % 2)
			kbloom_test_and_add(f, key, len);
		else
			kbloom_add(f, key, len);
		kbloom_add(g, key, len);
	}
	gen = kbloom_gen_get(f);
	gg = kbloom_gen_get(g);
	kbloom_gen_occupancy(gen, &occ, &stuck);
	KUNIT_EXPECT_EQ(test, kbloom_core_count(&gen->core, &o2, &s2), 0);
	KUNIT_EXPECT_EQ(test, occ, o2);
	KUNIT_EXPECT_EQ(test, stuck, s2);
	KUNIT_EXPECT_GT(test, stuck, 0ULL);

	KUNIT_EXPECT_EQ(test, kbloom_core_merge(&gen->core, &gg->core, &d), 0);
	kbloom_occ_account(gen->occ, &d);
	kbloom_gen_occupancy(gen, &occ, &stuck);
	kbloom_core_count(&gen->core, &o2, &s2);
	KUNIT_EXPECT_EQ(test, occ, o2);
	KUNIT_EXPECT_EQ(test, stuck, s2);
	kbloom_gen_put(gg);
	kbloom_gen_put(gen);

	KUNIT_EXPECT_EQ(test, kbloom_filter_clear(f), 0);
	gen = kbloom_gen_get(f);
	kbloom_gen_occupancy(gen, &occ, &stuck);
	KUNIT_EXPECT_EQ(test, occ, 0ULL);
	KUNIT_EXPECT_EQ(test, stuck, 0ULL);
	kbloom_gen_put(gen);
	kbloom_filter_put(f);
	kbloom_filter_put(g);
	KUNIT_EXPECT_EQ(test, kbloom_filter_destroy("kunit_occ"), 0);
	KUNIT_EXPECT_EQ(test, kbloom_filter_destroy("kunit_occ2"), 0);
}

/*
 * A filter's BPF access, as bpf_kbloom_id() and the kfuncs by id check
 * it: none refuses everything, read only the query, write all four; a
 * refused call leaves the filter as it was. (tools/bpf/kbloom_bpf_access.c
 * loads real programs.)
 */
static void kbloom_registry_bpf_access(struct kunit *test)
{
	static const struct {
		const char *name;
		u8 ops;
		int add, query;
	} modes[] = {
		{ "kunit_bpf_none", 0, -EACCES, -EACCES },
		{ "kunit_bpf_read", KBLOOM_BPF_OPS_READ, -EACCES, 0 },
		{ "kunit_bpf_write", KBLOOM_BPF_OPS_WRITE, 0, 1 },
	};
	struct kbloom_params p = kbloom_test_params;
	struct kbloom_filter *f;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		p.bpf_ops = modes[i].ops;
		KUNIT_ASSERT_EQ(test, kbloom_filter_create(modes[i].name, &p,
							   &f), 0);
		/* What bpf_kbloom_id() answers. */
		KUNIT_EXPECT_EQ(test, kbloom_filter_id(modes[i].name),
				modes[i].ops ? (int)f->id : -EACCES);
		KUNIT_EXPECT_EQ_MSG(test,
				    kbloom_filter_do_id(f->id, KBLOOM_OP_ADD,
							"k", 1),
				    modes[i].add, "%s: add", modes[i].name);
		KUNIT_EXPECT_EQ_MSG(test,
				    kbloom_filter_do_id(f->id,
							KBLOOM_OP_TEST_AND_ADD,
							"j", 1),
				    modes[i].add, "%s: test-and-add",
				    modes[i].name);
		KUNIT_EXPECT_EQ_MSG(test,
				    kbloom_filter_do_id(f->id, KBLOOM_OP_REMOVE,
							"k", 1),
				    modes[i].add ? modes[i].add : -EOPNOTSUPP,
				    "%s: remove", modes[i].name);
		KUNIT_EXPECT_EQ_MSG(test,
				    kbloom_filter_do_id(f->id, KBLOOM_OP_QUERY,
							"k", 1),
				    modes[i].query, "%s: query", modes[i].name);
		/* The in-kernel API is not BPF's: it reaches every filter. */
		KUNIT_EXPECT_EQ(test, kbloom_query(f, "k", 1),
				!modes[i].add);
		kbloom_filter_put(f);
		KUNIT_EXPECT_EQ(test, kbloom_filter_destroy(modes[i].name), 0);
	}
}

static struct kunit_case kbloom_registry_cases[] = {
	KUNIT_CASE_PARAM(kbloom_registry_name_valid, kbloom_name_gen_params),
	KUNIT_CASE(kbloom_registry_lookup_and_duplicate),
	KUNIT_CASE(kbloom_registry_destroy_while_referenced),
	KUNIT_CASE(kbloom_registry_batch_api_in_softirq),
	KUNIT_CASE(kbloom_registry_like_shares_seed),
	KUNIT_CASE(kbloom_registry_replace_is_atomic),
	KUNIT_CASE(kbloom_registry_pin_blocks_destroy),
	KUNIT_CASE(kbloom_registry_ids),
	KUNIT_CASE(kbloom_registry_id_slots),
	KUNIT_CASE(kbloom_registry_bpf_access),
	KUNIT_CASE(kbloom_registry_occupancy_is_exact),
	{}
};

static struct kunit_suite kbloom_registry_suite = {
	.name = "kbloom_registry",
	.test_cases = kbloom_registry_cases,
};

/* ---- kbloom_concurrency ---- */

/*
 * One kthread per CPU adds disjoint keys to the same one-word filter at the
 * same time, round after round, a barrier between rounds keeping them in
 * lockstep: every 0->1 transition of a bit races with the other CPUs'
 * transitions in the same word, which is exactly where a non-atomic
 * read-modify-write (__set_bit) would lose a bit and so a key.
 */
#define KBLOOM_CONC_ROUNDS	4096
#define KBLOOM_CONC_BITS	64
#define KBLOOM_CONC_KEYS	16

struct kbloom_conc {
	struct kbloom_core *cores;
	atomic_t arrived;
	int nthreads;
	bool counting;
};

struct kbloom_conc_thread {
	struct kbloom_conc *conc;
	struct completion done;
	u32 stream;
};

/* Sense-free spin barrier: round r ends when (r + 1) * n threads arrived. */
static void kbloom_conc_barrier(struct kbloom_conc *c, u32 round)
{
	int target = (round + 1) * c->nthreads;

	atomic_inc(&c->arrived);
	while (atomic_read(&c->arrived) < target)
		cpu_relax();
}

/*
 * Round @r of thread @stream: plain filters get KBLOOM_CONC_KEYS adds;
 * counting ones get add, add, remove of half as many keys (net one add
 * each), so increments and decrements race on shared counter words.
 */
static void kbloom_conc_round(struct kbloom_core *core, bool counting,
			      u32 stream, u32 r)
{
	u8 key[32];
	u32 i, len;

	for (i = 0; i < KBLOOM_CONC_KEYS; i++) {
		len = kbloom_test_key(key, stream, r * KBLOOM_CONC_KEYS + i);
		kbloom_core_add(core, key, len, NULL);
		if (counting && i % 2) {
			kbloom_core_add(core, key, len, NULL);
			kbloom_core_remove(core, key, len, NULL);
		}
	}
}

static int kbloom_conc_fn(void *arg)
{
	struct kbloom_conc_thread *t = arg;
	struct kbloom_conc *c = t->conc;
	u32 r;

	kbloom_conc_barrier(c, 0);
	for (r = 0; r < KBLOOM_CONC_ROUNDS; r++) {
		kbloom_conc_round(&c->cores[r], c->counting, t->stream, r);
		kbloom_conc_barrier(c, r + 1);
	}
	complete(&t->done);
	while (!kthread_should_stop()) {
		set_current_state(TASK_INTERRUPTIBLE);
		if (!kthread_should_stop())
			schedule();
		__set_current_state(TASK_RUNNING);
	}
	return 0;
}

/* Run one kthread per online CPU over @c->cores; return how many ran. */
static int kbloom_conc_run(struct kunit *test, struct kbloom_conc *c)
{
	struct kbloom_conc_thread *threads;
	struct task_struct **tasks;
	int cpu, n = 0, t;

	c->nthreads = num_online_cpus();
	kunit_info(test, "%d CPUs\n", c->nthreads);
	KUNIT_EXPECT_GE_MSG(test, c->nthreads, 2, "needs SMP to mean anything");
	threads = kunit_kcalloc(test, c->nthreads, sizeof(*threads), GFP_KERNEL);
	tasks = kunit_kcalloc(test, c->nthreads, sizeof(*tasks), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, threads);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, tasks);

	for_each_online_cpu(cpu) {
		if (n == c->nthreads)
			break;
		threads[n].conc = c;
		threads[n].stream = 100 + n;
		init_completion(&threads[n].done);
		tasks[n] = kthread_create_on_cpu(kbloom_conc_fn, &threads[n],
						 cpu, "kbloom_test/%u");
		KUNIT_ASSERT_FALSE(test, IS_ERR(tasks[n]));
		n++;
	}
	/* If a CPU went away meanwhile, the others must not wait for it. */
	c->nthreads = n;
	for (t = 0; t < n; t++)
		wake_up_process(tasks[t]);
	for (t = 0; t < n; t++) {
		wait_for_completion(&threads[t].done);
		kthread_stop(tasks[t]);
	}
	return n;
}

/* KBLOOM_CONC_ROUNDS small filters over one zeroed allocation. */
static struct kbloom_core *kbloom_conc_cores(struct kunit *test, u64 nbits,
					     u32 flags)
{
	size_t bytes = kbloom_core_bytes(nbits, flags);
	struct kbloom_core *cores;
	u32 seed[2] = { 77, 88 }, r;
	u8 *bits;

	cores = kunit_kcalloc(test, KBLOOM_CONC_ROUNDS, sizeof(*cores),
			      GFP_KERNEL);
	bits = kunit_kcalloc(test, KBLOOM_CONC_ROUNDS, bytes, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, cores);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, bits);
	for (r = 0; r < KBLOOM_CONC_ROUNDS; r++)
		kbloom_core_init(&cores[r], (unsigned long *)(bits + r * bytes),
				 nbits, 2, flags, seed);
	return cores;
}

static void kbloom_conc_no_lost_keys(struct kunit *test, u64 nbits, u32 flags)
{
	struct kbloom_conc c = {};
	u32 r, i, lost = 0;
	int n, t;
	u8 key[32];

	c.cores = kbloom_conc_cores(test, nbits, flags);
	n = kbloom_conc_run(test, &c);
	for (t = 0; t < n; t++) {
		for (r = 0; r < KBLOOM_CONC_ROUNDS; r++) {
			for (i = 0; i < KBLOOM_CONC_KEYS; i++) {
				u32 len = kbloom_test_key(key, 100 + t,
						r * KBLOOM_CONC_KEYS + i);

				lost += !kbloom_core_query(&c.cores[r], key, len);
			}
		}
	}
	KUNIT_EXPECT_EQ_MSG(test, lost, 0U, "%u keys lost by %d threads",
			    lost, n);
}

static void kbloom_concurrency_no_lost_keys(struct kunit *test)
{
	kbloom_conc_no_lost_keys(test, KBLOOM_CONC_BITS, 0);
}

/*
 * The same on a blocked filter of one block: its adds take their own
 * path (kbloom_block_set()), one atomic OR per word of the block.
 */
static void kbloom_concurrency_no_lost_keys_blocked(struct kunit *test)
{
	kbloom_conc_no_lost_keys(test, BIT(KBLOOM_BLOCK_SHIFT),
				 KBLOOM_CORE_BLOCKED);
}

/*
 * Counting filters under concurrent adds and removes end exactly where a
 * sequential replay of the same operations ends (no counter saturates at
 * this load, so the operations commute): no increment or decrement lost.
 */
static void kbloom_concurrency_counting_matches_sequential(struct kunit *test)
{
	const u64 m = 4 * KBLOOM_CONC_BITS;
	struct kbloom_conc c = { .counting = true };
	struct kbloom_core *seq;
	u32 r, diff = 0;
	int n, t;

	c.cores = kbloom_conc_cores(test, m, KBLOOM_CORE_COUNTING);
	seq = kbloom_conc_cores(test, m, KBLOOM_CORE_COUNTING);
	n = kbloom_conc_run(test, &c);
	for (t = 0; t < n; t++)
		for (r = 0; r < KBLOOM_CONC_ROUNDS; r++)
			kbloom_conc_round(&seq[r], true, 100 + t, r);
	for (r = 0; r < KBLOOM_CONC_ROUNDS; r++) {
		KUNIT_ASSERT_EQ(test, kbloom_test_saturated(&seq[r]), 0ULL);
		diff += !!memcmp(c.cores[r].bitmap, seq[r].bitmap,
				 kbloom_core_bytes(m, KBLOOM_CORE_COUNTING));
	}
	KUNIT_EXPECT_EQ_MSG(test, diff, 0U,
			    "%u of %u filters differ from the sequential run",
			    diff, KBLOOM_CONC_ROUNDS);
}

static struct kunit_case kbloom_concurrency_cases[] = {
	KUNIT_CASE(kbloom_concurrency_no_lost_keys),
	KUNIT_CASE(kbloom_concurrency_no_lost_keys_blocked),
	KUNIT_CASE(kbloom_concurrency_counting_matches_sequential),
	{}
};

static struct kunit_suite kbloom_concurrency_suite = {
	.name = "kbloom_concurrency",
	.test_cases = kbloom_concurrency_cases,
};

/* ---- kbloom_window ---- */

/* A windowed generation of @g slices of @m bits, seeded for replay. */
static struct kbloom_gen *kbloom_test_window(struct kunit *test, u32 g,
					     u64 m, u32 k, u32 flags)
{
	static const u32 seed[4] = { 0x1234, 0x5678, 0x9abc, 0xdef0 };
	struct kbloom_params p = {
		.nbits = m, .nhashes = k, .flags = flags, .generations = g,
		.seed = seed,
	};
	struct kbloom_gen *gen = kbloom_gen_new(&p);

	KUNIT_ASSERT_FALSE(test, IS_ERR(gen));
	return gen;
}

static bool kbloom_test_wdo(struct kbloom_gen *gen, enum kbloom_op op,
			    const u8 *key, u32 len)
{
	bool ret;

	rcu_read_lock();
	ret = kbloom_gen_do(gen, op, key, len);
	rcu_read_unlock();
	return ret;
}

/*
 * The guarantee, in rotations: a key added to the newest generation is
 * present after G - 1 rotations and gone (barring false positives, none
 * in a near-empty filter) after G. Checked for keys added at every point
 * of 40 rotations, for G = 2 to 16.
 */
static void kbloom_window_guarantee(struct kunit *test)
{
	const u32 g = *(const u32 *)test->param_value;
	struct kbloom_gen *gen = kbloom_test_window(test, g, 1 << 16, 5, 0);
	u32 r, j, len;
	u8 key[32];

	for (r = 0; r < 40; r++) {
		len = kbloom_test_key(key, 60, r);
		kbloom_test_wdo(gen, KBLOOM_OP_ADD, key, len);
		kbloom_window_rotate(gen->win);
		/* Every key added in the last G - 1 periods is there... */
		for (j = r >= g - 2 ? r - (g - 2) : 0; j <= r; j++) {
			bool in;

			len = kbloom_test_key(key, 60, j);
			in = kbloom_test_wdo(gen, KBLOOM_OP_QUERY, key, len);
			KUNIT_EXPECT_TRUE_MSG(test, in,
					      "G %u: key of period %u gone after rotation %u",
					      g, j, r);
		}
		/* ...and the one from G periods ago is not. */
		if (r >= g - 1) {
			bool in;

			len = kbloom_test_key(key, 60, r - (g - 1));
			in = kbloom_test_wdo(gen, KBLOOM_OP_QUERY, key, len);
			KUNIT_EXPECT_FALSE_MSG(test, in,
					       "G %u: key of period %u still there after rotation %u",
					       g, r - (g - 1), r);
		}
	}
	KUNIT_EXPECT_EQ(test, atomic64_read(&gen->win->rotations), 40LL);
	kbloom_gen_destroy(gen);
}

static const u32 kbloom_window_gens[] = { 2, 3, 4, 16 };

static void kbloom_window_gen_desc(const u32 *g, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "G=%u", *g);
}

KUNIT_ARRAY_PARAM(kbloom_window_gens, kbloom_window_gens,
		  kbloom_window_gen_desc);

/* test-and-add of a key only an older generation has: "seen", refreshed. */
static void kbloom_window_refresh(struct kunit *test)
{
	struct kbloom_gen *gen = kbloom_test_window(test, 4, 1 << 16, 5, 0);
	u8 key[32];
	u32 len = kbloom_test_key(key, 61, 1), r;

	KUNIT_EXPECT_FALSE(test, kbloom_test_wdo(gen, KBLOOM_OP_TEST_AND_ADD,
						 key, len));
	/* A flow that keeps sending, once every three periods, stays. */
	for (r = 0; r < 30; r++) {
		kbloom_window_rotate(gen->win);
		if (r % 3 == 2) {
			bool seen = kbloom_test_wdo(gen,
						    KBLOOM_OP_TEST_AND_ADD,
						    key, len);

			KUNIT_EXPECT_TRUE(test, seen);
		}
		KUNIT_EXPECT_TRUE(test, kbloom_test_wdo(gen, KBLOOM_OP_QUERY,
							key, len));
	}
	/* It stops: four rotations later it is forgotten. */
	for (r = 0; r < 4; r++)
		kbloom_window_rotate(gen->win);
	KUNIT_EXPECT_FALSE(test, kbloom_test_wdo(gen, KBLOOM_OP_QUERY, key,
						 len));
	kbloom_gen_destroy(gen);
}

/*
 * Counting: remove takes the key from every generation that has it, and
 * the occupancy counters of every generation stay exact through rotations.
 */
static void kbloom_window_counting_remove(struct kunit *test)
{
	struct kbloom_gen *gen = kbloom_test_window(test, 3, 4096, 4,
						    KBLOOM_CORE_COUNTING);
	u64 occ, stuck, o2, s2;
	u8 key[32];
	u32 len = kbloom_test_key(key, 62, 1), i;

	kbloom_test_wdo(gen, KBLOOM_OP_ADD, key, len);
	kbloom_window_rotate(gen->win);
	kbloom_test_wdo(gen, KBLOOM_OP_ADD, key, len);
	for (i = 0; i < 500; i++) {
		u8 other[32];

		kbloom_test_wdo(gen, KBLOOM_OP_ADD, other,
				kbloom_test_key(other, 63, i));
	}
	/* Added in two periods: one remove undoes one add, newest first. */
	KUNIT_EXPECT_TRUE(test, kbloom_test_wdo(gen, KBLOOM_OP_REMOVE, key,
						len));
	KUNIT_EXPECT_TRUE(test, kbloom_test_wdo(gen, KBLOOM_OP_QUERY, key,
						len));
	KUNIT_EXPECT_TRUE(test, kbloom_test_wdo(gen, KBLOOM_OP_REMOVE, key,
						len));
	KUNIT_EXPECT_FALSE(test, kbloom_test_wdo(gen, KBLOOM_OP_QUERY, key,
						 len));
	KUNIT_EXPECT_FALSE(test, kbloom_test_wdo(gen, KBLOOM_OP_REMOVE, key,
						 len));
	/* Saturate a counter, and see a rotation's clear count it back. */
	for (i = 0; i < 20; i++)
		kbloom_test_wdo(gen, KBLOOM_OP_ADD, key, len);
	kbloom_window_rotate(gen->win);
	kbloom_gen_lock(gen);
	for (i = 0; i < 3; i++) {
		kbloom_occ_read(kbloom_window_slice(gen->win, i)->occ, &occ,
				&stuck);
		kbloom_core_count(kbloom_gen_slice(gen, i), &o2, &s2);
		KUNIT_EXPECT_EQ_MSG(test, occ, o2, "generation %u", i);
		KUNIT_EXPECT_EQ_MSG(test, stuck, s2, "generation %u", i);
	}
	kbloom_gen_unlock(gen);
	kbloom_gen_destroy(gen);
}

/*
 * The false-positive rate over the union of G full generations is the
 * theory's 1 - (1 - f)^G, f the rate of one, within three sigma.
 */
static void kbloom_window_union_fpr(struct kunit *test)
{
	const u32 g = 4, n = 10000, q = 100000;
	u64 m, f, p, expect8, var16, sigma8, got8;
	struct kbloom_gen *gen;
	u32 k, i, j, fp = 0;
	u8 key[32];

	/* Each generation sized for n keys at 1% / G. */
	KUNIT_ASSERT_EQ(test, kbloom_size(n, kbloom_window_fpr(10000000, g),
					  &m, &k), 0);
	/* SipHash, the default: a keyed PRF, as the theory assumes. */
	gen = kbloom_test_window(test, g, m, k, KBLOOM_CORE_SIPHASH);
	for (j = 0; j < g; j++) {
		if (j)
			kbloom_window_rotate(gen->win);
		for (i = 0; i < n; i++)
			kbloom_test_wdo(gen, KBLOOM_OP_ADD, key,
					kbloom_test_key(key, 64 + j, i));
	}
	for (i = 0; i < q; i++)
		fp += kbloom_test_wdo(gen, KBLOOM_OP_QUERY, key,
				      kbloom_test_key(key, 80, i));
	kbloom_gen_destroy(gen);

	f = kbloom_fpr_q32(m, k, n);
	for (p = KBLOOM_Q32_ONE, j = 0; j < g; j++)
		p = mul_u64_u64_shr(p, KBLOOM_Q32_ONE - f, 32);
	p = KBLOOM_Q32_ONE - p;
	expect8 = ((u64)q * p) >> 24;
	var16 = mul_u64_u64_shr((u64)q * p, KBLOOM_Q32_ONE - p, 48);
	sigma8 = int_sqrt64(var16);
	got8 = (u64)fp << 8;
	kunit_info(test, "G %u, m %llu, k %u: %u false positives of %u, expected %llu (total target 1%%)\n",
		   g, m, k, fp, q, expect8 >> 8);
	KUNIT_EXPECT_LE(test, got8 > expect8 ? got8 - expect8 : expect8 - got8,
			3 * sigma8);
	/* And by theory the whole filter keeps the target it was sized for. */
	KUNIT_EXPECT_LE(test, p, KBLOOM_Q32_ONE / 100);
}

/*
 * Rotations race adds and lookups on every CPU: a key looked up right
 * after its own add is always found (at most one rotation can pass
 * between the two in practice; G = 3 allows two), and nothing splats.
 */
struct kbloom_window_race {
	struct kbloom_gen *gen;
	atomic_t stop;
	atomic_t lost;
};

static int kbloom_window_race_fn(void *arg)
{
	struct kbloom_window_race *r = arg;
	u32 i = 0, len;
	u8 key[32];

	while (!atomic_read(&r->stop)) {
		len = kbloom_test_key(key, 90 + smp_processor_id(), i++);
		kbloom_test_wdo(r->gen, KBLOOM_OP_TEST_AND_ADD, key, len);
		if (!kbloom_test_wdo(r->gen, KBLOOM_OP_QUERY, key, len))
			atomic_inc(&r->lost);
		cond_resched();
	}
	return 0;
}

static void kbloom_window_concurrency(struct kunit *test)
{
	struct kbloom_window_race r = {};
	struct task_struct *t[8];
	u32 cpu, n = 0, i;

	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two CPUs");
	r.gen = kbloom_test_window(test, 3, 1 << 20, 4, 0);
	for_each_online_cpu(cpu) {
		if (n == ARRAY_SIZE(t))
			break;
		t[n] = kthread_create(kbloom_window_race_fn, &r, "kbloom_w%u",
				      cpu);
		KUNIT_ASSERT_FALSE(test, IS_ERR(t[n]));
		kthread_bind(t[n], cpu);
		get_task_struct(t[n]);
		wake_up_process(t[n++]);
	}
	for (i = 0; i < 50; i++)
		kbloom_window_rotate(r.gen->win);
	atomic_set(&r.stop, 1);
	for (i = 0; i < n; i++) {
		kthread_stop(t[i]);
		put_task_struct(t[i]);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&r.lost), 0);
	kbloom_gen_destroy(r.gen);
}

/*
 * Rotate-at-fill, through the real work item: filling the newest
 * generation to its design capacity rotates once, exactly once however
 * many adds see it full, and the keys of the full generation stay.
 */
static void kbloom_window_rotate_at_fill(struct kunit *test)
{
	static const u32 seed[4] = { 1, 2, 3, 4 };
	struct kbloom_params p = {
		.capacity = 2000, .generations = 2, .rotate_at_fill = true,
		.seed = seed,
	};
	struct kbloom_gen *gen;
	u32 i, len;
	u8 key[32];

	KUNIT_ASSERT_EQ(test, kbloom_size(p.capacity, 10000000, &p.nbits,
					  &p.nhashes), 0);
	gen = kbloom_gen_new(&p);
	KUNIT_ASSERT_FALSE(test, IS_ERR(gen));
	KUNIT_ASSERT_GT(test, gen->win->fill_limit, 0ULL);
	kbloom_window_start(gen->win);	/* no period: fill only */
	for (i = 0; i < p.capacity / 2; i++)
		kbloom_test_wdo(gen, KBLOOM_OP_ADD, key,
				kbloom_test_key(key, 70, i));
	flush_delayed_work(&gen->win->work);
	KUNIT_EXPECT_EQ(test, atomic64_read(&gen->win->rotations), 0LL);
	/* Past capacity, with every CPU's look included. */
	for (; i < p.capacity * 3 / 2; i++)
		kbloom_test_wdo(gen, KBLOOM_OP_ADD, key,
				kbloom_test_key(key, 70, i));
	flush_delayed_work(&gen->win->work);
	KUNIT_EXPECT_EQ(test, atomic64_read(&gen->win->rotations), 1LL);
	/* A few more adds, the new newest far from full: no second one. */
	for (; i < p.capacity * 3 / 2 + 50; i++)
		kbloom_test_wdo(gen, KBLOOM_OP_ADD, key,
				kbloom_test_key(key, 70, i));
	flush_delayed_work(&gen->win->work);
	KUNIT_EXPECT_EQ(test, atomic64_read(&gen->win->rotations), 1LL);
	for (i = 0; i < p.capacity * 3 / 2 + 50; i++) {
		len = kbloom_test_key(key, 70, i);
		KUNIT_EXPECT_TRUE_MSG(test,
				      kbloom_test_wdo(gen, KBLOOM_OP_QUERY,
						      key, len),
				      "key %u lost", i);
	}
	/* The manual rotation waits for its own run. */
	kbloom_window_rotate_now(gen->win);
	KUNIT_EXPECT_EQ(test, atomic64_read(&gen->win->rotations), 2LL);
	kbloom_gen_destroy(gen);
}

static struct kunit_case kbloom_window_cases[] = {
	KUNIT_CASE_PARAM(kbloom_window_guarantee, kbloom_window_gens_gen_params),
	KUNIT_CASE(kbloom_window_refresh),
	KUNIT_CASE(kbloom_window_counting_remove),
	KUNIT_CASE(kbloom_window_rotate_at_fill),
	KUNIT_CASE(kbloom_window_union_fpr),
	KUNIT_CASE(kbloom_window_concurrency),
	{}
};

static struct kunit_suite kbloom_window_suite = {
	.name = "kbloom_window",
	.test_cases = kbloom_window_cases,
};

/*
 * Not kunit_test_suites(): on 6.1 that runs a module's suites from the
 * module notifier before the module's init has set anything up (no
 * workqueue, no sysfs), and on every load. kbloom runs them itself, last
 * in its init, and only when asked to.
 */
static struct kunit_suite *kbloom_kunit_suites[] = {
	&kbloom_hash_suite, &kbloom_registry_suite, &kbloom_concurrency_suite,
	&kbloom_window_suite,
};

static bool kbloom_kunit_ran;

void kbloom_kunit_run(void)
{
	__kunit_test_suites_init(kbloom_kunit_suites,
				 ARRAY_SIZE(kbloom_kunit_suites));
	kbloom_kunit_ran = true;
}

void kbloom_kunit_exit(void)
{
	if (kbloom_kunit_ran)
		__kunit_test_suites_exit(kbloom_kunit_suites,
					 ARRAY_SIZE(kbloom_kunit_suites));
}
