// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_selftest, area "create": sizing, limits, names, LIST, unknown
 * names (ENOENT), hash schemes, and the module's limits on the number of
 * filters and their memory. Included by kbloom_selftest.c.
 */

/* The longest valid name: KBLOOM_NAME_MAX - 1 characters. */
#define CREATE_LONG31	"create_nnnnnnnnnnnnnnnnnnnnnnnn"
_Static_assert(sizeof(CREATE_LONG31) == KBLOOM_NAME_MAX, "31 characters");

/* m = ceil(-n ln(p) / (ln 2)^2), the header's formula, in doubles. */
static u64 expect_bits(u64 n, u32 fpr_ppb)
{
	double p = (double)fpr_ppb / KBLOOM_FPR_ONE;

	return (u64)ceil(-(double)n * log(p) / (M_LN2 * M_LN2));
}

static void check_info_basic(struct __test_metadata *_metadata,
			     const char *name, u64 bits, u32 hashes,
			     u64 capacity, u32 fpr)
{
	struct kbloom_info info;

	memset(&info, 0xa5, sizeof(info));
	if (!EXPECT_OK(kb_info(g_fd, name, &info), "create: INFO %s", name))
		return;
	EXPECT_U64(info.bits, bits, "create: INFO %s bits", name);
	EXPECT_U64(info.hashes, hashes, "create: INFO %s hashes", name);
	EXPECT_U64(info.capacity, capacity, "create: INFO %s capacity", name);
	EXPECT_U64(info.fpr_ppb, fpr, "create: INFO %s fpr_ppb", name);
	EXPECT_U64(info.flags, 0, "create: INFO %s flags", name);
	EXPECT_U64(info.hash_scheme, default_scheme(g_fd),
		   "create: INFO %s hash_scheme (the default)", name);
	EXPECT_COND(info.bits_set == 0 && info.adds == 0 && info.queries == 0 &&
		    info.hits == 0, "statistics not zero",
		    "create: INFO %s fresh statistics zero", name);
	EXPECT_COND(info.memory_bytes >= (bits + 7) / 8,
		    "smaller than the bitmap",
		    "create: INFO %s memory_bytes >= bits/8", name);
	EXPECT_U64(info.saturated, 0, "create: INFO %s saturated 0 (plain)",
		   name);
	EXPECT_COND(!info.window_ms && !info.generations && !info.rotations,
		    "non-zero window fields",
		    "create: INFO %s window_ms, generations, rotations zero (not windowed)",
		    name);
}

/* Every filter a case of this area may create. */
static const char *const created[] = {
	"create_a", "create_cap1", "create_cap2", "create_b64",
	"create_h1", "create_h32", "create_dup", "create_ok-._9",
	"create_bad", "create_huge", "create_twice", "Z", CREATE_LONG31,
};

FIXTURE(create) {
};

/* None of them exists when a case starts, nor after it. */
FIXTURE_SETUP(create)
{
	st_open(_metadata);
	cleanup_all(created);
}

FIXTURE_TEARDOWN(create)
{
	cleanup_all(created);
	st_close();
}

TEST_F(create, by_bits_and_hashes)
{
	struct kbloom_create c;
	int err;

	err = kb_create(g_fd, "create_a", 10000, 3, 0, 0, &c);
	if (EXPECT_OK(err, "create: by bits 10000 hashes 3")) {
		EXPECT_U64(c.bits, 10000, "create: bits written back");
		EXPECT_U64(c.hashes, 3, "create: hashes written back");
		check_info_basic(_metadata, "create_a", 10000, 3, 0, 0);
	}
}

