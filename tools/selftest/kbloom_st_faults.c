// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_selftest, area "faults": user memory the kernel cannot write
 * back. A batch whose results fault half-way applied exactly the keys its
 * done says, and a retry from done is the same as doing it once; a call
 * whose own structure is read-only changes nothing at all. Included by
 * kbloom_selftest.c.
 */

#define FLT_F		"faults_f"
#define FLT_REF		"faults_ref"
#define FLT_NEW		"faults_new"
#define FLT_SRC		"faults_src"
#define FLT_KEYS	2048u
#define FLT_CHUNK	1024u	/* keys per chunk, as the uapi says */
#define FLT_KEY		"kf-key"

static const char *const faults_all[] = { FLT_F, FLT_REF, FLT_NEW, FLT_SRC };

/*
 * FLT_F, counting with 2^20 counters (8192 positions in use: no false
 * hit), and FLT_REF like it, which gets the same operations without
 * faults; self->map is two pages, the second unmapped, and self->res the
 * result bytes of one chunk just before it.
 */
FIXTURE(faults_batch) {
	struct keyset ks;
	unsigned char *map;
	unsigned char *res;
	unsigned char good[FLT_KEYS / 8];
};

FIXTURE_VARIANT(faults_batch) {
	unsigned long cmd;
	bool remove;
	bool taa;
};

FIXTURE_VARIANT_ADD(faults_batch, add) { .cmd = KBLOOM_IOC_ADD_BATCH };
FIXTURE_VARIANT_ADD(faults_batch, test_and_add) {
	.cmd = KBLOOM_IOC_TEST_AND_ADD_BATCH, .taa = true
};
FIXTURE_VARIANT_ADD(faults_batch, remove) {
	.cmd = KBLOOM_IOC_REMOVE_BATCH, .remove = true
};

FIXTURE_SETUP(faults_batch)
{
	st_open(_metadata);
	cleanup_all(faults_all);
	ASSERT_EQ(0, kb_create_ex(g_fd, FLT_F, 1 << 20, 4,
				  KBLOOM_CREATE_COUNTING, NULL, NULL));
	ASSERT_EQ(0, kb_create_like(g_fd, FLT_REF, FLT_F, 0, 0, NULL));
	ASSERT_TRUE(keyset_tag(_metadata, &self->ks, "bf", FLT_KEYS));
	self->map = (unsigned char *)map_half(_metadata);
	ASSERT_TRUE(self->map != NULL);
	self->res = self->map + 4096 - FLT_CHUNK / 8;
}

FIXTURE_TEARDOWN(faults_batch)
{
	if (self->map)
		munmap(self->map, 2 * 4096);
	keyset_free(&self->ks);
	cleanup_all(faults_all);
	st_close();
}

/* FLT_F and the reference export the same image (same seed: bytes). */
static void faults_same_as_ref(struct __test_metadata *_metadata,
			       const char *when)
{
	struct img r = { 0 };

	if (img_take(_metadata, FLT_REF, &r, when))
		EXPECT_COND(img_same(_metadata, FLT_F, &r), "they differ",
			    "%s: the filter's counters are the reference's",
			    when);
	img_free(&r);
}

/*
 * One batch of FLT_KEYS whose second chunk's result bytes are on the
 * unmapped page, then the retry from done with a good buffer.
 */
