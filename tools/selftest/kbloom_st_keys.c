// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_selftest, area "keys": single-key ADD, QUERY and TEST_AND_ADD,
 * key lengths and bytes, statistics, CLEAR (and CLEAR racing adds), under
 * either hash scheme. Included by kbloom_selftest.c.
 */

#define KEYS_F "keys_f"
#define KEYS_SIP "keys_sip"

/* A fresh KEYS_F: 1 Mbit, 7 hashes, so a few keys give no false positive. */
FIXTURE(keys) {
};

FIXTURE_SETUP(keys)
{
	st_open(_metadata);
	cleanup(_metadata, KEYS_F);
	ASSERT_EQ(0, kb_create(g_fd, KEYS_F, 1 << 20, 7, 0, 0, NULL));
}

FIXTURE_TEARDOWN(keys)
{
	cleanup(_metadata, KEYS_F);
	cleanup(_metadata, KEYS_SIP);
	st_close();
}

/*
 * One key at a time, then INFO: its statistics count exactly the calls
 * made here, so they are one case.
 */
TEST_F(keys, single_key_calls)
{
#define S(s) s, sizeof(s) - 1
	static unsigned char big[KBLOOM_KEY_MAX], big_k[KBLOOM_KEY_MAX];
	static const unsigned char bin1[] = { 'a', 0, 'b', 0 };
	static const unsigned char bin2[] = { 'a', 0, 'c', 0 };
	const unsigned long add = KBLOOM_IOC_ADD, query = KBLOOM_IOC_QUERY;
	const unsigned long taa = KBLOOM_IOC_TEST_AND_ADD;
	const struct {
		unsigned long cmd;
		const void *key;
		u32 len, want;
		const char *what;
	} calls[] = {
		{ add, S("alpha"), 0, "ADD writes result 0" },
		{ query, S("alpha"), 1, "QUERY of an added key is 1" },
		{ query, S("beta"), 0, "never-added beta is absent" },
		{ query, S("gamma"), 0, "never-added gamma is absent" },
		{ query, S("alphA"), 0, "never-added alphA is absent" },
		{ query, S("alpha "), 0, "never-added \"alpha \" is absent" },
		{ query, S("lpha"), 0, "never-added lpha is absent" },
		{ taa, S("delta"), 0, "TEST_AND_ADD of a new key is 0" },
		{ taa, S("delta"), 1, "TEST_AND_ADD the second time is 1" },
		{ query, S("delta"), 1, "TEST_AND_ADD added the key" },
		/* The longest key: all of it is hashed, and its length too. */
		{ add, big, KBLOOM_KEY_MAX, 0, "ADD len KEY_MAX" },
		{ query, big, KBLOOM_KEY_MAX, 1, "KEY_MAX key present" },
		{ query, big_k, KBLOOM_KEY_MAX, 0,
		  "the last byte of a key is hashed" },
		{ query, big, KBLOOM_KEY_MAX - 1, 0,
		  "the length is part of the key" },
		/* Binary keys: embedded NULs are part of the key. */
		{ add, bin1, 4, 0, "ADD binary key a\\0b\\0" },
		{ query, bin1, 4, 1, "binary key present" },
		{ query, bin2, 4, 0, "bytes after a NUL are hashed" },
		{ query, bin1, 1, 0, "key is not cut at the NUL" },
	};
#undef S
	u64 adds = 0, queries = 0, hits = 0;
	struct kbloom_info info;
	size_t i;
	int err;

	memset(big, 'k', sizeof(big));
	memset(big_k, 'k', sizeof(big_k));
	big_k[KBLOOM_KEY_MAX - 1] = 'K';
	/* INFO counts a TEST_AND_ADD as an add and a query. */
	for (i = 0; i < ARRAY_SIZE(calls); i++) {
		EXPECT_KEY(g_fd, calls[i].cmd, KEYS_F, calls[i].key,
			   calls[i].len, calls[i].want, "keys: %s",
			   calls[i].what);
		adds += calls[i].cmd != query;
		queries += calls[i].cmd != add;
		hits += calls[i].cmd != add && calls[i].want;
	}

	/* Statistics, then CLEAR. */
	err = kb_info(g_fd, KEYS_F, &info);
	if (EXPECT_OK(err, "keys: INFO")) {
		EXPECT_U64(info.adds, adds, "keys: INFO adds");
		EXPECT_U64(info.queries, queries, "keys: INFO queries");
		EXPECT_U64(info.hits, hits, "keys: INFO hits");
		EXPECT_RANGE(info.bits_set, 1, 7 * adds,
			     "keys: INFO bits_set in 1..k*adds");
	}
	err = kb_clear(g_fd, KEYS_F);
	if (EXPECT_OK(err, "keys: CLEAR")) {
		err = kb_info(g_fd, KEYS_F, &info);
		if (EXPECT_OK(err, "keys: INFO after CLEAR")) {
			EXPECT_U64(info.bits_set, 0,
				   "keys: CLEAR zeroes bits_set");
			EXPECT_U64(info.adds, 0, "keys: CLEAR zeroes adds");
			EXPECT_U64(info.queries, 0,
				   "keys: CLEAR zeroes queries");
			EXPECT_U64(info.hits, 0, "keys: CLEAR zeroes hits");
			EXPECT_COND(info.bits == 1 << 20 && info.hashes == 7,
				    "size changed",
				    "keys: CLEAR keeps bits, hashes");
		}
		EXPECT_SKEY(g_fd, KBLOOM_IOC_QUERY, KEYS_F, "alpha", 0,
			    "keys: CLEAR removed alpha");
		EXPECT_SKEY(g_fd, KBLOOM_IOC_QUERY, KEYS_F, "delta", 0,
			    "keys: CLEAR removed delta");
		err = kb_info(g_fd, KEYS_F, &info);
		if (EXPECT_OK(err, "keys: INFO after the post-CLEAR queries"))
			EXPECT_COND(info.queries == 2 && info.hits == 0,
				    "counters wrong",
				    "keys: counting restarts after CLEAR");
	}
}

