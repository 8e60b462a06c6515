// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_selftest, area "sysfs": the attributes under /sys/kernel/bloom.
 * Included by kbloom_selftest.c.
 */

#define SYSFS_F "sysfs_t"

/*
 * Read a sysfs attribute that must hold exactly one decimal integer and a
 * newline (sysfs_read_u64() says EINVAL if it holds anything else).
 */
static bool sysfs_u64(struct __test_metadata *_metadata, const char *path,
		      u64 *val)
{
	return EXPECT_OK(sysfs_read_u64(path, val),
			 "sysfs: %s is one decimal integer and a newline",
			 path);
}

/*
 * SYSFS_F, 100000 bits and 5 hashes, after 1000 adds and 500 queries
 * (all hits); self->info is its INFO then.
 */
FIXTURE(sysfs) {
	struct kbloom_info info;
};

FIXTURE_SETUP(sysfs)
{
	struct keyset ks = { 0 };
	struct kbloom_batch out;
	int err;

	st_open(_metadata);
	cleanup(_metadata, SYSFS_F);
	ASSERT_EQ(0, kb_create(g_fd, SYSFS_F, 100000, 5, 0, 0, NULL)) {
		TH_LOG("sysfs: create %s", SYSFS_F);
	}
	ASSERT_TRUE(keyset_gen(_metadata, &ks, 1000, 3, 0, 32));
	err = kb_batch(g_fd, KBLOOM_IOC_ADD_BATCH, SYSFS_F, ks.keys, ks.lens,
		       NULL, ks.bytes, ks.count, &out);
	EXPECT_COND(err == 0 && out.done == 1000, "ADD_BATCH failed",
		    "sysfs: add 1000 keys");
	err = kb_batch(g_fd, KBLOOM_IOC_QUERY_BATCH, SYSFS_F, ks.keys,
		       ks.lens, NULL, ks.off[500], 500, &out);
	EXPECT_COND(err == 0 && out.done == 500 && out.hits == 500,
		    "QUERY_BATCH failed or missed", "sysfs: query 500 of them");
	keyset_free(&ks);
	err = kb_info(g_fd, SYSFS_F, &self->info);
	ASSERT_EQ(0, err) {
		TH_LOG("sysfs: INFO %s", SYSFS_F);
	}
	EXPECT_RANGE(self->info.bits_set, 1, 5000,
		     "sysfs: INFO bits_set in 1..5000");
}

FIXTURE_TEARDOWN(sysfs)
{
	cleanup(_metadata, SYSFS_F);
	st_close();
}

TEST_F(sysfs, filter_attributes)
{
	static const char *const files[] = {
		"bits", "hashes", "capacity", "bits_set", "adds", "queries",
		"hits", "memory_bytes",
	};
	const u64 want[ARRAY_SIZE(files)] = {
		100000, 5, 0, self->info.bits_set, 1000, 500, 500,
		self->info.memory_bytes,
	};
	char path[256];
	size_t i;
	u64 val;

	for (i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), SYSFS "/filters/" SYSFS_F "/%s",
			 files[i]);
		if (sysfs_u64(_metadata, path, &val))
			EXPECT_U64(val, want[i], "sysfs: %s", files[i]);
	}
}

TEST_F(sysfs, module_attributes)
{
	u64 count, used = 0, budget, mem;
	bool have_mem;

	have_mem = sysfs_u64(_metadata, SYSFS "/filters/" SYSFS_F
			     "/memory_bytes", &mem);
	if (sysfs_u64(_metadata, SYSFS "/filter_count", &count))
		EXPECT_COND(count >= 1, "zero with a filter present",
			    "sysfs: filter_count >= 1");
	if (sysfs_u64(_metadata, SYSFS "/memory_used", &used) && have_mem)
		EXPECT_COND(used >= mem, "less than the filter's own memory",
			    "sysfs: memory_used >= memory_bytes");
	if (sysfs_u64(_metadata, SYSFS "/memory_budget", &budget))
		EXPECT_COND(budget > 0 && budget >= used,
			    "zero or below memory_used",
			    "sysfs: memory_budget > 0 and >= memory_used");
}

TEST_F(sysfs, gone_after_destroy)
{
	const char *dir = SYSFS "/filters/" SYSFS_F;
	struct stat st;
	int err;

	err = kb_destroy(g_fd, SYSFS_F);
	if (EXPECT_OK(err, "sysfs: destroy %s", SYSFS_F)) {
		err = stat(dir, &st) ? errno : 0;
		EXPECT_ERRNO(err, ENOENT, "sysfs: %s gone after destroy", dir);
	}
}
