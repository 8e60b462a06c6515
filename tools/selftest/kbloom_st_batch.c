// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_selftest, area "batch": the batched calls, the false-positive
 * rate, partial failures. Included by kbloom_selftest.c.
 */

#define BATCH_F		"batch_f"
#define BATCH_TAA	"batch_taa"
#define BATCH_ERR	"batch_err"
#define BATCH_N		100000u

/* Ten fixed-size keys "<tag>-<i>" padded to 8 bytes, packed. */
static void make_keys8(char *buf, u32 *lens, const char *tag, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		char tmp[16];

		snprintf(tmp, sizeof(tmp), "%s-%u%s", tag, i, "________");
		memcpy(buf + 8 * i, tmp, 8);
		lens[i] = 8;
	}
}

FIXTURE(batch) {
};

/* The cases create their filters: how they are sized is part of the test. */
FIXTURE_SETUP(batch)
{
	st_open(_metadata);
	cleanup(_metadata, BATCH_F);
	cleanup(_metadata, BATCH_TAA);
}

FIXTURE_TEARDOWN(batch)
{
	cleanup(_metadata, BATCH_F);
	cleanup(_metadata, BATCH_TAA);
	st_close();
}

/* 100000 keys in one batch, and as many others for the false positives. */
TEST_F_TIMEOUT(batch, hundred_thousand_keys, 300)
{
	struct keyset a = { 0 }, b = { 0 };
	unsigned char *res = NULL;
	u64 adds = 0, queries = 0, hits = 0;
	struct kbloom_batch out;
	struct kbloom_create c;
	struct kbloom_info info;
	size_t rbytes = (BATCH_N + 7) / 8;
	u32 i, bad, fp = 0;
	double theory, rate;
	char detail[160];
	int err;

	if (!EXPECT_OK(kb_create(g_fd, BATCH_F, 0, 0, BATCH_N, 10000000, &c),
		       "batch: create %s (capacity 100000, 1%%)", BATCH_F))
		return;
	if (!keyset_gen(_metadata, &a, BATCH_N, 1, 0, 64) ||
	    !keyset_gen(_metadata, &b, BATCH_N, 2, 1, 64))
		goto out;
	res = malloc(rbytes);
	if (!EXPECT_COND(res != NULL, "out of memory", "batch: alloc results"))
		goto out;

	memset(res, 0xff, rbytes);
	err = kb_batch(g_fd, KBLOOM_IOC_ADD_BATCH, BATCH_F, a.keys, a.lens,
		       res, a.bytes, a.count, &out);
	if (EXPECT_OK(err, "batch: ADD_BATCH of 100000 keys")) {
		EXPECT_U64(out.done, a.count, "batch: ADD_BATCH done");
		EXPECT_U64(out.hits, 0, "batch: ADD_BATCH hits 0");
		EXPECT_U64(bits_count(res, a.count), 0,
			   "batch: ADD_BATCH result bits all 0");
		adds += out.done;
	}

	memset(res, 0, rbytes);
	err = kb_batch(g_fd, KBLOOM_IOC_QUERY_BATCH, BATCH_F, a.keys, a.lens,
		       res, a.bytes, a.count, &out);
	if (EXPECT_OK(err, "batch: QUERY_BATCH of the added keys")) {
		EXPECT_U64(out.done, a.count, "batch: QUERY_BATCH done");
		EXPECT_U64(out.hits, a.count,
			   "batch: QUERY_BATCH hits == count");
		bad = a.count - bits_count(res, a.count);
		EXPECT_U64(bad, 0,
			   "batch: no added key answers 0 (false negatives)");
		queries += out.done;
		hits += out.hits;
	}

	/* Some of the batch-added keys, one at a time. */
	bad = 0;
	for (i = 0; i < a.count; i += 997) {
		int r = query_one(_metadata, BATCH_F, a.keys + a.off[i],
				  a.lens[i]);

		if (r != 1)
			bad++;
		queries++;
		hits += r == 1;
	}
	EXPECT_U64(bad, 0, "batch: single QUERY agrees with ADD_BATCH");

	memset(res, 0, rbytes);
	err = kb_batch(g_fd, KBLOOM_IOC_QUERY_BATCH, BATCH_F, b.keys, b.lens,
		       res, b.bytes, b.count, &out);
	if (EXPECT_OK(err, "batch: QUERY_BATCH of 100000 other keys")) {
		EXPECT_U64(out.done, b.count, "batch: QUERY_BATCH done");
		fp = bits_count(res, b.count);
		EXPECT_U64(out.hits, fp, "batch: hits == result bits set");
		queries += out.done;
		hits += out.hits;
		/* (1 - e^(-kn/m))^k with the size the kernel chose. */
		theory = pow(1.0 - exp(-(double)c.hashes * BATCH_N /
				       (double)c.bits), c.hashes);
		rate = (double)fp / b.count;
		snprintf(detail, sizeof(detail),
			 "measured %.4f%%, theory %.4f%% (m %llu k %u)",
			 rate * 100, theory * 100,
			 (unsigned long long)c.bits, c.hashes);
		NOTE("batch: %s", detail);
		EXPECT_COND(rate >= 0.005 && rate <= 0.015, detail,
			    "batch: false-positive rate within 0.5%%..1.5%%");
		EXPECT_COND(rate >= theory * 0.5 && rate <= theory * 1.5,
			    detail,
			    "batch: false-positive rate within 50%% of theory");
	}

	/* results == 0: only hits wanted. */
	err = kb_batch(g_fd, KBLOOM_IOC_QUERY_BATCH, BATCH_F, a.keys, a.lens,
		       NULL, a.bytes, a.count, &out);
	if (EXPECT_OK(err, "batch: QUERY_BATCH with results 0")) {
		EXPECT_U64(out.done, a.count, "batch: results 0 done");
		EXPECT_U64(out.hits, a.count, "batch: results 0 hits");
		queries += out.done;
		hits += out.hits;
	}

	err = kb_info(g_fd, BATCH_F, &info);
	if (EXPECT_OK(err, "batch: INFO")) {
		EXPECT_U64(info.adds, adds, "batch: INFO adds");
		EXPECT_U64(info.queries, queries, "batch: INFO queries");
		EXPECT_U64(info.hits, hits, "batch: INFO hits");
		EXPECT_RANGE(info.bits_set, 1, (u64)c.hashes * adds,
			     "batch: INFO bits_set in 1..k*n");
	}
out:
	free(res);
	keyset_free(&a);
	keyset_free(&b);
}

