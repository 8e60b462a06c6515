// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_selftest, area "keys": single-key ADD, QUERY and TEST_AND_ADD,
 * key lengths and bytes, statistics, CLEAR. Included by
 * kbloom_selftest.c.
 */

#define KEYS_F "keys_f"

/* A fresh KEYS_F: 1 Mbit, 7 hashes, so a few keys give no false positive. */
FIXTURE(keys) {
};

FIXTURE_SETUP(keys)
{
	st_open(_metadata);
	cleanup(_metadata, KEYS_F);
	ASSERT_EQ(0, kb_create(g_fd, KEYS_F, 1 << 20, 7, 0, 0, NULL)) {
		TH_LOG("keys: create " KEYS_F);
	}
}

FIXTURE_TEARDOWN(keys)
{
	cleanup(_metadata, KEYS_F);
	st_close();
}

/*
 * One key at a time, then INFO: its statistics count exactly the calls
 * made here, so they are one case.
 */
TEST_F(keys, single_key_calls)
{
	static const char *const absent[] = {
		"beta", "gamma", "alphA", "alpha ", "lpha",
	};
	static const unsigned char bin1[] = { 'a', 0, 'b', 0 };
	static const unsigned char bin2[] = { 'a', 0, 'c', 0 };
	u64 adds = 0, queries = 0, hits = 0;
	struct kbloom_info info;
	unsigned char *big = NULL;
	u32 res;
	size_t i;
	int err;

	err = kb_skey(g_fd, KBLOOM_IOC_ADD, KEYS_F, "alpha", &res);
	if (EXPECT_OK(err, "keys: ADD alpha"))
		EXPECT_U64(res, 0, "keys: ADD writes result 0");
	adds++;
	err = kb_skey(g_fd, KBLOOM_IOC_QUERY, KEYS_F, "alpha", &res);
	if (EXPECT_OK(err, "keys: QUERY alpha"))
		EXPECT_U64(res, 1, "keys: QUERY of an added key is 1");
	queries++;
	hits++;
	for (i = 0; i < ARRAY_SIZE(absent); i++) {
		err = kb_skey(g_fd, KBLOOM_IOC_QUERY, KEYS_F, absent[i], &res);
		if (EXPECT_OK(err, "keys: QUERY \"%s\"", absent[i]))
			EXPECT_U64(res, 0, "keys: never-added \"%s\" is absent",
				   absent[i]);
		queries++;
	}

	err = kb_skey(g_fd, KBLOOM_IOC_TEST_AND_ADD, KEYS_F, "delta", &res);
	if (EXPECT_OK(err, "keys: TEST_AND_ADD delta (new)"))
		EXPECT_U64(res, 0, "keys: TEST_AND_ADD of a new key is 0");
	err = kb_skey(g_fd, KBLOOM_IOC_TEST_AND_ADD, KEYS_F, "delta", &res);
	if (EXPECT_OK(err, "keys: TEST_AND_ADD delta (again)"))
		EXPECT_U64(res, 1, "keys: TEST_AND_ADD the second time is 1");
	adds += 2;
	queries += 2;
	hits += 1;
	err = kb_skey(g_fd, KBLOOM_IOC_QUERY, KEYS_F, "delta", &res);
	if (EXPECT_OK(err, "keys: QUERY delta"))
		EXPECT_U64(res, 1, "keys: TEST_AND_ADD added the key");
	queries++;
	hits++;

	/* The longest key: all of it is hashed, and its length too. */
	big = malloc(KBLOOM_KEY_MAX + 1);
	if (!EXPECT_COND(big != NULL, "out of memory", "keys: alloc"))
		goto out;
	memset(big, 'k', KBLOOM_KEY_MAX + 1);
	err = kb_key(g_fd, KBLOOM_IOC_ADD, KEYS_F, big, KBLOOM_KEY_MAX, NULL);
	EXPECT_OK(err, "keys: ADD len KEY_MAX");
	adds++;
	err = kb_key(g_fd, KBLOOM_IOC_QUERY, KEYS_F, big, KBLOOM_KEY_MAX, &res);
	if (EXPECT_OK(err, "keys: QUERY len KEY_MAX"))
		EXPECT_U64(res, 1, "keys: KEY_MAX key present");
	queries++;
	hits++;
	/* The whole key is hashed: changing only its last byte matters. */
	big[KBLOOM_KEY_MAX - 1] = 'K';
	err = kb_key(g_fd, KBLOOM_IOC_QUERY, KEYS_F, big, KBLOOM_KEY_MAX, &res);
	if (EXPECT_OK(err, "keys: QUERY KEY_MAX key, last byte changed"))
		EXPECT_U64(res, 0, "keys: the last byte of a key is hashed");
	queries++;
	err = kb_key(g_fd, KBLOOM_IOC_QUERY, KEYS_F, big, KBLOOM_KEY_MAX - 1,
		     &res);
	if (EXPECT_OK(err, "keys: QUERY KEY_MAX key minus its last byte"))
		EXPECT_U64(res, 0, "keys: the length is part of the key");
	queries++;

	/* Binary keys: embedded NULs are part of the key. */
	err = kb_key(g_fd, KBLOOM_IOC_ADD, KEYS_F, bin1, sizeof(bin1), NULL);
	EXPECT_OK(err, "keys: ADD binary key a\\0b\\0");
	adds++;
	err = kb_key(g_fd, KBLOOM_IOC_QUERY, KEYS_F, bin1, sizeof(bin1), &res);
	if (EXPECT_OK(err, "keys: QUERY a\\0b\\0"))
		EXPECT_U64(res, 1, "keys: binary key present");
	queries++;
	hits++;
	err = kb_key(g_fd, KBLOOM_IOC_QUERY, KEYS_F, bin2, sizeof(bin2), &res);
	if (EXPECT_OK(err, "keys: QUERY a\\0c\\0"))
		EXPECT_U64(res, 0, "keys: bytes after a NUL are hashed");
	queries++;
	err = kb_key(g_fd, KBLOOM_IOC_QUERY, KEYS_F, bin1, 1, &res);
	if (EXPECT_OK(err, "keys: QUERY \"a\" (len 1)"))
		EXPECT_U64(res, 0, "keys: key is not cut at the NUL");
	queries++;

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
		err = kb_skey(g_fd, KBLOOM_IOC_QUERY, KEYS_F, "alpha", &res);
		if (EXPECT_OK(err, "keys: QUERY alpha after CLEAR"))
			EXPECT_U64(res, 0, "keys: CLEAR removed alpha");
		err = kb_skey(g_fd, KBLOOM_IOC_QUERY, KEYS_F, "delta", &res);
		if (EXPECT_OK(err, "keys: QUERY delta after CLEAR"))
			EXPECT_U64(res, 0, "keys: CLEAR removed delta");
		err = kb_info(g_fd, KEYS_F, &info);
		if (EXPECT_OK(err, "keys: INFO after the post-CLEAR queries"))
			EXPECT_COND(info.queries == 2 && info.hits == 0,
				    "counters wrong",
				    "keys: counting restarts after CLEAR");
	}