static void faults_round(struct __test_metadata *_metadata,
			 FIXTURE_DATA(faults_batch) *self,
			 const FIXTURE_VARIANT(faults_batch) *variant,
			 bool twice)
{
	const struct keyset *ks = &self->ks;
	struct kbloom_info before, after;
	struct kbloom_batch b;
	u32 i, want_bit = variant->remove ? 1 : 0;
	bool bytes_ok = true;
	int err;

	ASSERT_EQ(0, kb_info(g_fd, FLT_F, &before));
	memset(self->res, 0xa5, FLT_CHUNK / 8);
	err = ks_batch(g_fd, variant->cmd, FLT_F, ks, 0, FLT_KEYS, self->res,
		       &b);
	ASSERT_EQ(EFAULT, err);
	ASSERT_EQ(FLT_CHUNK, b.done) {
		TH_LOG("done must count exactly the keys applied: chunk 0");
	}
	EXPECT_EQ(want_bit ? FLT_CHUNK : 0U, b.hits);
	for (i = 0; i < FLT_CHUNK / 8; i++)
		bytes_ok &= self->res[i] == (want_bit ? 0xff : 0x00);
	EXPECT_TRUE(bytes_ok) {
		TH_LOG("chunk 0's result bytes were not all written");
	}
	ASSERT_EQ(0, kb_info(g_fd, FLT_F, &after));
	EXPECT_EQ(before.adds + (variant->remove ? 0 : FLT_CHUNK), after.adds);
	EXPECT_EQ(before.queries + (variant->taa ? FLT_CHUNK : 0),
		  after.queries);

	/* The reference: exactly keys 0 .. 1023. */
	ASSERT_TRUE(ks_apply(_metadata, variant->cmd, FLT_REF, ks, 0,
			     FLT_CHUNK));
	faults_same_as_ref(_metadata, "after the faulting batch");
	if (!twice) {
		/* One by one: chunk 0 applied, chunk 1 not. */
		EXPECT_EQ(0, ks_query_each(_metadata, FLT_F, ks, 0, FLT_CHUNK,
					   variant->remove ? 0 : 1));
		EXPECT_EQ(0, ks_query_each(_metadata, FLT_F, ks, FLT_CHUNK,
					   FLT_KEYS - FLT_CHUNK,
					   variant->remove ? 1 : 0)) {
			TH_LOG("a key after done was applied");
		}
	}
	check_counts(_metadata, FLT_F, "after the faulting batch");

	/* Retry from done, as the uapi says: the same as doing it once. */
	memset(self->good, 0xa5, sizeof(self->good));
	err = ks_batch(g_fd, variant->cmd, FLT_F, ks, b.done,
		       FLT_KEYS - b.done, self->good, &b);
	ASSERT_EQ(0, err);
	ASSERT_EQ(FLT_KEYS - FLT_CHUNK, b.done);
	EXPECT_EQ(want_bit ? FLT_KEYS - FLT_CHUNK : 0U, b.hits);
	ASSERT_TRUE(ks_apply(_metadata, variant->cmd, FLT_REF, ks, FLT_CHUNK,
			     FLT_KEYS - FLT_CHUNK));
	faults_same_as_ref(_metadata, "after the retry");
	check_counts(_metadata, FLT_F, "after the retry");
	ASSERT_EQ(0, kb_info(g_fd, FLT_F, &after));
	EXPECT_EQ(before.adds + (variant->remove ? 0 : FLT_KEYS), after.adds);
}

TEST_F_TIMEOUT(faults_batch, partial_results_fault, 300)
{
	const struct keyset *ks = &self->ks;
	struct kbloom_info info;
	int i;

	if (variant->remove) {
		/* Each key in once: removed keys become absent. */
		ASSERT_TRUE(ks_add(_metadata, FLT_F, ks, 0, FLT_KEYS));
		ASSERT_TRUE(ks_add(_metadata, FLT_REF, ks, 0, FLT_KEYS));
	}
	faults_round(_metadata, self, variant, false);
	if (!variant->remove) {
		EXPECT_EQ((long)FLT_KEYS, ks_hits(_metadata, FLT_F, ks, 0,
						  FLT_KEYS));
		return;
	}
	EXPECT_EQ(0, ks_hits(_metadata, FLT_F, ks, 0, FLT_KEYS));
	ASSERT_EQ(0, kb_info(g_fd, FLT_F, &info));
	EXPECT_EQ(0ULL, info.bits_set) {
		TH_LOG("every counter must be back to 0");
	}
	/* Each key in twice, removed once (with the retry): present. */
	for (i = 0; i < 2; i++) {
		ASSERT_TRUE(ks_add(_metadata, FLT_F, ks, 0, FLT_KEYS));
		ASSERT_TRUE(ks_add(_metadata, FLT_REF, ks, 0, FLT_KEYS));
	}
	faults_round(_metadata, self, variant, true);
	EXPECT_EQ(0, ks_query_each(_metadata, FLT_F, ks, 0, FLT_KEYS, 1)) {
		TH_LOG("a key added twice and removed once is absent");
	}
}

