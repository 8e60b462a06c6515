// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_selftest, area "compare": what COMPARE counts, and the size
 * estimates the header derives from them. Included by kbloom_selftest.c.
 */

#define CMP_A		"compare_a"
#define CMP_B		"compare_b"
#define CMP_EMPTY	"compare_empty"
#define CMP_BITS	300000u
#define CMP_HASHES	7
#define CMP_N		10000u

/* n = -(m/k) ln(1 - X/m), the header's estimate. */
static double est_n(u64 x, u64 m, u32 k)
{
	return -((double)m / k) * log(1.0 - (double)x / (double)m);
}

static bool within(double got, double want, double frac)
{
	return fabs(got - want) <= want * frac;
}

/*
 * CMP_A holds the shared keys and its own, CMP_B (created like it) the
 * shared keys and its own: CMP_N of each kind, in room for ~30000 keys at
 * 1%, so that the estimates are tight. No CMP_EMPTY.
 */
FIXTURE(compare) {
};

FIXTURE_SETUP(compare)
{
	struct keyset sh = { 0 }, oa = { 0 }, ob = { 0 };
	bool ok;

	st_open(_metadata);
	cleanup(_metadata, CMP_A);
	cleanup(_metadata, CMP_B);
	cleanup(_metadata, CMP_EMPTY);
	ASSERT_EQ(0, kb_create(g_fd, CMP_A, CMP_BITS, CMP_HASHES, 0, 0,
			       NULL));
	ASSERT_EQ(0, kb_create_ex(g_fd, CMP_B, 0, 0, KBLOOM_CREATE_LIKE,
				  CMP_A, NULL));
	/* A: shared + own-A (20000); B: shared + own-B (20000). */
	ok = keyset_tag(_metadata, &sh, "cs", CMP_N) &&
	     keyset_tag(_metadata, &oa, "ca", CMP_N) &&
	     keyset_tag(_metadata, &ob, "cb", CMP_N) &&
	     ks_add(_metadata, CMP_A, &sh, 0, CMP_N) &&
	     ks_add(_metadata, CMP_A, &oa, 0, CMP_N) &&
	     ks_add(_metadata, CMP_B, &sh, 0, CMP_N) &&
	     ks_add(_metadata, CMP_B, &ob, 0, CMP_N);
	keyset_free(&sh);
	keyset_free(&oa);
	keyset_free(&ob);
	ASSERT_TRUE(ok);
}

FIXTURE_TEARDOWN(compare)
{
	cleanup(_metadata, CMP_A);
	cleanup(_metadata, CMP_B);
	cleanup(_metadata, CMP_EMPTY);
	st_close();
}

/* COMPARE's counts, each with INFO of A and B: reads them, or fails. */
static bool compare_a_b(struct __test_metadata *_metadata,
			struct kbloom_info *ia, struct kbloom_info *ib,
			struct kbloom_merge *m)
{
	int err;

	if (!EXPECT_OK(kb_info(g_fd, CMP_A, ia), "compare: INFO %s", CMP_A) ||
	    !EXPECT_OK(kb_info(g_fd, CMP_B, ib), "compare: INFO %s", CMP_B))
		return false;
	err = kb_merge(g_fd, KBLOOM_IOC_COMPARE, CMP_A, CMP_B, m);
	return EXPECT_OK(err, "compare: COMPARE %s %s", CMP_A, CMP_B);
}

