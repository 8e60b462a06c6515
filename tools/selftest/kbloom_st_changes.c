// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_selftest, area "changes": change tracking, KBLOOM_IOC_COLLECT and
 * KBLOOM_IOC_APPLY. What one filter's collections carry, ORed into a
 * filter of the same shape and seed, makes it equal: under concurrent
 * adds, across cursor passes, after a collection that could not be
 * written out, for the generations of a window. APPLY refuses every bad
 * list whole. Included by kbloom_selftest.c.
 */

#define CHG_A		"changes_a"
#define CHG_B		"changes_b"
#define CHG_C		"changes_c"
/* 2^16 bits: 128 blocks; a few hundred keys touch most of them. */
#define CHG_BITS	(1ULL << 16)
#define CHG_BLOCKS	(CHG_BITS / 512)
#define CHG_BYTES	(CHG_BITS / 8)

static const char *const changes_all[] = { CHG_A, CHG_B, CHG_C };

FIXTURE(changes) {
	struct kbloom_block *blocks;	/* room for every block of a filter */
	unsigned char *pa, *pb;		/* payloads, for comparisons */
};

FIXTURE_SETUP(changes)
{
	st_open(_metadata);
	cleanup_all(changes_all);
	self->blocks = calloc(4 * CHG_BLOCKS, sizeof(*self->blocks));
	self->pa = malloc(4 * CHG_BYTES);
	self->pb = malloc(4 * CHG_BYTES);
	ASSERT_TRUE(self->blocks && self->pa && self->pb);
}

FIXTURE_TEARDOWN(changes)
{
	cleanup_all(changes_all);
	free(self->blocks);
	free(self->pa);
	free(self->pb);
	st_close();
}

/*
 * A whole COLLECT pass of @name into @blocks (room for 4 * CHG_BLOCKS),
 * @per blocks a call; the number collected, or -1 (reported). @last: the
 * last call's.
 */
static long collect_pass(struct __test_metadata *_metadata, const char *name,
			 struct kbloom_block *blocks, u32 per, u32 flags,
			 struct kbloom_blocks *last)
{
	struct kbloom_blocks b = { 0 };
	u64 cursor = 0;
	u32 n = 0;

	do {
		if (!EXPECT_COND(n + per <= 4 * CHG_BLOCKS, "too many blocks",
				 "COLLECT pass of %s", name) ||
		    !EXPECT_OK(kb_collect(g_fd, name, blocks + n, per, flags,
					  cursor, &b),
			       "COLLECT of %s from %llu", name,
			       (unsigned long long)cursor))
			return -1;
		n += b.done;
		cursor = b.cursor;
	} while (cursor);
	if (last)
		*last = b;
	return n;
}

/* Blocks of an exported payload that have a bit set. */
static u32 nonzero_blocks(const unsigned char *p, u64 bytes)
{
	u64 i;
	u32 n = 0;

	for (i = 0; i < bytes; i += 64)
		n += !all_bytes(p + i, bytes - i < 64 ? bytes - i : 64, 0);
	return n;
}

/* Are the payloads of @a and @b identical? Both exported, of @bytes. */
static bool same_payload(struct __test_metadata *_metadata,
			 FIXTURE_DATA(changes) *self, const char *a,
			 const char *b, u64 bytes)
{
	return EXPECT_OK(kb_export(g_fd, a, self->pa, 4 * CHG_BYTES, NULL),
			 "EXPORT %s", a) &&
	       EXPECT_OK(kb_export(g_fd, b, self->pb, 4 * CHG_BYTES, NULL),
			 "EXPORT %s", b) &&
	       EXPECT_COND(!memcmp(self->pa, self->pb, bytes),
			   "payloads differ", "%s and %s", a, b);
}

/* CHG_A tracking, CHG_B like it (same seed), @n keys of seed 1 in CHG_A. */
static void changes_pair(struct __test_metadata *_metadata, u64 bits,
			 struct keyset *ks, u32 n)
{
	struct kbloom_create c;

