// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_selftest, area "perm": a read-only fd, an unprivileged caller.
 * Included by kbloom_selftest.c.
 */

#define PERM_F		"perm_f"
#define PERM_NEW	"perm_new"
#define PERM_A		"perm_a"
#define PERM_B		"perm_b"
#define PERM_KEYS	100u

/* As nobody, with the case's O_RDWR fd; @arg is an export of PERM_F. */
static void perm_child(struct __test_metadata *_metadata, const void *arg)
{
	const struct img *g = arg;
	struct kbloom_info info;
	int err, dfd, fd = g_fd;

	/* The node is 0600 root: only the inherited fd gets us in. */
	dfd = open(DEV, O_RDWR);
	err = dfd < 0 ? errno : 0;
	EXPECT_ERRNO(err, EACCES, "perm: unprivileged open(O_RDWR) of %s", DEV);
	if (dfd >= 0)
		close(dfd);
	dfd = open(DEV, O_RDONLY);
	EXPECT_ERRNO(dfd < 0 ? errno : 0, EACCES,
		     "perm: unprivileged open(O_RDONLY) of %s", DEV);
	if (dfd >= 0)
		close(dfd);

	err = kb_create(fd, PERM_NEW, 1024, 3, 0, 0, NULL);
	EXPECT_ERRNO(err, EPERM, "perm: unprivileged CREATE");
	err = kb_destroy(fd, PERM_F);
	EXPECT_ERRNO(err, EPERM, "perm: unprivileged DESTROY");
	EXPECT_ERRNO(kb_clear(fd, PERM_F), EPERM, "perm: unprivileged CLEAR");

	EXPECT_SKEY(fd, KBLOOM_IOC_QUERY, PERM_F, "rootkey", 1,
		    "perm: unprivileged QUERY sees root's key");
	err = kb_skey(fd, KBLOOM_IOC_ADD, PERM_F, "childkey", NULL);
	EXPECT_OK(err, "perm: unprivileged ADD on the inherited fd");
	EXPECT_OK(kb_info(fd, PERM_F, &info), "perm: unprivileged INFO");

	/* EXPORT and IMPORT need CAP_SYS_ADMIN. */
	EXPECT_ERRNO(kb_export(fd, PERM_F, g->buf, g->len, NULL), EPERM,
		     "perm: unprivileged EXPORT");
	EXPECT_ERRNO(kb_export(fd, PERM_F, g->buf, 0, NULL), EPERM,
		     "perm: unprivileged EXPORT size query");
	EXPECT_ERRNO(kb_import(fd, &g->im, PERM_NEW, 0), EPERM,
		     "perm: unprivileged IMPORT");
	EXPECT_ERRNO(kb_import(fd, &g->im, PERM_F, KBLOOM_IMPORT_REPLACE),
		     EPERM, "perm: unprivileged IMPORT REPLACE");
}

/* PERM_F holding "rootkey", created as root; no PERM_NEW. */
FIXTURE(perm) {
};

FIXTURE_SETUP(perm)
{
	st_open(_metadata);
	cleanup(_metadata, PERM_F);
	cleanup(_metadata, PERM_NEW);
	ASSERT_EQ(0U, geteuid()) {
		TH_LOG("perm: not running as root");
	}
	ASSERT_EQ(0, kb_create(g_fd, PERM_F, 1 << 20, 7, 0, 0, NULL));
	EXPECT_OK(kb_skey(g_fd, KBLOOM_IOC_ADD, PERM_F, "rootkey", NULL),
		  "perm: add rootkey");
}

FIXTURE_TEARDOWN(perm)
{
	cleanup(_metadata, PERM_F);
	cleanup(_metadata, PERM_NEW);
	st_close();
}

