// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_selftest, area "merge": CREATE with KBLOOM_CREATE_LIKE, MERGE,
 * and what makes two filters incompatible. Included by kbloom_selftest.c.
 */

#define MRG_A		"merge_a"
#define MRG_B		"merge_b"
#define MRG_IND		"merge_ind"
#define MRG_BITS	"merge_bits"
#define MRG_HASH	"merge_hashes"
#define MRG_C		"merge_c"
#define MRG_D		"merge_d"
#define MRG_E		"merge_e"
#define MRG_F		"merge_f"
#define MRG_BAD		"merge_bad"
#define MRG_KEYS	2000u

/* MERGE or COMPARE that must fail EINVAL with exactly @want mismatch. */
static void merge_mismatch(struct __test_metadata *_metadata, unsigned long cmd,
			   const char *dst, const char *src, u32 want,
			   const char *what)
{
	struct kbloom_merge m;
	int err = kb_merge(g_fd, cmd, dst, src, &m);
	const char *c = cmd == KBLOOM_IOC_MERGE ? "MERGE" : "COMPARE";

	if (EXPECT_ERRNO(err, EINVAL, "merge: %s %s <- %s (%s)", c, dst, src,
			 what))
		EXPECT_U64(m.mismatch, want, "merge: %s %s mismatch", c, what);
}

/* CREATE that must fail; nothing may be left behind. */
static void merge_create_fails(struct __test_metadata *_metadata, u64 bits,
			       u32 hashes, u64 cap, u32 fpr, u32 flags,
			       const char *like, int want, const char *what)
{
	struct kbloom_info info;

	EXPECT_ERRNO(kb_create_all(g_fd, MRG_BAD, bits, hashes, cap, fpr, flags,
				   like, 0, NULL),
		     want, "merge: create %s", what);
	EXPECT_ERRNO(kb_info(g_fd, MRG_BAD, &info), ENOENT,
		     "merge: create %s made nothing", what);
	cleanup(_metadata, MRG_BAD);
}

static const char *const merge_all[] = {
	MRG_A, MRG_B, MRG_IND, MRG_BITS, MRG_HASH, MRG_C, MRG_D,
	MRG_E, MRG_F, MRG_BAD,
};

/*
 * MRG_A (100000 bits, 5 hashes) and MRG_B created like it, both empty;
 * self->c is what CREATE wrote back for MRG_B.
 */
FIXTURE(merge) {
	struct kbloom_create c;
};

FIXTURE_SETUP(merge)
{
	st_open(_metadata);
	cleanup_all(merge_all);
	ASSERT_EQ(0, kb_create(g_fd, MRG_A, 100000, 5, 0, 0, NULL));
	ASSERT_EQ(0, kb_create_ex(g_fd, MRG_B, 0, 0, KBLOOM_CREATE_LIKE,
				  MRG_A, &self->c));
}

FIXTURE_TEARDOWN(merge)
{
	cleanup_all(merge_all);
	st_close();
}

TEST_F(merge, like_copies_the_parameters)
{
	struct kbloom_info ia, ib;
	int err;

	EXPECT_COND(self->c.bits == 100000 && self->c.hashes == 5,
		    "not the source's",
		    "merge: LIKE wrote back bits 100000 hashes 5");
	EXPECT_OK(kb_info(g_fd, MRG_A, &ia), "merge: INFO %s", MRG_A);
	err = kb_info(g_fd, MRG_B, &ib);
	if (EXPECT_OK(err, "merge: INFO %s", MRG_B)) {
		EXPECT_COND(ib.bits == ia.bits && ib.hashes == ia.hashes &&
			    ib.capacity == ia.capacity &&
			    ib.hash_scheme == ia.hash_scheme,
			    "differs",
			    "merge: INFO of the LIKE filter matches");
		EXPECT_U64(ib.flags & KBLOOM_CREATE_COUNTING, 0,
			   "merge: LIKE a plain filter is plain");
		EXPECT_U64(ib.bits_set, 0, "merge: LIKE copies no contents");
	}
}

