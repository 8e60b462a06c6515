// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_selftest, area "counting": counting filters, REMOVE, saturation.
 * Included by kbloom_selftest.c.
 */

#define CNT_F		"counting_f"
#define CNT_PLAIN	"counting_plain"
#define CNT_BATCH	"counting_batch"
#define CNT_MODEL	"counting_model"
#define CNT_BITS	(1u << 16)
#define CNT_HASHES	4
#define MODEL_KEYS	300
#define MODEL_OPS	20000
/*
 * Model counts stay in 0..MODEL_CAP: even three keys sharing a counter
 * (expected 0.03 such triples for 900 positions in 2^16) stay below
 * KBLOOM_COUNTER_MAX, so the model never saturates and is exact.
 */
#define MODEL_CAP	4

/* CNT_F: a fresh counting filter; self->c is what CREATE wrote back. */
FIXTURE(counting) {
	struct kbloom_create c;
};

FIXTURE_SETUP(counting)
{
	st_open(_metadata);
	cleanup(_metadata, CNT_F);
	cleanup(_metadata, CNT_PLAIN);
	ASSERT_EQ(0, kb_create_ex(g_fd, CNT_F, CNT_BITS, CNT_HASHES,
				  KBLOOM_CREATE_COUNTING, NULL, &self->c));
}

FIXTURE_TEARDOWN(counting)
{
	cleanup(_metadata, CNT_F);
	cleanup(_metadata, CNT_PLAIN);
	st_close();
}

TEST_F(counting, created)
{
	struct kbloom_info info;
	int err;

	EXPECT_COND(self->c.bits == CNT_BITS && self->c.hashes == CNT_HASHES,
		    "size changed",
		    "counting: CREATE wrote back bits and hashes");
	err = kb_info(g_fd, CNT_F, &info);
	if (EXPECT_OK(err, "counting: INFO %s", CNT_F)) {
		EXPECT_U64(info.flags, KBLOOM_CREATE_COUNTING,
			   "counting: INFO flags is COUNTING");
		EXPECT_U64(info.memory_bytes, payload_size(CNT_BITS, true),
			   "counting: INFO memory_bytes is 4 bits a counter, in 64-bit words");
		EXPECT_COND(info.bits_set == 0 && info.saturated == 0,
			    "not zero",
			    "counting: fresh bits_set and saturated 0");
	}
}

/* 20 adds saturate the key's counters at 15: they stick there. */
TEST_F(counting, saturation)
{
	struct kbloom_info info, before;
	int err;

	add_n(_metadata, CNT_F, "satkey", 20);
	err = kb_info(g_fd, CNT_F, &info);
	if (EXPECT_OK(err, "counting: INFO after 20 adds")) {
		EXPECT_RANGE(info.saturated, 1, CNT_HASHES,
			     "counting: saturated is 1..k after 20 adds of one key");
		EXPECT_U64(info.bits_set, info.saturated,
			   "counting: the only key's counters are all saturated");
	}
	before = info;
	remove_n(_metadata, CNT_F, "satkey", 20);
	EXPECT_SKEY(g_fd, KBLOOM_IOC_QUERY, CNT_F, "satkey", 1,
		    "counting: saturated key still present after 20 adds and 20 removes");
	err = kb_info(g_fd, CNT_F, &info);
	if (EXPECT_OK(err, "counting: INFO after the 20 removes"))
		EXPECT_COND(info.saturated == before.saturated &&
			    info.bits_set == before.bits_set,
			    "counters changed",
			    "counting: saturated counters are never decremented");
}

