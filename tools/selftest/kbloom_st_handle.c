// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_selftest, area "handle": KBLOOM_IOC_OPEN and the file descriptors
 * it returns, bound to one filter: the key commands on them without a
 * name, their access mode, what else they refuse, a destroyed filter
 * under an open handle, the memory and module reference a handle holds,
 * and OPEN's bad arguments. Included by kbloom_selftest.c.
 */

#define HANDLE_F "handle_f"

/* A fresh HANDLE_F: 1 Mbit, 7 hashes, so a few keys give no false positive. */
FIXTURE(handle) {
};

FIXTURE_SETUP(handle)
{
	st_open(_metadata);
	cleanup(_metadata, HANDLE_F);
	ASSERT_EQ(0, kb_create(g_fd, HANDLE_F, 1 << 20, 7, 0, 0, NULL));
}

FIXTURE_TEARDOWN(handle)
{
	cleanup(_metadata, HANDLE_F);
	st_close();
}

/* Does /proc/self/fdinfo/@fd hold the line @want? */
static bool fdinfo_has(int fd, const char *want)
{
	char path[64], line[256];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strcmp(line, want);
	fclose(f);
	return found;
}

TEST_F(handle, keys_without_name)
{
	static const char keys[] = "alphazzz";
	static const u32 lens[] = { 5, 3 };
	struct kbloom_batch b;
	unsigned char results = 0;
	int h, err, flags;
	u32 res;

	if (!EXPECT_OK(kb_open_handle(g_fd, HANDLE_F, &h), "OPEN " HANDLE_F))
		return;
	EXPECT_COND(h >= 0 && h != g_fd, NULL, "OPEN returns a new fd (%d)", h);
	flags = fcntl(h, F_GETFD);
	EXPECT_COND(flags >= 0 && (flags & FD_CLOEXEC), NULL,
		    "the handle is close-on-exec");

	EXPECT_SKEY(h, KBLOOM_IOC_ADD, "", "alpha", 0,
		    "ADD on the handle writes result 0");
	EXPECT_SKEY(g_fd, KBLOOM_IOC_QUERY, HANDLE_F, "alpha", 1,
		    "a key added on the handle is in the named filter");
	EXPECT_SKEY(h, KBLOOM_IOC_TEST_AND_ADD, "", "alpha", 1,
		    "TEST_AND_ADD on the handle: seen");
	EXPECT_SKEY(h, KBLOOM_IOC_QUERY, "", "beta", 0,
		    "QUERY on the handle of an absent key");

	err = kb_batch(h, KBLOOM_IOC_QUERY_BATCH, "", keys, lens, &results,
		       sizeof(keys) - 1, 2, &b);
	if (EXPECT_OK(err, "QUERY_BATCH on the handle")) {
		EXPECT_U64(b.done, 2, "QUERY_BATCH on the handle: done");
		EXPECT_U64(b.hits, 1, "QUERY_BATCH on the handle: hits");
		EXPECT_U64(results, 1, "QUERY_BATCH on the handle: results");
	}
	err = kb_batch(h, KBLOOM_IOC_ADD_BATCH, "", keys, lens, NULL,
		       sizeof(keys) - 1, 2, &b);
	if (EXPECT_OK(err, "ADD_BATCH on the handle"))
		EXPECT_U64(b.done, 2, "ADD_BATCH on the handle: done");
	EXPECT_SKEY(g_fd, KBLOOM_IOC_QUERY, HANDLE_F, "zzz", 1,
		    "the batch on the handle went to the filter");

	/* A handle takes no name, not even its own filter's. */
	err = kb_skey(h, KBLOOM_IOC_QUERY, HANDLE_F, "alpha", &res);
	EXPECT_ERRNO(err, EINVAL, "QUERY on the handle with a name");
	err = kb_batch(h, KBLOOM_IOC_ADD_BATCH, HANDLE_F, keys, lens, NULL,
		       sizeof(keys) - 1, 2, &b);
	EXPECT_ERRNO(err, EINVAL, "ADD_BATCH on the handle with a name");
	err = kb_skey(h, KBLOOM_IOC_REMOVE, "", "alpha", &res);
	EXPECT_ERRNO(err, EOPNOTSUPP, "REMOVE on a handle of a plain filter");
	/* Only the key commands. */
	EXPECT_ERRNO(kb_destroy(h, HANDLE_F), ENOTTY, "DESTROY on a handle");
	err = kb_create(h, "handle_g", 1 << 10, 3, 0, 0, NULL);
	EXPECT_ERRNO(err, ENOTTY, "CREATE on a handle");
	err = kb_open_handle(h, HANDLE_F, &flags);
	EXPECT_ERRNO(err, ENOTTY, "OPEN on a handle");
	close(h);
}

TEST_F(handle, read_only)
{
	int ro, h, err;
	u32 res;

	ro = open(DEV, O_RDONLY);
	ASSERT_LE(0, ro);
	err = kb_open_handle(ro, HANDLE_F, &h);
	close(ro);
	if (!EXPECT_OK(err, "OPEN on a read-only device fd"))
		return;
	EXPECT_COND((fcntl(h, F_GETFL) & O_ACCMODE) == O_RDONLY, NULL,
		    "a handle from a read-only fd is read-only");
	err = kb_skey(h, KBLOOM_IOC_ADD, "", "alpha", &res);
	EXPECT_ERRNO(err, EBADF, "ADD on a read-only handle");
	err = kb_skey(h, KBLOOM_IOC_TEST_AND_ADD, "", "alpha", &res);
	EXPECT_ERRNO(err, EBADF, "TEST_AND_ADD on a read-only handle");
	EXPECT_SKEY(h, KBLOOM_IOC_QUERY, "", "alpha", 0,
		    "the refused ADD added nothing");
	close(h);
}