TEST_F(batch, test_and_add)
{
	char keys[12 * 8];
	u32 lens[12], i;
	unsigned char res[2];
	struct kbloom_batch out;
	struct kbloom_info info;
	u32 bad;
	int err;

	err = kb_create(g_fd, BATCH_TAA, 1 << 20, 7, 0, 0, NULL);
	if (!EXPECT_OK(err, "batch: create %s", BATCH_TAA))
		return;
	/* Ten new keys, then keys 0 and 3 again within the same batch. */
	make_keys8(keys, lens, "taa", 10);
	memcpy(keys + 80, keys, 8);
	memcpy(keys + 88, keys + 24, 8);
	lens[10] = lens[11] = 8;

	memset(res, 0, sizeof(res));
	err = kb_batch(g_fd, KBLOOM_IOC_TEST_AND_ADD_BATCH, BATCH_TAA, keys,
		       lens, res, sizeof(keys), 12, &out);
	if (EXPECT_OK(err, "batch: TEST_AND_ADD_BATCH of 10 new + 2 repeats")) {
		EXPECT_U64(out.done, 12, "batch: TEST_AND_ADD_BATCH done");
		EXPECT_U64(out.hits, 2, "batch: TEST_AND_ADD_BATCH hits 2");
		EXPECT_COND(bits_count(res, 10) == 0, "a new key answered 1",
			    "batch: TEST_AND_ADD_BATCH new keys answer 0");
		EXPECT_COND(bit_get(res, 10) && bit_get(res, 11),
			    "a repeat answered 0",
			    "batch: a key repeated later in the batch answers 1");
	}
	memset(res, 0, sizeof(res));
	err = kb_batch(g_fd, KBLOOM_IOC_TEST_AND_ADD_BATCH, BATCH_TAA, keys,
		       lens, res, sizeof(keys), 12, &out);
	if (EXPECT_OK(err, "batch: TEST_AND_ADD_BATCH again")) {
		EXPECT_U64(out.hits, 12,
			   "batch: second TEST_AND_ADD_BATCH hits");
		EXPECT_U64(bits_count(res, 12), 12,
			   "batch: second TEST_AND_ADD_BATCH all 1");
	}
	bad = 0;
	for (i = 0; i < 10; i++)
		bad += query_one(_metadata, BATCH_TAA, keys + 8 * i, 8) != 1;
	EXPECT_U64(bad, 0, "batch: TEST_AND_ADD_BATCH added every key");
	err = kb_info(g_fd, BATCH_TAA, &info);
	if (EXPECT_OK(err, "batch: INFO %s", BATCH_TAA)) {
		EXPECT_U64(info.adds, 24, "batch: TEST_AND_ADD counts as adds");
		EXPECT_U64(info.queries, 34,
			   "batch: TEST_AND_ADD counts as queries");
		EXPECT_U64(info.hits, 24, "batch: TEST_AND_ADD hits counted");
	}
}