/* A SipHash filter finds every key it holds, and no other. */
TEST_F(keys, siphash_keys_found)
{
	struct keyset ks = { 0 }, other = { 0 };
	u32 i, res;

	cleanup(_metadata, KEYS_SIP);
	ASSERT_EQ(0, kb_create_scheme(g_fd, KEYS_SIP, 1 << 20, 7, 0,
				      KBLOOM_HASH_SIPHASH, NULL));
	ASSERT_TRUE(keyset_tag(_metadata, &ks, "sh", 1000));
	ASSERT_TRUE(keyset_tag(_metadata, &other, "nosh", 1000));
	ASSERT_TRUE(ks_add(_metadata, KEYS_SIP, &ks, 0, 900));
	for (i = 900; i < 1000; i++)
		ASSERT_EQ(0, kb_key(g_fd, KBLOOM_IOC_ADD, KEYS_SIP,
				    ks.keys + ks.off[i], ks.lens[i], NULL));
	EXPECT_EQ(1000L, ks_hits(_metadata, KEYS_SIP, &ks, 0, 1000));
	EXPECT_EQ(0, ks_query_each(_metadata, KEYS_SIP, &ks, 0, 1000, 1));
	/* 7000 of 2^20 bits set: a false positive is a 1e-15 event. */
	EXPECT_EQ(0L, ks_hits(_metadata, KEYS_SIP, &other, 0, 1000));
	ASSERT_EQ(0, kb_key(g_fd, KBLOOM_IOC_TEST_AND_ADD, KEYS_SIP, ks.keys,
			    ks.lens[0], &res));
	EXPECT_EQ(1U, res);
	check_counts(_metadata, KEYS_SIP, "siphash filter");
	keyset_free(&ks);
	keyset_free(&other);
}

/* ---- statistics under concurrent CLEARs ---- */

#define KEYS_RACE	"keys_race"
#define RACE_THREADS	4
#define RACE_KEYS	100000u
#define RACE_CHUNK	250u
#define RACE_CLEARS	50
#define RACE_BITS	(1ULL << 22)
#define RACE_AFTER	10000u	/* adds after the final CLEAR */

/* KEYS_RACE, plain or counting, 2^22 bits and 4 hashes, empty. */
FIXTURE(keys_clear_race) {
};

FIXTURE_VARIANT(keys_clear_race) {
	u32 flags;
};

FIXTURE_VARIANT_ADD(keys_clear_race, plain) { .flags = 0 };
FIXTURE_VARIANT_ADD(keys_clear_race, counting) {
	.flags = KBLOOM_CREATE_COUNTING
};

FIXTURE_SETUP(keys_clear_race)
{
	st_open(_metadata);
	cleanup(_metadata, KEYS_RACE);
	ASSERT_EQ(0, kb_create_ex(g_fd, KEYS_RACE, RACE_BITS, 4,
				  variant->flags, NULL, NULL));
}

FIXTURE_TEARDOWN(keys_clear_race)
{
	cleanup(_metadata, KEYS_RACE);
	st_close();
}

struct race_adder {
	pthread_t tid;
	int fd;
	int id;
	int err;
	u32 added;
};

static int race_go;

static void *race_adder_fn(void *arg)
{
	struct race_adder *a = arg;
	char keys[RACE_CHUNK * 24];
	u32 lens[RACE_CHUNK], j, k, pos;
	struct kbloom_batch b;

	while (!__atomic_load_n(&race_go, __ATOMIC_ACQUIRE))
		sched_yield();
	for (j = 0; j < RACE_KEYS; j += RACE_CHUNK) {
		for (k = 0, pos = 0; k < RACE_CHUNK; k++) {
			lens[k] = (u32)snprintf(keys + pos, 24, "st%d:%u",
						a->id, j + k);
			pos += lens[k];
		}
		a->err = kb_batch(a->fd, KBLOOM_IOC_ADD_BATCH, KEYS_RACE, keys,
				  lens, NULL, pos, RACE_CHUNK, &b);
		if (a->err)
			break;
		a->added += b.done;
	}
	return NULL;
}