/* Once in, once out: gone; a second remove is refused. */
TEST_F(counting, remove_once)
{
	struct kbloom_info info, before;
	u32 res;
	int err;

	add_n(_metadata, CNT_F, "other", 1);
	add_n(_metadata, CNT_F, "once", 1);
	err = kb_info(g_fd, CNT_F, &before);
	EXPECT_OK(err, "counting: INFO before removing once");
	EXPECT_SKEY(g_fd, KBLOOM_IOC_REMOVE, CNT_F, "once", 1,
		    "counting: REMOVE of a present key is 1");
	EXPECT_SKEY(g_fd, KBLOOM_IOC_QUERY, CNT_F, "once", 0,
		    "counting: added once, removed once: absent");
	err = kb_info(g_fd, CNT_F, &info);
	if (EXPECT_OK(err, "counting: INFO after removing once"))
		EXPECT_RANGE(info.bits_set, before.bits_set - CNT_HASHES,
			     before.bits_set - 1,
			     "counting: the remove cleared 1..k counters");
	before = info;
	EXPECT_SKEY(g_fd, KBLOOM_IOC_REMOVE, CNT_F, "once", 0,
		    "counting: REMOVE of an absent key is refused (0)");
	EXPECT_SKEY(g_fd, KBLOOM_IOC_REMOVE, CNT_F, "never-added", 0,
		    "counting: REMOVE of a never-added key is 0");
	err = kb_info(g_fd, CNT_F, &info);
	if (EXPECT_OK(err, "counting: INFO after the refused removes"))
		EXPECT_COND(info.bits_set == before.bits_set &&
			    info.saturated == before.saturated,
			    "counters changed",
			    "counting: refused removes changed nothing");
	err = kb_skey(g_fd, KBLOOM_IOC_QUERY, CNT_F, "other", &res);
	EXPECT_COND(err == 0 && res == 1, "other lost",
		    "counting: refused removes kept the other key");
}

/* A plain filter cannot remove. */
TEST_F(counting, plain_filter)
{
	int err;

	err = kb_create(g_fd, CNT_PLAIN, CNT_BITS, CNT_HASHES, 0, 0, NULL);
	if (EXPECT_OK(err, "counting: create plain %s", CNT_PLAIN)) {
		add_n(_metadata, CNT_PLAIN, "other", 1);
		EXPECT_ERRNO(kb_skey(g_fd, KBLOOM_IOC_REMOVE, CNT_PLAIN,
				     "other", NULL),
			     EOPNOTSUPP, "counting: REMOVE on a plain filter");
		err = kb_batch(g_fd, KBLOOM_IOC_REMOVE_BATCH, CNT_PLAIN,
			       "other", (u32[]){ 5 }, NULL, 5, 1, NULL);
		EXPECT_ERRNO(err, EOPNOTSUPP,
			     "counting: REMOVE_BATCH on a plain filter");
		EXPECT_SKEY(g_fd, KBLOOM_IOC_QUERY, CNT_PLAIN, "other", 1,
			    "counting: refused plain REMOVEs kept the key");
	}
}

TEST_F(counting, read_only_fd)
{
	int err, ro;

	add_n(_metadata, CNT_F, "other", 1);
	/* A read-only fd cannot remove. */
	ro = open(DEV, O_RDONLY);
	if (EXPECT_COND(ro >= 0, strerror(errno), "counting: open O_RDONLY")) {
		err = kb_skey(ro, KBLOOM_IOC_REMOVE, CNT_F, "other", NULL);
		EXPECT_ERRNO(err, EBADF, "counting: REMOVE on a read-only fd");
		EXPECT_ERRNO(kb_batch(ro, KBLOOM_IOC_REMOVE_BATCH, CNT_F,
				      "other", (u32[]){ 5 }, NULL, 5, 1, NULL),
			     EBADF, "counting: REMOVE_BATCH on a read-only fd");
		EXPECT_SKEY(ro, KBLOOM_IOC_QUERY, CNT_F, "other", 1,
			    "counting: read-only REMOVEs removed nothing");
		close(ro);
	}
}

/* The filters of these cases are theirs to create. */
FIXTURE(counting_keysets) {
};

FIXTURE_SETUP(counting_keysets)
{
	st_open(_metadata);
	cleanup(_metadata, CNT_BATCH);
	cleanup(_metadata, CNT_MODEL);
}

FIXTURE_TEARDOWN(counting_keysets)
{
	cleanup(_metadata, CNT_BATCH);
	cleanup(_metadata, CNT_MODEL);
	st_close();
}

