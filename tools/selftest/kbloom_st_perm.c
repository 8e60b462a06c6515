// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_selftest, area "perm": a read-only fd, an unprivileged caller.
 * Included by kbloom_selftest.c.
 */

#define PERM_F		"perm_f"
#define PERM_NEW	"perm_new"

/*
 * Runs in a child of the case, which still holds the case's O_RDWR fd, as
 * user nobody.
 */
static void perm_child(struct __test_metadata *_metadata, int fd)
{
	struct kbloom_info info;
	int err, dfd;
	u32 res;

	if (!EXPECT_COND(setgroups(0, NULL) == 0, strerror(errno),
			 "perm: child setgroups(0, NULL)") ||
	    !EXPECT_COND(setresgid(NOBODY, NOBODY, NOBODY) == 0,
			 strerror(errno), "perm: child setresgid(65534)") ||
	    !EXPECT_COND(setresuid(NOBODY, NOBODY, NOBODY) == 0,
			 strerror(errno), "perm: child setresuid(65534)"))
		return;

	/* The node is 0600 root: only the inherited fd gets us in. */
	dfd = open(DEV, O_RDWR);
	err = dfd < 0 ? errno : 0;
	EXPECT_ERRNO(err, EACCES, "perm: unprivileged open(O_RDWR) of %s", DEV);
	if (dfd >= 0)
		close(dfd);
	dfd = open(DEV, O_RDONLY);
	err = dfd < 0 ? errno : 0;
	EXPECT_ERRNO(err, EACCES, "perm: unprivileged open(O_RDONLY) of %s",
		     DEV);
	if (dfd >= 0)
		close(dfd);

	err = kb_create(fd, PERM_NEW, 1024, 3, 0, 0, NULL);
	EXPECT_ERRNO(err, EPERM, "perm: unprivileged CREATE");
	err = kb_destroy(fd, PERM_F);
	EXPECT_ERRNO(err, EPERM, "perm: unprivileged DESTROY");
	err = kb_clear(fd, PERM_F);
	EXPECT_ERRNO(err, EPERM, "perm: unprivileged CLEAR");

	err = kb_skey(fd, KBLOOM_IOC_QUERY, PERM_F, "rootkey", &res);
	if (EXPECT_OK(err, "perm: unprivileged QUERY"))
		EXPECT_U64(res, 1, "perm: unprivileged QUERY sees root's key");
	err = kb_skey(fd, KBLOOM_IOC_ADD, PERM_F, "childkey", NULL);
	EXPECT_OK(err, "perm: unprivileged ADD on the inherited fd");
	err = kb_info(fd, PERM_F, &info);
	EXPECT_OK(err, "perm: unprivileged INFO");
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
	ASSERT_EQ(0, kb_create(g_fd, PERM_F, 1 << 20, 7, 0, 0, NULL)) {
		TH_LOG("perm: create %s", PERM_F);
	}
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
	u32 lens[1] = { 6 };
	struct kbloom_info info;
	struct kbloom_version v;
	unsigned char bm[1];
	int ro, err;
	u32 res;

	ro = open(DEV, O_RDONLY);
	if (EXPECT_COND(ro >= 0, strerror(errno), "perm: open %s O_RDONLY",
			DEV)) {
		err = ioc(ro, KBLOOM_IOC_VERSION, &v);
		EXPECT_OK(err, "perm: VERSION on a read-only fd");
		err = kb_skey(ro, KBLOOM_IOC_QUERY, PERM_F, "rootkey", &res);
		if (EXPECT_OK(err, "perm: QUERY on a read-only fd"))
			EXPECT_U64(res, 1,
				   "perm: read-only QUERY finds rootkey");
		err = kb_batch(ro, KBLOOM_IOC_QUERY_BATCH, PERM_F, "rootkey",
			       (u32[]){ 7 }, bm, 7, 1, NULL);
		EXPECT_OK(err, "perm: QUERY_BATCH on a read-only fd");
		err = kb_info(ro, PERM_F, &info);
		EXPECT_OK(err, "perm: INFO on a read-only fd");
		err = kb_skey(ro, KBLOOM_IOC_ADD, PERM_F, "rokey", NULL);
		EXPECT_ERRNO(err, EBADF, "perm: ADD on a read-only fd");
		err = kb_skey(ro, KBLOOM_IOC_TEST_AND_ADD, PERM_F, "rokey",
			      NULL);
		EXPECT_ERRNO(err, EBADF,
			     "perm: TEST_AND_ADD on a read-only fd");
		err = kb_batch(ro, KBLOOM_IOC_ADD_BATCH, PERM_F, "rokey!",
			       lens, bm, 6, 1, NULL);
		EXPECT_ERRNO(err, EBADF, "perm: ADD_BATCH on a read-only fd");
		err = kb_batch(ro, KBLOOM_IOC_TEST_AND_ADD_BATCH, PERM_F,
			       "rokey!", lens, bm, 6, 1, NULL);
		EXPECT_ERRNO(err, EBADF,
			     "perm: TEST_AND_ADD_BATCH on a read-only fd");
		err = kb_skey(g_fd, KBLOOM_IOC_QUERY, PERM_F, "rokey", &res);
		EXPECT_COND(err == 0 && res == 0, "a rejected add took effect",
			    "perm: rejected ADD/TEST_AND_ADD added nothing");
		err = kb_skey(g_fd, KBLOOM_IOC_QUERY, PERM_F, "rokey!", &res);
		EXPECT_COND(err == 0 && res == 0,
			    "a rejected batch took effect",
			    "perm: rejected batches added nothing");
		close(ro);
	}
}

TEST_F(perm, unprivileged_caller)
{
	struct kbloom_info info;
	int err, status;
	pid_t pid;
	u32 res;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		/* Its checks fail its own copy of the case: tell by exit. */
		perm_child(_metadata, g_fd);
		fflush(stdout);
		_exit(_metadata->passed ? 0 : 1);
	}
	if (!EXPECT_COND(pid > 0, strerror(errno), "perm: fork"))
		return;
	if (!EXPECT_COND(waitpid(pid, &status, 0) == pid, strerror(errno),
			 "perm: waitpid"))
		return;
	EXPECT_COND(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		    "child crashed or failed", "perm: child exited cleanly");

	/* The child could neither destroy, clear nor create. */
	err = kb_info(g_fd, PERM_F, &info);
	EXPECT_OK(err, "perm: filter survived the unprivileged child");
	err = kb_skey(g_fd, KBLOOM_IOC_QUERY, PERM_F, "rootkey", &res);
	EXPECT_COND(err == 0 && res == 1, "rootkey gone",
		    "perm: filter not cleared by the child");
	err = kb_skey(g_fd, KBLOOM_IOC_QUERY, PERM_F, "childkey", &res);
	EXPECT_COND(err == 0 && res == 1, "childkey absent",
		    "perm: the child's ADD is visible");
	err = kb_info(g_fd, PERM_NEW, &info);
	EXPECT_ERRNO(err, ENOENT, "perm: the child's CREATE made nothing");
}