/* The batch header itself cannot be written back: nothing is applied. */
TEST_F(faults_batch, header_readonly)
{
	const struct keyset *ks = &self->ks;
	struct kbloom_batch *b;
	struct snap snap;

	if (variant->remove)
		ASSERT_TRUE(ks_add(_metadata, FLT_F, ks, 0, FLT_KEYS));
	ASSERT_TRUE(snap_take(_metadata, FLT_F, &snap));
	b = map_pages(_metadata, 1);
	ASSERT_TRUE(b != NULL);
	fill_batch(b, FLT_F, ks->keys, ks->lens, self->good, ks->bytes,
		   FLT_KEYS);
	ASSERT_EQ(0, mprotect(b, 4096, PROT_READ));
	EXPECT_EQ(EFAULT, ioc(g_fd, variant->cmd, b));
	snap_same(_metadata, FLT_F, &snap);
	EXPECT_EQ(variant->remove ? (long)FLT_KEYS : 0L,
		  ks_hits(_metadata, FLT_F, ks, 0, FLT_KEYS));
	munmap(b, 4096);
}

/*
 * FLT_F, counting, holding "other" (and FLT_KEY for REMOVE: a remove that
 * fails must not decrement).
 */
FIXTURE(faults_key) {
};

FIXTURE_VARIANT(faults_key) {
	unsigned long cmd;
	bool remove;
};

FIXTURE_VARIANT_ADD(faults_key, add) { .cmd = KBLOOM_IOC_ADD };
FIXTURE_VARIANT_ADD(faults_key, test_and_add) {
	.cmd = KBLOOM_IOC_TEST_AND_ADD
};
FIXTURE_VARIANT_ADD(faults_key, remove) {
	.cmd = KBLOOM_IOC_REMOVE, .remove = true
};

FIXTURE_SETUP(faults_key)
{
	st_open(_metadata);
	cleanup(_metadata, FLT_F);
	ASSERT_EQ(0, kb_create_ex(g_fd, FLT_F, 1 << 16, 4,
				  KBLOOM_CREATE_COUNTING, NULL, NULL));
	ASSERT_EQ(0, kb_skey(g_fd, KBLOOM_IOC_ADD, FLT_F, "other", NULL));
	if (variant->remove)
		ASSERT_EQ(0, kb_skey(g_fd, KBLOOM_IOC_ADD, FLT_F, FLT_KEY,
				     NULL));
}

FIXTURE_TEARDOWN(faults_key)
{
	cleanup(_metadata, FLT_F);
	st_close();
}

/* The key structure cannot be written back: the counters are untouched. */
TEST_F(faults_key, struct_readonly)
{
	static const char key[] = FLT_KEY;
	struct kbloom_key *k;
	struct snap snap;
	u32 res;

	ASSERT_TRUE(snap_take(_metadata, FLT_F, &snap));
	k = map_pages(_metadata, 1);
	ASSERT_TRUE(k != NULL);
	set_name(k->name, FLT_F);
	k->key = PTR(key);
	k->len = (u32)strlen(key);
	ASSERT_EQ(0, mprotect(k, 4096, PROT_READ));
	EXPECT_EQ(EFAULT, ioc(g_fd, variant->cmd, k));
	snap_same(_metadata, FLT_F, &snap);
	ASSERT_EQ(0, kb_skey(g_fd, KBLOOM_IOC_QUERY, FLT_F, key, &res));
	EXPECT_EQ(variant->remove ? 1U : 0U, res);
	munmap(k, 4096);
}

/* No filter of this area; self->page is a page to make read-only. */
FIXTURE(faults) {
	void *page;
};

FIXTURE_SETUP(faults)
{
	st_open(_metadata);
	cleanup_all(faults_all);
	self->page = map_pages(_metadata, 1);
	ASSERT_TRUE(self->page != NULL);
}

FIXTURE_TEARDOWN(faults)
{
	if (self->page)
		munmap(self->page, 4096);
	cleanup_all(faults_all);
	st_close();
}

