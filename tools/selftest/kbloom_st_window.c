// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_selftest, area "window": the promises of a windowed filter under
 * load, with generations large enough that a rotation (two grace periods
 * and the clear of one generation) takes its time. Included by
 * kbloom_selftest.c, and so run 64-bit and 32-bit (compat ioctl).
 *
 *  - A key whose add started at t is found by every query that ends by
 *    t + W (G - 1) / G: keys added while a rotation runs too, with adds
 *    and queries of other threads going on.
 *  - EXPORT of a rotating filter waits for the rotation and returns one
 *    consistent image: never EAGAIN, and a key added just before it is in
 *    the image.
 *  - MERGE and COMPARE refuse a windowed filter on either side with
 *    EOPNOTSUPP and change nothing.
 */

#define WIN_F		"window_f"
#define WIN_G		"window_g"
#define WIN_IMPORT	"window_i"
#define WIN_PLAIN	"window_p"
/* 16 MiB generations. */
#define WIN_BITS	(1ULL << 27)

static const char *const window_all[] = {
	WIN_F, WIN_G, WIN_IMPORT, WIN_PLAIN
};

FIXTURE(window) {
};

FIXTURE_SETUP(window)
{
	st_open(_metadata);
	cleanup_all(window_all);
}

FIXTURE_TEARDOWN(window)
{
	cleanup_all(window_all);
	st_close();
}

/* ---- the lower bound ---- */

#define WIN_W_MS	400
#define WIN_GENS	2
#define WIN_RUN_MS	3000
/*
 * A loaded machine wakes the checker late, and a late check proves
 * nothing: the run goes on past WIN_RUN_MS until this many keys were
 * checked in time, for at most WIN_MAX_MS.
 */
#define WIN_CONCLUSIVE	100U
#define WIN_MAX_MS	30000
#define WIN_KEYS	4096
/* A key is queried this long before its promise runs out. */
#define WIN_EARLY_NS	(3 * 1000000ULL)

struct win_run {
	u64 added[WIN_KEYS];	/* start of each key's add; 0: not yet */
	volatile u32 nadded;	/* published after added[] */
	volatile bool stop;
	u32 violations, conclusive, late;
	u64 worst_ns;		/* how early the worst violation was */
};