/* By capacity and fpr: 1e6 keys at 1%. */
TEST_F(create, by_capacity_and_fpr)
{
	struct kbloom_create c;
	u64 want;
	int err;

	want = expect_bits(1000000, 10000000);
	err = kb_create(g_fd, "create_cap1", 0, 0, 1000000, 10000000, &c);
	if (EXPECT_OK(err, "create: capacity 1000000 fpr 1%%")) {
		EXPECT_RANGE(c.bits, want - 1, want + 1,
			     "create: capacity 1e6 at 1%% gives m = ceil(-n ln p / ln2^2)");
		EXPECT_U64(c.hashes, 7,
			   "create: capacity 1e6 at 1%% gives k 7");
		check_info_basic(_metadata, "create_cap1", c.bits, c.hashes,
				 1000000, 10000000);
	}

	/* 1000 keys at 0.1%: m about 14378, k = round(14.378 ln 2) = 10. */
	want = expect_bits(1000, 1000000);
	err = kb_create(g_fd, "create_cap2", 0, 0, 1000, 1000000, &c);
	if (EXPECT_OK(err, "create: capacity 1000 fpr 0.1%%")) {
		EXPECT_RANGE(c.bits, want - 1, want + 1,
			     "create: capacity 1000 at 0.1%% bits (expected %llu)",
			     (unsigned long long)want);
		EXPECT_RANGE(c.bits, 14377, 14379,
			     "create: capacity 1000 at 0.1%% bits near 14378");
		EXPECT_U64(c.hashes, 10,
			   "create: capacity 1000 at 0.1%% gives k 10");
		check_info_basic(_metadata, "create_cap2", c.bits, c.hashes,
				 1000, 1000000);
	}
}

/*
 * Size and hash-count limits, both ways of sizing at once, and unknown
 * flags and hash schemes. Of the flags, 1 and 2 are COUNTING and LIKE
 * (the merge area), 4 is ROTATE_AT_FILL, which needs a window, 8 is
 * BLOCKED, which needs whole blocks (1000 bits are not), 16 and 32 are
 * BPF_READ and BPF_WRITE, 64 is TRACK_CHANGES (the changes area). Hash
 * scheme 0 is the default.
 */
TEST_F(create, refusals)
{
	static const struct {
		u64 bits;
		u32 hashes;
		u64 cap;
		u32 fpr, flags, scheme;
		const char *what;
	} bad[] = {
		{ 0, 7, 0, 0, 0, 0, "bits 0 and capacity 0" },
		{ 0, 0, 0, 10000000, 0, 0, "bits 0, capacity 0, fpr set" },
		{ 63, 7, 0, 0, 0, 0, "bits 63 (below MIN_BITS)" },
		{ KBLOOM_MAX_BITS + 1, 7, 0, 0, 0, 0, "bits MAX_BITS + 1" },
		{ 1024, 0, 0, 0, 0, 0, "hashes 0 with bits and no capacity" },
		{ 1024, KBLOOM_MAX_HASHES + 1, 0, 0, 0, 0, "hashes 33" },
		{ 1024, 3, 1000, 10000000, 0, 0,
		  "bits+hashes and capacity+fpr_ppb together" },
		{ 1024, 0, 1000, 10000000, 0, 0,
		  "bits and capacity+fpr_ppb together" },
		{ 1024, 3, 0, 10000000, 0, 0,
		  "bits+hashes and fpr_ppb together" },
		{ 0, 0, 1000, 0, 0, 0, "capacity with fpr_ppb 0" },
		{ 0, 0, 1000, KBLOOM_FPR_ONE, 0, 0,
		  "capacity with fpr_ppb FPR_ONE" },
		{ 0, 0, 1000, KBLOOM_FPR_ONE + 1, 0, 0,
		  "capacity with fpr_ppb FPR_ONE + 1" },
		{ 1024, 3, 0, 0, 1u << 2, 0, "flags 4" },
		{ 1024, 3, 0, 0, 0x80000000u, 0, "flags 0x80000000" },
		{ 1024, 3, 0, 0, KBLOOM_CREATE_COUNTING | 1u << 2, 0,
		  "flags COUNTING | 4" },
		{ 1024, 3, 0, 0, 1u << 7, 0, "flags 0x80" },
		{ 1000, 3, 0, 0, KBLOOM_CREATE_BLOCKED, 0, "flags BLOCKED" },
		{ 1000, 3, 0, 0, KBLOOM_CREATE_BLOCKED | KBLOOM_CREATE_COUNTING,
		  0, "flags BLOCKED | COUNTING" },
		{ 1024, 3, 0, 0, 0, 3, "hash_scheme 3" },
		{ 1024, 3, 0, 0, 0, 0x80000000u, "hash_scheme 0x80000000" },
		{ 1024, 3, 0, 0, 0, 0xffffffffu, "hash_scheme 0xffffffff" },
	};
	static const struct {
		const char *name;
		u64 bits;
		u32 hashes;
	} good[] = {
		{ "create_b64", 64, 7 },	/* MIN_BITS */
		{ "create_h1", 1024, 1 },
		{ "create_h32", 1024, KBLOOM_MAX_HASHES },
	};
	struct kbloom_info info;
	size_t i;
	int err;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		err = kb_create_all(g_fd, "create_bad", bad[i].bits,
				    bad[i].hashes, bad[i].cap, bad[i].fpr,
				    bad[i].flags, NULL, bad[i].scheme, NULL);
		EXPECT_ERRNO(err, EINVAL, "create: %s", bad[i].what);
		EXPECT_ERRNO(kb_info(g_fd, "create_bad", &info), ENOENT,
			     "create: %s created nothing", bad[i].what);
		cleanup(_metadata, "create_bad");
	}
	for (i = 0; i < ARRAY_SIZE(good); i++) {
		if (EXPECT_OK(kb_create(g_fd, good[i].name, good[i].bits,
					good[i].hashes, 0, 0, NULL),
			      "create: bits %llu hashes %u",
			      (unsigned long long)good[i].bits, good[i].hashes))
			check_info_basic(_metadata, good[i].name, good[i].bits,
					 good[i].hashes, 0, 0);
	}
}