/* CREATE that cannot write its result back creates nothing. */
TEST_F(faults, create_readonly)
{
	struct kbloom_create *c = self->page;
	long before = count_filters(_metadata);

	ASSERT_LE(0, before);
	set_name(c->name, FLT_NEW);
	c->bits = 1024;
	c->hashes = 3;
	ASSERT_EQ(0, mprotect(c, 4096, PROT_READ));
	EXPECT_EQ(EFAULT, ioc(g_fd, KBLOOM_IOC_CREATE, c));
	EXPECT_FALSE(kb_exists(g_fd, FLT_NEW));
	EXPECT_EQ(before, kb_count(g_fd));
	EXPECT_FALSE(filter_dir_exists(FLT_NEW));
}

TEST_F(faults, merge_readonly)
{
	struct kbloom_merge *m = self->page;
	struct img dst, src;

	ASSERT_EQ(0, kb_create_ex(g_fd, FLT_F, 1 << 16, 4,
				  KBLOOM_CREATE_COUNTING, NULL, NULL));
	ASSERT_EQ(0, kb_create_like(g_fd, FLT_SRC, FLT_F, 0, 0, NULL));
	ASSERT_EQ(0, kb_skey(g_fd, KBLOOM_IOC_ADD, FLT_F, "in-dst", NULL));
	ASSERT_EQ(0, kb_skey(g_fd, KBLOOM_IOC_ADD, FLT_SRC, "in-src", NULL));
	ASSERT_EQ(0, kb_skey(g_fd, KBLOOM_IOC_ADD, FLT_SRC, "in-dst", NULL));
	ASSERT_TRUE(img_take(_metadata, FLT_F, &dst, "before"));
	ASSERT_TRUE(img_take(_metadata, FLT_SRC, &src, "before"));
	set_name(m->dst, FLT_F);
	set_name(m->src, FLT_SRC);
	ASSERT_EQ(0, mprotect(m, 4096, PROT_READ));
	EXPECT_EQ(EFAULT, ioc(g_fd, KBLOOM_IOC_MERGE, m));
	EXPECT_TRUE(img_same(_metadata, FLT_F, &dst)) {
		TH_LOG("MERGE that cannot write its result back merged");
	}
	EXPECT_TRUE(img_same(_metadata, FLT_SRC, &src));
	img_free(&dst);
	img_free(&src);
}

/* CREATE's undo never destroys another filter of the same name. */
TEST_F(faults, create_undo_spares_existing)
{
	struct kbloom_create *c = self->page;
	struct kbloom_info info;
	struct snap snap;
	u32 res;

	ASSERT_EQ(0, kb_create(g_fd, FLT_F, 1 << 16, 5, 0, 0, NULL));
	ASSERT_EQ(0, kb_skey(g_fd, KBLOOM_IOC_ADD, FLT_F, "dup-a", NULL));
	ASSERT_EQ(0, kb_skey(g_fd, KBLOOM_IOC_ADD, FLT_F, "dup-b", NULL));
	ASSERT_TRUE(snap_take(_metadata, FLT_F, &snap));
	set_name(c->name, FLT_F);
	c->bits = 2048;
	c->hashes = 3;
	ASSERT_EQ(0, mprotect(c, 4096, PROT_READ));
	EXPECT_ERRNO2(ioc(g_fd, KBLOOM_IOC_CREATE, c), EFAULT, EEXIST,
		      "CREATE over an existing name, structure read-only");
	ASSERT_EQ(0, kb_info(g_fd, FLT_F, &info)) {
		TH_LOG("the existing filter was destroyed");
	}
	/* Its size too: the export has bits and hashes. */
	snap_same(_metadata, FLT_F, &snap);
	ASSERT_EQ(0, kb_skey(g_fd, KBLOOM_IOC_QUERY, FLT_F, "dup-a", &res));
	EXPECT_EQ(1U, res);
	ASSERT_EQ(0, kb_skey(g_fd, KBLOOM_IOC_QUERY, FLT_F, "dup-b", &res));
	EXPECT_EQ(1U, res);
	EXPECT_TRUE(filter_dir_exists(FLT_F));
}