	ASSERT_EQ(0, kb_create_ex(g_fd, CHG_A, bits, 4,
				  KBLOOM_CREATE_TRACK_CHANGES, NULL, &c));
	EXPECT_TRUE(!!(c.flags & KBLOOM_CREATE_TRACK_CHANGES)) {
		TH_LOG("CREATE does not report the tracking it made");
	}
	ASSERT_EQ(0, kb_create_like(g_fd, CHG_B, CHG_A, 0, 0, NULL));
	ASSERT_TRUE(keyset_gen(_metadata, ks, n, 1, 0, 24));
	if (n)
		ASSERT_TRUE(ks_add(_metadata, CHG_A, ks, 0, n));
}

TEST_F(changes, collections_make_a_copy)
{
	struct kbloom_blocks last;
	struct kbloom_info info;
	struct keyset ks;
	long n;

	changes_pair(_metadata, CHG_BITS, &ks, 400);
	n = collect_pass(_metadata, CHG_A, self->blocks, CHG_BLOCKS, 0, &last);
	ASSERT_LT(0, n);
	ASSERT_EQ(0, kb_export(g_fd, CHG_A, self->pa, CHG_BYTES, NULL));
	EXPECT_U64(n, nonzero_blocks(self->pa, CHG_BYTES),
		   "the first collection: every block with a bit set");
	EXPECT_U64(last.rotations, 0, "a plain filter's rotations");
	ASSERT_EQ(0, kb_apply(g_fd, CHG_B, self->blocks, n, last.fingerprint,
			      0, 0, &last));
	EXPECT_U64(last.done, n, "APPLY done");
	ASSERT_EQ(0, kb_info(g_fd, CHG_B, &info));
	EXPECT_U64(last.set, info.bits_set, "APPLY's set is B's fill");
	EXPECT_U64(ks_hits(_metadata, CHG_B, &ks, 0, 400), 400,
		   "every key of A is in B");
	same_payload(_metadata, self, CHG_A, CHG_B, CHG_BYTES);

	/* Nothing changed since: nothing to collect. */
	EXPECT_U64(collect_pass(_metadata, CHG_A, self->blocks, CHG_BLOCKS, 0,
				NULL),
		   0, "a second collection with no add between");
	/* Keys already there change no bit, and mark nothing. */
	ASSERT_TRUE(ks_add(_metadata, CHG_A, &ks, 0, 400));
	EXPECT_U64(collect_pass(_metadata, CHG_A, self->blocks, CHG_BLOCKS, 0,
				NULL),
		   0, "adds of keys already present");
	/* One new key: at most k = 4 blocks. */
	EXPECT_EQ(0, kb_skey(g_fd, KBLOOM_IOC_ADD, CHG_A, "one more", NULL));
	n = collect_pass(_metadata, CHG_A, self->blocks, 8, 0, &last);
	EXPECT_RANGE(n, 1, 4, "blocks one new key marks");
	ASSERT_EQ(0, kb_apply(g_fd, CHG_B, self->blocks, n, last.fingerprint,
			      0, 0, NULL));
	same_payload(_metadata, self, CHG_A, CHG_B, CHG_BYTES);
	keyset_free(&ks);
}