/* BATCH_ERR: 1 Mbit, 7 hashes, empty. */
FIXTURE(batch_errors) {
};

FIXTURE_SETUP(batch_errors)
{
	st_open(_metadata);
	cleanup(_metadata, BATCH_ERR);
	ASSERT_EQ(0, kb_create(g_fd, BATCH_ERR, 1 << 20, 7, 0, 0, NULL));
}

FIXTURE_TEARDOWN(batch_errors)
{
	cleanup(_metadata, BATCH_ERR);
	st_close();
}

TEST_F(batch_errors, count_and_size_limits)
{
	static const unsigned long cmds[] = {
		KBLOOM_IOC_ADD_BATCH, KBLOOM_IOC_QUERY_BATCH,
	};
	unsigned char res[2], *mkeys, *mres;
	u32 lens[10], *mlens, i;
	struct kbloom_batch out;
	struct kbloom_info info;
	char keys[10 * 8];
	const char *c;
	int err;

	/*
	 * count BATCH_MAX + 1 with real buffers behind it, so that E2BIG is
	 * the only possible complaint; and BATCH_MAX itself must work.
	 */
	make_keys8(keys, lens, "c0", 10);
	mlens = malloc(((size_t)KBLOOM_BATCH_MAX + 1) * sizeof(u32));
	mkeys = malloc((size_t)KBLOOM_BATCH_MAX + 1);
	mres = malloc(((size_t)KBLOOM_BATCH_MAX + 8) / 8);
	ASSERT_TRUE(mlens && mkeys && mres);
	for (i = 0; i <= KBLOOM_BATCH_MAX; i++) {
		mlens[i] = 1;
		mkeys[i] = (unsigned char)i;
	}
	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		c = cmd_name(cmds[i]);
		EXPECT_ERRNO(kb_batch(g_fd, cmds[i], BATCH_ERR, keys, lens, res,
				      sizeof(keys), 0, NULL),
			     EINVAL, "batch: %s count 0", c);
		EXPECT_ERRNO(kb_batch(g_fd, cmds[i], BATCH_ERR, mkeys, mlens,
				      mres, KBLOOM_BATCH_MAX + 1,
				      KBLOOM_BATCH_MAX + 1, NULL),
			     E2BIG, "batch: %s count BATCH_MAX + 1", c);
		/* keys_bytes over the limit, the lengths themselves fine. */
		EXPECT_ERRNO(kb_batch(g_fd, cmds[i], BATCH_ERR, keys, lens, res,
				      KBLOOM_BATCH_BYTES_MAX + 1, 1, NULL),
			     E2BIG, "batch: %s keys_bytes BATCH_BYTES_MAX + 1",
			     c);
	}
	err = kb_batch(g_fd, KBLOOM_IOC_QUERY_BATCH, BATCH_ERR, mkeys, mlens,
		       mres, KBLOOM_BATCH_MAX, KBLOOM_BATCH_MAX, &out);
	if (EXPECT_OK(err, "batch: QUERY_BATCH count BATCH_MAX"))
		EXPECT_U64(out.done, KBLOOM_BATCH_MAX,
			   "batch: BATCH_MAX keys all done");
	err = kb_info(g_fd, BATCH_ERR, &info);
	if (EXPECT_OK(err, "batch: INFO %s", BATCH_ERR))
		EXPECT_U64(info.adds, 0,
			   "batch: rejected batches added nothing");
	free(mlens);
	free(mkeys);
	free(mres);
}