TEST_F(merge, union)
{
	struct keyset s1 = { 0 }, s2 = { 0 };
	struct kbloom_info ia, ib, info;
	struct kbloom_merge m;
	int err;

	if (!keyset_tag(_metadata, &s1, "s1", MRG_KEYS) ||
	    !keyset_tag(_metadata, &s2, "s2", MRG_KEYS) ||
	    !ks_add(_metadata, MRG_A, &s1, 0, MRG_KEYS) ||
	    !ks_add(_metadata, MRG_B, &s2, 0, MRG_KEYS))
		goto out;
	EXPECT_OK(kb_info(g_fd, MRG_A, &ia), "merge: INFO %s before", MRG_A);
	EXPECT_OK(kb_info(g_fd, MRG_B, &ib), "merge: INFO %s before", MRG_B);

	err = kb_merge(g_fd, KBLOOM_IOC_MERGE, MRG_A, MRG_B, &m);
	if (EXPECT_OK(err, "merge: MERGE %s <- %s", MRG_A, MRG_B))
		EXPECT_U64(m.mismatch, 0, "merge: MERGE mismatch 0");
	EXPECT_U64((u64)ks_hits(_metadata, MRG_A, &s1, 0, MRG_KEYS),
		   MRG_KEYS, "merge: %s keeps its own keys", MRG_A);
	EXPECT_U64((u64)ks_hits(_metadata, MRG_A, &s2, 0, MRG_KEYS),
		   MRG_KEYS, "merge: %s has every key of %s", MRG_A, MRG_B);
	err = kb_info(g_fd, MRG_A, &info);
	if (EXPECT_OK(err, "merge: INFO %s after", MRG_A))
		EXPECT_RANGE(info.bits_set, ia.bits_set > ib.bits_set ?
			     ia.bits_set : ib.bits_set,
			     ia.bits_set + ib.bits_set,
			     "merge: bits_set of the union in max..sum");
	err = kb_info(g_fd, MRG_B, &info);
	if (EXPECT_OK(err, "merge: INFO %s after", MRG_B))
		EXPECT_U64(info.bits_set, ib.bits_set,
			   "merge: the source's bits_set unchanged");
	/* B at 9.5% fill: 5 hashes give false positives ~1e-5. */
	EXPECT_RANGE((u64)ks_hits(_metadata, MRG_B, &s1, 0, MRG_KEYS), 0, 20,
		     "merge: the source did not receive the destination's keys");

	/* dst == src: allowed, and ORing a filter into itself is a no-op. */
	err = kb_info(g_fd, MRG_A, &ia);
	EXPECT_OK(err, "merge: INFO %s before the self-merge", MRG_A);
	err = kb_merge(g_fd, KBLOOM_IOC_MERGE, MRG_A, MRG_A, &m);
	if (EXPECT_OK(err, "merge: MERGE %s <- itself", MRG_A))
		EXPECT_U64(m.mismatch, 0, "merge: self-MERGE mismatch 0");
	err = kb_info(g_fd, MRG_A, &info);
	if (EXPECT_OK(err, "merge: INFO %s after the self-merge", MRG_A))
		EXPECT_U64(info.bits_set, ia.bits_set,
			   "merge: self-merge changed no bit");
out:
	keyset_free(&s1);
	keyset_free(&s2);
}

/* Incompatible filters: each differing parameter is reported. */
TEST_F(merge, mismatches)
{
	int err;

	err = kb_create(g_fd, MRG_IND, 100000, 5, 0, 0, NULL);
	if (EXPECT_OK(err, "merge: create independent %s", MRG_IND)) {
		merge_mismatch(_metadata, KBLOOM_IOC_MERGE, MRG_A, MRG_IND,
			       KBLOOM_MISMATCH_SEED,
			       "same size, independent seed");
		merge_mismatch(_metadata, KBLOOM_IOC_COMPARE, MRG_A, MRG_IND,
			       KBLOOM_MISMATCH_SEED,
			       "same size, independent seed");
	}
	err = kb_create(g_fd, MRG_BITS, 100064, 5, 0, 0, NULL);
	if (EXPECT_OK(err, "merge: create %s", MRG_BITS))
		merge_mismatch(_metadata, KBLOOM_IOC_MERGE, MRG_A, MRG_BITS,
			       KBLOOM_MISMATCH_BITS | KBLOOM_MISMATCH_SEED,
			       "different bits");
	err = kb_create(g_fd, MRG_HASH, 100000, 6, 0, 0, NULL);
	if (EXPECT_OK(err, "merge: create %s", MRG_HASH))
		merge_mismatch(_metadata, KBLOOM_IOC_MERGE, MRG_A, MRG_HASH,
			       KBLOOM_MISMATCH_HASHES | KBLOOM_MISMATCH_SEED,
			       "different hashes");
	err = kb_create_ex(g_fd, MRG_C, 1 << 16, 4, KBLOOM_CREATE_COUNTING,
			   NULL, NULL);
	EXPECT_OK(err, "merge: create counting %s", MRG_C);
	err = kb_create(g_fd, MRG_D, 1 << 16, 4, 0, 0, NULL);
	if (EXPECT_OK(err, "merge: create plain %s", MRG_D)) {
		merge_mismatch(_metadata, KBLOOM_IOC_MERGE, MRG_C, MRG_D,
			       KBLOOM_MISMATCH_COUNTING | KBLOOM_MISMATCH_SEED,
			       "counting <- plain");
		merge_mismatch(_metadata, KBLOOM_IOC_MERGE, MRG_D, MRG_C,
			       KBLOOM_MISMATCH_COUNTING | KBLOOM_MISMATCH_SEED,
			       "plain <- counting");
	}
}