/*
 * Destroying the filter does not wait for handles: they fail with ENOENT
 * from then on, keep the memory until closed, and a new filter of the
 * same name is another filter. Memory is judged once every deferred free
 * has run (quiesce(): memory_used equals what the live filters are
 * charged), so the frees of earlier cases cannot blur it.
 */
TEST_F(handle, destroyed)
{
	static const char key[] = "k";
	static const u32 len = 1;
	u64 used, sum, charge = 0, refcnt0, refcnt1;
	struct kbloom_batch b;
	int h, err;
	u32 res;

	err = sysfs_read_u64("/sys/module/kbloom/refcnt", &refcnt0);
	EXPECT_OK(err, "read the module's refcnt");
	if (!EXPECT_OK(kb_open_handle(g_fd, HANDLE_F, &h), "OPEN " HANDLE_F))
		return;
	err = sysfs_read_u64("/sys/module/kbloom/refcnt", &refcnt1);
	if (EXPECT_OK(err, "read the module's refcnt"))
		EXPECT_U64(refcnt1, refcnt0 + 1,
			   "an open handle holds the module (rmmod refused)");
	err = kb_skey(h, KBLOOM_IOC_ADD, "", "before", &res);
	EXPECT_OK(err, "ADD on the handle");
	err = filter_attr(HANDLE_F, "memory_charged", &charge);
	EXPECT_OK(err, "read " HANDLE_F "'s memory_charged");
	EXPECT_COND(fdinfo_has(h, "kbloom-filter:\t" HANDLE_F "\n") &&
		    fdinfo_has(h, "kbloom-destroyed:\t0\n"), NULL,
		    "fdinfo names the handle's filter, not destroyed");

	err = kb_destroy(g_fd, HANDLE_F);
	if (!EXPECT_OK(err, "DESTROY with a handle open (handles do not pin)")) {
		close(h);
		return;
	}
	EXPECT_COND(fdinfo_has(h, "kbloom-destroyed:\t1\n"), NULL,
		    "fdinfo says the handle's filter was destroyed");
	err = kb_skey(h, KBLOOM_IOC_ADD, "", "after", &res);
	EXPECT_ERRNO(err, ENOENT, "ADD on the handle of a destroyed filter");
	err = kb_skey(h, KBLOOM_IOC_QUERY, "", "before", &res);
	EXPECT_ERRNO(err, ENOENT, "QUERY on the handle of a destroyed filter");
	err = kb_batch(h, KBLOOM_IOC_QUERY_BATCH, "", key, &len, NULL, 1, 1, &b);
	EXPECT_ERRNO(err, ENOENT, "QUERY_BATCH on the handle of a destroyed filter");

	/* The same name again: another filter, which the handle is not. */
	ASSERT_EQ(0, kb_create(g_fd, HANDLE_F, 1 << 20, 7, 0, 0, NULL));
	EXPECT_SKEY(g_fd, KBLOOM_IOC_QUERY, HANDLE_F, "before", 0,
		    "the new filter of the same name is empty");
	err = kb_skey(h, KBLOOM_IOC_ADD, "", "after", &res);
	EXPECT_ERRNO(err, ENOENT, "the old handle does not reach the new filter");
	cleanup(_metadata, HANDLE_F);

	/* Held: the destroyed filter is still charged, beyond the live ones. */
	err = settle(g_fd, charge, &used, &sum);
	EXPECT_OK(err, "the handle holds exactly the destroyed filter's %llu bytes (used %llu, live %llu)",
		  (unsigned long long)charge, (unsigned long long)used,
		  (unsigned long long)sum);
	/* Closed: all of it comes back, after a grace period. */
	close(h);
	err = quiesce(g_fd, &used, &sum);
	EXPECT_OK(err, "closing the handle frees the destroyed filter (used %llu, live %llu)",
		  (unsigned long long)used, (unsigned long long)sum);
	err = sysfs_read_u64("/sys/module/kbloom/refcnt", &refcnt1);
	if (EXPECT_OK(err, "read the module's refcnt"))
		EXPECT_U64(refcnt1, refcnt0, "closing the handle puts the module");
}

TEST_F(handle, bad_open)
{
	struct kbloom_open *ro;
	long fds0, fds1;
	int h, err;

	err = kb_open_handle(g_fd, "handle_none", &h);
	EXPECT_ERRNO(err, ENOENT, "OPEN of a missing filter");
	err = kb_open_handle(g_fd, ".bad", &h);
	EXPECT_ERRNO(err, EINVAL, "OPEN of a bad name");
	/*
	 * Flags and reserved words: badioctl.reserved_fields; unmapped:
	 * badioctl.null_and_unmapped_arguments.
	 */

	/* Readable but not writable: the fd cannot be told, so none is made. */
	ro = map_pages(_metadata, 1);
	ASSERT_TRUE(ro != NULL);
	set_name(ro->name, HANDLE_F);
	ASSERT_EQ(0, mprotect(ro, 4096, PROT_READ));
	fds0 = fds_open();
	EXPECT_ERRNO(ioc(g_fd, KBLOOM_IOC_OPEN, ro), EFAULT,
		     "OPEN whose fd cannot be written back");
	fds1 = fds_open();
	EXPECT_COND(fds0 >= 0 && fds1 == fds0, NULL,
		    "no descriptor left behind (%ld before, %ld after)", fds0,
		    fds1);
	munmap(ro, 4096);
}