/* A bad key half-way: the keys before it are done, none after it. */
TEST_F(batch_errors, partial_batches)
{
	struct kbloom_batch out;
	struct kbloom_info info;
	unsigned char res[2];
	char keys[10 * 8];
	u64 adds_before;
	u32 lens[10], i;
	u32 bad;
	int err;

	err = kb_info(g_fd, BATCH_ERR, &info);
	if (!EXPECT_OK(err, "batch: INFO %s", BATCH_ERR))
		return;
	adds_before = info.adds;

	/* A zero length at index 5: keys 0..4 added, 5.. not. */
	make_keys8(keys, lens, "zl", 10);
	lens[5] = 0;
	memset(res, 0xff, sizeof(res));
	err = kb_batch(g_fd, KBLOOM_IOC_ADD_BATCH, BATCH_ERR, keys, lens, res,
		       sizeof(keys), 10, &out);
	if (EXPECT_ERRNO(err, EINVAL, "batch: zero length at index 5")) {
		EXPECT_U64(out.done, 5, "batch: zero length: done == 5");
		/* The last byte written is whole: bits from done on are 0. */
		EXPECT_U64(res[0], 0x00,
			   "batch: result byte of keys 0..7 written, bits 5..7 zero");
		EXPECT_U64(res[1], 0xff,
			   "batch: result bytes after it untouched");
	}
	bad = 0;
	for (i = 0; i < 5; i++)
		bad += query_one(_metadata, BATCH_ERR, keys + 8 * i, 8) != 1;
	EXPECT_U64(bad, 0, "batch: keys before the bad length were added");
	bad = 0;
	for (i = 6; i < 10; i++)
		bad += query_one(_metadata, BATCH_ERR, keys + 8 * i, 8) != 0;
	EXPECT_U64(bad, 0, "batch: keys after the bad length were not added");

	/* A length over KEY_MAX at index 3. */
	{
		unsigned char *kb = calloc(1, 8 * 3 + KBLOOM_KEY_MAX + 1 + 8);
		u32 l2[5] = { 8, 8, 8, KBLOOM_KEY_MAX + 1, 8 };

		if (EXPECT_COND(kb != NULL, "out of memory", "batch: alloc")) {
			make_keys8((char *)kb, l2, "km", 3);
			l2[3] = KBLOOM_KEY_MAX + 1;
			l2[4] = 8;
			err = kb_batch(g_fd, KBLOOM_IOC_QUERY_BATCH, BATCH_ERR,
				       kb, l2, res,
				       8 * 3 + KBLOOM_KEY_MAX + 1 + 8, 5,
				       &out);
			if (EXPECT_ERRNO(err, EINVAL,
					 "batch: length KEY_MAX + 1 at index 3"))
				EXPECT_U64(out.done, 3,
					   "batch: long key: done == 3");
		}
		free(kb);
	}

	/* Index 7's length runs past keys_bytes. */
	make_keys8(keys, lens, "ov", 10);
	if (EXPECT_ERRNO(kb_batch(g_fd, KBLOOM_IOC_ADD_BATCH, BATCH_ERR, keys,
				  lens, res, 7 * 8 + 4, 10, &out),
			 EINVAL, "batch: length past keys_bytes at index 7"))
		EXPECT_U64(out.done, 7, "batch: overrun: done == 7");
	bad = 0;
	for (i = 0; i < 7; i++)
		bad += query_one(_metadata, BATCH_ERR, keys + 8 * i, 8) != 1;
	EXPECT_U64(bad, 0, "batch: keys before the overrun were added");
	bad = 0;
	for (i = 7; i < 10; i++)
		bad += query_one(_metadata, BATCH_ERR, keys + 8 * i, 8) != 0;
	EXPECT_U64(bad, 0, "batch: keys from the overrun on were not added");

	err = kb_info(g_fd, BATCH_ERR, &info);
	if (EXPECT_OK(err, "batch: INFO after the partial batches"))
		EXPECT_U64(info.adds, adds_before + 5 + 7,
			   "batch: INFO adds counts only the done keys");
}