/* Unknown and bad names, a read-only fd: refused, and A left alone. */
TEST_F(merge, errors)
{
	struct kbloom_info ia, info;
	int err, ro;

	err = kb_info(g_fd, MRG_A, &ia);
	EXPECT_OK(err, "merge: INFO %s before the rejected calls", MRG_A);

	err = kb_merge(g_fd, KBLOOM_IOC_MERGE, "merge_ghost", MRG_B, NULL);
	EXPECT_ERRNO(err, ENOENT, "merge: MERGE unknown dst");
	err = kb_merge(g_fd, KBLOOM_IOC_MERGE, MRG_A, "merge_ghost", NULL);
	EXPECT_ERRNO(err, ENOENT, "merge: MERGE unknown src");
	err = kb_merge(g_fd, KBLOOM_IOC_COMPARE, "merge_ghost", MRG_B, NULL);
	EXPECT_ERRNO(err, ENOENT, "merge: COMPARE unknown dst");
	err = kb_merge(g_fd, KBLOOM_IOC_COMPARE, MRG_A, "merge_ghost", NULL);
	EXPECT_ERRNO(err, ENOENT, "merge: COMPARE unknown src");
	err = kb_merge(g_fd, KBLOOM_IOC_MERGE, "", MRG_B, NULL);
	EXPECT_ERRNO(err, EINVAL, "merge: MERGE empty dst name");
	err = kb_merge(g_fd, KBLOOM_IOC_MERGE, MRG_A, ".b", NULL);
	EXPECT_ERRNO(err, EINVAL, "merge: MERGE bad src name");
	/* (Reserved fields: in the badioctl area's table.) */

	/* A read-only fd may not merge (it may compare: the compare area). */
	ro = open(DEV, O_RDONLY);
	if (EXPECT_COND(ro >= 0, strerror(errno), "merge: open O_RDONLY")) {
		err = kb_skey(g_fd, KBLOOM_IOC_ADD, MRG_B, "ro-only-in-b",
			      NULL);
		EXPECT_OK(err, "merge: add ro-only-in-b to %s", MRG_B);
		err = kb_merge(ro, KBLOOM_IOC_MERGE, MRG_A, MRG_B, NULL);
		EXPECT_ERRNO(err, EBADF, "merge: MERGE on a read-only fd");
		EXPECT_SKEY(g_fd, KBLOOM_IOC_QUERY, MRG_A, "ro-only-in-b", 0,
			    "merge: the read-only MERGE changed nothing");
		close(ro);
	}
	err = kb_info(g_fd, MRG_A, &info);
	if (EXPECT_OK(err, "merge: INFO %s after the errors", MRG_A))
		EXPECT_U64(info.bits_set, ia.bits_set,
			   "merge: failed merges left %s's bits alone", MRG_A);
}

TEST_F(merge, create_like_refusals)
{
	EXPECT_OK(kb_create_ex(g_fd, MRG_C, 1 << 16, 4, KBLOOM_CREATE_COUNTING,
			       NULL, NULL),
		  "merge: create counting %s", MRG_C);
	/* CREATE with KBLOOM_CREATE_LIKE: what it refuses. */
	merge_create_fails(_metadata, 1024, 0, 0, 0, KBLOOM_CREATE_LIKE, MRG_A,
			   EINVAL, "LIKE with bits");
	merge_create_fails(_metadata, 0, 5, 0, 0, KBLOOM_CREATE_LIKE, MRG_A,
			   EINVAL, "LIKE with hashes");
	merge_create_fails(_metadata, 0, 0, 1000, 0, KBLOOM_CREATE_LIKE, MRG_A,
			   EINVAL, "LIKE with capacity");
	merge_create_fails(_metadata, 0, 0, 0, 10000000, KBLOOM_CREATE_LIKE,
			   MRG_A, EINVAL, "LIKE with fpr_ppb");
	merge_create_fails(_metadata, 0, 0, 0, 0, KBLOOM_CREATE_LIKE,
			   "merge_ghost", ENOENT, "LIKE an unknown filter");
	merge_create_fails(_metadata, 0, 0, 0, 0, KBLOOM_CREATE_LIKE, "",
			   EINVAL, "LIKE with an empty like name");
	merge_create_fails(_metadata, 0, 0, 0, 0, KBLOOM_CREATE_LIKE, ".a",
			   EINVAL, "LIKE with a bad like name");
	merge_create_fails(_metadata, 0, 0, 0, 0,
			   KBLOOM_CREATE_LIKE | KBLOOM_CREATE_COUNTING, MRG_A,
			   EINVAL, "LIKE a plain filter with COUNTING");
	/* like set without the LIKE flag: badioctl.reserved_fields. */
	merge_create_fails(_metadata, 1024, 3, 0, 0, KBLOOM_CREATE_COUNTING,
			   MRG_C, EINVAL,
			   "COUNTING with like set, no LIKE flag");
}