out:
	free(big);
}

TEST_F(keys, bad_lengths)
{
	unsigned char *big;
	int err;

	big = malloc(KBLOOM_KEY_MAX + 1);
	if (!EXPECT_COND(big != NULL, "out of memory", "keys: alloc"))
		return;
	memset(big, 'k', KBLOOM_KEY_MAX + 1);
	err = kb_key(g_fd, KBLOOM_IOC_ADD, KEYS_F, big, 0, NULL);
	EXPECT_ERRNO(err, EINVAL, "keys: ADD len 0");
	err = kb_key(g_fd, KBLOOM_IOC_QUERY, KEYS_F, big, 0, NULL);
	EXPECT_ERRNO(err, EINVAL, "keys: QUERY len 0");
	err = kb_key(g_fd, KBLOOM_IOC_TEST_AND_ADD, KEYS_F, big, 0, NULL);
	EXPECT_ERRNO(err, EINVAL, "keys: TEST_AND_ADD len 0");
	err = kb_key(g_fd, KBLOOM_IOC_ADD, KEYS_F, big, KBLOOM_KEY_MAX + 1,
		     NULL);
	EXPECT_ERRNO(err, EINVAL, "keys: ADD len KEY_MAX + 1");
	err = kb_key(g_fd, KBLOOM_IOC_QUERY, KEYS_F, big, KBLOOM_KEY_MAX + 1,
		     NULL);
	EXPECT_ERRNO(err, EINVAL, "keys: QUERY len KEY_MAX + 1");
	free(big);
}

TEST_F(keys, bad_pointers)
{
	void *hole;
	int err;

	err = kb_key(g_fd, KBLOOM_IOC_ADD, KEYS_F, NULL, 5, NULL);
	EXPECT_ERRNO(err, EFAULT, "keys: ADD key NULL");
	err = kb_key(g_fd, KBLOOM_IOC_QUERY, KEYS_F, NULL, 5, NULL);
	EXPECT_ERRNO(err, EFAULT, "keys: QUERY key NULL");
	err = kb_key(g_fd, KBLOOM_IOC_TEST_AND_ADD, KEYS_F, NULL, 5, NULL);
	EXPECT_ERRNO(err, EFAULT, "keys: TEST_AND_ADD key NULL");
	hole = unmapped_page(_metadata);
	if (hole) {
		err = kb_key(g_fd, KBLOOM_IOC_ADD, KEYS_F, hole, 5, NULL);
		EXPECT_ERRNO(err, EFAULT, "keys: ADD key unmapped");
	}
}