/* A taken name: EEXIST, and the existing filter is untouched. */
TEST_F(create, duplicate_name)
{
	struct kbloom_info info;
	int err;

	err = kb_create(g_fd, "create_dup", 1 << 16, 7, 0, 0, NULL);
	if (EXPECT_OK(err, "create: create_dup")) {
		err = kb_skey(g_fd, KBLOOM_IOC_ADD, "create_dup", "dupkey",
			      NULL);
		EXPECT_OK(err, "create: add a key to create_dup");
		err = kb_create(g_fd, "create_dup", 2048, 3, 0, 0, NULL);
		EXPECT_ERRNO(err, EEXIST, "create: duplicate name");
		EXPECT_ERRNO(kb_create(g_fd, "create_dup", 0, 0, 100, 10000000,
				       NULL),
			     EEXIST, "create: duplicate name, by capacity");
		EXPECT_SKEY(g_fd, KBLOOM_IOC_QUERY, "create_dup", "dupkey", 1,
			    "create: duplicate create kept the existing keys");
		err = kb_info(g_fd, "create_dup", &info);
		EXPECT_COND(err == 0 && info.bits == 1 << 16 &&
			    info.hashes == 7 && info.adds == 1,
			    "INFO changed or failed",
			    "create: duplicate create kept size and statistics");
	}
}

TEST_F(create, names)
{
	static const char *const bad_names[] = {
		"", ".hidden", "a b", "x/y", "caf\xc3\xa9", "tab\there",
		"\x80", "a:b",
	};
	char long32[KBLOOM_NAME_MAX + 1];
	struct kbloom_info info;
	long before, after;
	size_t i;
	int err;

	memset(long32, 'n', sizeof(long32));
	long32[KBLOOM_NAME_MAX] = '\0';
	err = kb_create(g_fd, "create_ok-._9", 1024, 3, 0, 0, NULL);
	EXPECT_OK(err, "create: name with - . _ and digits");
	err = kb_create(g_fd, "Z", 1024, 3, 0, 0, NULL);
	EXPECT_OK(err, "create: one-character name");
	err = kb_create(g_fd, CREATE_LONG31, 1024, 3, 0, 0, NULL);
	if (EXPECT_OK(err, "create: 31-character name")) {
		err = kb_info(g_fd, CREATE_LONG31, &info);
		EXPECT_OK(err, "create: INFO by the 31-character name");
	}

	before = count_filters(_metadata);
	for (i = 0; i < ARRAY_SIZE(bad_names); i++) {
		char shown[64];
		size_t j, o = 0;

		/* Show the name escaped: it may hold control bytes. */
		for (j = 0; bad_names[i][j] && o + 5 < sizeof(shown); j++) {
			unsigned char ch = (unsigned char)bad_names[i][j];

			if (ch >= 0x21 && ch < 0x7f)
				shown[o++] = (char)ch;
			else
				o += (size_t)snprintf(shown + o,
						      sizeof(shown) - o,
						      "\\x%02x", ch);
		}
		shown[o] = '\0';
		err = kb_create(g_fd, bad_names[i], 1024, 3, 0, 0, NULL);
		EXPECT_ERRNO(err, EINVAL, "create: bad name \"%s\"", shown);
		if (err == 0)
			cleanup(_metadata, bad_names[i]);
	}
	err = kb_create(g_fd, long32, 1024, 3, 0, 0, NULL);
	EXPECT_ERRNO(err, EINVAL, "create: 32-character name with no NUL");
	after = count_filters(_metadata);
	EXPECT_COND(before >= 0 && after == before, "filter count changed",
		    "create: bad names created nothing (LIST count unchanged)");
}