TEST_F(changes, tracking_starts_on_first_collection)
{
	struct kbloom_create c;
	struct kbloom_image im;
	struct kbloom_info info;
	struct keyset ks;
	long n;

	ASSERT_EQ(0, kb_create(g_fd, CHG_A, CHG_BITS, 4, 0, 0, &c));
	EXPECT_EQ(0U, c.flags & KBLOOM_CREATE_TRACK_CHANGES);
	ASSERT_TRUE(keyset_gen(_metadata, &ks, 300, 2, 0, 16));
	ASSERT_TRUE(ks_add(_metadata, CHG_A, &ks, 0, 300));
	ASSERT_EQ(0, kb_info(g_fd, CHG_A, &info));
	EXPECT_EQ(0U, info.flags & KBLOOM_CREATE_TRACK_CHANGES);
	/* Three blocks a call: a pass of many calls. */
	n = collect_pass(_metadata, CHG_A, self->blocks, 3, 0, NULL);
	ASSERT_EQ(0, kb_export(g_fd, CHG_A, self->pa, CHG_BYTES, &im));
	EXPECT_U64(n, nonzero_blocks(self->pa, CHG_BYTES),
		   "keys added before tracking are collected");
	EXPECT_TRUE(!!(im.flags & KBLOOM_CREATE_TRACK_CHANGES)) {
		TH_LOG("EXPORT after the first COLLECT: not tracking");
	}
	ASSERT_EQ(0, kb_info(g_fd, CHG_A, &info));
	EXPECT_TRUE(!!(info.flags & KBLOOM_CREATE_TRACK_CHANGES));

	/* An image of a tracking filter makes one, all of it marked. */
	im.payload = PTR(self->pa);
	ASSERT_EQ(0, kb_import(g_fd, &im, CHG_C, 0));
	EXPECT_U64(collect_pass(_metadata, CHG_C, self->blocks, CHG_BLOCKS, 0,
				NULL),
		   n, "an imported tracking filter's first collection");
	/* Replaced contents keep tracking, and are all news. */
	ASSERT_EQ(0, kb_import(g_fd, &im, CHG_A, KBLOOM_IMPORT_REPLACE));
	EXPECT_U64(collect_pass(_metadata, CHG_A, self->blocks, CHG_BLOCKS, 0,
				NULL),
		   n, "a replaced tracking filter's next collection");
	/* KBLOOM_COLLECT_ALL: a snapshot, whatever the marks. */
	EXPECT_U64(collect_pass(_metadata, CHG_A, self->blocks, CHG_BLOCKS,
				KBLOOM_COLLECT_ALL, NULL),
		   n, "COLLECT_ALL");
	/* Replaced by counting contents, it stops: counters do not track. */
	ASSERT_EQ(0, kb_destroy(g_fd, CHG_C));
	ASSERT_EQ(0, kb_create_ex(g_fd, CHG_C, CHG_BITS, 4,
				  KBLOOM_CREATE_COUNTING, NULL, NULL));
	ASSERT_EQ(0, kb_export(g_fd, CHG_C, self->pa, 4 * CHG_BYTES, &im));
	im.payload = PTR(self->pa);
	ASSERT_EQ(0, kb_import(g_fd, &im, CHG_A, KBLOOM_IMPORT_REPLACE));
	ASSERT_EQ(0, kb_info(g_fd, CHG_A, &info));
	EXPECT_EQ(KBLOOM_CREATE_COUNTING,
		  info.flags & (KBLOOM_CREATE_COUNTING |
				KBLOOM_CREATE_TRACK_CHANGES));
	keyset_free(&ks);
}

/* ---- no change lost between collections, adds racing ---- */

#define CHG_RACE_KEYS	20000
#define CHG_RACE_BITS	(1ULL << 20)
struct chg_adder {
	const struct keyset *ks;
	u32 first, n;
	int err;
	bool done;	/* written last, atomically */
};

static void *chg_add_thread(void *arg)
{
	struct chg_adder *a = arg;
	struct kbloom_batch out;
	u32 i;
	int fd = open(DEV, O_RDWR);

	a->err = fd < 0 ? errno : 0;
	/* Small batches, so collections fall between and inside them. */
	for (i = 0; i < a->n && !a->err; i += 50)
		a->err = ks_batch(fd, KBLOOM_IOC_ADD_BATCH, CHG_A, a->ks,
				  a->first + i, 50, NULL, &out);
	if (fd >= 0)
		close(fd);
	__atomic_store_n(&a->done, true, __ATOMIC_RELEASE);
	return NULL;
}

