// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_selftest, area "sysfs": the attributes under /sys/kernel/bloom,
 * their modes, bits_set and saturated as counters kept by every command
 * (and read in constant time), and the uevents of a filter's directory.
 * Included by kbloom_selftest.c.
 */
#include <sys/socket.h>
#include <linux/netlink.h>

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

	st_open(_metadata);
	cleanup(_metadata, SYSFS_F);
	ASSERT_EQ(0, kb_create(g_fd, SYSFS_F, 100000, 5, 0, 0, NULL));
	ASSERT_TRUE(keyset_gen(_metadata, &ks, 1000, 3, 0, 32));
	ks_add(_metadata, SYSFS_F, &ks, 0, 1000);
	EXPECT_U64((u64)ks_hits(_metadata, SYSFS_F, &ks, 0, 500), 500,
		   "sysfs: query 500 of them");
	keyset_free(&ks);
	ASSERT_EQ(0, kb_info(g_fd, SYSFS_F, &self->info));
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

/* ---- modes, and bits_set and saturated as counters ---- */

#define SYSFS_P		"sysfs_p"
#define SYSFS_P2	"sysfs_p2"
#define SYSFS_C		"sysfs_c"
#define SYSFS_C2	"sysfs_c2"
#define SYSFS_NEW	"sysfs_new"
#define SYSFS_CNEW	"sysfs_cnew"

static const char *const sysfs_counted[] = {
	SYSFS_P, SYSFS_P2, SYSFS_C, SYSFS_C2, SYSFS_NEW, SYSFS_CNEW,
};

/*
 * SYSFS_P (plain) and SYSFS_C (counting), of sizes that are not
 * multiples of 64 (padding exists), SYSFS_P2 and SYSFS_C2 like them, all
 * empty; self->k1 and self->k2 2000 keys each.
 */
FIXTURE(sysfs_counts) {
	struct keyset k1, k2;
};

FIXTURE_SETUP(sysfs_counts)
{
	st_open(_metadata);
	cleanup_all(sysfs_counted);
	ASSERT_EQ(0, kb_create(g_fd, SYSFS_P, 100003, 5, 0, 0, NULL));
	ASSERT_EQ(0, kb_create_like(g_fd, SYSFS_P2, SYSFS_P, 0, 0, NULL));
	ASSERT_EQ(0, kb_create_ex(g_fd, SYSFS_C, 10007, 4,
				  KBLOOM_CREATE_COUNTING, NULL, NULL));
	ASSERT_EQ(0, kb_create_like(g_fd, SYSFS_C2, SYSFS_C, 0, 0, NULL));
	ASSERT_TRUE(keyset_tag(_metadata, &self->k1, "ss1", 2000));
	ASSERT_TRUE(keyset_tag(_metadata, &self->k2, "ss2", 2000));
}

FIXTURE_TEARDOWN(sysfs_counts)
{
	keyset_free(&self->k1);
	keyset_free(&self->k2);
	cleanup_all(sysfs_counted);
	st_close();
}

/* One key command on key @i of @ks, one ioctl each. */
static void sysfs_each(struct __test_metadata *_metadata, unsigned long cmd,
		       const char *name, const struct keyset *ks, u32 first,
		       u32 n)
{
	u32 i;

	for (i = first; i < first + n; i++)
		ASSERT_EQ(0, kb_key(g_fd, cmd, name, ks->keys + ks->off[i],
				    ks->lens[i], NULL));
}

/*
 * One rule for every file (kbloom_sysfs.c): what traffic moves is root's,
 * what the administrator chose is everyone's. Every file of a filter's
 * directory must be in this table, so that a new one is classified.
 */