/* LIST of at least the three filters made here: create_a, Z, the long. */
TEST_F(create, list)
{
	static const char *const made[] = { "create_a", "Z", CREATE_LONG31 };
	bool sorted = true, terminated = true;
	char (*names)[KBLOOM_NAME_MAX];
	u32 room, n, found = 0;
	struct kbloom_list l;
	long before;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(made); i++)
		ASSERT_EQ(0, kb_create(g_fd, made[i], 1024, 3, 0, 0, NULL));

	/* LIST: every name, in name order, and truncation. */
	before = count_filters(_metadata);
	ASSERT_LE(3, before);
	room = (u32)before + 8;
	names = calloc(room, KBLOOM_NAME_MAX);
	ASSERT_TRUE(names != NULL);
	/* 0xa5 is no valid name byte: shows what was not written. */
	memset(names, 0xa5, (size_t)room * KBLOOM_NAME_MAX);
	memset(&l, 0, sizeof(l));
	l.names = PTR(names);
	l.count = room;
	ASSERT_EQ(0, ioc(g_fd, KBLOOM_IOC_LIST, &l));
	EXPECT_U64(l.count, (u64)before, "create: LIST count");
	n = l.count < room ? l.count : room;
	for (i = 0; i < n; i++) {
		if (!memchr(names[i], '\0', KBLOOM_NAME_MAX)) {
			terminated = false;
			break;
		}
		if (i && strcmp(names[i - 1], names[i]) >= 0)
			sorted = false;
		if (!strcmp(names[i], "create_a") || !strcmp(names[i], "Z") ||
		    !strcmp(names[i], CREATE_LONG31))
			found++;
	}
	EXPECT_COND(terminated, "a name without NUL",
		    "create: LIST names NUL-terminated");
	EXPECT_COND(terminated && sorted, "not in strictly ascending order",
		    "create: LIST in name order");
	EXPECT_COND(found == 3, "a created name is missing",
		    "create: LIST holds the created names");
	EXPECT_COND(n >= room || (unsigned char)names[n][0] == 0xa5,
		    "wrote past count", "create: LIST wrote only count names");

	memset(names, 0xa5, (size_t)room * KBLOOM_NAME_MAX);
	memset(&l, 0, sizeof(l));
	l.names = PTR(names);
	l.count = 1;
	if (EXPECT_OK(ioc(g_fd, KBLOOM_IOC_LIST, &l),
		      "create: LIST with room for one")) {
		EXPECT_U64(l.count, (u64)before,
			   "create: short LIST reports the full count");
		EXPECT_COND(memchr(names[0], '\0', KBLOOM_NAME_MAX) &&
			    (unsigned char)names[1][0] == 0xa5 &&
			    (unsigned char)names[1][31] == 0xa5,
			    "first slot bad or second slot written",
			    "create: short LIST wrote exactly one name");
	}
	free(names);
}