/* One COLLECT call of CHG_A and the APPLY of what it gave to CHG_B. */
static bool chg_copy(struct __test_metadata *_metadata,
		     struct kbloom_block *buf, u32 per, u64 *cursor)
{
	struct kbloom_blocks b;

	if (!EXPECT_OK(kb_collect(g_fd, CHG_A, buf, per, 0, *cursor, &b),
		       "COLLECT from %llu", (unsigned long long)*cursor))
		return false;
	*cursor = b.cursor;
	return !b.done ||
	       EXPECT_OK(kb_apply(g_fd, CHG_B, buf, b.done, b.fingerprint, 0,
				  0, NULL), "APPLY of %u blocks", b.done);
}

TEST_F_TIMEOUT(changes, no_change_lost_under_adds, 120)
{
	const u32 per = 64;
	struct kbloom_block *buf = calloc(per, sizeof(*buf));
	unsigned char *pa = malloc(CHG_RACE_BITS / 8);
	unsigned char *pb = malloc(CHG_RACE_BITS / 8);
	struct chg_adder add[2];
	pthread_t th[2];
	struct keyset ks;
	u64 cursor = 0;
	u32 rounds = 0;
	int i;

	ASSERT_TRUE(buf && pa && pb);
	changes_pair(_metadata, CHG_RACE_BITS, &ks, 0);
	keyset_free(&ks);
	ASSERT_TRUE(keyset_gen(_metadata, &ks, CHG_RACE_KEYS, 3, 0, 32));
	for (i = 0; i < 2; i++) {
		add[i] = (struct chg_adder){ .ks = &ks,
					     .first = i * CHG_RACE_KEYS / 2,
					     .n = CHG_RACE_KEYS / 2 };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, chg_add_thread,
					    &add[i]));
	}
	/* Passes of small collections while they add. */
	while (!__atomic_load_n(&add[0].done, __ATOMIC_ACQUIRE) ||
	       !__atomic_load_n(&add[1].done, __ATOMIC_ACQUIRE) || cursor) {
		if (!chg_copy(_metadata, buf, per, &cursor))
			break;
		rounds++;
	}
	for (i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		EXPECT_OK(add[i].err, "adder %d", i);
	}
	/* And one pass after: whatever the last adds marked. */
	do {
		ASSERT_TRUE(chg_copy(_metadata, buf, per, &cursor));
	} while (cursor);
	EXPECT_U64(ks_hits(_metadata, CHG_B, &ks, 0, CHG_RACE_KEYS),
		   CHG_RACE_KEYS, "keys of A in B after %u collections",
		   rounds);
	ASSERT_EQ(0, kb_export(g_fd, CHG_A, pa, CHG_RACE_BITS / 8, NULL));
	ASSERT_EQ(0, kb_export(g_fd, CHG_B, pb, CHG_RACE_BITS / 8, NULL));
	EXPECT_COND(!memcmp(pa, pb, CHG_RACE_BITS / 8), "payloads differ",
		    "B equals A after %u collections", rounds);
	keyset_free(&ks);
	free(buf);
	free(pa);
	free(pb);
}

/* ---- faults: a collection that cannot be written out loses nothing ---- */

TEST_F(changes, unwritable_collection_is_collected_again)
{
	struct kbloom_block *two;
	struct kbloom_blocks b;
	struct keyset ks;
	long n;

	changes_pair(_metadata, CHG_BITS, &ks, 400);
	/* Two pages, the second unmapped: blocks fit in the first half-way. */
	two = (struct kbloom_block *)map_half(_metadata);
	ASSERT_TRUE(two != NULL);
	EXPECT_EQ(EFAULT, kb_collect(g_fd, CHG_A, two, CHG_BLOCKS, 0, 0, &b));
	EXPECT_EQ(EFAULT, kb_collect(g_fd, CHG_A, unmapped_page(_metadata),
				     CHG_BLOCKS, 0, 0, &b));
	n = collect_pass(_metadata, CHG_A, self->blocks, CHG_BLOCKS, 0, &b);
	ASSERT_EQ(0, kb_export(g_fd, CHG_A, self->pa, CHG_BYTES, NULL));
	EXPECT_U64(n, nonzero_blocks(self->pa, CHG_BYTES),
		   "blocks after two failed collections");
	munmap(two, 4096);
	keyset_free(&ks);
}