TEST_F(sysfs_counts, modes)
{
	static const struct {
		const char *file;
		unsigned int mode;
	} files[] = {
		/*
		 * Traffic is root's: statistics, the exact fill (whoever can
		 * send keys could tell whether theirs was already in), and
		 * rotations (a rotate-at-fill filter's tell how fast keys
		 * arrive).
		 */
		{ "adds", 0400 }, { "queries", 0400 }, { "hits", 0400 },
		{ "bits_set", 0400 }, { "saturated", 0400 },
		{ "rotations", 0400 },
		/* The filter's shape and use are everyone's. */
		{ "bits", 0444 }, { "hashes", 0444 }, { "counting", 0444 },
		{ "layout", 0444 }, { "capacity", 0444 }, { "fpr_ppb", 0444 },
		{ "memory_bytes", 0444 }, { "memory_charged", 0444 },
		{ "rules", 0444 }, { "hash_scheme", 0444 },
		{ "window_ms", 0444 }, { "generations", 0444 },
		{ "id", 0444 }, { "bpf", 0444 },
	};
	static const char *const filters[] = { SYSFS_P, SYSFS_C };
	char path[160];
	struct dirent *e;
	struct stat st;
	size_t i, j;
	DIR *d;

	for (j = 0; j < ARRAY_SIZE(filters); j++) {
		for (i = 0; i < ARRAY_SIZE(files); i++) {
			snprintf(path, sizeof(path), SYSFS "/filters/%s/%s",
				 filters[j], files[i].file);
			ASSERT_EQ(0, stat(path, &st)) {
				TH_LOG("%s: %s", path, strerror(errno));
			}
			EXPECT_EQ(files[i].mode, st.st_mode & 07777) {
				TH_LOG("%s is mode %03o, want %03o", path,
				       st.st_mode & 07777, files[i].mode);
			}
		}
		snprintf(path, sizeof(path), SYSFS "/filters/%s", filters[j]);
		d = opendir(path);
		ASSERT_TRUE(d != NULL);
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.' || e->d_type != DT_REG)
				continue;
			for (i = 0; i < ARRAY_SIZE(files); i++)
				if (!strcmp(e->d_name, files[i].file))
					break;
			EXPECT_LT(i, ARRAY_SIZE(files)) {
				TH_LOG("%s/%s: a file the rule does not classify",
				       path, e->d_name);
			}
		}
		closedir(d);
	}
}

/*
 * What sysfs.filter_attributes does not read there: counting, rules, and
 * ids (positive, below 2^31, one per filter). The hash scheme is
 * create.hash_schemes'.
 */
TEST_F(sysfs_counts, values)
{
	u64 v, w;

	ASSERT_EQ(0, filter_attr(SYSFS_C, "counting", &v));
	EXPECT_EQ(1ULL, v);
	ASSERT_EQ(0, filter_attr(SYSFS_P, "counting", &v));
	EXPECT_EQ(0ULL, v);
	ASSERT_EQ(0, filter_attr(SYSFS_C, "rules", &v));
	EXPECT_EQ(0ULL, v);	/* no in-kernel user pins it */
	ASSERT_EQ(0, filter_attr(SYSFS_C, "id", &v));
	ASSERT_EQ(0, filter_attr(SYSFS_P, "id", &w));
	EXPECT_GT(v, 0ULL);
	EXPECT_LT(v, 1ULL << 31);
	EXPECT_GT(w, 0ULL);
	EXPECT_NE(v, w);
}

/* As nobody: the traffic statistics are root's, the shape is everyone's. */
static void sysfs_nobody(struct __test_metadata *_metadata, const void *arg)
{
	static const struct {
		const char *file;
		int err;
	} files[] = {
		{ "adds", EACCES }, { "queries", EACCES }, { "hits", EACCES },
		{ "bits_set", EACCES }, { "saturated", EACCES },
		{ "bits", 0 }, { "hashes", 0 },
	};
	char path[160];
	size_t i;
	int f;

	(void)arg;
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), SYSFS "/filters/" SYSFS_P "/%s",
			 files[i].file);
		f = open(path, O_RDONLY);
		EXPECT_ERRNO(f < 0 ? errno : 0, files[i].err,
			     "sysfs: unprivileged open of %s", path);
		if (f >= 0)
			close(f);
	}
}

TEST_F(sysfs_counts, traffic_statistics_root_only)
{
	as_nobody(_metadata, sysfs_nobody, NULL, "sysfs");
}