/* Every command that names a filter: ENOENT for a name never created. */
TEST_F(create, unknown_names)
{
	const char *ghost = "create_nonexistent";
	struct kbloom_info info;
	unsigned char bm[1];
	unsigned long cmd;
	u32 len = 3;
	size_t i;
	int err;

	EXPECT_ERRNO(kb_info(g_fd, ghost, &info), ENOENT,
		     "create: INFO unknown name");
	for (i = 0; i < ARRAY_SIZE(all_cmds); i++) {
		cmd = all_cmds[i].cmd;
		if (_IOC_SIZE(cmd) == sizeof(struct kbloom_name))
			err = kb_name_cmd(g_fd, cmd, ghost);
		else if (_IOC_SIZE(cmd) == sizeof(struct kbloom_key))
			err = kb_skey(g_fd, cmd, ghost, "abc", NULL);
		else if (_IOC_SIZE(cmd) == sizeof(struct kbloom_batch))
			err = kb_batch(g_fd, cmd, ghost, "abc", &len, bm, 3, 1,
				       NULL);
		else
			continue;
		EXPECT_ERRNO(err, ENOENT, "create: %s unknown name",
			     all_cmds[i].name);
	}
}

TEST_F(create, destroy_twice)
{
	struct kbloom_info info;
	int err;

	err = kb_create(g_fd, "create_twice", 1024, 3, 0, 0, NULL);
	if (EXPECT_OK(err, "create: create_twice")) {
		err = kb_destroy(g_fd, "create_twice");
		EXPECT_OK(err, "create: first destroy");
		err = kb_destroy(g_fd, "create_twice");
		EXPECT_ERRNO(err, ENOENT, "create: second destroy");
		err = kb_info(g_fd, "create_twice", &info);
		EXPECT_ERRNO(err, ENOENT, "create: destroyed filter gone");
	}
}

/* Beyond the memory budget: 2^36 bits is 8 GiB, the VM has ~2. */
TEST_F(create, over_the_budget)
{
	struct kbloom_info info;
	long before, after;
	int err;

	before = count_filters(_metadata);
	err = kb_create(g_fd, "create_huge", KBLOOM_MAX_BITS, 7, 0, 0, NULL);
	EXPECT_ERRNO2(err, ENOSPC, EFBIG, "create: MAX_BITS over the budget");
	after = count_filters(_metadata);
	EXPECT_COND(before >= 0 && after == before, "filter count changed",
		    "create: over-budget create left nothing (LIST count)");
	err = kb_info(g_fd, "create_huge", &info);
	EXPECT_ERRNO(err, ENOENT, "create: over-budget filter not findable");
}

/* What CREATE's hash_scheme gives: the scheme asked for, or the default. */
TEST_F(create, hash_schemes)
{
	static const struct {
		u32 in, out;
	} cases[] = {
		{ KBLOOM_HASH_SIPHASH, KBLOOM_HASH_SIPHASH },
		{ KBLOOM_HASH_JHASH, KBLOOM_HASH_JHASH },
		{ 0, 0 },	/* the default */
	};
	struct kbloom_create c;
	struct kbloom_info info;
	u32 want, def = default_scheme(g_fd);
	size_t i;
	u64 v;

	ASSERT_TRUE(def == KBLOOM_HASH_JHASH || def == KBLOOM_HASH_SIPHASH);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		want = cases[i].out ? cases[i].out : def;
		ASSERT_EQ(0, kb_create_scheme(g_fd, "create_a", 1 << 16, 5, 0,
					      cases[i].in, &c));
		EXPECT_EQ(want, c.hash_scheme) {
			TH_LOG("CREATE hash_scheme %u wrote back %u",
			       cases[i].in, c.hash_scheme);
		}
		ASSERT_EQ(0, kb_info(g_fd, "create_a", &info));
		EXPECT_EQ(want, info.hash_scheme);
		ASSERT_EQ(0, filter_attr("create_a", "hash_scheme", &v));
		EXPECT_EQ((u64)want, v);
		ASSERT_EQ(0, kb_destroy(g_fd, "create_a"));
	}
}

/* ---- max_filters and the memory budget ---- */

#define LIM_FMT		"create_lim_%u"
#define LIM_MANY	1000u
#define LIM_SRC		"create_lim_src"

/*
 * The module's max_filters and max_memory, restored by the teardown;
 * self->used is memory_used with no free pending.
 */
FIXTURE(create_limits) {
	u64 max_filters, max_memory;
	bool saved_filters, saved_memory;
	u64 used;
};