TEST_F(counting_keysets, remove_batch)
{
	struct keyset ks = { 0 };
	struct kbloom_batch out;
	unsigned char bm[1000 / 8 + 1];
	u32 round, want;
	int err;

	/* 2^18 counters, 4000 positions in use: false positives ~1e-7. */
	err = kb_create_ex(g_fd, CNT_BATCH, 1u << 18, CNT_HASHES,
			   KBLOOM_CREATE_COUNTING, NULL, NULL);
	if (!EXPECT_OK(err, "counting: create %s", CNT_BATCH))
		return;
	if (!keyset_tag(_metadata, &ks, "rb", 1000) ||
	    !ks_add(_metadata, CNT_BATCH, &ks, 0, 1000))
		goto out;
	/*
	 * Keys 0 .. 499 removed; then again, when every one is absent and
	 * so every remove is refused. Keys 500 .. 999 stay either way.
	 */
	for (round = 0; round < 2; round++) {
		want = round ? 0 : 500;
		memset(bm, round ? 0xff : 0, sizeof(bm));
		err = ks_batch(g_fd, KBLOOM_IOC_REMOVE_BATCH, CNT_BATCH, &ks,
			       0, 500, bm, &out);
		if (EXPECT_OK(err, "counting: REMOVE_BATCH %u", round)) {
			EXPECT_U64(out.done, 500,
				   "counting: REMOVE_BATCH %u done", round);
			EXPECT_U64(out.hits, want,
				   "counting: REMOVE_BATCH %u hits", round);
			EXPECT_U64(bits_count(bm, 500), want,
				   "counting: REMOVE_BATCH %u result bits",
				   round);
		}
		EXPECT_U64(ks_hits(_metadata, CNT_BATCH, &ks, 0, 500), 0,
			   "counting: the 500 removed keys are absent");
		EXPECT_U64(ks_hits(_metadata, CNT_BATCH, &ks, 500, 500), 500,
			   "counting: the 500 other keys are present");
	}
out:
	keyset_free(&ks);
}

/* Random adds and removes against an exact multiset model. */
TEST_F_TIMEOUT(counting_keysets, model, 300)
{
	struct keyset ks = { 0 };
	struct kbloom_info info;
	u32 counts[MODEL_KEYS] = { 0 };
	u32 i, res, npos = 0, nzero = 0, fneg = 0, zhit = 0;
	struct fails fadd = { 0 }, frm = { 0 };
	int err;
	u64 s = 12345;
	char detail[160];

	err = kb_create_ex(g_fd, CNT_MODEL, CNT_BITS, 3,
			   KBLOOM_CREATE_COUNTING, NULL, NULL);
	if (!EXPECT_OK(err, "counting: create %s", CNT_MODEL))
		return;
	if (!keyset_tag(_metadata, &ks, "mk", MODEL_KEYS))
		goto out;
	for (i = 0; i < MODEL_OPS; i++) {
		u64 r = rng_next(&s);
		u32 k = (u32)(r % MODEL_KEYS);
		bool add = counts[k] == 0 ||
			   (counts[k] < MODEL_CAP && ((r >> 32) & 1));
		const unsigned char *key = ks.keys + ks.off[k];

		if (add) {
			err = kb_key(g_fd, KBLOOM_IOC_ADD, CNT_MODEL, key,
				     ks.lens[k], &res);
			if (err || res != 0)
				fail_note(&fadd, "ADD", err);
			else
				counts[k]++;
		} else {
			/* Only keys the model holds: each must go. */
			err = kb_key(g_fd, KBLOOM_IOC_REMOVE, CNT_MODEL, key,
				     ks.lens[k], &res);
			if (err || res != 1)
				fail_note(&frm, "REMOVE", err);
			else
				counts[k]--;
		}
	}
	EXPECT_NO_FAILS(&fadd, "counting: model: every ADD succeeded");
	EXPECT_NO_FAILS(&frm,
			"counting: model: every REMOVE of a held key answered 1");
	for (i = 0; i < MODEL_KEYS; i++) {
		int r = query_one(_metadata, CNT_MODEL, ks.keys + ks.off[i],
				  ks.lens[i]);

		if (counts[i]) {
			npos++;
			fneg += r != 1;
		} else {
			nzero++;
			zhit += r == 1;
		}
	}
	EXPECT_U64(fneg, 0,
		   "counting: model: every key with count > 0 is present");
	snprintf(detail, sizeof(detail), "%u of %u count-0 keys present", zhit,
		 nzero);
	NOTE("counting: model: %s", detail);
	EXPECT_COND(zhit * 50 <= nzero, detail,
		    "counting: model: at most 2%% of count-0 keys present");
	err = kb_info(g_fd, CNT_MODEL, &info);
	if (EXPECT_OK(err, "counting: model: INFO")) {
		EXPECT_RANGE(info.bits_set, npos ? 1 : 0, 3 * (u64)npos,
			     "counting: model: bits_set (non-zero counters) <= k * held keys");
		EXPECT_U64(info.saturated, 0,
			   "counting: model: no counter saturated (counts <= %u)",
			   MODEL_CAP);
	}
out:
	keyset_free(&ks);
}