TEST_F(sysfs_counts, bits_set_after_adds)
{
	check_counts(_metadata, SYSFS_P, "fresh");
	check_counts(_metadata, SYSFS_C, "fresh");
	ASSERT_TRUE(ks_add(_metadata, SYSFS_P, &self->k1, 0, 1000));
	ASSERT_TRUE(ks_add(_metadata, SYSFS_C, &self->k1, 0, 1000));
	sysfs_each(_metadata, KBLOOM_IOC_ADD, SYSFS_P, &self->k1, 1000, 100);
	sysfs_each(_metadata, KBLOOM_IOC_ADD, SYSFS_C, &self->k1, 1000, 100);
	check_counts(_metadata, SYSFS_P, "after adds");
	check_counts(_metadata, SYSFS_C, "after adds");
}

TEST_F(sysfs_counts, bits_set_after_test_and_adds)
{
	ASSERT_TRUE(ks_add(_metadata, SYSFS_P, &self->k1, 0, 500));
	/* Half of them seen before, half new. */
	ASSERT_TRUE(ks_apply(_metadata, KBLOOM_IOC_TEST_AND_ADD_BATCH, SYSFS_P,
			     &self->k1, 250, 500));
	ASSERT_TRUE(ks_apply(_metadata, KBLOOM_IOC_TEST_AND_ADD_BATCH, SYSFS_C,
			     &self->k1, 250, 500));
	sysfs_each(_metadata, KBLOOM_IOC_TEST_AND_ADD, SYSFS_C, &self->k1, 800,
		   100);
	check_counts(_metadata, SYSFS_P, "after test-and-adds");
	check_counts(_metadata, SYSFS_C, "after test-and-adds");
}

TEST_F(sysfs_counts, bits_set_after_removes)
{
	struct kbloom_info info;

	ASSERT_TRUE(ks_add(_metadata, SYSFS_C, &self->k1, 0, 300));
	/* Keys 0..99 twice: some counters at 2. */
	ASSERT_TRUE(ks_add(_metadata, SYSFS_C, &self->k1, 0, 100));
	check_counts(_metadata, SYSFS_C, "after adds");
	ASSERT_TRUE(ks_apply(_metadata, KBLOOM_IOC_REMOVE_BATCH, SYSFS_C,
			     &self->k1, 0, 150));
	check_counts(_metadata, SYSFS_C, "after 150 removes");
	sysfs_each(_metadata, KBLOOM_IOC_REMOVE, SYSFS_C, &self->k1, 150, 150);
	ASSERT_TRUE(ks_apply(_metadata, KBLOOM_IOC_REMOVE_BATCH, SYSFS_C,
			     &self->k1, 0, 100));
	check_counts(_metadata, SYSFS_C, "after every remove");
	/* Every counter is back to 0 (sysfs and the payload: as INFO). */
	ASSERT_EQ(0, kb_info(g_fd, SYSFS_C, &info));
	EXPECT_EQ(0ULL, info.bits_set);
}

TEST_F(sysfs_counts, saturated)
{
	add_n(_metadata, SYSFS_C, "sat", 20);
	add_n(_metadata, SYSFS_C, "one", 1);
	check_counts(_metadata, SYSFS_C, "after 20 adds of one key");
	remove_n(_metadata, SYSFS_C, "sat", 20);
	check_counts(_metadata, SYSFS_C, "after 20 removes");
	remove_n(_metadata, SYSFS_C, "one", 1);
	check_counts(_metadata, SYSFS_C, "after removing the other key");
}

TEST_F(sysfs_counts, bits_set_after_merge)
{
	struct kbloom_merge m;

	ASSERT_TRUE(ks_add(_metadata, SYSFS_P, &self->k1, 0, 1000));
	ASSERT_TRUE(ks_add(_metadata, SYSFS_P2, &self->k2, 0, 1000));
	ASSERT_TRUE(ks_add(_metadata, SYSFS_P2, &self->k1, 0, 100));
	ASSERT_EQ(0, kb_merge(g_fd, KBLOOM_IOC_MERGE, SYSFS_P, SYSFS_P2, &m));
	EXPECT_EQ(0U, m.mismatch);
	check_counts(_metadata, SYSFS_P, "after MERGE");
	check_counts(_metadata, SYSFS_P2, "source after MERGE");

	/* Counting: 10 + 10 adds of one key saturate in the sum. */
	add_n(_metadata, SYSFS_C, "m", 10);
	add_n(_metadata, SYSFS_C2, "m", 10);
	ASSERT_TRUE(ks_add(_metadata, SYSFS_C2, &self->k2, 0, 200));
	ASSERT_EQ(0, kb_merge(g_fd, KBLOOM_IOC_MERGE, SYSFS_C, SYSFS_C2, &m));
	EXPECT_EQ(0U, m.mismatch);
	check_counts(_metadata, SYSFS_C, "counting, after MERGE");
}