/* One key every millisecond, each timed from before its ADD. */
static void *win_adder(void *arg)
{
	struct win_run *r = arg;
	int fd = open(DEV, O_RDWR);
	char key[32];
	u64 start = now_ns(), t;
	u32 i;

	for (i = 0; i < WIN_KEYS && fd >= 0; i++) {
		t = now_ns() - start;
		if (t >= WIN_MAX_MS * 1000000ULL ||
		    (t >= WIN_RUN_MS * 1000000ULL &&
		     __atomic_load_n(&r->conclusive, __ATOMIC_RELAXED) >= WIN_CONCLUSIVE))
			break;
		snprintf(key, sizeof(key), "w:%u", i);
		r->added[i] = now_ns();
		if (kb_skey(fd, KBLOOM_IOC_ADD, WIN_F, key, NULL))
			break;
		__atomic_store_n(&r->nadded, i + 1, __ATOMIC_RELEASE);
		sleep_ms(1);
	}
	r->stop = true;
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* Other traffic meanwhile: batches of adds and queries of other keys. */
static void *win_noise(void *arg)
{
	struct win_run *r = arg;
	int fd = open(DEV, O_RDWR);
	char keys[64 * 16];
	u32 lens[64], i, n = 0;
	struct kbloom_batch b;
	unsigned char res[64];

	for (i = 0; i < 64; i++)
		lens[i] = 16;
	while (!r->stop && fd >= 0) {
		for (i = 0; i < 64; i++, n++)
			memcpy(keys + i * 16, &n, sizeof(n));
		fill_batch(&b, WIN_F, keys, lens, res, sizeof(keys), 64);
		ioc(fd, n % 128 ? KBLOOM_IOC_QUERY_BATCH :
				  KBLOOM_IOC_ADD_BATCH, &b);
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

/*
 * Each key, in order, just before its promise runs out: a query that
 * ends by then must find it. One that ends later proves nothing (late).
 */
static void *win_checker(void *arg)
{
	struct win_run *r = arg;
	int fd = open(DEV, O_RDONLY);
	const u64 keep = (u64)WIN_W_MS * (WIN_GENS - 1) / WIN_GENS * 1000000ULL;
	char key[32];
	u64 due, end;
	u32 i, res;

	for (i = 0; fd >= 0; i++) {
		while (i >= __atomic_load_n(&r->nadded, __ATOMIC_ACQUIRE)) {
			if (r->stop && i >= r->nadded)
				goto out;
			sleep_ms(1);
		}
		due = r->added[i] + keep;
		/* Sleep to 2 ms before, then spin: sleeps wake late. */
		while (now_ns() + WIN_EARLY_NS + 2000000 < due)
			sleep_ms(1);
		while (now_ns() + WIN_EARLY_NS < due)
			;
		snprintf(key, sizeof(key), "w:%u", i);
		if (kb_skey(fd, KBLOOM_IOC_QUERY, WIN_F, key, &res))
			break;
		end = now_ns();
		if (end > due) {
			r->late++;
			continue;
		}
		__atomic_store_n(&r->conclusive, r->conclusive + 1, __ATOMIC_RELAXED);
		if (!res) {
			r->violations++;
			if (due - end > r->worst_ns)
				r->worst_ns = due - end;
		}
	}
out:
	if (fd >= 0)
		close(fd);
	return NULL;
}

TEST_F_TIMEOUT(window, keeps_keys_as_promised, 120)
{
	static struct win_run r;
	pthread_t add, chk, noise[2];
	struct kbloom_info info;
	size_t i;

	memset(&r, 0, sizeof(r));
	ASSERT_EQ(0, win_create(WIN_F, WIN_BITS, WIN_W_MS, WIN_GENS, 0));
	ASSERT_EQ(0, pthread_create(&chk, NULL, win_checker, &r));
	for (i = 0; i < ARRAY_SIZE(noise); i++)
		ASSERT_EQ(0, pthread_create(&noise[i], NULL, win_noise, &r));
	ASSERT_EQ(0, pthread_create(&add, NULL, win_adder, &r));
	pthread_join(add, NULL);
	for (i = 0; i < ARRAY_SIZE(noise); i++)
		pthread_join(noise[i], NULL);
	pthread_join(chk, NULL);
	TH_LOG("%u keys, %u checked in time (%u late), %u missing",
	       r.nadded, r.conclusive, r.late, r.violations);
	EXPECT_EQ(0U, r.violations) {
		TH_LOG("keys forgotten before t + W (G - 1) / G, the worst %llu us early",
		       (unsigned long long)r.worst_ns / 1000);
	}
	/* Enough keys checked in time to mean something. */
	EXPECT_LE(WIN_CONCLUSIVE, r.conclusive);
	/*
	 * And across rotations: W is 400 ms, the run 3 s, so the timer
	 * must have rotated, several times (a slow machine: at least twice).
	 */
	ASSERT_EQ(0, kb_info(g_fd, WIN_F, &info));
	EXPECT_LE(2U, info.rotations) {
		TH_LOG("%llu rotations in %u ms",
		       (unsigned long long)info.rotations, WIN_RUN_MS);
	}
}

/* ---- export of a rotating filter ---- */

#define WIN_EXPORTS	10

TEST_F_TIMEOUT(window, export_waits_for_rotations, 300)
{
	const u64 len = 4 * (WIN_BITS / 8);
	struct kbloom_image im;
	unsigned char *buf = malloc(len);
	char key[32];
	u32 i;

	ASSERT_TRUE(buf != NULL);
	/*
	 * A rotation every 50 ms, each clearing 16 MiB: more often than
	 * 64 MiB are copied out under emulation.
	 */
	ASSERT_EQ(0, win_create(WIN_G, WIN_BITS, 200, 4, 0));
	for (i = 0; i < WIN_EXPORTS; i++) {
		snprintf(key, sizeof(key), "e:%u", i);
		ASSERT_EQ(0, kb_skey(g_fd, KBLOOM_IOC_ADD, WIN_G, key, NULL));
		ASSERT_EQ(0, kb_export(g_fd, WIN_G, buf, len, &im)) {
			TH_LOG("export %u of a filter rotating every 50 ms", i);
		}
		ASSERT_EQ(len, im.payload_len);
		/*
		 * The key went in just before: whichever generation holds it
		 * is in the image, once, and loads back.
		 */
		im.payload = PTR(buf);
		ASSERT_EQ(0, kb_import(g_fd, &im, WIN_IMPORT, 0));
		EXPECT_SKEY(g_fd, KBLOOM_IOC_QUERY, WIN_IMPORT, key, 1,
			    "export %u: %s in the image", i, key);
		ASSERT_EQ(0, kb_destroy(g_fd, WIN_IMPORT));
	}
	free(buf);
}

/* ---- the schedule across an export and an import ---- */

/*
 * An image carries how far into its period the newest generation is
 * (age_ms), and an import with it keeps the schedule: W 4 s in 2
 * generations, imported 1.9 s into the period, rotates about 0.1 s after
 * the import, where a fresh period (age_ms 0) would wait 2 s. An age past
 * the period (an export of a late rotation) loads too.
 */
TEST_F_TIMEOUT(window, import_keeps_the_schedule, 60)
{
	const u64 bits = 1 << 16;
	struct kbloom_image im;
	struct kbloom_info info;
	unsigned char *buf = malloc(2 * bits / 8);
	u64 t0;

	ASSERT_TRUE(buf != NULL);
	ASSERT_EQ(0, win_create(WIN_F, bits, 4000, 2, 0));
	ASSERT_EQ(0, kb_export(g_fd, WIN_F, buf, 2 * bits / 8, &im));
	EXPECT_GT(2000U, im.age_ms) {
		TH_LOG("a new filter's newest generation is %u ms old",
		       im.age_ms);
	}
	im.payload = PTR(buf);
	im.age_ms = 0x80000000u;
	EXPECT_EQ(EINVAL, kb_import(g_fd, &im, WIN_IMPORT, 0)) {
		TH_LOG("age_ms past INT_MAX");
	}
	im.age_ms = 1900;
	t0 = now_ns();
	ASSERT_EQ(0, kb_import(g_fd, &im, WIN_IMPORT, 0));
	ASSERT_EQ(0, kb_info(g_fd, WIN_IMPORT, &info));
	EXPECT_LE(1900U, info.newest_age_ms);
	while (!info.rotations && now_ns() - t0 < 1800000000ULL) {
		sleep_ms(10);
		ASSERT_EQ(0, kb_info(g_fd, WIN_IMPORT, &info));
	}
	EXPECT_EQ(1U, info.rotations) {
		TH_LOG("no rotation %llu ms after an import 1.9 s into a 2 s period",
		       (unsigned long long)(now_ns() - t0) / 1000000);
	}
	ASSERT_EQ(0, kb_destroy(g_fd, WIN_IMPORT));
	im.age_ms = 4001;
	ASSERT_EQ(0, kb_import(g_fd, &im, WIN_IMPORT, 0)) {
		TH_LOG("an age past the period");
	}
	free(buf);
}

/*
 * Generations rotate on their own clocks, so a union or an intersection
 * with a windowed filter means nothing: refused either way round, even
 * with a plain filter of the same shape, and neither side changes.
 */
TEST_F(window, merge_and_compare_refused)
{
	static const unsigned long cmds[] = {
		KBLOOM_IOC_MERGE, KBLOOM_IOC_COMPARE
	};
	const u64 bits = 1 << 16;
	struct img win, plain;
	unsigned int i;

	ASSERT_EQ(0, win_create(WIN_F, bits, 60000, 2, 0));
	ASSERT_EQ(0, kb_create(g_fd, WIN_PLAIN, bits, 4, 0, 0, NULL));
	EXPECT_SKEY(g_fd, KBLOOM_IOC_ADD, WIN_F, "w", 0, "add to %s", WIN_F);
	EXPECT_SKEY(g_fd, KBLOOM_IOC_ADD, WIN_PLAIN, "p", 0, "add to %s",
		    WIN_PLAIN);
	ASSERT_TRUE(img_take(_metadata, WIN_F, &win, "before"));
	ASSERT_TRUE(img_take(_metadata, WIN_PLAIN, &plain, "before"));
	for (i = 0; i < ARRAY_SIZE(cmds); i++) {
		EXPECT_EQ(EOPNOTSUPP,
			  kb_merge(g_fd, cmds[i], WIN_F, WIN_PLAIN, NULL));
		EXPECT_EQ(EOPNOTSUPP,
			  kb_merge(g_fd, cmds[i], WIN_PLAIN, WIN_F, NULL));
		EXPECT_EQ(EOPNOTSUPP,
			  kb_merge(g_fd, cmds[i], WIN_F, WIN_F, NULL));
	}
	EXPECT_TRUE(img_same(_metadata, WIN_F, &win));
	EXPECT_TRUE(img_same(_metadata, WIN_PLAIN, &plain));
	img_free(&win);
	img_free(&plain);
}