/* ---- APPLY refuses a bad list whole ---- */

TEST_F(changes, apply_refuses_bad_lists_whole)
{
	/*
	 * 600 bits: 80 bytes of storage, so the second block has 16 bytes,
	 * and bits 600 to 639 of them are padding.
	 */
	const u64 bits = 600, bytes = 80;
	struct kbloom_block *bl = self->blocks, *two;
	struct kbloom_blocks b;
	struct keyset ks;
	u64 fp;
	long n;

	changes_pair(_metadata, bits, &ks, 30);
	n = collect_pass(_metadata, CHG_A, bl, 8, 0, &b);
	ASSERT_EQ(2, n);
	fp = b.fingerprint;
	ASSERT_EQ(0, kb_export(g_fd, CHG_B, self->pb, 4 * CHG_BYTES, NULL));

#define CHG_REFUSED(want, what, blocks, count, fpr, rot, max) do {	\
	EXPECT_EQ(want, kb_apply(g_fd, CHG_B, blocks, count, fpr, rot,	\
				 max, NULL)) {				\
		TH_LOG("APPLY %s", what);				\
	}								\
	EXPECT_EQ(0, kb_export(g_fd, CHG_B, self->pa, 4 * CHG_BYTES, NULL)); \
	EXPECT_EQ(0, memcmp(self->pa, self->pb, bytes)) {		\
		TH_LOG("APPLY %s changed the filter", what);		\
	}								\
} while (0)

	CHG_REFUSED(EXDEV, "of another filter's fingerprint", bl, 2, fp ^ 1,
		    0, 0);
	CHG_REFUSED(ESTALE, "to rotations a plain filter never had", bl, 2,
		    fp, 1, 0);
	CHG_REFUSED(EINVAL, "of no blocks", bl, 0, fp, 0, 0);
	CHG_REFUSED(E2BIG, "of too many blocks", bl, KBLOOM_BLOCKS_MAX + 1,
		    fp, 0, 0);
	bl[1].index = 2;
	CHG_REFUSED(EINVAL, "of a block past the end, after a good one", bl,
		    2, fp, 0, 0);
	bl[1].index = 1;
	bl[1].generation = 1;
	CHG_REFUSED(EINVAL, "of a generation a plain filter lacks", bl, 2, fp,
		    0, 0);
	bl[1].generation = 0;
	bl[1].reserved = 1;
	CHG_REFUSED(EINVAL, "with a reserved field set", bl, 2, fp, 0, 0);
	bl[1].reserved = 0;
	bl[1].data[16] = 1;
	CHG_REFUSED(EINVAL, "with a byte past the payload", bl, 2, fp, 0, 0);
	bl[1].data[16] = 0;
	bl[1].data[11] |= 1;
	CHG_REFUSED(EINVAL, "with a bit past m", bl, 2, fp, 0, 0);
	bl[1].data[11] &= ~1;
	/* Poison: every bit of block 0, under a limit. */
	memset(bl[0].data, 0xff, 64);
	CHG_REFUSED(ENOSPC, "of an all-ones block past max_set", bl, 1, fp, 0,
		    300);
	/* The list unreadable half-way: the second block unmapped. */
	two = (struct kbloom_block *)map_half(_metadata);
	ASSERT_TRUE(two != NULL);
	two = (struct kbloom_block *)((char *)two + 4096 - sizeof(*two));
	*two = bl[1];
	CHG_REFUSED(EFAULT, "of a list unreadable half-way", two, 2, fp, 0, 0);
	munmap((char *)two + sizeof(*two) - 4096, 4096);