TEST_F(sysfs_counts, bits_set_after_clear)
{
	struct kbloom_info info;

	ASSERT_TRUE(ks_add(_metadata, SYSFS_P, &self->k1, 0, 1000));
	add_n(_metadata, SYSFS_C, "sat", 20);
	ASSERT_EQ(0, kb_clear(g_fd, SYSFS_P));
	ASSERT_EQ(0, kb_clear(g_fd, SYSFS_C));
	check_counts(_metadata, SYSFS_P, "after CLEAR");
	check_counts(_metadata, SYSFS_C, "after CLEAR");
	/* Zero in INFO: in sysfs and the payload too (check_counts()). */
	ASSERT_EQ(0, kb_info(g_fd, SYSFS_P, &info));
	EXPECT_EQ(0ULL, info.bits_set);
	ASSERT_EQ(0, kb_info(g_fd, SYSFS_C, &info));
	EXPECT_EQ(0ULL, info.bits_set);
	EXPECT_EQ(0ULL, info.saturated);
	/* And counting starts again from zero. */
	ASSERT_TRUE(ks_add(_metadata, SYSFS_P, &self->k2, 0, 10));
	check_counts(_metadata, SYSFS_P, "after CLEAR and 10 adds");
}

TEST_F(sysfs_counts, bits_set_after_import)
{
	struct img p, c;

	ASSERT_TRUE(ks_add(_metadata, SYSFS_P, &self->k1, 0, 1500));
	add_n(_metadata, SYSFS_C, "sat", 20);
	ASSERT_TRUE(ks_add(_metadata, SYSFS_C, &self->k1, 0, 300));
	ASSERT_TRUE(img_take(_metadata, SYSFS_P, &p, "sysfs"));
	ASSERT_TRUE(img_take(_metadata, SYSFS_C, &c, "sysfs"));
	ASSERT_EQ(0, kb_import(g_fd, &p.im, SYSFS_NEW, 0));
	ASSERT_EQ(0, kb_import(g_fd, &c.im, SYSFS_CNEW, 0));
	check_counts(_metadata, SYSFS_NEW, "after IMPORT");
	check_counts(_metadata, SYSFS_CNEW, "after IMPORT");
	/* Then keep counting on the imported filter. */
	ASSERT_TRUE(ks_add(_metadata, SYSFS_NEW, &self->k2, 0, 500));
	ASSERT_TRUE(ks_apply(_metadata, KBLOOM_IOC_REMOVE_BATCH, SYSFS_CNEW,
			     &self->k1, 0, 300));
	check_counts(_metadata, SYSFS_NEW, "adds after IMPORT");
	check_counts(_metadata, SYSFS_CNEW, "removes after IMPORT");
	img_free(&p);
	img_free(&c);
}