/* Read-only fd: lookups yes, changes to keys no. */
TEST_F(perm, read_only_fd)
{
	char (*names)[KBLOOM_NAME_MAX] = NULL;
	u32 lens[1] = { 6 }, i, n, found = 0;
	struct kbloom_batch out;
	struct kbloom_info info;
	struct kbloom_version v;
	struct img rw = { 0 }, g = { 0 };
	unsigned char bm[1];
	long count;
	int ro, err;

	ro = open(DEV, O_RDONLY);
	if (!EXPECT_COND(ro >= 0, strerror(errno), "perm: open %s O_RDONLY",
			 DEV))
		return;
	memset(&v, 0xa5, sizeof(v));
	err = ioc(ro, KBLOOM_IOC_VERSION, &v);
	if (EXPECT_OK(err, "perm: VERSION on a read-only fd")) {
		EXPECT_U64(v.api_version, KBLOOM_API_VERSION,
			   "perm: read-only VERSION api_version");
		EXPECT_U64(v.name_max, KBLOOM_NAME_MAX,
			   "perm: read-only VERSION name_max");
	}
	EXPECT_SKEY(ro, KBLOOM_IOC_QUERY, PERM_F, "rootkey", 1,
		    "perm: read-only QUERY finds rootkey");
	EXPECT_SKEY(ro, KBLOOM_IOC_QUERY, PERM_F, "never", 0,
		    "perm: read-only QUERY of an absent key");
	err = kb_batch(ro, KBLOOM_IOC_QUERY_BATCH, PERM_F, "rootkey",
		       (u32[]){ 7 }, bm, 7, 1, &out);
	if (EXPECT_OK(err, "perm: QUERY_BATCH on a read-only fd"))
		EXPECT_COND(out.done == 1 && out.hits == 1, "done or hits not 1",
			    "perm: read-only QUERY_BATCH finds rootkey");

	/* INFO and EXPORT say on a read-only fd what they say on another. */
	if (img_take(_metadata, PERM_F, &rw, "perm")) {
		err = img_get(ro, PERM_F, &g);
		if (EXPECT_OK(err, "perm: EXPORT on a read-only fd")) {
			EXPECT_COND(img_equal(&g, &rw), "differs",
				    "perm: read-only EXPORT is the same image");
			EXPECT_U64(g.im.adds, 1, "perm: read-only EXPORT adds");
		}
		err = kb_info(ro, PERM_F, &info);
		if (EXPECT_OK(err, "perm: INFO on a read-only fd")) {
			EXPECT_COND(info.bits == 1 << 20 && info.hashes == 7 &&
				    info.adds == 1, "differs",
				    "perm: read-only INFO bits, hashes, adds");
			EXPECT_U64(info.bits_set, image_weight(&rw.im, rw.buf),
				   "perm: read-only INFO bits_set is the payload's");
		}
	}
	img_free(&rw);
	img_free(&g);

	/* LIST on a read-only fd: every filter. */
	count = count_filters(_metadata);
	if (EXPECT_OK(kb_list(ro, &names, &n), "perm: LIST on a read-only fd")) {
		EXPECT_U64(n, (u64)count, "perm: read-only LIST count");
		for (i = 0; i < n; i++)
			found += !strcmp(names[i], PERM_F);
		EXPECT_U64(found, 1, "perm: read-only LIST names %s", PERM_F);
	}
	free(names);

	err = kb_skey(ro, KBLOOM_IOC_ADD, PERM_F, "rokey", NULL);
	EXPECT_ERRNO(err, EBADF, "perm: ADD on a read-only fd");
	err = kb_skey(ro, KBLOOM_IOC_TEST_AND_ADD, PERM_F, "rokey", NULL);
	EXPECT_ERRNO(err, EBADF, "perm: TEST_AND_ADD on a read-only fd");
	err = kb_batch(ro, KBLOOM_IOC_ADD_BATCH, PERM_F, "rokey!", lens, bm, 6,
		       1, NULL);
	EXPECT_ERRNO(err, EBADF, "perm: ADD_BATCH on a read-only fd");
	err = kb_batch(ro, KBLOOM_IOC_TEST_AND_ADD_BATCH, PERM_F, "rokey!",
		       lens, bm, 6, 1, NULL);
	EXPECT_ERRNO(err, EBADF, "perm: TEST_AND_ADD_BATCH on a read-only fd");
	EXPECT_SKEY(g_fd, KBLOOM_IOC_QUERY, PERM_F, "rokey", 0,
		    "perm: rejected ADD/TEST_AND_ADD added nothing");
	EXPECT_SKEY(g_fd, KBLOOM_IOC_QUERY, PERM_F, "rokey!", 0,
		    "perm: rejected batches added nothing");
	close(ro);
}