#undef CHG_REFUSED

	/* Within the limit, the all-ones block goes in: 512 bits set. */
	EXPECT_EQ(0, kb_apply(g_fd, CHG_B, bl, 1, fp, 0, 1000, &b));
	EXPECT_U64(b.set, 512 - bits_count(self->pb, 512),
		   "bits the all-ones block set");
	keyset_free(&ks);
}

/* As nobody, with the case's fd: COLLECT and APPLY are EPERM. */
static void chg_nobody(struct __test_metadata *_metadata, const void *arg)
{
	struct kbloom_block *bl = (struct kbloom_block *)arg;

	EXPECT_EQ(EPERM, kb_collect(g_fd, CHG_A, bl, 8, 0, 0, NULL));
	EXPECT_EQ(EPERM, kb_apply(g_fd, CHG_A, bl, 1, 0, 0, 0, NULL));
}

TEST_F(changes, arguments_and_access)
{
	struct kbloom_block *bl = self->blocks;
	struct kbloom_blocks b;
	struct keyset ks;
	int rfd, h;

	changes_pair(_metadata, CHG_BITS, &ks, 50);
	memset(&b, 0, sizeof(b));
	set_name(b.name, CHG_A);
	b.blocks = PTR(bl);
	b.count = 8;
	b.reserved0 = 1;
	EXPECT_EQ(EINVAL, ioc(g_fd, KBLOOM_IOC_COLLECT, &b));
	b.reserved0 = 0;
	b.max_set = 1;
	EXPECT_EQ(EINVAL, ioc(g_fd, KBLOOM_IOC_COLLECT, &b));
	b.max_set = 0;
	b.flags = 2;
	EXPECT_EQ(EINVAL, ioc(g_fd, KBLOOM_IOC_COLLECT, &b));
	b.flags = 0;
	b.cursor = CHG_BLOCKS;
	EXPECT_EQ(EINVAL, ioc(g_fd, KBLOOM_IOC_COLLECT, &b)) {
		TH_LOG("COLLECT from a cursor past the end");
	}
	EXPECT_EQ(ENOENT, kb_collect(g_fd, CHG_C, bl, 8, 0, 0, NULL));

	/* Counting filters neither track nor take blocks. */
	EXPECT_EQ(EINVAL, kb_create_ex(g_fd, CHG_C, CHG_BITS, 4,
				       KBLOOM_CREATE_COUNTING |
				       KBLOOM_CREATE_TRACK_CHANGES, NULL, NULL));
	ASSERT_EQ(0, kb_create_ex(g_fd, CHG_C, CHG_BITS, 4,
				  KBLOOM_CREATE_COUNTING, NULL, NULL));
	EXPECT_EQ(EOPNOTSUPP, kb_collect(g_fd, CHG_C, bl, 8, 0, 0, NULL));
	EXPECT_EQ(EOPNOTSUPP, kb_apply(g_fd, CHG_C, bl, 1, 0, 0, 0, NULL));

	/* A read-only fd: EBADF; the harness's child as nobody: EPERM. */
	rfd = open(DEV, O_RDONLY);
	ASSERT_LE(0, rfd);
	EXPECT_EQ(EBADF, kb_collect(rfd, CHG_A, bl, 8, 0, 0, NULL));
	EXPECT_EQ(EBADF, kb_apply(rfd, CHG_A, bl, 1, 0, 0, 0, NULL));
	close(rfd);
	as_nobody(_metadata, chg_nobody, bl, "changes");
	/* Nobody's attempt took no block away. */
	EXPECT_LT(0, collect_pass(_metadata, CHG_A, bl, 8, 0, NULL));

	/* On a handle: no name. */
	ASSERT_EQ(0, kb_open_handle(g_fd, CHG_A, &h));
	EXPECT_EQ(0, kb_skey(h, KBLOOM_IOC_ADD, "", "handle key", NULL));
	EXPECT_EQ(EINVAL, kb_collect(h, CHG_A, bl, 8, 0, 0, NULL));
	EXPECT_EQ(0, kb_collect(h, NULL, bl, 8, 0, 0, &b));
	EXPECT_RANGE(b.done, 1, 4, "a handle's collection of one new key");
	EXPECT_EQ(0, kb_apply(h, NULL, bl, b.done, b.fingerprint, 0, 0,
			      NULL));
	close(h);
	keyset_free(&ks);
}