TEST_F(sysfs_counts, bits_set_after_import_replace)
{
	struct img p2, c2;

	/* The targets hold something else before they are replaced. */
	ASSERT_TRUE(ks_add(_metadata, SYSFS_P, &self->k1, 0, 1500));
	ASSERT_TRUE(ks_add(_metadata, SYSFS_C, &self->k1, 0, 500));
	ASSERT_TRUE(ks_add(_metadata, SYSFS_P2, &self->k2, 0, 300));
	add_n(_metadata, SYSFS_C2, "sat", 20);
	ASSERT_TRUE(ks_add(_metadata, SYSFS_C2, &self->k2, 0, 100));
	ASSERT_TRUE(img_take(_metadata, SYSFS_P2, &p2, "sysfs"));
	ASSERT_TRUE(img_take(_metadata, SYSFS_C2, &c2, "sysfs"));
	ASSERT_EQ(0, kb_import(g_fd, &p2.im, SYSFS_P, KBLOOM_IMPORT_REPLACE));
	ASSERT_EQ(0, kb_import(g_fd, &c2.im, SYSFS_C, KBLOOM_IMPORT_REPLACE));
	check_counts(_metadata, SYSFS_P, "after IMPORT REPLACE");
	check_counts(_metadata, SYSFS_C, "after IMPORT REPLACE");
	EXPECT_TRUE(img_same(_metadata, SYSFS_P, &p2));
	ASSERT_TRUE(ks_add(_metadata, SYSFS_P, &self->k1, 0, 200));
	check_counts(_metadata, SYSFS_P, "adds after the replace");
	img_free(&p2);
	img_free(&c2);
}

/* ---- uevents ---- */

#define SYSFS_UE	"sysfs_ue"
#define SYSFS_UE_IMP	"sysfs_ue_imp"

/* self->nl listens to the kernel's uevents. */
FIXTURE(sysfs_uevent) {
	int nl;
};

FIXTURE_SETUP(sysfs_uevent)
{
	struct timeval tv = { 1, 0 };
	struct sockaddr_nl sa;
	int rcvbuf = 1 << 20;

	self->nl = -1;
	st_open(_metadata);
	cleanup(_metadata, SYSFS_UE);
	cleanup(_metadata, SYSFS_UE_IMP);
	self->nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
			  NETLINK_KOBJECT_UEVENT);
	ASSERT_LE(0, self->nl);
	memset(&sa, 0, sizeof(sa));
	sa.nl_family = AF_NETLINK;
	sa.nl_groups = 1;	/* the kernel's own uevents */
	ASSERT_EQ(0, bind(self->nl, (struct sockaddr *)&sa, sizeof(sa)));
	setsockopt(self->nl, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	ASSERT_EQ(0, setsockopt(self->nl, SOL_SOCKET, SO_RCVTIMEO, &tv,
				sizeof(tv)));
}

FIXTURE_TEARDOWN(sysfs_uevent)
{
	if (self->nl >= 0)
		close(self->nl);
	cleanup(_metadata, SYSFS_UE);
	cleanup(_metadata, SYSFS_UE_IMP);
	st_close();
}

/*
 * Wait up to 10 s for a uevent whose header is exactly "ACTION@DEVPATH",
 * with SUBSYSTEM=bloom, ACTION= and DEVPATH= to match. 0 found, ETIMEDOUT,
 * EPROTO (found with wrong variables), or an errno.
 */
static int wait_uevent(int nl, const char *action, const char *devpath)
{
	char want[128], buf[8192];
	u64 t0 = now_ns();

	snprintf(want, sizeof(want), "%s@%s", action, devpath);
	while (now_ns() - t0 < 10000000000ULL) {
		bool subsys = false, act = false, dev = false;
		ssize_t n = recv(nl, buf, sizeof(buf) - 1, 0);
		char *p;

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK ||
			    errno == EINTR)
				continue;
			return errno;
		}
		buf[n] = '\0';
		if (strcmp(buf, want))
			continue;
		for (p = buf + strlen(buf) + 1; p < buf + n;
		     p += strlen(p) + 1) {
			if (!strcmp(p, "SUBSYSTEM=bloom"))
				subsys = true;
			if (!strncmp(p, "ACTION=", 7) && !strcmp(p + 7, action))
				act = true;
			if (!strncmp(p, "DEVPATH=", 8) &&
			    !strcmp(p + 8, devpath))
				dev = true;
		}
		return subsys && act && dev ? 0 : EPROTO;
	}
	return ETIMEDOUT;
}

TEST_F_TIMEOUT(sysfs_uevent, create_destroy, 60)
{
	const char *path = "/kernel/bloom/filters/" SYSFS_UE;

	ASSERT_EQ(0, kb_create(g_fd, SYSFS_UE, 1024, 3, 0, 0, NULL));
	EXPECT_OK(wait_uevent(self->nl, "add", path),
		  "sysfs: add@%s with SUBSYSTEM=bloom", path);
	ASSERT_EQ(0, kb_destroy(g_fd, SYSFS_UE));
	EXPECT_OK(wait_uevent(self->nl, "remove", path),
		  "sysfs: remove@%s with SUBSYSTEM=bloom", path);
}