static void create_limits_clean(struct __test_metadata *_metadata)
{
	char name[32];
	u32 i;

	for (i = 0; i < LIM_MANY; i++) {
		snprintf(name, sizeof(name), LIM_FMT, i);
		destroy_quiet(g_fd, name);
	}
	cleanup(_metadata, LIM_SRC);
}

FIXTURE_SETUP(create_limits)
{
	u64 sum;

	st_open(_metadata);
	create_limits_clean(_metadata);
	ASSERT_EQ(0, sysfs_read_u64(PARAMS "/max_filters",
				    &self->max_filters));
	self->saved_filters = true;
	ASSERT_EQ(0, sysfs_read_u64(PARAMS "/max_memory", &self->max_memory));
	self->saved_memory = true;
	ASSERT_EQ(0, quiesce(g_fd, &self->used, &sum)) {
		TH_LOG("memory_used %llu never reached the sum of the filters' memory_charged %llu",
		       (unsigned long long)self->used,
		       (unsigned long long)sum);
	}
}

FIXTURE_TEARDOWN(create_limits)
{
	if (self->saved_filters)
		sysfs_write_u64(PARAMS "/max_filters", self->max_filters);
	if (self->saved_memory)
		sysfs_write_u64(PARAMS "/max_memory", self->max_memory);
	create_limits_clean(_metadata);
	st_close();
}

TEST_F(create_limits, max_filters_default)
{
	EXPECT_EQ(4096ULL, self->max_filters);
}

TEST_F(create_limits, max_filters_create)
{
	long n = kb_count(g_fd);
	struct img g;
	u64 v;

	ASSERT_LE(0, n);
	ASSERT_EQ(0, sysfs_write_u64(PARAMS "/max_filters", (u64)n + 2));
	ASSERT_EQ(0, sysfs_read_u64(PARAMS "/max_filters", &v));
	ASSERT_EQ((u64)n + 2, v);
	ASSERT_EQ(0, kb_create(g_fd, "create_lim_0", 1024, 3, 0, 0, NULL));
	ASSERT_EQ(0, kb_create(g_fd, "create_lim_1", 1024, 3, 0, 0, NULL));
	EXPECT_EQ(EDQUOT, kb_create(g_fd, "create_lim_2", 1024, 3, 0, 0,
				    NULL));
	EXPECT_FALSE(kb_exists(g_fd, "create_lim_2"));
	EXPECT_FALSE(filter_dir_exists("create_lim_2"));
	EXPECT_EQ(n + 2, kb_count(g_fd));
	ASSERT_EQ(0, sysfs_read_u64(SYSFS "/filter_count", &v));
	EXPECT_EQ((u64)n + 2, v);
	/* CREATE_LIKE and IMPORT create filters too. */
	EXPECT_EQ(EDQUOT, kb_create_like(g_fd, "create_lim_3", "create_lim_0",
					 0, 0, NULL));
	EXPECT_FALSE(kb_exists(g_fd, "create_lim_3"));
	ASSERT_EQ(0, kb_skey(g_fd, KBLOOM_IOC_ADD, "create_lim_0", "x", NULL));
	ASSERT_TRUE(img_take(_metadata, "create_lim_0", &g, "create"));
	EXPECT_EQ(EDQUOT, kb_import(g_fd, &g.im, "create_lim_4", 0));
	EXPECT_FALSE(kb_exists(g_fd, "create_lim_4"));
	EXPECT_FALSE(filter_dir_exists("create_lim_4"));
	EXPECT_EQ(n + 2, kb_count(g_fd));
	/* Replacing the contents of one creates nothing: allowed. */
	EXPECT_EQ(0, kb_import(g_fd, &g.im, "create_lim_1",
			       KBLOOM_IMPORT_REPLACE));
	EXPECT_TRUE(img_same(_metadata, "create_lim_1", &g));
	/* Room again after a destroy. */
	ASSERT_EQ(0, kb_destroy(g_fd, "create_lim_1"));
	EXPECT_EQ(0, kb_create(g_fd, "create_lim_2", 1024, 3, 0, 0, NULL));
	img_free(&g);
}