/* ---- windows: generations relative to the rotations ---- */

TEST_F(changes, window_generations_follow_rotations)
{
	struct kbloom_block *bl = self->blocks;
	struct kbloom_blocks b;
	u32 i, gens[2] = { 0 }, res;

	/* Rotated only by ROTATE: three generations. */
	ASSERT_EQ(0, win_create(CHG_A, CHG_BITS, 0, 3,
				KBLOOM_CREATE_TRACK_CHANGES));
	ASSERT_EQ(0, kb_create_like(g_fd, CHG_B, CHG_A, 0, 0, NULL));
	ASSERT_EQ(0, kb_skey(g_fd, KBLOOM_IOC_ADD, CHG_A, "old key", NULL));
	ASSERT_EQ(0, kb_name_cmd(g_fd, KBLOOM_IOC_ROTATE, CHG_A));
	ASSERT_EQ(0, kb_skey(g_fd, KBLOOM_IOC_ADD, CHG_A, "new key", NULL));
	ASSERT_EQ(0, kb_collect(g_fd, CHG_A, bl, 4 * CHG_BLOCKS, 0, 0, &b));
	EXPECT_U64(b.rotations, 1, "COLLECT's rotations");
	EXPECT_EQ(0U, b.cursor);
	for (i = 0; i < b.done; i++)
		gens[bl[i].generation < 2 ? bl[i].generation : 0]++;
	EXPECT_RANGE(gens[0], 1, 4, "blocks of the newest generation");
	EXPECT_RANGE(gens[1], 1, 4, "blocks of the one before");

	/* B has not rotated: the numbering is stale. */
	EXPECT_EQ(ESTALE, kb_apply(g_fd, CHG_B, bl, b.done, b.fingerprint, 1,
				   0, NULL));
	ASSERT_EQ(0, kb_name_cmd(g_fd, KBLOOM_IOC_ROTATE, CHG_B));
	ASSERT_EQ(0, kb_apply(g_fd, CHG_B, bl, b.done, b.fingerprint, 1, 0,
			      NULL));
	same_payload(_metadata, self, CHG_A, CHG_B, 3 * CHG_BYTES);
	/* And B forgets as A does: two more rotations drop "old key". */
	ASSERT_EQ(0, kb_name_cmd(g_fd, KBLOOM_IOC_ROTATE, CHG_B));
	EXPECT_EQ(0, kb_skey(g_fd, KBLOOM_IOC_QUERY, CHG_B, "old key", &res));
	EXPECT_EQ(1U, res);
	ASSERT_EQ(0, kb_name_cmd(g_fd, KBLOOM_IOC_ROTATE, CHG_B));
	EXPECT_EQ(0, kb_skey(g_fd, KBLOOM_IOC_QUERY, CHG_B, "old key", &res));
	EXPECT_EQ(0U, res);
	EXPECT_EQ(0, kb_skey(g_fd, KBLOOM_IOC_QUERY, CHG_B, "new key", &res));
	EXPECT_EQ(1U, res);
	/* A plain filter is another shape. */
	ASSERT_EQ(0, kb_create_ex(g_fd, CHG_C, CHG_BITS, 4, 0, NULL, NULL));
	EXPECT_EQ(EXDEV, kb_apply(g_fd, CHG_C, bl, 1, b.fingerprint, 0, 0,
				  NULL));
}