TEST_F_TIMEOUT(sysfs_uevent, import_destroy, 60)
{
	const char *path = "/kernel/bloom/filters/" SYSFS_UE_IMP;
	struct img g;

	ASSERT_EQ(0, kb_create(g_fd, SYSFS_UE, 1024, 3, 0, 0, NULL));
	ASSERT_TRUE(img_take(_metadata, SYSFS_UE, &g, "sysfs"));
	ASSERT_EQ(0, kb_import(g_fd, &g.im, SYSFS_UE_IMP, 0));
	EXPECT_OK(wait_uevent(self->nl, "add", path),
		  "sysfs: add@%s with SUBSYSTEM=bloom", path);
	ASSERT_EQ(0, kb_destroy(g_fd, SYSFS_UE_IMP));
	EXPECT_OK(wait_uevent(self->nl, "remove", path),
		  "sysfs: remove@%s with SUBSYSTEM=bloom", path);
	img_free(&g);
}

/* ---- bits_set of a huge filter costs O(1) ---- */

#define SYSFS_BIG	"sysfs_big"
#define SYSFS_SMALL	"sysfs_big_small"
#define BIG_READS	1000
#define BIG_LIMIT_NS	2000000000ULL

/* MemAvailable from /proc/meminfo, in bytes; 0 if unknown. */
static u64 mem_available(void)
{
	unsigned long long kb = 0;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

/*
 * The module's max_memory, restored by the teardown; self->avail is
 * MemAvailable before the huge filter. Freeing it takes long on the debug
 * kernel (vfree under KASAN, emulated): the teardown waits for its pages,
 * so that no later case runs short of memory.
 */
FIXTURE(sysfs_big) {
	u64 saved_max_memory;
	bool saved;
	u64 avail;
};

FIXTURE_SETUP(sysfs_big)
{
	st_open(_metadata);
	cleanup(_metadata, SYSFS_BIG);
	cleanup(_metadata, SYSFS_SMALL);
	ASSERT_EQ(0, sysfs_read_u64(PARAMS "/max_memory",
				    &self->saved_max_memory));
	self->saved = true;
}

FIXTURE_TEARDOWN(sysfs_big)
{
	u64 t0 = now_ns();

	cleanup(_metadata, SYSFS_SMALL);
	if (!kb_destroy(g_fd, SYSFS_BIG) && self->avail) {
		/* Until the pages are back (a free behind it would wait). */
		while (mem_available() + 64 * MIB < self->avail &&
		       now_ns() - t0 < 300000000000ULL)
			sleep_ms(100);
		NOTE("sysfs: the huge filter's memory came back in %llu ms",
		     (unsigned long long)((now_ns() - t0) / 1000000));
	}
	if (self->saved)
		sysfs_write_u64(PARAMS "/max_memory", self->saved_max_memory);
	st_close();
}

/*
 * One read of bits_set of @fd (a pread at offset 0 runs the attribute's
 * show() again), or one INFO of @name on @fd: ns taken; *bad counts
 * values other than 1.
 */
static u64 one_read(int fd, const char *name, bool info, int *bad)
{
	struct kbloom_info in;
	char buf[64];
	u64 t0 = now_ns();

	if (info) {
		if (kb_info(fd, name, &in) || in.bits_set != 1)
			(*bad)++;
	} else {
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

		if (n != 2 || memcmp(buf, "1\n", 2))
			(*bad)++;
	}
	return now_ns() - t0;
}

/*
 * BIG_READS reads of the big filter and of the 64-bit one, alternately
 * (so that a busy host slows both alike); *t_big, *t_small their totals.
 * Stops early once the big one is clearly over its bound. Returns how
 * many reads of the big one were done.
 */
static int alternate_reads(int fd_big, int fd_small, bool info, u64 *t_big,
			   u64 *t_small, int *bad)
{
	int i;

	*t_big = *t_small = 0;
	for (i = 0; i < BIG_READS; i++) {
		*t_small += one_read(fd_small, SYSFS_SMALL, info, bad);
		*t_big += one_read(fd_big, SYSFS_BIG, info, bad);
		if (*t_big > BIG_LIMIT_NS && *t_big > 3 * *t_small + BIG_LIMIT_NS)
			return i + 1;	/* a scan: fail now, not in an hour */
	}
	return i;
}

static int open_attr(const char *name, const char *attr)
{
	char path[160];

	snprintf(path, sizeof(path), SYSFS "/filters/%s/%s", name, attr);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/*
 * Reading bits_set of a 1 GiB filter (or the largest the VM has room for)
 * 1000 times takes under 2 s: it is a counter, not a scan. Under emulation
 * with the debug kernel's checkers a bare sysfs read may itself cost
 * milliseconds, so the bound is 2 s or three times the same reads of a
 * 64-bit filter (read alternately with it), whichever is larger: a scan
 * of the big one is thousands of times that.
 */
TEST_F_TIMEOUT(sysfs_big, bits_set_read_is_constant_time, 900)
{
	u64 avail = mem_available(), size, used, budget, t_small, t_big, limit;
	int err = ENOMEM, fb, fs, info, done = 0, bad = 0;
	u64 v;

	self->avail = avail;
	/* 1 GiB (2^33 bits) if it fits twice over, else the largest that does. */
	for (size = GIB; size > 256 * MIB && avail < 2 * size + 256 * MIB;)
		size /= 2;
	ASSERT_EQ(0, sysfs_read_u64(SYSFS "/memory_used", &used));
	ASSERT_EQ(0, sysfs_read_u64(SYSFS "/memory_budget", &budget));
	for (; size >= 64 * MIB; size /= 2) {
		if (budget < used + size + 64 * MIB)
			ASSERT_EQ(0, sysfs_write_u64(PARAMS "/max_memory",
						     used + size + 64 * MIB));
		err = kb_create(g_fd, SYSFS_BIG, size * 8, 1, 0, 0, NULL);
		if (err != ENOMEM)
			break;
	}
	ASSERT_EQ(0, err);
	NOTE("sysfs: a %llu MiB filter (MemAvailable %llu MiB)",
	     (unsigned long long)(size / MIB),
	     (unsigned long long)(avail / MIB));
	ASSERT_EQ(0, kb_create(g_fd, SYSFS_SMALL, 64, 1, 0, 0, NULL));
	/* One key, one hash: exactly one bit set in each. */
	ASSERT_EQ(0, kb_skey(g_fd, KBLOOM_IOC_ADD, SYSFS_BIG, "k", NULL));
	ASSERT_EQ(0, kb_skey(g_fd, KBLOOM_IOC_ADD, SYSFS_SMALL, "k", NULL));

	/* sysfs, then INFO (which reads the same counter): both O(1). */
	for (info = 0; info < 2; info++) {
		fb = info ? g_fd : open_attr(SYSFS_BIG, "bits_set");
		fs = info ? g_fd : open_attr(SYSFS_SMALL, "bits_set");
		ASSERT_LE(0, fb);
		ASSERT_LE(0, fs);
		done = alternate_reads(fb, fs, info, &t_big, &t_small, &bad);
		if (!info) {
			close(fb);
			close(fs);
		}
		limit = 3 * t_small > BIG_LIMIT_NS ? 3 * t_small : BIG_LIMIT_NS;
		NOTE("sysfs: %d %s in %llu ms (of a 64-bit filter: %llu ms; bound %llu ms)",
		     done, info ? "INFO calls" : "reads of bits_set",
		     (unsigned long long)(t_big / 1000000),
		     (unsigned long long)(t_small / 1000000),
		     (unsigned long long)(limit / 1000000));
		EXPECT_EQ(BIG_READS, done);
		EXPECT_EQ(0, bad);
		EXPECT_GT(limit, t_big);
	}
	ASSERT_EQ(0, filter_attr(SYSFS_BIG, "bits_set", &v));
	EXPECT_EQ(1ULL, v);
}