struct race_clearer {
	pthread_t tid;
	int fd;
	int err;
	int clears;
	u64 max_adds, max_bits;	/* the largest INFO saw */
};

static void *race_clearer_fn(void *arg)
{
	struct race_clearer *c = arg;
	struct kbloom_info info;
	int i;

	while (!__atomic_load_n(&race_go, __ATOMIC_ACQUIRE))
		sched_yield();
	for (i = 0; i < RACE_CLEARS; i++) {
		c->err = kb_clear(c->fd, KEYS_RACE);
		if (c->err)
			break;
		c->clears++;
		c->err = kb_info(c->fd, KEYS_RACE, &info);
		if (c->err)
			break;
		if (info.adds > c->max_adds)
			c->max_adds = info.adds;
		if (info.bits_set > c->max_bits)
			c->max_bits = info.bits_set;
		sleep_ms(2);
	}
	return NULL;
}

/*
 * Adders on fds of their own while CLEARs run: no count ever exceeds what
 * was done, and once all is quiet the counters agree with the contents.
 */
TEST_F_TIMEOUT(keys_clear_race, clear_during_adds, 600)
{
	struct race_adder a[RACE_THREADS];
	struct race_clearer c;
	struct kbloom_info info;
	struct keyset ks = { 0 };
	u64 v;
	int i;
	u32 j;

	memset(a, 0, sizeof(a));
	memset(&c, 0, sizeof(c));
	__atomic_store_n(&race_go, 0, __ATOMIC_RELEASE);
	for (i = 0; i < RACE_THREADS; i++) {
		a[i].id = i;
		a[i].fd = open(DEV, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, a[i].fd);
		ASSERT_EQ(0, pthread_create(&a[i].tid, NULL, race_adder_fn,
					    &a[i]));
	}
	c.fd = open(DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, c.fd);
	ASSERT_EQ(0, pthread_create(&c.tid, NULL, race_clearer_fn, &c));
	__atomic_store_n(&race_go, 1, __ATOMIC_RELEASE);
	for (i = 0; i < RACE_THREADS; i++)
		pthread_join(a[i].tid, NULL);
	pthread_join(c.tid, NULL);
	for (i = 0; i < RACE_THREADS; i++) {
		EXPECT_EQ(0, a[i].err);
		EXPECT_EQ(RACE_KEYS, a[i].added);
		close(a[i].fd);
	}
	EXPECT_EQ(0, c.err);
	EXPECT_EQ(RACE_CLEARS, c.clears);
	close(c.fd);
	/* No count ever exceeded what was really done. */
	EXPECT_GE((u64)RACE_THREADS * RACE_KEYS, c.max_adds) {
		TH_LOG("INFO adds %llu after a CLEAR: more than were added",
		       (unsigned long long)c.max_adds);
	}
	EXPECT_GE(RACE_BITS, c.max_bits);
	/* The counters agree with the contents once all is quiet. */
	check_counts(_metadata, KEYS_RACE, "after the race");

	/* Quiescent: CLEAR, then exactly RACE_AFTER adds. */
	ASSERT_EQ(0, kb_clear(g_fd, KEYS_RACE));
	ASSERT_EQ(0, kb_info(g_fd, KEYS_RACE, &info));
	EXPECT_EQ(0ULL, info.adds);
	EXPECT_EQ(0ULL, info.queries);
	EXPECT_EQ(0ULL, info.hits);
	EXPECT_EQ(0ULL, info.bits_set);
	check_counts(_metadata, KEYS_RACE, "after the last CLEAR");
	ASSERT_TRUE(keyset_tag(_metadata, &ks, "after", RACE_AFTER));
	for (j = 0; j < 1000; j++)
		ASSERT_EQ(0, kb_key(g_fd, KBLOOM_IOC_ADD, KEYS_RACE,
				    ks.keys + ks.off[j], ks.lens[j], NULL));
	ASSERT_TRUE(ks_add(_metadata, KEYS_RACE, &ks, 1000, RACE_AFTER - 1000));
	ASSERT_EQ(0, kb_info(g_fd, KEYS_RACE, &info));
	EXPECT_EQ((u64)RACE_AFTER, info.adds);
	EXPECT_EQ(0ULL, info.queries);
	ASSERT_EQ(0, filter_attr(KEYS_RACE, "adds", &v));
	EXPECT_EQ((u64)RACE_AFTER, v);
	ASSERT_EQ(0, filter_attr(KEYS_RACE, "queries", &v));
	EXPECT_EQ(0ULL, v);
	check_counts(_metadata, KEYS_RACE, "after CLEAR and N adds");
	keyset_free(&ks);
}