TEST_F(merge, counting)
{
	struct kbloom_create c;
	struct kbloom_info ic, ie, info;
	struct kbloom_merge m;
	int err;

	err = kb_create_ex(g_fd, MRG_C, 1 << 16, 4, KBLOOM_CREATE_COUNTING,
			   NULL, NULL);
	if (!EXPECT_OK(err, "merge: create counting %s", MRG_C))
		return;

	/* LIKE from a counting filter: with or without the COUNTING flag. */
	err = kb_create_ex(g_fd, MRG_E, 0, 0,
			   KBLOOM_CREATE_LIKE | KBLOOM_CREATE_COUNTING, MRG_C,
			   &c);
	if (!EXPECT_OK(err, "merge: create %s like counting %s with COUNTING",
		       MRG_E, MRG_C))
		return;
	EXPECT_COND(c.bits == 1 << 16 && c.hashes == 4, "not the source's",
		    "merge: LIKE wrote back the source's bits and hashes");
	err = kb_create_ex(g_fd, MRG_F, 0, 0, KBLOOM_CREATE_LIKE, MRG_C, NULL);
	if (EXPECT_OK(err, "merge: create %s like counting %s, no COUNTING",
		      MRG_F, MRG_C)) {
		err = kb_info(g_fd, MRG_F, &info);
		if (EXPECT_OK(err, "merge: INFO %s", MRG_F))
			EXPECT_COND(info.flags & KBLOOM_CREATE_COUNTING,
				    "not counting",
				    "merge: LIKE copies the counting flag");
		cleanup(_metadata, MRG_F);
	}

	/* 10 + 10 adds of one key: the sum saturates at 15. */
	add_n(_metadata, MRG_C, "ck", 10);
	add_n(_metadata, MRG_E, "ck", 10);
	if (EXPECT_OK(kb_info(g_fd, MRG_C, &ic), "merge: INFO %s", MRG_C))
		EXPECT_U64(ic.saturated, 0, "merge: 10 adds do not saturate");
	EXPECT_OK(kb_info(g_fd, MRG_E, &ie), "merge: INFO %s", MRG_E);
	err = kb_merge(g_fd, KBLOOM_IOC_MERGE, MRG_C, MRG_E, &m);
	if (EXPECT_OK(err, "merge: MERGE counting %s <- %s", MRG_C, MRG_E))
		EXPECT_U64(m.mismatch, 0, "merge: counting MERGE mismatch 0");
	err = kb_info(g_fd, MRG_C, &info);
	if (EXPECT_OK(err, "merge: INFO %s after the merge", MRG_C)) {
		EXPECT_RANGE(info.saturated, 1, 4,
			     "merge: counters added and saturated (1..k saturated)");
		EXPECT_U64(info.bits_set, ic.bits_set,
			   "merge: no new non-zero counters");
	}
	err = kb_info(g_fd, MRG_E, &info);
	if (EXPECT_OK(err, "merge: INFO %s after the merge", MRG_E))
		EXPECT_COND(info.saturated == 0 &&
			    info.bits_set == ie.bits_set, "changed",
			    "merge: the counting source is unchanged");
	remove_n(_metadata, MRG_C, "ck", 30);
	EXPECT_SKEY(g_fd, KBLOOM_IOC_QUERY, MRG_C, "ck", 1,
		    "merge: saturated merged key survives 30 removes");
	/* The source kept exactly 10: ten removes empty it. */
	remove_n(_metadata, MRG_E, "ck", 10);
	EXPECT_SKEY(g_fd, KBLOOM_IOC_QUERY, MRG_E, "ck", 0,
		    "merge: the source's counters were 10, not more");
}