TEST_F(perm, unprivileged_caller)
{
	struct kbloom_info info;
	struct img g;
	int err;
	bool ok;

	ASSERT_TRUE(img_take(_metadata, PERM_F, &g, "perm"));
	ok = as_nobody(_metadata, perm_child, &g, "perm");
	img_free(&g);
	if (!ok)
		return;
	/*
	 * The child could not destroy, clear, create, import, nor replace
	 * (which would have lost its key).
	 */
	err = kb_info(g_fd, PERM_F, &info);
	EXPECT_OK(err, "perm: filter survived the unprivileged child");
	EXPECT_SKEY(g_fd, KBLOOM_IOC_QUERY, PERM_F, "rootkey", 1,
		    "perm: filter not cleared by the child");
	EXPECT_SKEY(g_fd, KBLOOM_IOC_QUERY, PERM_F, "childkey", 1,
		    "perm: the child's ADD is visible");
	err = kb_info(g_fd, PERM_NEW, &info);
	EXPECT_ERRNO(err, ENOENT,
		     "perm: the child's CREATE and IMPORT made nothing");
}

/*
 * As nobody, with a read-only fd: a missing write mode is reported before
 * a missing capability.
 */
static void perm_ro_child(struct __test_metadata *_metadata, const void *arg)
{
	const int *ro = arg;
	struct kbloom_image im;
	unsigned char buf[8];
	int err;

	err = kb_create(*ro, PERM_NEW, 1024, 3, 0, 0, NULL);
	EXPECT_ERRNO(err, EBADF, "perm: unprivileged CREATE, read-only fd");
	err = kb_destroy(*ro, PERM_F);
	EXPECT_ERRNO(err, EBADF, "perm: unprivileged DESTROY, read-only fd");
	err = kb_clear(*ro, PERM_F);
	EXPECT_ERRNO(err, EBADF, "perm: unprivileged CLEAR, read-only fd");
	EXPECT_ERRNO(kb_export(*ro, PERM_F, buf, sizeof(buf), &im), EPERM,
		     "perm: unprivileged EXPORT, read-only fd (needs only the capability)");
	err = kb_merge(*ro, KBLOOM_IOC_MERGE, PERM_F, PERM_F, NULL);
	EXPECT_ERRNO(err, EBADF, "perm: unprivileged MERGE, read-only fd");
	err = kb_merge(*ro, KBLOOM_IOC_COMPARE, PERM_F, PERM_F, NULL);
	EXPECT_ERRNO(err, EBADF, "perm: unprivileged COMPARE, read-only fd");
	memset(&im, 0, sizeof(im));
	im.payload = PTR(buf);
	im.payload_len = sizeof(buf);
	err = kb_import(*ro, &im, PERM_NEW, 0);
	EXPECT_ERRNO(err, EBADF, "perm: unprivileged IMPORT, read-only fd");
}

TEST_F(perm, unprivileged_read_only_fd)
{
	struct kbloom_info info;
	long before = count_filters(_metadata);
	int ro, err;

	ro = open(DEV, O_RDONLY);
	ASSERT_LE(0, ro);
	as_nobody(_metadata, perm_ro_child, &ro, "perm");
	close(ro);
	EXPECT_U64(count_filters(_metadata), before,
		   "perm: the unprivileged calls created nothing");
	err = kb_info(g_fd, PERM_F, &info);
	if (EXPECT_OK(err, "perm: %s survived", PERM_F))
		EXPECT_U64(info.adds, 1, "perm: %s's adds unchanged", PERM_F);
	EXPECT_SKEY(g_fd, KBLOOM_IOC_QUERY, PERM_F, "rootkey", 1,
		    "perm: %s not cleared", PERM_F);
}

/* ---- every change refused on a read-only fd, one command a case ---- */

enum perm_op {
	PERM_CREATE, PERM_DESTROY, PERM_CLEAR, PERM_ROTATE, PERM_IMPORT,
	PERM_IMPORT_REPLACE,
};

/*
 * PERM_A and PERM_B (created like it) with PERM_KEYS keys each, their
 * exports self->a and self->b, the number of filters, and a read-only fd.
 */
FIXTURE(perm_ro) {
	int ro;
	struct keyset ka, kb;
	struct snap a, b;
	long count;
};

FIXTURE_VARIANT(perm_ro) {
	enum perm_op op;
};

FIXTURE_VARIANT_ADD(perm_ro, create) { .op = PERM_CREATE };
FIXTURE_VARIANT_ADD(perm_ro, destroy) { .op = PERM_DESTROY };
FIXTURE_VARIANT_ADD(perm_ro, clear) { .op = PERM_CLEAR };
FIXTURE_VARIANT_ADD(perm_ro, rotate) { .op = PERM_ROTATE };
FIXTURE_VARIANT_ADD(perm_ro, import) { .op = PERM_IMPORT };
FIXTURE_VARIANT_ADD(perm_ro, import_replace) { .op = PERM_IMPORT_REPLACE };