TEST_F(compare, counts_and_estimates)
{
	struct kbloom_info ia, ib;
	struct kbloom_merge m;
	double na, nb, nu, ni, naive;
	char detail[200];
	u64 mx, mn;

	if (!compare_a_b(_metadata, &ia, &ib, &m))
		return;
	EXPECT_U64(m.mismatch, 0, "compare: mismatch 0");
	EXPECT_U64(m.bits_dst, ia.bits_set,
		   "compare: bits_dst == INFO bits_set of A");
	EXPECT_U64(m.bits_src, ib.bits_set,
		   "compare: bits_src == INFO bits_set of B");
	mx = m.bits_dst > m.bits_src ? m.bits_dst : m.bits_src;
	mn = m.bits_dst < m.bits_src ? m.bits_dst : m.bits_src;
	EXPECT_RANGE(m.bits_union, mx, CMP_BITS, "compare: bits_union >= max");
	EXPECT_RANGE(m.bits_inter, 0, mn, "compare: bits_inter <= min");
	EXPECT_U64(m.bits_union + m.bits_inter, m.bits_dst + m.bits_src,
		   "compare: union + inter == dst + src");

	na = est_n(m.bits_dst, CMP_BITS, CMP_HASHES);
	nb = est_n(m.bits_src, CMP_BITS, CMP_HASHES);
	nu = est_n(m.bits_union, CMP_BITS, CMP_HASHES);
	/*
	 * The intersection by inclusion-exclusion: applying the formula to
	 * bits_inter itself overestimates it (bits of A-only and B-only
	 * keys that coincide count as shared: ~11900 here, not 10000).
	 */
	ni = na + nb - nu;
	naive = est_n(m.bits_inter, CMP_BITS, CMP_HASHES);
	snprintf(detail, sizeof(detail),
		 "A %.0f, B %.0f, union %.0f, inter %.0f (formula on bits_inter %.0f)",
		 na, nb, nu, ni, naive);
	NOTE("compare: estimates %s", detail);
	EXPECT_COND(within(na, 2 * CMP_N, 0.05), detail,
		    "compare: |A| estimate within 5%% of 20000");
	EXPECT_COND(within(nb, 2 * CMP_N, 0.05), detail,
		    "compare: |B| estimate within 5%% of 20000");
	EXPECT_COND(within(nu, 3 * CMP_N, 0.05), detail,
		    "compare: union estimate within 5%% of 30000");
	EXPECT_COND(within(ni, CMP_N, 0.05), detail,
		    "compare: intersection estimate (|A|+|B|-|union|) within 5%% of 10000");
}

TEST_F(compare, symmetric_and_read_only)
{
	struct kbloom_info ia, ib, info;
	struct kbloom_merge m, r;
	int err, ro;

	if (!compare_a_b(_metadata, &ia, &ib, &m))
		return;

	/* Symmetric, and read-only. */
	err = kb_merge(g_fd, KBLOOM_IOC_COMPARE, CMP_B, CMP_A, &r);
	if (EXPECT_OK(err, "compare: COMPARE %s %s", CMP_B, CMP_A))
		EXPECT_COND(r.bits_dst == m.bits_src &&
			    r.bits_src == m.bits_dst &&
			    r.bits_union == m.bits_union &&
			    r.bits_inter == m.bits_inter,
			    "not symmetric",
			    "compare: COMPARE B A mirrors COMPARE A B");
	ro = open(DEV, O_RDONLY);
	if (EXPECT_COND(ro >= 0, strerror(errno), "compare: open O_RDONLY")) {
		err = kb_merge(ro, KBLOOM_IOC_COMPARE, CMP_A, CMP_B, &r);
		if (EXPECT_OK(err, "compare: COMPARE on a read-only fd"))
			EXPECT_COND(r.bits_union == m.bits_union &&
				    r.bits_inter == m.bits_inter, "differs",
				    "compare: read-only COMPARE gives the same counts");
		close(ro);
	}
	err = kb_info(g_fd, CMP_A, &info);
	if (EXPECT_OK(err, "compare: INFO %s after", CMP_A))
		EXPECT_COND(info.bits_set == ia.bits_set &&
			    info.adds == ia.adds,
			    "changed", "compare: COMPARE changed nothing");
}

TEST_F(compare, itself_and_an_empty_twin)
{
	struct kbloom_info ia, ib;
	struct kbloom_merge m, r;
	int err;

	if (!compare_a_b(_metadata, &ia, &ib, &m))
		return;

	/* With itself, and with an empty twin. */
	err = kb_merge(g_fd, KBLOOM_IOC_COMPARE, CMP_A, CMP_A, &r);
	if (EXPECT_OK(err, "compare: COMPARE %s with itself", CMP_A))
		EXPECT_COND(r.bits_dst == ia.bits_set &&
			    r.bits_src == ia.bits_set &&
			    r.bits_union == ia.bits_set &&
			    r.bits_inter == ia.bits_set,
			    "counts differ",
			    "compare: self-COMPARE: union == inter == bits_set");
	err = kb_create_ex(g_fd, CMP_EMPTY, 0, 0, KBLOOM_CREATE_LIKE, CMP_A,
			   NULL);
	if (EXPECT_OK(err, "compare: create %s like %s", CMP_EMPTY, CMP_A)) {
		err = kb_merge(g_fd, KBLOOM_IOC_COMPARE, CMP_A, CMP_EMPTY, &r);
		if (EXPECT_OK(err, "compare: COMPARE with an empty twin"))
			EXPECT_COND(r.bits_src == 0 && r.bits_inter == 0 &&
				    r.bits_union == ia.bits_set, "counts wrong",
				    "compare: empty twin: src 0, inter 0, union == A");
	}
}