/*
 * LIKE copies the hash scheme (so giving one is an error), and the copy
 * merges with its model, under either scheme.
 */
TEST_F(merge, like_copies_the_scheme)
{
	static const u32 schemes[] = { KBLOOM_HASH_SIPHASH, KBLOOM_HASH_JHASH };
	struct keyset ks = { 0 };
	struct kbloom_create c;
	struct kbloom_info info;
	size_t i;

	ASSERT_TRUE(keyset_tag(_metadata, &ks, "sh", 1000));
	for (i = 0; i < ARRAY_SIZE(schemes); i++) {
		ASSERT_EQ(0, kb_create_scheme(g_fd, MRG_C, 1 << 16, 5, 0,
					      schemes[i], NULL));
		EXPECT_EQ(EINVAL, kb_create_like(g_fd, MRG_E, MRG_C, 0,
						 schemes[i], NULL));
		EXPECT_EQ(EINVAL, kb_create_like(g_fd, MRG_E, MRG_C, 0,
						 3 - schemes[i], NULL));
		EXPECT_FALSE(kb_exists(g_fd, MRG_E));
		ASSERT_EQ(0, kb_create_like(g_fd, MRG_E, MRG_C, 0, 0, &c));
		EXPECT_EQ(schemes[i], c.hash_scheme);
		ASSERT_EQ(0, kb_info(g_fd, MRG_E, &info));
		EXPECT_EQ(schemes[i], info.hash_scheme);
		ASSERT_TRUE(ks_add(_metadata, MRG_E, &ks, 0, 1000));
		EXPECT_EQ(0, kb_merge(g_fd, KBLOOM_IOC_MERGE, MRG_C, MRG_E,
				      NULL));
		EXPECT_EQ(1000L, ks_hits(_metadata, MRG_C, &ks, 0, 1000));
		ASSERT_EQ(0, kb_destroy(g_fd, MRG_E));
		ASSERT_EQ(0, kb_destroy(g_fd, MRG_C));
	}
	keyset_free(&ks);
}

/* Filters of different hash schemes do not merge nor compare. */
TEST_F(merge, scheme_mismatch)
{
	struct keyset ks = { 0 };
	struct kbloom_image im;
	struct kbloom_merge m;
	struct img j;

	ASSERT_EQ(0, kb_create_scheme(g_fd, MRG_C, 1 << 16, 5, 0,
				      KBLOOM_HASH_JHASH, NULL));
	ASSERT_EQ(0, kb_create_scheme(g_fd, MRG_D, 1 << 16, 5, 0,
				      KBLOOM_HASH_SIPHASH, NULL));
	ASSERT_TRUE(keyset_tag(_metadata, &ks, "sh", 100));
	ASSERT_TRUE(ks_add(_metadata, MRG_D, &ks, 0, 100));
	ASSERT_TRUE(img_take(_metadata, MRG_C, &j, "merge"));
	EXPECT_EQ(EINVAL, kb_merge(g_fd, KBLOOM_IOC_MERGE, MRG_C, MRG_D, &m));
	EXPECT_EQ(KBLOOM_MISMATCH_HASH_SCHEME,
		  m.mismatch & KBLOOM_MISMATCH_HASH_SCHEME);
	EXPECT_EQ(0U, m.mismatch & (KBLOOM_MISMATCH_BITS |
				    KBLOOM_MISMATCH_HASHES |
				    KBLOOM_MISMATCH_COUNTING));
	EXPECT_TRUE(img_same(_metadata, MRG_C, &j));
	EXPECT_EQ(EINVAL, kb_merge(g_fd, KBLOOM_IOC_COMPARE, MRG_D, MRG_C, &m));
	EXPECT_EQ(KBLOOM_MISMATCH_HASH_SCHEME,
		  m.mismatch & KBLOOM_MISMATCH_HASH_SCHEME);

	/*
	 * The same seed words and size under the other scheme (the jhash
	 * image loaded as SipHash with seed_hi 0): the scheme alone differs.
	 */
	im = j.im;
	im.hash_scheme = KBLOOM_HASH_SIPHASH;
	ASSERT_EQ(0, kb_import(g_fd, &im, MRG_F, 0));
	merge_mismatch(_metadata, KBLOOM_IOC_MERGE, MRG_C, MRG_F,
		       KBLOOM_MISMATCH_HASH_SCHEME, "the scheme alone");
	merge_mismatch(_metadata, KBLOOM_IOC_COMPARE, MRG_C, MRG_F,
		       KBLOOM_MISMATCH_HASH_SCHEME, "the scheme alone");
	img_free(&j);
	keyset_free(&ks);
}