FIXTURE_SETUP(perm_ro)
{
	self->ro = -1;
	st_open(_metadata);
	cleanup(_metadata, PERM_A);
	cleanup(_metadata, PERM_B);
	cleanup(_metadata, PERM_NEW);
	ASSERT_EQ(0, kb_create(g_fd, PERM_A, 1 << 16, 4, 0, 0, NULL));
	ASSERT_EQ(0, kb_create_like(g_fd, PERM_B, PERM_A, 0, 0, NULL));
	ASSERT_TRUE(keyset_tag(_metadata, &self->ka, "roa", PERM_KEYS));
	ASSERT_TRUE(keyset_tag(_metadata, &self->kb, "rob", PERM_KEYS));
	ASSERT_TRUE(ks_add(_metadata, PERM_A, &self->ka, 0, PERM_KEYS));
	ASSERT_TRUE(ks_add(_metadata, PERM_B, &self->kb, 0, PERM_KEYS));
	ASSERT_TRUE(snap_take(_metadata, PERM_A, &self->a));
	ASSERT_TRUE(snap_take(_metadata, PERM_B, &self->b));
	self->count = count_filters(_metadata);
	ASSERT_LE(2, self->count);
	self->ro = open(DEV, O_RDONLY);
	ASSERT_LE(0, self->ro);
}

FIXTURE_TEARDOWN(perm_ro)
{
	if (self->ro >= 0)
		close(self->ro);
	keyset_free(&self->ka);
	keyset_free(&self->kb);
	img_free(&self->a.g);
	img_free(&self->b.g);
	cleanup(_metadata, PERM_A);
	cleanup(_metadata, PERM_B);
	cleanup(_metadata, PERM_NEW);
	st_close();
}

/*
 * EBADF, and nothing changed: the same filters, and each one's export
 * and statistics.
 */
TEST_F(perm_ro, refused)
{
	struct kbloom_info info;

	switch (variant->op) {
	case PERM_CREATE:
		EXPECT_ERRNO(kb_create(self->ro, PERM_NEW, 1024, 3, 0, 0, NULL),
			     EBADF, "perm: CREATE on a read-only fd");
		EXPECT_ERRNO(kb_create_like(self->ro, PERM_NEW, PERM_A, 0, 0,
					    NULL),
			     EBADF, "perm: CREATE LIKE on a read-only fd");
		break;
	case PERM_DESTROY:
		EXPECT_ERRNO(kb_destroy(self->ro, PERM_A), EBADF,
			     "perm: DESTROY on a read-only fd");
		EXPECT_TRUE(filter_dir_exists(PERM_A));
		break;
	case PERM_CLEAR:
		EXPECT_ERRNO(kb_clear(self->ro, PERM_A), EBADF,
			     "perm: CLEAR on a read-only fd");
		break;
	case PERM_ROTATE:
		/* A windowed filter's generations: window 0 rotates on ROTATE. */
		ASSERT_EQ(0, win_create(PERM_NEW, 4096, 0, 2, 0));
		EXPECT_ERRNO(kb_name_cmd(self->ro, KBLOOM_IOC_ROTATE, PERM_NEW),
			     EBADF, "perm: ROTATE on a read-only fd");
		ASSERT_EQ(0, kb_info(g_fd, PERM_NEW, &info));
		EXPECT_EQ(0ULL, info.rotations);
		/* The read-write fd may. */
		EXPECT_OK(kb_name_cmd(g_fd, KBLOOM_IOC_ROTATE, PERM_NEW),
			  "perm: ROTATE on a read-write fd");
		ASSERT_EQ(0, kb_info(g_fd, PERM_NEW, &info));
		EXPECT_EQ(1ULL, info.rotations);
		ASSERT_EQ(0, kb_destroy(g_fd, PERM_NEW));
		break;
	case PERM_IMPORT:
		EXPECT_ERRNO(kb_import(self->ro, &self->a.g.im, PERM_NEW, 0),
			     EBADF, "perm: IMPORT on a read-only fd");
		break;
	case PERM_IMPORT_REPLACE:
		EXPECT_ERRNO(kb_import(self->ro, &self->a.g.im, PERM_B,
				       KBLOOM_IMPORT_REPLACE),
			     EBADF, "perm: IMPORT REPLACE on a read-only fd");
		break;
	}

	EXPECT_EQ(self->count, kb_count(g_fd));
	EXPECT_FALSE(kb_exists(g_fd, PERM_NEW));
	snap_same(_metadata, PERM_A, &self->a);
	snap_same(_metadata, PERM_B, &self->b);
}