TEST_F_TIMEOUT(create_limits, memory_charges_real_cost, 600)
{
	u64 after, sum = 0, last, charged = 0, least = ~0ULL;
	struct kbloom_info info;
	char name[32];
	u32 i;

	for (i = 0; i < LIM_MANY; i++) {
		snprintf(name, sizeof(name), LIM_FMT, i);
		ASSERT_EQ(0, kb_create(g_fd, name, 64, 1, 0, 0, NULL)) {
			TH_LOG("create %s", name);
		}
		ASSERT_EQ(0, kb_info(g_fd, name, &info));
		EXPECT_EQ(8ULL, info.memory_bytes);	/* the storage */
		ASSERT_EQ(0, filter_attr(name, "memory_charged", &charged));
		if (charged < least)
			least = charged;
		sum += charged;
	}
	/* A page of storage at least, plus the bookkeeping. */
	EXPECT_LT(4096ULL, least) {
		TH_LOG("a 64-bit filter is charged only %llu bytes",
		       (unsigned long long)least);
	}
	ASSERT_EQ(0, sysfs_read_u64(SYSFS "/memory_used", &after));
	NOTE("create: %u 64-bit filters raised memory_used by %llu bytes",
	     LIM_MANY, (unsigned long long)(after - self->used));
	EXPECT_LE(self->used + LIM_MANY * 4096ULL, after);
	EXPECT_EQ(self->used + sum, after);
	for (i = 0; i < LIM_MANY; i++) {
		snprintf(name, sizeof(name), LIM_FMT, i);
		ASSERT_EQ(0, kb_destroy(g_fd, name));
	}
	/* Frees wait for an RCU grace period and a workqueue: 10 s. */
	EXPECT_EQ(0, quiesce(g_fd, &last, &sum));
	EXPECT_EQ(self->used, last) {
		TH_LOG("memory_used did not return to its value before");
	}
}

TEST_F(create_limits, max_memory_enospc)
{
	struct img g;
	u64 used, sum, v;
	long n;

	/* An image of 1 MiB to import later. */
	ASSERT_EQ(0, kb_create(g_fd, LIM_SRC, 1 << 23, 3, 0, 0, NULL));
	ASSERT_TRUE(img_take(_metadata, LIM_SRC, &g, "create"));
	ASSERT_EQ(0, quiesce(g_fd, &used, &sum));
	n = kb_count(g_fd);
	/* One page above what is in use. */
	ASSERT_EQ(0, sysfs_write_u64(PARAMS "/max_memory", used + 4096));
	ASSERT_EQ(0, sysfs_read_u64(SYSFS "/memory_budget", &v));
	EXPECT_EQ(used + 4096, v);
	EXPECT_EQ(ENOSPC, kb_create(g_fd, "create_lim_0", 1 << 23, 3, 0, 0,
				    NULL));
	/* A page of storage plus bookkeeping is more than one page. */
	EXPECT_EQ(ENOSPC, kb_create(g_fd, "create_lim_1", 64, 1, 0, 0, NULL));
	EXPECT_EQ(ENOSPC, kb_create_like(g_fd, "create_lim_2", LIM_SRC, 0, 0,
					 NULL));
	EXPECT_EQ(ENOSPC, kb_import(g_fd, &g.im, "create_lim_3", 0));
	EXPECT_EQ(n, kb_count(g_fd));
	EXPECT_FALSE(kb_exists(g_fd, "create_lim_0"));
	EXPECT_FALSE(kb_exists(g_fd, "create_lim_1"));
	EXPECT_FALSE(kb_exists(g_fd, "create_lim_2"));
	EXPECT_FALSE(kb_exists(g_fd, "create_lim_3"));
	ASSERT_EQ(0, sysfs_read_u64(SYSFS "/memory_used", &v));
	EXPECT_EQ(used, v);
	/* With room, the same create works. */
	ASSERT_EQ(0, sysfs_write_u64(PARAMS "/max_memory", used + 64 * MIB));
	EXPECT_EQ(0, kb_create(g_fd, "create_lim_0", 1 << 23, 3, 0, 0, NULL));
	img_free(&g);
}
