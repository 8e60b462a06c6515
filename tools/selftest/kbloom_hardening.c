// SPDX-License-Identifier: GPL-2.0
/*
 * kbloom_hardening - regression tests for kbloom's hardening (faulting
 * buffers, read-only fds, sysfs modes and counters, limits, image
 * validation, hash schemes), on the kernel's own selftest harness
 * (tools/testing/selftests/kselftest_harness.h of the kernel source, not a
 * copy). Run as root in the test VM with kbloom.ko loaded; built static
 * for x86_64 and for i386 (compat ioctl).
 *
 * Each TEST_F runs in its own child process with a fresh fixture: the
 * fixture's setup removes leftovers of an earlier, killed run and creates
 * the filters the case needs; its teardown destroys them and restores any
 * module parameter the case changed. Output is TAP ("ok N fixture.case" at
 * column 0); the exit status is 0 only if every case passed.
 *
 * Filter names all start with "hd_", so that nothing here touches a filter
 * of another test.
 *
 * Usage: kbloom_hardening (the 6.1 harness takes no options: every case
 * runs, each with its own timeout).
 */
#define _GNU_SOURCE
#include <sys/socket.h>
#include <linux/netlink.h>

#include "kbloom_test.h"

#define PARAMS		"/sys/module/kbloom/parameters"
#define MIB		(1024ULL * 1024)
#define GIB		(1024 * MIB)

/* ------------------------------------------------------------------ */
/* Keys                                                               */
/* ------------------------------------------------------------------ */

/* @n distinct keys "<tag>:<i>", packed end to end. */
struct keys {
	char *buf;
	u32 *lens;
	u64 *off;
	u64 bytes;
	u32 n;
};

static int keys_make(struct keys *ks, const char *tag, u32 n)
{
	u64 pos = 0;
	u32 i;

	memset(ks, 0, sizeof(*ks));
	ks->buf = malloc((size_t)n * 32);
	ks->lens = calloc(n, sizeof(*ks->lens));
	ks->off = calloc(n, sizeof(*ks->off));
	if (!ks->buf || !ks->lens || !ks->off)
		return ENOMEM;
	for (i = 0; i < n; i++) {
		ks->off[i] = pos;
		ks->lens[i] = (u32)snprintf(ks->buf + pos, 32, "%s:%u", tag, i);
		pos += ks->lens[i];
	}
	ks->bytes = pos;
	ks->n = n;
	return 0;
}

static void keys_free(struct keys *ks)
{
	free(ks->buf);
	free(ks->lens);
	free(ks->off);
	memset(ks, 0, sizeof(*ks));
}

static u64 keys_span(const struct keys *ks, u32 first, u32 n)
{
	u64 end = first + n < ks->n ? ks->off[first + n] : ks->bytes;

	return end - ks->off[first];
}

static int keys_batch(int fd, unsigned long cmd, const char *name,
		      const struct keys *ks, u32 first, u32 n, void *results,
		      struct kbloom_batch *out)
{
	return kb_batch(fd, cmd, name, ks->buf + ks->off[first],
			ks->lens + first, results, keys_span(ks, first, n), n,
			out);
}

/* Keys first .. first + n - 1 in one good batch; 0 or an errno. */
static int keys_apply(int fd, unsigned long cmd, const char *name,
		      const struct keys *ks, u32 first, u32 n)
{
	struct kbloom_batch b;
	int err = keys_batch(fd, cmd, name, ks, first, n, NULL, &b);

	if (!err && b.done != n)
		return EIO;
	return err;
}

/* How many of keys first .. first + n - 1 are present, or -errno. */
static long keys_hits(int fd, const char *name, const struct keys *ks,
		      u32 first, u32 n)
{
	struct kbloom_batch b;
	int err = keys_batch(fd, KBLOOM_IOC_QUERY_BATCH, name, ks, first, n,
			     NULL, &b);

	if (err)
		return -err;
	if (b.done != n)
		return -EIO;
	return b.hits;
}

/*
 * Query keys first .. first + n - 1 one at a time: how many did NOT
 * answer @want, or -errno.
 */
static long keys_query_each(int fd, const char *name, const struct keys *ks,
			    u32 first, u32 n, u32 want)
{
	long wrong = 0;
	u32 i, res;
	int err;

	for (i = first; i < first + n; i++) {
		err = kb_key(fd, KBLOOM_IOC_QUERY, name, ks->buf + ks->off[i],
			     ks->lens[i], &res);
		if (err)
			return -err;
		wrong += res != want;
	}
	return wrong;
}

/* ------------------------------------------------------------------ */
/* Images                                                             */
/* ------------------------------------------------------------------ */

struct img {
	struct kbloom_image im;
	unsigned char *buf;
	u64 len;
};

/* EXPORT @name into @g, sized by a first ENOBUFS call; 0 or an errno. */
static int img_take(int fd, const char *name, struct img *g)
{
	struct kbloom_image im;
	int err;

	memset(g, 0, sizeof(*g));
	memset(&im, 0, sizeof(im));
	set_name(im.name, name);
	err = ioc(fd, KBLOOM_IOC_EXPORT, &im);
	if (err != ENOBUFS)
		return err ? err : EIO;
	g->len = im.payload_len;
	g->buf = malloc(g->len ? g->len : 1);
	if (!g->buf)
		return ENOMEM;
	memset(&g->im, 0, sizeof(g->im));
	set_name(g->im.name, name);
	g->im.payload = PTR(g->buf);
	g->im.payload_len = g->len;
	err = ioc(fd, KBLOOM_IOC_EXPORT, &g->im);
	if (!err && g->im.payload_len != g->len)
		return EIO;
	return err;
}

static void img_free(struct img *g)
{
	free(g->buf);
	memset(g, 0, sizeof(*g));
}

/* The payload's bits set (plain) or non-zero counters (counting). */
static u64 img_nonzero(const struct img *g)
{
	u64 i, c = 0;

	if (!(g->im.flags & KBLOOM_CREATE_COUNTING)) {
		for (i = 0; i < g->len; i++)
			c += (u64)__builtin_popcount(g->buf[i]);
		return c;
	}
	for (i = 0; i < g->im.bits && i / 2 < g->len; i++)
		c += ((g->buf[i / 2] >> (4 * (i % 2))) & 0xf) != 0;
	return c;
}

/* Counting payloads: counters at KBLOOM_COUNTER_MAX; 0 for plain. */
static u64 img_saturated(const struct img *g)
{
	u64 i, c = 0;

	if (!(g->im.flags & KBLOOM_CREATE_COUNTING))
		return 0;
	for (i = 0; i < g->im.bits && i / 2 < g->len; i++)
		c += ((g->buf[i / 2] >> (4 * (i % 2))) & 0xf) ==
		     KBLOOM_COUNTER_MAX;
	return c;
}

/* Same parameters, seed (both halves) and payload bytes? */
static bool img_equal(const struct img *a, const struct img *b)
{
	return a->len == b->len && a->im.bits == b->im.bits &&
	       a->im.hashes == b->im.hashes && a->im.flags == b->im.flags &&
	       a->im.hash_scheme == b->im.hash_scheme &&
	       !memcmp(a->im.seed, b->im.seed, sizeof(a->im.seed)) &&
	       !memcmp(a->im.seed_hi, b->im.seed_hi, sizeof(a->im.seed_hi)) &&
	       !memcmp(a->buf, b->buf, a->len);
}

/* Does @name still export exactly @g? 1 yes, 0 no, -errno. */
static int img_unchanged(int fd, const char *name, const struct img *g)
{
	struct img now;
	int err = img_take(fd, name, &now);
	int same;

	if (err) {
		img_free(&now);
		return -err;
	}
	same = img_equal(&now, g);
	img_free(&now);
	return same;
}

/* ------------------------------------------------------------------ */
/* Memory                                                             */
/* ------------------------------------------------------------------ */

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
 * INFO's and sysfs' bits_set and saturated equal what the EXPORTed payload
 * holds (set bits, or non-zero counters; counters at 15).
 */
static void assert_counts(struct __test_metadata *_metadata, int fd,
			  const char *name, const char *when)
{
	struct kbloom_info info;
	struct img g;
	u64 sbits = ~0ULL, ssat = ~0ULL, nz, sat;

	ASSERT_EQ(0, img_take(fd, name, &g)) {
		TH_LOG("%s: EXPORT %s", when, name);
	}
	ASSERT_EQ(0, kb_info(fd, name, &info)) {
		TH_LOG("%s: INFO %s", when, name);
	}
	EXPECT_EQ(0, filter_attr(name, "bits_set", &sbits));
	EXPECT_EQ(0, filter_attr(name, "saturated", &ssat));
	nz = img_nonzero(&g);
	sat = img_saturated(&g);
	img_free(&g);
	EXPECT_EQ(nz, info.bits_set) {
		TH_LOG("%s: %s: INFO bits_set differs from the payload", when,
		       name);
	}
	EXPECT_EQ(nz, sbits) {
		TH_LOG("%s: %s: sysfs bits_set differs from the payload", when,
		       name);
	}
	EXPECT_EQ(sat, info.saturated) {
		TH_LOG("%s: %s: INFO saturated differs from the payload", when,
		       name);
	}
	EXPECT_EQ(sat, ssat) {
		TH_LOG("%s: %s: sysfs saturated differs from the payload",
		       when, name);
	}
}

/* A page of @size bytes, zeroed and writable; NULL on failure. */
static void *page_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static size_t page_size(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/*
 * Run @fn as user nobody in a child that keeps @fd: it writes up to @n
 * errnos into @out through a pipe. 0 or an errno.
 */
static int as_nobody(int fd, void (*fn)(int fd, int *out), int *out,
		     size_t n)
{
	int p[2], status;
	ssize_t got;
	pid_t pid;

	if (pipe(p))
		return errno;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0) {
		int res[16];

		memset(res, 0xff, sizeof(res));
		close(p[0]);
		if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(3);
		fn(fd, res);
		if (write(p[1], res, n * sizeof(int)) != (ssize_t)(n * sizeof(int)))
			_exit(4);
		_exit(0);
	}
	close(p[1]);
	got = read(p[0], out, n * sizeof(int));
	close(p[0]);
	if (waitpid(pid, &status, 0) != pid)
		return errno;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    got != (ssize_t)(n * sizeof(int)))
		return ECHILD;
	return 0;
}

/* ================================================================== */
/* 1. Partial faults in batches                                       */
/* ================================================================== */

#define BF_F		"hd_bf"
#define BF_REF		"hd_bf_ref"
#define BF_KEYS		2048u
#define BF_CHUNK	1024u	/* keys per chunk, as the uapi says */

FIXTURE(batch_fault) {
	int fd;
	struct keys ks;
	unsigned char *map;	/* two pages, the second PROT_NONE */
	unsigned char *res;	/* byte 128 is the first of the second page */
	unsigned char good[BF_KEYS / 8];
	size_t pg;
};

FIXTURE_VARIANT(batch_fault) {
	unsigned long cmd;
	bool remove;
	bool taa;
};

FIXTURE_VARIANT_ADD(batch_fault, add) {
	.cmd = KBLOOM_IOC_ADD_BATCH,
};

FIXTURE_VARIANT_ADD(batch_fault, test_and_add) {
	.cmd = KBLOOM_IOC_TEST_AND_ADD_BATCH,
	.taa = true,
};

FIXTURE_VARIANT_ADD(batch_fault, remove) {
	.cmd = KBLOOM_IOC_REMOVE_BATCH,
	.remove = true,
};

FIXTURE_SETUP(batch_fault)
{
	self->pg = page_size();
	self->fd = open(DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	destroy_quiet(self->fd, BF_F);
	destroy_quiet(self->fd, BF_REF);
	/* Counting, 2^20 counters: 8192 positions in use, no false hit. */
	ASSERT_EQ(0, kb_create_scheme(self->fd, BF_F, 1 << 20, 4,
				      KBLOOM_CREATE_COUNTING, 0, NULL));
	/* The reference gets the same operations without faults. */
	ASSERT_EQ(0, kb_create_like(self->fd, BF_REF, BF_F, 0, 0, NULL));
	ASSERT_EQ(0, keys_make(&self->ks, "bf", BF_KEYS));
	self->map = page_alloc(2 * self->pg);
	ASSERT_TRUE(self->map != NULL);
	ASSERT_EQ(0, mprotect(self->map + self->pg, self->pg, PROT_NONE));
	self->res = self->map + self->pg - BF_CHUNK / 8;
}

FIXTURE_TEARDOWN(batch_fault)
{
	if (self->map)
		munmap(self->map, 2 * self->pg);
	keys_free(&self->ks);
	destroy_quiet(self->fd, BF_F);
	destroy_quiet(self->fd, BF_REF);
	close(self->fd);
}

/* F and the reference export the same payload (same seed: same bytes). */
static void assert_same_as_ref(struct __test_metadata *_metadata, int fd,
			       const char *when)
{
	struct img f, r;

	ASSERT_EQ(0, img_take(fd, BF_F, &f));
	ASSERT_EQ(0, img_take(fd, BF_REF, &r));
	ASSERT_EQ(f.len, r.len);
	EXPECT_EQ(0, memcmp(f.buf, r.buf, f.len)) {
		TH_LOG("%s: the filter's counters differ from the reference's",
		       when);
	}
	img_free(&f);
	img_free(&r);
}

/*
 * One batch of BF_KEYS whose second chunk's result bytes are on a
 * PROT_NONE page, then the retry from @done with a good buffer.
 */
static void partial_round(struct __test_metadata *_metadata,
			  FIXTURE_DATA(batch_fault) *self,
			  const FIXTURE_VARIANT(batch_fault) *variant,
			  bool twice)
{
	const struct keys *ks = &self->ks;
	struct kbloom_info before, after;
	struct kbloom_batch b;
	u32 i, want_bit = variant->remove ? 1 : 0;
	bool bytes_ok = true;
	int err;

	ASSERT_EQ(0, kb_info(self->fd, BF_F, &before));
	memset(self->res, 0xa5, BF_CHUNK / 8);
	err = keys_batch(self->fd, variant->cmd, BF_F, ks, 0, BF_KEYS,
			 self->res, &b);
	ASSERT_EQ(EFAULT, err);
	ASSERT_EQ(BF_CHUNK, b.done) {
		TH_LOG("done must count exactly the keys applied: chunk 0");
	}
	EXPECT_EQ(want_bit ? BF_CHUNK : 0U, b.hits);
	for (i = 0; i < BF_CHUNK / 8; i++)
		bytes_ok &= self->res[i] == (want_bit ? 0xff : 0x00);
	EXPECT_TRUE(bytes_ok) {
		TH_LOG("chunk 0's result bytes were not all written");
	}
	ASSERT_EQ(0, kb_info(self->fd, BF_F, &after));
	EXPECT_EQ(before.adds + (variant->remove ? 0 : BF_CHUNK), after.adds);
	EXPECT_EQ(before.queries + (variant->taa ? BF_CHUNK : 0),
		  after.queries);

	/* The reference: exactly keys 0 .. 1023. */
	ASSERT_EQ(0, keys_apply(self->fd, variant->cmd, BF_REF, ks, 0,
				BF_CHUNK));
	assert_same_as_ref(_metadata, self->fd, "after the faulting batch");
	if (!twice) {
		/* One by one: chunk 0 applied, chunk 1 not. */
		EXPECT_EQ(0, keys_query_each(self->fd, BF_F, ks, 0, BF_CHUNK,
					     variant->remove ? 0 : 1));
		EXPECT_EQ(0, keys_query_each(self->fd, BF_F, ks, BF_CHUNK,
					     BF_KEYS - BF_CHUNK,
					     variant->remove ? 1 : 0)) {
			TH_LOG("a key after done was applied");
		}
	}
	assert_counts(_metadata, self->fd, BF_F, "after the faulting batch");

	/* Retry from done, as the uapi says: the same as doing it once. */
	memset(self->good, 0xa5, sizeof(self->good));
	err = keys_batch(self->fd, variant->cmd, BF_F, ks, b.done,
			 BF_KEYS - b.done, self->good, &b);
	ASSERT_EQ(0, err);
	ASSERT_EQ(BF_KEYS - BF_CHUNK, b.done);
	EXPECT_EQ(want_bit ? BF_KEYS - BF_CHUNK : 0U, b.hits);
	ASSERT_EQ(0, keys_apply(self->fd, variant->cmd, BF_REF, ks, BF_CHUNK,
				BF_KEYS - BF_CHUNK));
	assert_same_as_ref(_metadata, self->fd, "after the retry");
	assert_counts(_metadata, self->fd, BF_F, "after the retry");
	ASSERT_EQ(0, kb_info(self->fd, BF_F, &after));
	EXPECT_EQ(before.adds + (variant->remove ? 0 : BF_KEYS), after.adds);
}

TEST_F_TIMEOUT(batch_fault, partial_results_fault, 300)
{
	const struct keys *ks = &self->ks;
	struct kbloom_info info;

	if (variant->remove) {
		/* Each key in once: removed keys become absent. */
		ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, BF_F,
					ks, 0, BF_KEYS));
		ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, BF_REF,
					ks, 0, BF_KEYS));
	}
	partial_round(_metadata, self, variant, false);
	if (variant->remove) {
		EXPECT_EQ(0, keys_hits(self->fd, BF_F, ks, 0, BF_KEYS));
		ASSERT_EQ(0, kb_info(self->fd, BF_F, &info));
		EXPECT_EQ(0ULL, info.bits_set) {
			TH_LOG("every counter must be back to 0");
		}
		/* Each key in twice, removed once (with the retry): present. */
		ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, BF_F,
					ks, 0, BF_KEYS));
		ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, BF_F,
					ks, 0, BF_KEYS));
		ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, BF_REF,
					ks, 0, BF_KEYS));
		ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, BF_REF,
					ks, 0, BF_KEYS));
		partial_round(_metadata, self, variant, true);
		EXPECT_EQ(0, keys_query_each(self->fd, BF_F, ks, 0, BF_KEYS,
					     1)) {
			TH_LOG("a key added twice and removed once is absent");
		}
	} else {
		EXPECT_EQ((long)BF_KEYS, keys_hits(self->fd, BF_F, ks, 0,
						   BF_KEYS));
	}
}

/* The batch header itself cannot be written back: nothing is applied. */
TEST_F(batch_fault, header_readonly)
{
	const struct keys *ks = &self->ks;
	struct kbloom_info before, after;
	struct kbloom_batch *b;
	struct img snap;

	if (variant->remove)
		ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, BF_F,
					ks, 0, BF_KEYS));
	ASSERT_EQ(0, img_take(self->fd, BF_F, &snap));
	ASSERT_EQ(0, kb_info(self->fd, BF_F, &before));
	b = page_alloc(self->pg);
	ASSERT_TRUE(b != NULL);
	fill_batch(b, BF_F, ks->buf, ks->lens, self->good, ks->bytes, BF_KEYS);
	ASSERT_EQ(0, mprotect(b, self->pg, PROT_READ));
	EXPECT_EQ(EFAULT, ioc(self->fd, variant->cmd, b));
	EXPECT_EQ(1, img_unchanged(self->fd, BF_F, &snap)) {
		TH_LOG("a batch whose header cannot be written changed the filter");
	}
	ASSERT_EQ(0, kb_info(self->fd, BF_F, &after));
	EXPECT_EQ(before.adds, after.adds);
	EXPECT_EQ(before.queries, after.queries);
	EXPECT_EQ(before.hits, after.hits);
	EXPECT_EQ(before.bits_set, after.bits_set);
	EXPECT_EQ(variant->remove ? (long)BF_KEYS : 0L,
		  keys_hits(self->fd, BF_F, ks, 0, BF_KEYS));
	munmap(b, self->pg);
	img_free(&snap);
}

/* ---- single-key commands, CREATE and MERGE with a read-only struct ---- */

#define KF_F	"hd_kf"
#define KF_KEY	"kf-key"

FIXTURE(key_fault) {
	int fd;
	size_t pg;
};

FIXTURE_VARIANT(key_fault) {
	unsigned long cmd;
	bool remove;
};

FIXTURE_VARIANT_ADD(key_fault, add) {
	.cmd = KBLOOM_IOC_ADD,
};

FIXTURE_VARIANT_ADD(key_fault, test_and_add) {
	.cmd = KBLOOM_IOC_TEST_AND_ADD,
};

FIXTURE_VARIANT_ADD(key_fault, remove) {
	.cmd = KBLOOM_IOC_REMOVE,
	.remove = true,
};

FIXTURE_SETUP(key_fault)
{
	self->pg = page_size();
	self->fd = open(DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	destroy_quiet(self->fd, KF_F);
	ASSERT_EQ(0, kb_create_scheme(self->fd, KF_F, 1 << 16, 4,
				      KBLOOM_CREATE_COUNTING, 0, NULL));
	ASSERT_EQ(0, kb_skey(self->fd, KBLOOM_IOC_ADD, KF_F, "other", NULL));
	/* REMOVE needs the key in: a remove that fails must not decrement. */
	if (variant->remove)
		ASSERT_EQ(0, kb_skey(self->fd, KBLOOM_IOC_ADD, KF_F, KF_KEY,
				     NULL));
}

FIXTURE_TEARDOWN(key_fault)
{
	destroy_quiet(self->fd, KF_F);
	close(self->fd);
}

TEST_F(key_fault, struct_readonly)
{
	static const char key[] = KF_KEY;
	struct kbloom_info before, after;
	struct kbloom_key *k;
	struct img snap;
	u32 res;

	ASSERT_EQ(0, img_take(self->fd, KF_F, &snap));
	ASSERT_EQ(0, kb_info(self->fd, KF_F, &before));
	k = page_alloc(self->pg);
	ASSERT_TRUE(k != NULL);
	set_name(k->name, KF_F);
	k->key = PTR(key);
	k->len = (u32)strlen(key);
	ASSERT_EQ(0, mprotect(k, self->pg, PROT_READ));
	EXPECT_EQ(EFAULT, ioc(self->fd, variant->cmd, k));
	EXPECT_EQ(1, img_unchanged(self->fd, KF_F, &snap)) {
		TH_LOG("the failed call changed the counters");
	}
	ASSERT_EQ(0, kb_info(self->fd, KF_F, &after));
	EXPECT_EQ(before.adds, after.adds);
	EXPECT_EQ(before.queries, after.queries);
	EXPECT_EQ(before.hits, after.hits);
	EXPECT_EQ(before.bits_set, after.bits_set);
	EXPECT_EQ(before.saturated, after.saturated);
	ASSERT_EQ(0, kb_skey(self->fd, KBLOOM_IOC_QUERY, KF_F, key, &res));
	EXPECT_EQ(variant->remove ? 1U : 0U, res);
	munmap(k, self->pg);
	img_free(&snap);
}

#define SF_NEW		"hd_sf_new"
#define SF_DST		"hd_sf_dst"
#define SF_SRC		"hd_sf_src"
#define SF_DUP		"hd_sf_dup"

FIXTURE(struct_fault) {
	int fd;
	size_t pg;
	void *page;
};

FIXTURE_SETUP(struct_fault)
{
	self->pg = page_size();
	self->fd = open(DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	destroy_quiet(self->fd, SF_NEW);
	destroy_quiet(self->fd, SF_DST);
	destroy_quiet(self->fd, SF_SRC);
	destroy_quiet(self->fd, SF_DUP);
	self->page = page_alloc(self->pg);
	ASSERT_TRUE(self->page != NULL);
}

FIXTURE_TEARDOWN(struct_fault)
{
	if (self->page)
		munmap(self->page, self->pg);
	destroy_quiet(self->fd, SF_NEW);
	destroy_quiet(self->fd, SF_DST);
	destroy_quiet(self->fd, SF_SRC);
	destroy_quiet(self->fd, SF_DUP);
	close(self->fd);
}

TEST_F(struct_fault, create_readonly)
{
	struct kbloom_create *c = self->page;
	long before = kb_count(self->fd);

	ASSERT_LE(0, before);
	set_name(c->name, SF_NEW);
	c->bits = 1024;
	c->hashes = 3;
	ASSERT_EQ(0, mprotect(c, self->pg, PROT_READ));
	EXPECT_EQ(EFAULT, ioc(self->fd, KBLOOM_IOC_CREATE, c));
	EXPECT_FALSE(kb_exists(self->fd, SF_NEW));
	EXPECT_EQ(before, kb_count(self->fd));
	EXPECT_FALSE(filter_dir_exists(SF_NEW));
}

TEST_F(struct_fault, merge_readonly)
{
	struct kbloom_merge *m = self->page;
	struct img dst, src;

	ASSERT_EQ(0, kb_create_scheme(self->fd, SF_DST, 1 << 16, 4,
				      KBLOOM_CREATE_COUNTING, 0, NULL));
	ASSERT_EQ(0, kb_create_like(self->fd, SF_SRC, SF_DST, 0, 0, NULL));
	ASSERT_EQ(0, kb_skey(self->fd, KBLOOM_IOC_ADD, SF_DST, "in-dst", NULL));
	ASSERT_EQ(0, kb_skey(self->fd, KBLOOM_IOC_ADD, SF_SRC, "in-src", NULL));
	ASSERT_EQ(0, kb_skey(self->fd, KBLOOM_IOC_ADD, SF_SRC, "in-dst", NULL));
	ASSERT_EQ(0, img_take(self->fd, SF_DST, &dst));
	ASSERT_EQ(0, img_take(self->fd, SF_SRC, &src));
	set_name(m->dst, SF_DST);
	set_name(m->src, SF_SRC);
	ASSERT_EQ(0, mprotect(m, self->pg, PROT_READ));
	EXPECT_EQ(EFAULT, ioc(self->fd, KBLOOM_IOC_MERGE, m));
	EXPECT_EQ(1, img_unchanged(self->fd, SF_DST, &dst)) {
		TH_LOG("MERGE that cannot write its result back merged");
	}
	EXPECT_EQ(1, img_unchanged(self->fd, SF_SRC, &src));
	img_free(&dst);
	img_free(&src);
}

/* 8. CREATE's undo never destroys another filter of the same name. */
TEST_F(struct_fault, create_undo_spares_existing)
{
	struct kbloom_create *c = self->page;
	struct kbloom_info before, after;
	struct img snap;
	u32 res;
	int err;

	ASSERT_EQ(0,
		  kb_create_scheme(self->fd, SF_DUP, 1 << 16, 5, 0, 0, NULL));
	ASSERT_EQ(0, kb_skey(self->fd, KBLOOM_IOC_ADD, SF_DUP, "dup-a", NULL));
	ASSERT_EQ(0, kb_skey(self->fd, KBLOOM_IOC_ADD, SF_DUP, "dup-b", NULL));
	ASSERT_EQ(0, kb_info(self->fd, SF_DUP, &before));
	ASSERT_EQ(0, img_take(self->fd, SF_DUP, &snap));
	set_name(c->name, SF_DUP);
	c->bits = 2048;
	c->hashes = 3;
	ASSERT_EQ(0, mprotect(c, self->pg, PROT_READ));
	err = ioc(self->fd, KBLOOM_IOC_CREATE, c);
	EXPECT_TRUE(err == EFAULT || err == EEXIST) {
		TH_LOG("CREATE over an existing name, struct read-only: %d (%s)",
		       err, strerror(err));
	}
	ASSERT_EQ(0, kb_info(self->fd, SF_DUP, &after)) {
		TH_LOG("the existing filter was destroyed");
	}
	EXPECT_EQ(before.bits, after.bits);
	EXPECT_EQ(before.hashes, after.hashes);
	EXPECT_EQ(before.adds, after.adds);
	EXPECT_EQ(1, img_unchanged(self->fd, SF_DUP, &snap));
	ASSERT_EQ(0, kb_skey(self->fd, KBLOOM_IOC_QUERY, SF_DUP, "dup-a", &res));
	EXPECT_EQ(1U, res);
	ASSERT_EQ(0, kb_skey(self->fd, KBLOOM_IOC_QUERY, SF_DUP, "dup-b", &res));
	EXPECT_EQ(1U, res);
	EXPECT_TRUE(filter_dir_exists(SF_DUP));
	img_free(&snap);
}

/* ================================================================== */
/* 2. Read-only fd                                                    */
/* ================================================================== */

#define RO_A	"hd_ro_a"
#define RO_B	"hd_ro_b"
#define RO_NEW	"hd_ro_new"
#define RO_KEYS	100u

FIXTURE(rofd) {
	int fd;		/* read-write */
	int ro;		/* read-only */
	struct keys ka, kb;
	struct img a, b;	/* exports taken in setup */
	long count;
};

FIXTURE_SETUP(rofd)
{
	self->ro = -1;
	self->fd = open(DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	destroy_quiet(self->fd, RO_A);
	destroy_quiet(self->fd, RO_B);
	destroy_quiet(self->fd, RO_NEW);
	ASSERT_EQ(0, kb_create_scheme(self->fd, RO_A, 1 << 16, 4, 0, 0, NULL));
	ASSERT_EQ(0, kb_create_like(self->fd, RO_B, RO_A, 0, 0, NULL));
	ASSERT_EQ(0, keys_make(&self->ka, "roa", RO_KEYS));
	ASSERT_EQ(0, keys_make(&self->kb, "rob", RO_KEYS));
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, RO_A,
				&self->ka, 0, RO_KEYS));
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, RO_B,
				&self->kb, 0, RO_KEYS));
	ASSERT_EQ(0, img_take(self->fd, RO_A, &self->a));
	ASSERT_EQ(0, img_take(self->fd, RO_B, &self->b));
	self->count = kb_count(self->fd);
	ASSERT_LE(2, self->count);
	self->ro = open(DEV, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, self->ro);
}

FIXTURE_TEARDOWN(rofd)
{
	if (self->ro >= 0)
		close(self->ro);
	keys_free(&self->ka);
	keys_free(&self->kb);
	img_free(&self->a);
	img_free(&self->b);
	destroy_quiet(self->fd, RO_A);
	destroy_quiet(self->fd, RO_B);
	destroy_quiet(self->fd, RO_NEW);
	close(self->fd);
}

/* Nothing changed: same filters, same contents, same statistics. */
static void assert_ro_nothing_changed(struct __test_metadata *_metadata,
				      FIXTURE_DATA(rofd) *self)
{
	struct kbloom_info info;

	EXPECT_EQ(self->count, kb_count(self->fd));
	EXPECT_FALSE(kb_exists(self->fd, RO_NEW));
	EXPECT_EQ(1, img_unchanged(self->fd, RO_A, &self->a));
	EXPECT_EQ(1, img_unchanged(self->fd, RO_B, &self->b));
	ASSERT_EQ(0, kb_info(self->fd, RO_A, &info));
	EXPECT_EQ((u64)RO_KEYS, info.adds);
	ASSERT_EQ(0, kb_info(self->fd, RO_B, &info));
	EXPECT_EQ((u64)RO_KEYS, info.adds);
}

TEST_F(rofd, create_ebadf)
{
	EXPECT_EQ(EBADF,
		  kb_create_scheme(self->ro, RO_NEW, 1024, 3, 0, 0, NULL));
	EXPECT_EQ(EBADF, kb_create_like(self->ro, RO_NEW, RO_A, 0, 0, NULL));
	assert_ro_nothing_changed(_metadata, self);
}

TEST_F(rofd, destroy_ebadf)
{
	EXPECT_EQ(EBADF, kb_destroy(self->ro, RO_A));
	EXPECT_TRUE(filter_dir_exists(RO_A));
	assert_ro_nothing_changed(_metadata, self);
}

TEST_F(rofd, clear_ebadf)
{
	EXPECT_EQ(EBADF, kb_clear(self->ro, RO_A));
	EXPECT_EQ((long)RO_KEYS, keys_hits(self->fd, RO_A, &self->ka, 0,
					   RO_KEYS));
	assert_ro_nothing_changed(_metadata, self);
}

/* ROTATE (a windowed filter's generations) is privileged the same way. */
TEST_F(rofd, rotate_ebadf)
{
	struct kbloom_create c;
	struct kbloom_info info;

	memset(&c, 0, sizeof(c));
	set_name(c.name, RO_NEW);
	c.bits = 4096;
	c.hashes = 3;
	c.generations = 2;	/* window 0: rotates only on ROTATE */
	ASSERT_EQ(0, ioc(self->fd, KBLOOM_IOC_CREATE, &c));
	EXPECT_EQ(EBADF, kb_name_cmd(self->ro, KBLOOM_IOC_ROTATE, RO_NEW));
	ASSERT_EQ(0, kb_info(self->fd, RO_NEW, &info));
	EXPECT_EQ(0ULL, info.rotations);
	/* The read-write fd may. */
	EXPECT_EQ(0, kb_name_cmd(self->fd, KBLOOM_IOC_ROTATE, RO_NEW));
	ASSERT_EQ(0, kb_info(self->fd, RO_NEW, &info));
	EXPECT_EQ(1ULL, info.rotations);
	ASSERT_EQ(0, kb_destroy(self->fd, RO_NEW));
	assert_ro_nothing_changed(_metadata, self);
}

TEST_F(rofd, import_ebadf)
{
	EXPECT_EQ(EBADF, kb_import(self->ro, &self->a.im, RO_NEW, 0));
	assert_ro_nothing_changed(_metadata, self);
}

TEST_F(rofd, import_replace_ebadf)
{
	EXPECT_EQ(EBADF, kb_import(self->ro, &self->a.im, RO_B,
				   KBLOOM_IMPORT_REPLACE));
	assert_ro_nothing_changed(_metadata, self);
}

TEST_F(rofd, merge_ebadf)
{
	EXPECT_EQ(EBADF, kb_merge(self->ro, KBLOOM_IOC_MERGE, RO_A, RO_B,
				  NULL));
	EXPECT_EQ(0, keys_hits(self->fd, RO_A, &self->kb, 0, RO_KEYS));
	assert_ro_nothing_changed(_metadata, self);
}

/*
 * COMPARE walks both filters: on a read-only fd only for CAP_SYS_ADMIN
 * (see unprivileged_ebadf_before_eperm for everyone else).
 */
TEST_F(rofd, compare_as_root)
{
	struct kbloom_merge m, r;

	ASSERT_EQ(0, kb_merge(self->fd, KBLOOM_IOC_COMPARE, RO_A, RO_B, &m));
	EXPECT_EQ(0U, m.mismatch);
	ASSERT_EQ(0, kb_merge(self->ro, KBLOOM_IOC_COMPARE, RO_A, RO_B, &r));
	EXPECT_EQ(0U, r.mismatch);
	EXPECT_EQ(m.bits_dst, r.bits_dst);
	EXPECT_EQ(m.bits_src, r.bits_src);
	EXPECT_EQ(m.bits_union, r.bits_union);
	EXPECT_EQ(m.bits_inter, r.bits_inter);
	EXPECT_EQ(img_nonzero(&self->a), r.bits_dst);
	assert_ro_nothing_changed(_metadata, self);
}

TEST_F(rofd, export_works)
{
	struct img g;

	ASSERT_EQ(0, img_take(self->ro, RO_A, &g));
	EXPECT_TRUE(img_equal(&g, &self->a));
	EXPECT_EQ((u64)RO_KEYS, g.im.adds);
	img_free(&g);
	assert_ro_nothing_changed(_metadata, self);
}

TEST_F(rofd, query_works)
{
	u32 res;

	ASSERT_EQ(0, kb_key(self->ro, KBLOOM_IOC_QUERY, RO_A, self->ka.buf,
			    self->ka.lens[0], &res));
	EXPECT_EQ(1U, res);
	ASSERT_EQ(0, kb_skey(self->ro, KBLOOM_IOC_QUERY, RO_A, "never", &res));
	EXPECT_EQ(0U, res);
}

TEST_F(rofd, query_batch_works)
{
	EXPECT_EQ((long)RO_KEYS, keys_hits(self->ro, RO_A, &self->ka, 0,
					   RO_KEYS));
	EXPECT_EQ((long)RO_KEYS, keys_hits(self->ro, RO_B, &self->kb, 0,
					   RO_KEYS));
}

TEST_F(rofd, info_works)
{
	struct kbloom_info info;

	ASSERT_EQ(0, kb_info(self->ro, RO_A, &info));
	EXPECT_EQ(1ULL << 16, info.bits);
	EXPECT_EQ(4U, info.hashes);
	EXPECT_EQ((u64)RO_KEYS, info.adds);
	EXPECT_EQ(img_nonzero(&self->a), info.bits_set);
}

TEST_F(rofd, list_works)
{
	char (*names)[KBLOOM_NAME_MAX];
	struct kbloom_list l;
	u32 i, found = 0;

	names = calloc((size_t)self->count + 8, KBLOOM_NAME_MAX);
	ASSERT_TRUE(names != NULL);
	memset(&l, 0, sizeof(l));
	l.names = PTR(names);
	l.count = (u32)self->count + 8;
	ASSERT_EQ(0, ioc(self->ro, KBLOOM_IOC_LIST, &l));
	EXPECT_EQ((u32)self->count, l.count);
	for (i = 0; i < l.count && i < (u32)self->count + 8; i++)
		found += !strcmp(names[i], RO_A) || !strcmp(names[i], RO_B);
	EXPECT_EQ(2U, found);
	free(names);
}

TEST_F(rofd, version_works)
{
	struct kbloom_version v;

	memset(&v, 0xa5, sizeof(v));
	ASSERT_EQ(0, ioc(self->ro, KBLOOM_IOC_VERSION, &v));
	EXPECT_EQ((u32)KBLOOM_API_VERSION, v.api_version);
	EXPECT_EQ((u32)KBLOOM_NAME_MAX, v.name_max);
}

/* A missing write mode is reported before a missing capability. */
static void rofd_nobody(int fd, int *out)
{
	struct kbloom_image im;
	unsigned char buf[8];

	out[0] = kb_create_scheme(fd, RO_NEW, 1024, 3, 0, 0, NULL);
	out[1] = kb_destroy(fd, RO_A);
	out[2] = kb_clear(fd, RO_A);
	memset(&im, 0, sizeof(im));
	set_name(im.name, RO_A);
	im.payload = PTR(buf);
	im.payload_len = sizeof(buf);
	out[3] = ioc(fd, KBLOOM_IOC_EXPORT, &im);
	out[4] = kb_merge(fd, KBLOOM_IOC_MERGE, RO_A, RO_B, NULL);
	out[5] = kb_merge(fd, KBLOOM_IOC_COMPARE, RO_A, RO_B, NULL);
	out[6] = kb_import(fd, &im, RO_NEW, 0);
}

TEST_F(rofd, unprivileged_ebadf_before_eperm)
{
	int out[7];

	ASSERT_EQ(0, as_nobody(self->ro, rofd_nobody, out, 7));
	EXPECT_EQ(EBADF, out[0]);	/* CREATE */
	EXPECT_EQ(EBADF, out[1]);	/* DESTROY */
	EXPECT_EQ(EBADF, out[2]);	/* CLEAR */
	EXPECT_EQ(EPERM, out[3]);	/* EXPORT needs only the capability */
	EXPECT_EQ(EBADF, out[4]);	/* MERGE */
	EXPECT_EQ(EBADF, out[5]);	/* COMPARE, without the capability */
	EXPECT_EQ(EBADF, out[6]);	/* IMPORT */
	assert_ro_nothing_changed(_metadata, self);
}

/* ================================================================== */
/* 3. sysfs: modes, bits_set and saturated as counters                */
/* ================================================================== */

#define SS_P	"hd_ss_p"
#define SS_P2	"hd_ss_p2"
#define SS_C	"hd_ss_c"
#define SS_C2	"hd_ss_c2"
#define SS_NEW	"hd_ss_new"
#define SS_CNEW	"hd_ss_cnew"

FIXTURE(sysfs) {
	int fd;
	struct keys k1, k2;
};

FIXTURE_SETUP(sysfs)
{
	self->fd = open(DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	destroy_quiet(self->fd, SS_P);
	destroy_quiet(self->fd, SS_P2);
	destroy_quiet(self->fd, SS_C);
	destroy_quiet(self->fd, SS_C2);
	destroy_quiet(self->fd, SS_NEW);
	destroy_quiet(self->fd, SS_CNEW);
	/* Sizes that are not multiples of 64: padding exists. */
	ASSERT_EQ(0, kb_create_scheme(self->fd, SS_P, 100003, 5, 0, 0, NULL));
	ASSERT_EQ(0, kb_create_like(self->fd, SS_P2, SS_P, 0, 0, NULL));
	ASSERT_EQ(0, kb_create_scheme(self->fd, SS_C, 10007, 4,
				      KBLOOM_CREATE_COUNTING, 0, NULL));
	ASSERT_EQ(0, kb_create_like(self->fd, SS_C2, SS_C, 0, 0, NULL));
	ASSERT_EQ(0, keys_make(&self->k1, "ss1", 2000));
	ASSERT_EQ(0, keys_make(&self->k2, "ss2", 2000));
}

FIXTURE_TEARDOWN(sysfs)
{
	keys_free(&self->k1);
	keys_free(&self->k2);
	destroy_quiet(self->fd, SS_P);
	destroy_quiet(self->fd, SS_P2);
	destroy_quiet(self->fd, SS_C);
	destroy_quiet(self->fd, SS_C2);
	destroy_quiet(self->fd, SS_NEW);
	destroy_quiet(self->fd, SS_CNEW);
	close(self->fd);
}

/*
 * One rule for every file (kbloom_sysfs.c): what traffic moves is root's,
 * what the administrator chose is everyone's. Every file of a filter's
 * directory must be in this table, so that a new one is classified.
 */
TEST_F(sysfs, modes)
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
	static const char *const filters[] = { SS_P, SS_C };
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

/* Each file holds one decimal integer: the values INFO reports. */
TEST_F(sysfs, values)
{
	struct kbloom_info info;
	u64 v, w;

	ASSERT_EQ(0, kb_info(self->fd, SS_C, &info));
	ASSERT_EQ(0, filter_attr(SS_C, "bits", &v));
	EXPECT_EQ(10007ULL, v);
	ASSERT_EQ(0, filter_attr(SS_C, "hashes", &v));
	EXPECT_EQ(4ULL, v);
	ASSERT_EQ(0, filter_attr(SS_C, "counting", &v));
	EXPECT_EQ(1ULL, v);
	ASSERT_EQ(0, filter_attr(SS_P, "counting", &v));
	EXPECT_EQ(0ULL, v);
	ASSERT_EQ(0, filter_attr(SS_C, "hash_scheme", &v));
	EXPECT_EQ((u64)info.hash_scheme, v);
	ASSERT_EQ(0, filter_attr(SS_C, "memory_bytes", &v));
	EXPECT_EQ(info.memory_bytes, v);
	ASSERT_EQ(0, filter_attr(SS_C, "rules", &v));
	EXPECT_EQ(0ULL, v);	/* no in-kernel user pins it */
	/* Ids: positive, below 2^31, one per filter. */
	ASSERT_EQ(0, filter_attr(SS_C, "id", &v));
	ASSERT_EQ(0, filter_attr(SS_P, "id", &w));
	EXPECT_GT(v, 0ULL);
	EXPECT_LT(v, 1ULL << 31);
	EXPECT_GT(w, 0ULL);
	EXPECT_NE(v, w);
}

static void sysfs_nobody(int fd, int *out)
{
	static const char *const files[] = {
		"adds", "queries", "hits", "bits_set", "saturated", "bits",
		"hashes",
	};
	char path[160];
	size_t i;
	int f;

	(void)fd;
	for (i = 0; i < ARRAY_SIZE(files); i++) {
		snprintf(path, sizeof(path), SYSFS "/filters/" SS_P "/%s",
			 files[i]);
		f = open(path, O_RDONLY);
		out[i] = f < 0 ? errno : 0;
		if (f >= 0)
			close(f);
	}
}

TEST_F(sysfs, traffic_statistics_root_only)
{
	int out[7];

	ASSERT_EQ(0, as_nobody(self->fd, sysfs_nobody, out, 7));
	EXPECT_EQ(EACCES, out[0]);	/* adds */
	EXPECT_EQ(EACCES, out[1]);	/* queries */
	EXPECT_EQ(EACCES, out[2]);	/* hits */
	EXPECT_EQ(EACCES, out[3]);	/* bits_set */
	EXPECT_EQ(EACCES, out[4]);	/* saturated */
	EXPECT_EQ(0, out[5]);		/* bits */
	EXPECT_EQ(0, out[6]);		/* hashes */
}

TEST_F(sysfs, bits_set_after_adds)
{
	u32 i;

	assert_counts(_metadata, self->fd, SS_P, "fresh");
	assert_counts(_metadata, self->fd, SS_C, "fresh");
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, SS_P,
				&self->k1, 0, 1000));
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, SS_C,
				&self->k1, 0, 1000));
	for (i = 1000; i < 1100; i++) {
		ASSERT_EQ(0, kb_key(self->fd, KBLOOM_IOC_ADD, SS_P,
				    self->k1.buf + self->k1.off[i],
				    self->k1.lens[i], NULL));
		ASSERT_EQ(0, kb_key(self->fd, KBLOOM_IOC_ADD, SS_C,
				    self->k1.buf + self->k1.off[i],
				    self->k1.lens[i], NULL));
	}
	assert_counts(_metadata, self->fd, SS_P, "after adds");
	assert_counts(_metadata, self->fd, SS_C, "after adds");
}

TEST_F(sysfs, bits_set_after_test_and_adds)
{
	u32 i;

	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, SS_P,
				&self->k1, 0, 500));
	/* Half of them seen before, half new. */
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_TEST_AND_ADD_BATCH, SS_P,
				&self->k1, 250, 500));
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_TEST_AND_ADD_BATCH, SS_C,
				&self->k1, 250, 500));
	for (i = 800; i < 900; i++)
		ASSERT_EQ(0, kb_key(self->fd, KBLOOM_IOC_TEST_AND_ADD, SS_C,
				    self->k1.buf + self->k1.off[i],
				    self->k1.lens[i], NULL));
	assert_counts(_metadata, self->fd, SS_P, "after test-and-adds");
	assert_counts(_metadata, self->fd, SS_C, "after test-and-adds");
}

TEST_F(sysfs, bits_set_after_removes)
{
	struct kbloom_info info;
	u64 v;
	u32 i;
	struct img g;

	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, SS_C,
				&self->k1, 0, 300));
	/* Keys 0..99 twice: some counters at 2. */
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, SS_C,
				&self->k1, 0, 100));
	assert_counts(_metadata, self->fd, SS_C, "after adds");
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_REMOVE_BATCH, SS_C,
				&self->k1, 0, 150));
	assert_counts(_metadata, self->fd, SS_C, "after 150 removes");
	for (i = 150; i < 300; i++)
		ASSERT_EQ(0, kb_key(self->fd, KBLOOM_IOC_REMOVE, SS_C,
				    self->k1.buf + self->k1.off[i],
				    self->k1.lens[i], NULL));
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_REMOVE_BATCH, SS_C,
				&self->k1, 0, 100));
	assert_counts(_metadata, self->fd, SS_C, "after every remove");
	/* Every counter is back to 0. */
	ASSERT_EQ(0, kb_info(self->fd, SS_C, &info));
	EXPECT_EQ(0ULL, info.bits_set);
	ASSERT_EQ(0, filter_attr(SS_C, "bits_set", &v));
	EXPECT_EQ(0ULL, v);
	ASSERT_EQ(0, img_take(self->fd, SS_C, &g));
	EXPECT_EQ(0ULL, img_nonzero(&g));
	img_free(&g);
}

TEST_F(sysfs, saturated)
{
	struct kbloom_info info;
	u32 i;

	for (i = 0; i < 20; i++)
		ASSERT_EQ(0, kb_skey(self->fd, KBLOOM_IOC_ADD, SS_C, "sat",
				     NULL));
	ASSERT_EQ(0, kb_skey(self->fd, KBLOOM_IOC_ADD, SS_C, "one", NULL));
	assert_counts(_metadata, self->fd, SS_C, "after 20 adds of one key");
	ASSERT_EQ(0, kb_info(self->fd, SS_C, &info));
	EXPECT_LE(1ULL, info.saturated);
	EXPECT_GE(4ULL, info.saturated);
	for (i = 0; i < 20; i++)
		ASSERT_EQ(0, kb_skey(self->fd, KBLOOM_IOC_REMOVE, SS_C, "sat",
				     NULL));
	assert_counts(_metadata, self->fd, SS_C, "after 20 removes");
	ASSERT_EQ(0, kb_skey(self->fd, KBLOOM_IOC_REMOVE, SS_C, "one", NULL));
	assert_counts(_metadata, self->fd, SS_C, "after removing the other key");
}

TEST_F(sysfs, bits_set_after_merge)
{
	struct kbloom_merge m;
	u32 i;

	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, SS_P,
				&self->k1, 0, 1000));
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, SS_P2,
				&self->k2, 0, 1000));
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, SS_P2,
				&self->k1, 0, 100));
	ASSERT_EQ(0, kb_merge(self->fd, KBLOOM_IOC_MERGE, SS_P, SS_P2, &m));
	EXPECT_EQ(0U, m.mismatch);
	assert_counts(_metadata, self->fd, SS_P, "after MERGE");
	assert_counts(_metadata, self->fd, SS_P2, "source after MERGE");

	/* Counting: 10 + 10 adds of one key saturate in the sum. */
	for (i = 0; i < 10; i++) {
		ASSERT_EQ(0, kb_skey(self->fd, KBLOOM_IOC_ADD, SS_C, "m", NULL));
		ASSERT_EQ(0, kb_skey(self->fd, KBLOOM_IOC_ADD, SS_C2, "m", NULL));
	}
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, SS_C2,
				&self->k2, 0, 200));
	ASSERT_EQ(0, kb_merge(self->fd, KBLOOM_IOC_MERGE, SS_C, SS_C2, &m));
	EXPECT_EQ(0U, m.mismatch);
	assert_counts(_metadata, self->fd, SS_C, "counting, after MERGE");
}

TEST_F(sysfs, bits_set_after_clear)
{
	struct kbloom_info info;
	u64 v;
	u32 i;

	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, SS_P,
				&self->k1, 0, 1000));
	for (i = 0; i < 20; i++)
		ASSERT_EQ(0, kb_skey(self->fd, KBLOOM_IOC_ADD, SS_C, "sat",
				     NULL));
	ASSERT_EQ(0, kb_clear(self->fd, SS_P));
	ASSERT_EQ(0, kb_clear(self->fd, SS_C));
	assert_counts(_metadata, self->fd, SS_P, "after CLEAR");
	assert_counts(_metadata, self->fd, SS_C, "after CLEAR");
	ASSERT_EQ(0, kb_info(self->fd, SS_P, &info));
	EXPECT_EQ(0ULL, info.bits_set);
	ASSERT_EQ(0, kb_info(self->fd, SS_C, &info));
	EXPECT_EQ(0ULL, info.bits_set);
	EXPECT_EQ(0ULL, info.saturated);
	ASSERT_EQ(0, filter_attr(SS_C, "saturated", &v));
	EXPECT_EQ(0ULL, v);
	/* And counting starts again from zero. */
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, SS_P,
				&self->k2, 0, 10));
	assert_counts(_metadata, self->fd, SS_P, "after CLEAR and 10 adds");
}

TEST_F(sysfs, bits_set_after_import)
{
	struct img p, c;
	u32 i;

	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, SS_P,
				&self->k1, 0, 1500));
	for (i = 0; i < 20; i++)
		ASSERT_EQ(0, kb_skey(self->fd, KBLOOM_IOC_ADD, SS_C, "sat",
				     NULL));
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, SS_C,
				&self->k1, 0, 300));
	ASSERT_EQ(0, img_take(self->fd, SS_P, &p));
	ASSERT_EQ(0, img_take(self->fd, SS_C, &c));
	ASSERT_EQ(0, kb_import(self->fd, &p.im, SS_NEW, 0));
	ASSERT_EQ(0, kb_import(self->fd, &c.im, SS_CNEW, 0));
	assert_counts(_metadata, self->fd, SS_NEW, "after IMPORT");
	assert_counts(_metadata, self->fd, SS_CNEW, "after IMPORT");
	/* Then keep counting on the imported filter. */
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, SS_NEW,
				&self->k2, 0, 500));
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_REMOVE_BATCH, SS_CNEW,
				&self->k1, 0, 300));
	assert_counts(_metadata, self->fd, SS_NEW, "adds after IMPORT");
	assert_counts(_metadata, self->fd, SS_CNEW, "removes after IMPORT");
	img_free(&p);
	img_free(&c);
}

TEST_F(sysfs, bits_set_after_import_replace)
{
	struct img p2, c2;
	u32 i;

	/* The targets hold something else before they are replaced. */
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, SS_P,
				&self->k1, 0, 1500));
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, SS_C,
				&self->k1, 0, 500));
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, SS_P2,
				&self->k2, 0, 300));
	for (i = 0; i < 20; i++)
		ASSERT_EQ(0, kb_skey(self->fd, KBLOOM_IOC_ADD, SS_C2, "sat",
				     NULL));
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, SS_C2,
				&self->k2, 0, 100));
	ASSERT_EQ(0, img_take(self->fd, SS_P2, &p2));
	ASSERT_EQ(0, img_take(self->fd, SS_C2, &c2));
	ASSERT_EQ(0, kb_import(self->fd, &p2.im, SS_P, KBLOOM_IMPORT_REPLACE));
	ASSERT_EQ(0, kb_import(self->fd, &c2.im, SS_C, KBLOOM_IMPORT_REPLACE));
	assert_counts(_metadata, self->fd, SS_P, "after IMPORT --replace");
	assert_counts(_metadata, self->fd, SS_C, "after IMPORT --replace");
	EXPECT_EQ(1, img_unchanged(self->fd, SS_P, &p2));
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, SS_P,
				&self->k1, 0, 200));
	assert_counts(_metadata, self->fd, SS_P, "adds after the replace");
	img_free(&p2);
	img_free(&c2);
}

/* ================================================================== */
/* 4. max_filters and the memory budget                               */
/* ================================================================== */

#define LIM_FMT		"hd_lim_%u"
#define LIM_MANY	1000u
#define LIM_SRC		"hd_lim_src"

FIXTURE(limits) {
	int fd;
	u64 max_filters, max_memory;
	bool saved_filters, saved_memory;
	u64 used;	/* memory_used with no free pending */
};

FIXTURE_SETUP(limits)
{
	u64 sum;
	char name[32];
	u32 i;

	self->fd = open(DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	for (i = 0; i < LIM_MANY; i++) {
		snprintf(name, sizeof(name), LIM_FMT, i);
		destroy_quiet(self->fd, name);
	}
	destroy_quiet(self->fd, LIM_SRC);
	ASSERT_EQ(0, sysfs_read_u64(PARAMS "/max_filters",
				    &self->max_filters));
	self->saved_filters = true;
	ASSERT_EQ(0, sysfs_read_u64(PARAMS "/max_memory", &self->max_memory));
	self->saved_memory = true;
	ASSERT_EQ(0, quiesce(self->fd, &self->used, &sum)) {
		TH_LOG("memory_used %llu never reached the sum of the filters' memory_charged %llu",
		       (unsigned long long)self->used,
		       (unsigned long long)sum);
	}
}

FIXTURE_TEARDOWN(limits)
{
	char name[32];
	u32 i;

	if (self->saved_filters)
		sysfs_write_u64(PARAMS "/max_filters", self->max_filters);
	if (self->saved_memory)
		sysfs_write_u64(PARAMS "/max_memory", self->max_memory);
	for (i = 0; i < LIM_MANY; i++) {
		snprintf(name, sizeof(name), LIM_FMT, i);
		destroy_quiet(self->fd, name);
	}
	destroy_quiet(self->fd, LIM_SRC);
	close(self->fd);
}

TEST_F(limits, max_filters_default)
{
	EXPECT_EQ(4096ULL, self->max_filters);
}

TEST_F(limits, max_filters_create)
{
	long n = kb_count(self->fd);
	struct img g;
	u64 v;

	ASSERT_LE(0, n);
	ASSERT_EQ(0, sysfs_write_u64(PARAMS "/max_filters", (u64)n + 2));
	ASSERT_EQ(0, sysfs_read_u64(PARAMS "/max_filters", &v));
	ASSERT_EQ((u64)n + 2, v);
	ASSERT_EQ(0,
		  kb_create_scheme(self->fd, "hd_lim_0", 1024, 3, 0, 0, NULL));
	ASSERT_EQ(0,
		  kb_create_scheme(self->fd, "hd_lim_1", 1024, 3, 0, 0, NULL));
	EXPECT_EQ(EDQUOT,
		  kb_create_scheme(self->fd, "hd_lim_2", 1024, 3, 0, 0, NULL));
	EXPECT_FALSE(kb_exists(self->fd, "hd_lim_2"));
	EXPECT_FALSE(filter_dir_exists("hd_lim_2"));
	EXPECT_EQ(n + 2, kb_count(self->fd));
	ASSERT_EQ(0, sysfs_read_u64(SYSFS "/filter_count", &v));
	EXPECT_EQ((u64)n + 2, v);
	/* CREATE_LIKE and IMPORT create filters too. */
	EXPECT_EQ(EDQUOT, kb_create_like(self->fd, "hd_lim_3", "hd_lim_0", 0,
					 0, NULL));
	EXPECT_FALSE(kb_exists(self->fd, "hd_lim_3"));
	ASSERT_EQ(0, kb_skey(self->fd, KBLOOM_IOC_ADD, "hd_lim_0", "x", NULL));
	ASSERT_EQ(0, img_take(self->fd, "hd_lim_0", &g));
	EXPECT_EQ(EDQUOT, kb_import(self->fd, &g.im, "hd_lim_4", 0));
	EXPECT_FALSE(kb_exists(self->fd, "hd_lim_4"));
	EXPECT_EQ(n + 2, kb_count(self->fd));
	/* Replacing the contents of one creates nothing: allowed. */
	EXPECT_EQ(0, kb_import(self->fd, &g.im, "hd_lim_1",
			       KBLOOM_IMPORT_REPLACE));
	EXPECT_EQ(1, img_unchanged(self->fd, "hd_lim_1", &g));
	/* Room again after a destroy. */
	ASSERT_EQ(0, kb_destroy(self->fd, "hd_lim_1"));
	EXPECT_EQ(0,
		  kb_create_scheme(self->fd, "hd_lim_2", 1024, 3, 0, 0, NULL));
	img_free(&g);
}

TEST_F(limits, max_filters_import)
{
	long n = kb_count(self->fd);
	struct img g;

	ASSERT_LE(0, n);
	ASSERT_EQ(0, kb_create_scheme(self->fd, LIM_SRC, 4096, 3, 0, 0, NULL));
	ASSERT_EQ(0, img_take(self->fd, LIM_SRC, &g));
	ASSERT_EQ(0, sysfs_write_u64(PARAMS "/max_filters", (u64)n + 1));
	EXPECT_EQ(EDQUOT, kb_import(self->fd, &g.im, "hd_lim_0", 0));
	EXPECT_FALSE(kb_exists(self->fd, "hd_lim_0"));
	EXPECT_FALSE(filter_dir_exists("hd_lim_0"));
	EXPECT_EQ(n + 1, kb_count(self->fd));
	img_free(&g);
}

TEST_F_TIMEOUT(limits, memory_charges_real_cost, 600)
{
	u64 after, sum = 0, t0, now = 0, last, charged = 0, least = ~0ULL;
	struct kbloom_info info;
	char name[32];
	u32 i;

	for (i = 0; i < LIM_MANY; i++) {
		snprintf(name, sizeof(name), LIM_FMT, i);
		ASSERT_EQ(0,
			  kb_create_scheme(self->fd, name, 64, 1, 0, 0, NULL)) {
			TH_LOG("create %s", name);
		}
		ASSERT_EQ(0, kb_info(self->fd, name, &info));
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
	NOTE("limits: %u 64-bit filters raised memory_used by %llu bytes",
	     LIM_MANY, (unsigned long long)(after - self->used));
	EXPECT_LE(self->used + LIM_MANY * 4096ULL, after);
	EXPECT_EQ(self->used + sum, after);
	for (i = 0; i < LIM_MANY; i++) {
		snprintf(name, sizeof(name), LIM_FMT, i);
		ASSERT_EQ(0, kb_destroy(self->fd, name));
	}
	/* Frees wait for an RCU grace period and a workqueue. */
	t0 = now_ns();
	do {
		ASSERT_EQ(0, sysfs_read_u64(SYSFS "/memory_used", &last));
		if (last == self->used)
			break;
		sleep_ms(20);
		now = now_ns();
	} while (now - t0 < 10000000000ULL);
	EXPECT_EQ(self->used, last) {
		TH_LOG("memory_used did not return to its value before within 10 s");
	}
}

TEST_F(limits, max_memory_enospc)
{
	long n;
	struct img g;
	u64 used, sum, v;

	/* An image of 1 MiB to import later. */
	ASSERT_EQ(0,
		  kb_create_scheme(self->fd, LIM_SRC, 1 << 23, 3, 0, 0, NULL));
	ASSERT_EQ(0, img_take(self->fd, LIM_SRC, &g));
	ASSERT_EQ(0, quiesce(self->fd, &used, &sum));
	n = kb_count(self->fd);
	/* One page above what is in use. */
	ASSERT_EQ(0, sysfs_write_u64(PARAMS "/max_memory", used + 4096));
	ASSERT_EQ(0, sysfs_read_u64(SYSFS "/memory_budget", &v));
	EXPECT_EQ(used + 4096, v);
	EXPECT_EQ(ENOSPC, kb_create_scheme(self->fd, "hd_lim_0", 1 << 23, 3, 0,
					   0, NULL));
	/* A page of storage plus bookkeeping is more than one page. */
	EXPECT_EQ(ENOSPC,
		  kb_create_scheme(self->fd, "hd_lim_1", 64, 1, 0, 0, NULL));
	EXPECT_EQ(ENOSPC, kb_create_like(self->fd, "hd_lim_2", LIM_SRC, 0, 0,
					 NULL));
	EXPECT_EQ(ENOSPC, kb_import(self->fd, &g.im, "hd_lim_3", 0));
	EXPECT_EQ(n, kb_count(self->fd));
	EXPECT_FALSE(kb_exists(self->fd, "hd_lim_0"));
	EXPECT_FALSE(kb_exists(self->fd, "hd_lim_1"));
	EXPECT_FALSE(kb_exists(self->fd, "hd_lim_2"));
	EXPECT_FALSE(kb_exists(self->fd, "hd_lim_3"));
	ASSERT_EQ(0, sysfs_read_u64(SYSFS "/memory_used", &v));
	EXPECT_EQ(used, v);
	/* With room, the same create works. */
	ASSERT_EQ(0, sysfs_write_u64(PARAMS "/max_memory", used + 64 * MIB));
	EXPECT_EQ(0, kb_create_scheme(self->fd, "hd_lim_0", 1 << 23, 3, 0, 0,
				      NULL));
	img_free(&g);
}

/* ================================================================== */
/* 5. IMPORT validates every field as CREATE does                     */
/* ================================================================== */

#define IV_CAP		"hd_iv_cap"
#define IV_J		"hd_iv_j"
#define IV_S		"hd_iv_s"
#define IV_NEW		"hd_iv_new"

FIXTURE(import_valid) {
	int fd;
	struct img cap;		/* capacity 1000 at 1%: empty, zero payload */
	struct img jh, sh;	/* jhash and siphash, with keys */
	struct keys ks;
	long count;
	unsigned char *zero;	/* zeroed payloads of any size needed here */
};

FIXTURE_SETUP(import_valid)
{
	struct kbloom_create c;

	self->fd = open(DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	destroy_quiet(self->fd, IV_CAP);
	destroy_quiet(self->fd, IV_J);
	destroy_quiet(self->fd, IV_S);
	destroy_quiet(self->fd, IV_NEW);
	memset(&c, 0, sizeof(c));
	set_name(c.name, IV_CAP);
	c.capacity = 1000;
	c.fpr_ppb = 10000000;
	ASSERT_EQ(0, ioc(self->fd, KBLOOM_IOC_CREATE, &c));
	ASSERT_EQ(0, img_take(self->fd, IV_CAP, &self->cap));
	ASSERT_EQ(1000ULL, self->cap.im.capacity);
	ASSERT_EQ(10000000U, self->cap.im.fpr_ppb);
	ASSERT_EQ(0, kb_create_scheme(self->fd, IV_J, 1 << 16, 5, 0,
				      KBLOOM_HASH_JHASH, NULL));
	ASSERT_EQ(0, kb_create_scheme(self->fd, IV_S, 1 << 16, 5, 0,
				      KBLOOM_HASH_SIPHASH, NULL));
	ASSERT_EQ(0, keys_make(&self->ks, "iv", 500));
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, IV_J,
				&self->ks, 0, 500));
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, IV_S,
				&self->ks, 0, 500));
	ASSERT_EQ(0, img_take(self->fd, IV_J, &self->jh));
	ASSERT_EQ(0, img_take(self->fd, IV_S, &self->sh));
	self->zero = calloc(1, self->cap.len + 4096);
	ASSERT_TRUE(self->zero != NULL);
	self->count = kb_count(self->fd);
	ASSERT_LE(3, self->count);
}

FIXTURE_TEARDOWN(import_valid)
{
	img_free(&self->cap);
	img_free(&self->jh);
	img_free(&self->sh);
	keys_free(&self->ks);
	free(self->zero);
	destroy_quiet(self->fd, IV_CAP);
	destroy_quiet(self->fd, IV_J);
	destroy_quiet(self->fd, IV_S);
	destroy_quiet(self->fd, IV_NEW);
	close(self->fd);
}

/* IMPORT of @im as IV_NEW fails with EINVAL and creates nothing. */
static void assert_import_einval(struct __test_metadata *_metadata,
				 FIXTURE_DATA(import_valid) *self,
				 const struct kbloom_image *im,
				 const char *what)
{
	int err = kb_import(self->fd, im, IV_NEW, 0);

	EXPECT_EQ(EINVAL, err) {
		TH_LOG("IMPORT %s: got %d (%s)", what, err, strerror(err));
	}
	EXPECT_FALSE(kb_exists(self->fd, IV_NEW)) {
		TH_LOG("IMPORT %s created the filter", what);
	}
	EXPECT_EQ(self->count, kb_count(self->fd));
	destroy_quiet(self->fd, IV_NEW);
}

/* The capacity image with (bits, hashes) changed; payload sized to fit. */
static struct kbloom_image cap_with(FIXTURE_DATA(import_valid) *self,
				    u64 bits, u32 hashes)
{
	struct kbloom_image im = self->cap.im;

	im.bits = bits;
	im.hashes = hashes;
	im.payload = PTR(self->zero);
	im.payload_len = payload_size(bits, false);
	return im;
}

TEST_F(import_valid, unchanged_images_import)
{
	struct kbloom_image im;
	struct kbloom_info info;
	struct img g;

	/* The control: every image as exported loads. */
	ASSERT_EQ(0, kb_import(self->fd, &self->cap.im, IV_NEW, 0));
	ASSERT_EQ(0, kb_info(self->fd, IV_NEW, &info));
	EXPECT_EQ(1000ULL, info.capacity);
	EXPECT_EQ(10000000U, info.fpr_ppb);
	EXPECT_EQ(self->cap.im.bits, info.bits);
	EXPECT_EQ(self->cap.im.hashes, info.hashes);
	ASSERT_EQ(0, img_take(self->fd, IV_NEW, &g));
	EXPECT_TRUE(img_equal(&g, &self->cap));
	img_free(&g);
	ASSERT_EQ(0, kb_destroy(self->fd, IV_NEW));
	/* The payload needs no particular buffer: a zeroed one is the same. */
	im = cap_with(self, self->cap.im.bits, self->cap.im.hashes);
	EXPECT_EQ(0, kb_import(self->fd, &im, IV_NEW, 0));
}

TEST_F(import_valid, fpr_ppb_out_of_range)
{
	struct kbloom_image im = self->cap.im;

	im.fpr_ppb = KBLOOM_FPR_ONE;
	assert_import_einval(_metadata, self, &im, "fpr_ppb 10^9");
	im.fpr_ppb = KBLOOM_FPR_ONE + 1;
	assert_import_einval(_metadata, self, &im, "fpr_ppb 10^9 + 1");
	im.fpr_ppb = 0xffffffffu;
	assert_import_einval(_metadata, self, &im, "fpr_ppb 2^32 - 1");
}

TEST_F(import_valid, fpr_ppb_without_capacity)
{
	struct kbloom_image im = self->cap.im;

	im.capacity = 0;
	assert_import_einval(_metadata, self, &im, "fpr_ppb set, capacity 0");
}

TEST_F(import_valid, bits_not_from_sizing)
{
	u64 m = self->cap.im.bits;
	u32 k = self->cap.im.hashes;
	struct kbloom_image im;

	ASSERT_LE(64ULL, m);
	im = cap_with(self, m + 1, k);
	assert_import_einval(_metadata, self, &im, "bits m + 1");
	im = cap_with(self, m - 1, k);
	assert_import_einval(_metadata, self, &im, "bits m - 1");
	im = cap_with(self, m + 64, k);
	assert_import_einval(_metadata, self, &im, "bits m + 64");
	im = cap_with(self, m * 2, k);
	assert_import_einval(_metadata, self, &im, "bits 2m");
	/* Another capacity with the same m and k is not what sizing gives. */
	im = cap_with(self, m, k);
	im.capacity = 2000;
	assert_import_einval(_metadata, self, &im, "capacity 2n");
	im = cap_with(self, m, k);
	im.fpr_ppb = 1000000;
	assert_import_einval(_metadata, self, &im, "fpr 0.1% with 1%'s m, k");
}

TEST_F(import_valid, hashes_not_from_sizing)
{
	u64 m = self->cap.im.bits;
	u32 k = self->cap.im.hashes;
	struct kbloom_image im;

	ASSERT_LT(1U, k);
	im = cap_with(self, m, k + 1);
	assert_import_einval(_metadata, self, &im, "hashes k + 1");
	im = cap_with(self, m, k - 1);
	assert_import_einval(_metadata, self, &im, "hashes k - 1");
}

TEST_F(import_valid, bad_hash_scheme)
{
	struct kbloom_image im = self->jh.im;

	im.hash_scheme = 0;
	assert_import_einval(_metadata, self, &im, "hash_scheme 0");
	im.hash_scheme = 3;
	assert_import_einval(_metadata, self, &im, "hash_scheme 3");
	im.hash_scheme = 0x80000001u;
	assert_import_einval(_metadata, self, &im, "hash_scheme 0x80000001");
}

TEST_F(import_valid, jhash_with_seed_hi)
{
	struct kbloom_image im = self->jh.im;

	ASSERT_EQ((u32)KBLOOM_HASH_JHASH, im.hash_scheme);
	im.seed_hi[0] = 1;
	assert_import_einval(_metadata, self, &im, "jhash, seed_hi[0] 1");
	im.seed_hi[0] = 0;
	im.seed_hi[1] = 0x80000000u;
	assert_import_einval(_metadata, self, &im, "jhash, seed_hi[1] set");
}

static void reimport(struct __test_metadata *_metadata,
		     FIXTURE_DATA(import_valid) *self, const struct img *src,
		     u32 scheme)
{
	struct kbloom_info info;
	struct img g;

	ASSERT_EQ(scheme, src->im.hash_scheme);
	ASSERT_EQ(0, kb_import(self->fd, &src->im, IV_NEW, 0));
	ASSERT_EQ(0, kb_info(self->fd, IV_NEW, &info));
	EXPECT_EQ(scheme, info.hash_scheme);
	EXPECT_EQ(500L, keys_hits(self->fd, IV_NEW, &self->ks, 0, 500));
	ASSERT_EQ(0, img_take(self->fd, IV_NEW, &g));
	EXPECT_TRUE(img_equal(&g, src));
	img_free(&g);
}

TEST_F(import_valid, reimport_jhash)
{
	reimport(_metadata, self, &self->jh, KBLOOM_HASH_JHASH);
}

TEST_F(import_valid, reimport_siphash)
{
	reimport(_metadata, self, &self->sh, KBLOOM_HASH_SIPHASH);
}

/* ================================================================== */
/* 6. Hash scheme 2: SipHash                                          */
/* ================================================================== */

#define SH_F	"hd_sh_f"
#define SH_J	"hd_sh_j"
#define SH_S	"hd_sh_s"
#define SH_L	"hd_sh_like"
#define SH_N	"hd_sh_new"

FIXTURE(siphash) {
	int fd;
	struct keys ks, other;
	u32 dflt;
};

FIXTURE_SETUP(siphash)
{
	self->fd = open(DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	destroy_quiet(self->fd, SH_F);
	destroy_quiet(self->fd, SH_J);
	destroy_quiet(self->fd, SH_S);
	destroy_quiet(self->fd, SH_L);
	destroy_quiet(self->fd, SH_N);
	ASSERT_EQ(0, keys_make(&self->ks, "sh", 1000));
	ASSERT_EQ(0, keys_make(&self->other, "nosh", 1000));
	self->dflt = default_scheme(self->fd);
}

FIXTURE_TEARDOWN(siphash)
{
	keys_free(&self->ks);
	keys_free(&self->other);
	destroy_quiet(self->fd, SH_F);
	destroy_quiet(self->fd, SH_J);
	destroy_quiet(self->fd, SH_S);
	destroy_quiet(self->fd, SH_L);
	destroy_quiet(self->fd, SH_N);
	close(self->fd);
}

TEST_F(siphash, version)
{
	struct kbloom_version v;

	memset(&v, 0xa5, sizeof(v));
	ASSERT_EQ(0, ioc(self->fd, KBLOOM_IOC_VERSION, &v));
	EXPECT_EQ(KBLOOM_FEATURE_SIPHASH, v.features & KBLOOM_FEATURE_SIPHASH);
	/* The scheme every module has; the default is the other field. */
	EXPECT_EQ((u32)KBLOOM_HASH_JHASH, v.hash_scheme);
	EXPECT_TRUE(v.default_hash_scheme == KBLOOM_HASH_JHASH ||
		    v.default_hash_scheme == KBLOOM_HASH_SIPHASH) {
		TH_LOG("default hash scheme %u", v.default_hash_scheme);
	}
}

TEST_F(siphash, create_schemes)
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
	size_t i;
	u32 want;
	u64 v;

	ASSERT_TRUE(self->dflt == KBLOOM_HASH_JHASH ||
		    self->dflt == KBLOOM_HASH_SIPHASH);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		want = cases[i].out ? cases[i].out : self->dflt;
		ASSERT_EQ(0, kb_create_scheme(self->fd, SH_F, 1 << 16, 5, 0,
					      cases[i].in, &c));
		EXPECT_EQ(want, c.hash_scheme) {
			TH_LOG("CREATE hash_scheme %u wrote back %u",
			       cases[i].in, c.hash_scheme);
		}
		ASSERT_EQ(0, kb_info(self->fd, SH_F, &info));
		EXPECT_EQ(want, info.hash_scheme);
		ASSERT_EQ(0, filter_attr(SH_F, "hash_scheme", &v));
		EXPECT_EQ((u64)want, v);
		ASSERT_EQ(0, kb_destroy(self->fd, SH_F));
	}
}

TEST_F(siphash, create_bad_scheme)
{
	long n = kb_count(self->fd);

	EXPECT_EQ(EINVAL,
		  kb_create_scheme(self->fd, SH_F, 1 << 16, 5, 0, 3, NULL));
	EXPECT_EQ(EINVAL, kb_create_scheme(self->fd, SH_F, 1 << 16, 5, 0,
					   0xffffffffu, NULL));
	EXPECT_FALSE(kb_exists(self->fd, SH_F));
	EXPECT_EQ(n, kb_count(self->fd));
}

TEST_F(siphash, create_like)
{
	static const u32 schemes[] = { KBLOOM_HASH_SIPHASH, KBLOOM_HASH_JHASH };
	struct kbloom_create c;
	struct kbloom_info info;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(schemes); i++) {
		ASSERT_EQ(0, kb_create_scheme(self->fd, SH_F, 1 << 16, 5, 0,
					      schemes[i], NULL));
		/* LIKE copies the scheme: giving one is an error. */
		EXPECT_EQ(EINVAL, kb_create_like(self->fd, SH_L, SH_F, 0,
						 schemes[i], NULL));
		EXPECT_EQ(EINVAL, kb_create_like(self->fd, SH_L, SH_F, 0,
						 3 - schemes[i], NULL));
		EXPECT_FALSE(kb_exists(self->fd, SH_L));
		ASSERT_EQ(0, kb_create_like(self->fd, SH_L, SH_F, 0, 0, &c));
		EXPECT_EQ(schemes[i], c.hash_scheme);
		ASSERT_EQ(0, kb_info(self->fd, SH_L, &info));
		EXPECT_EQ(schemes[i], info.hash_scheme);
		/* And it is mergeable with the model. */
		ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, SH_L,
					&self->ks, 0, 1000));
		EXPECT_EQ(0, kb_merge(self->fd, KBLOOM_IOC_MERGE, SH_F, SH_L,
				      NULL));
		EXPECT_EQ(1000L, keys_hits(self->fd, SH_F, &self->ks, 0, 1000));
		ASSERT_EQ(0, kb_destroy(self->fd, SH_L));
		ASSERT_EQ(0, kb_destroy(self->fd, SH_F));
	}
}

TEST_F(siphash, keys_found)
{
	u32 i, res;
	long hits;

	ASSERT_EQ(0, kb_create_scheme(self->fd, SH_S, 1 << 20, 7, 0,
				      KBLOOM_HASH_SIPHASH, NULL));
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, SH_S, &self->ks,
				0, 900));
	for (i = 900; i < 1000; i++)
		ASSERT_EQ(0, kb_key(self->fd, KBLOOM_IOC_ADD, SH_S,
				    self->ks.buf + self->ks.off[i],
				    self->ks.lens[i], NULL));
	EXPECT_EQ(1000L, keys_hits(self->fd, SH_S, &self->ks, 0, 1000));
	EXPECT_EQ(0, keys_query_each(self->fd, SH_S, &self->ks, 0, 1000, 1));
	/* 7000 of 2^20 bits set: a false positive is a 1e-15 event. */
	hits = keys_hits(self->fd, SH_S, &self->other, 0, 1000);
	EXPECT_EQ(0L, hits);
	ASSERT_EQ(0, kb_key(self->fd, KBLOOM_IOC_TEST_AND_ADD, SH_S,
			    self->ks.buf, self->ks.lens[0], &res));
	EXPECT_EQ(1U, res);
	assert_counts(_metadata, self->fd, SH_S, "siphash filter");
}

TEST_F(siphash, merge_compare_mismatch)
{
	struct kbloom_merge m;
	struct img j;

	ASSERT_EQ(0, kb_create_scheme(self->fd, SH_J, 1 << 16, 5, 0,
				      KBLOOM_HASH_JHASH, NULL));
	ASSERT_EQ(0, kb_create_scheme(self->fd, SH_S, 1 << 16, 5, 0,
				      KBLOOM_HASH_SIPHASH, NULL));
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, SH_S, &self->ks,
				0, 100));
	ASSERT_EQ(0, img_take(self->fd, SH_J, &j));
	EXPECT_EQ(EINVAL, kb_merge(self->fd, KBLOOM_IOC_MERGE, SH_J, SH_S, &m));
	EXPECT_EQ(KBLOOM_MISMATCH_HASH_SCHEME,
		  m.mismatch & KBLOOM_MISMATCH_HASH_SCHEME);
	EXPECT_EQ(0U, m.mismatch & (KBLOOM_MISMATCH_BITS |
				    KBLOOM_MISMATCH_HASHES |
				    KBLOOM_MISMATCH_COUNTING));
	EXPECT_EQ(1, img_unchanged(self->fd, SH_J, &j));
	EXPECT_EQ(EINVAL, kb_merge(self->fd, KBLOOM_IOC_COMPARE, SH_S, SH_J,
				   &m));
	EXPECT_EQ(KBLOOM_MISMATCH_HASH_SCHEME,
		  m.mismatch & KBLOOM_MISMATCH_HASH_SCHEME);
	img_free(&j);
}

/*
 * The same seed words and size under the other scheme (a jhash image
 * loaded as SipHash with seed_hi 0): the scheme alone differs.
 */
TEST_F(siphash, mismatch_scheme_alone)
{
	struct kbloom_merge m;
	struct kbloom_image im;
	struct img j;

	ASSERT_EQ(0, kb_create_scheme(self->fd, SH_J, 1 << 16, 5, 0,
				      KBLOOM_HASH_JHASH, NULL));
	ASSERT_EQ(0, img_take(self->fd, SH_J, &j));
	im = j.im;
	im.hash_scheme = KBLOOM_HASH_SIPHASH;
	ASSERT_EQ(0, kb_import(self->fd, &im, SH_S, 0));
	EXPECT_EQ(EINVAL, kb_merge(self->fd, KBLOOM_IOC_MERGE, SH_J, SH_S, &m));
	EXPECT_EQ(KBLOOM_MISMATCH_HASH_SCHEME, m.mismatch);
	EXPECT_EQ(EINVAL, kb_merge(self->fd, KBLOOM_IOC_COMPARE, SH_J, SH_S,
				   &m));
	EXPECT_EQ(KBLOOM_MISMATCH_HASH_SCHEME, m.mismatch);
	img_free(&j);
}

TEST_F(siphash, export_import)
{
	struct kbloom_info info;
	struct kbloom_image im;
	struct img s, n;

	ASSERT_EQ(0, kb_create_scheme(self->fd, SH_S, 1 << 20, 7, 0,
				      KBLOOM_HASH_SIPHASH, NULL));
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, SH_S, &self->ks,
				0, 1000));
	ASSERT_EQ(0, img_take(self->fd, SH_S, &s));
	EXPECT_EQ((u32)KBLOOM_HASH_SIPHASH, s.im.hash_scheme);
	/* 64 random bits are all zero with probability 2^-64. */
	EXPECT_TRUE(s.im.seed_hi[0] || s.im.seed_hi[1]) {
		TH_LOG("a SipHash filter exported seed_hi {0, 0}");
	}
	ASSERT_EQ(0, kb_import(self->fd, &s.im, SH_N, 0));
	ASSERT_EQ(0, kb_info(self->fd, SH_N, &info));
	EXPECT_EQ((u32)KBLOOM_HASH_SIPHASH, info.hash_scheme);
	EXPECT_EQ(1000L, keys_hits(self->fd, SH_N, &self->ks, 0, 1000));
	ASSERT_EQ(0, img_take(self->fd, SH_N, &n));
	EXPECT_TRUE(img_equal(&n, &s));
	img_free(&n);
	EXPECT_EQ(0, kb_merge(self->fd, KBLOOM_IOC_MERGE, SH_S, SH_N, NULL));
	ASSERT_EQ(0, kb_destroy(self->fd, SH_N));

	/* seed_hi is key material: another seed_hi, other positions. */
	im = s.im;
	im.seed_hi[0] ^= 1;
	ASSERT_EQ(0, kb_import(self->fd, &im, SH_N, 0));
	EXPECT_EQ(0L, keys_hits(self->fd, SH_N, &self->ks, 0, 1000)) {
		TH_LOG("seed_hi does not change the positions");
	}
	img_free(&s);
}

TEST_F(siphash, jhash_exports_zero_seed_hi)
{
	struct img j;

	ASSERT_EQ(0, kb_create_scheme(self->fd, SH_J, 1 << 16, 5, 0,
				      KBLOOM_HASH_JHASH, NULL));
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, SH_J, &self->ks,
				0, 100));
	ASSERT_EQ(0, img_take(self->fd, SH_J, &j));
	EXPECT_EQ((u32)KBLOOM_HASH_JHASH, j.im.hash_scheme);
	EXPECT_EQ(0U, j.im.seed_hi[0]);
	EXPECT_EQ(0U, j.im.seed_hi[1]);
	EXPECT_EQ(0U, j.im.generations);
	EXPECT_EQ(0U, j.im.window_ms);
	img_free(&j);
}

/* ================================================================== */
/* 7. uevents                                                         */
/* ================================================================== */

#define UE_F	"hd_ue"
#define UE_I	"hd_ue_imp"

FIXTURE(uevent) {
	int fd;
	int nl;
};

FIXTURE_SETUP(uevent)
{
	struct sockaddr_nl sa;
	struct timeval tv = { 1, 0 };
	int rcvbuf = 1 << 20;

	self->nl = -1;
	self->fd = open(DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	destroy_quiet(self->fd, UE_F);
	destroy_quiet(self->fd, UE_I);
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

FIXTURE_TEARDOWN(uevent)
{
	if (self->nl >= 0)
		close(self->nl);
	destroy_quiet(self->fd, UE_F);
	destroy_quiet(self->fd, UE_I);
	close(self->fd);
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

TEST_F_TIMEOUT(uevent, create_destroy, 60)
{
	const char *path = "/kernel/bloom/filters/" UE_F;

	ASSERT_EQ(0, kb_create_scheme(self->fd, UE_F, 1024, 3, 0, 0, NULL));
	EXPECT_EQ(0, wait_uevent(self->nl, "add", path)) {
		TH_LOG("no add@%s with SUBSYSTEM=bloom", path);
	}
	ASSERT_EQ(0, kb_destroy(self->fd, UE_F));
	EXPECT_EQ(0, wait_uevent(self->nl, "remove", path)) {
		TH_LOG("no remove@%s with SUBSYSTEM=bloom", path);
	}
}

TEST_F_TIMEOUT(uevent, import_destroy, 60)
{
	const char *path = "/kernel/bloom/filters/" UE_I;
	struct img g;

	ASSERT_EQ(0, kb_create_scheme(self->fd, UE_F, 1024, 3, 0, 0, NULL));
	ASSERT_EQ(0, img_take(self->fd, UE_F, &g));
	ASSERT_EQ(0, kb_import(self->fd, &g.im, UE_I, 0));
	EXPECT_EQ(0, wait_uevent(self->nl, "add", path));
	ASSERT_EQ(0, kb_destroy(self->fd, UE_I));
	EXPECT_EQ(0, wait_uevent(self->nl, "remove", path));
	img_free(&g);
}

/* ================================================================== */
/* 9. Statistics under concurrent CLEARs                              */
/* ================================================================== */

#define ST_F		"hd_stats"
#define ST_THREADS	4
#define ST_KEYS		100000u
#define ST_CHUNK	250u
#define ST_CLEARS	50
#define ST_BITS		(1ULL << 22)
#define ST_AFTER	10000u	/* adds after the final CLEAR */

FIXTURE(stats) {
	int fd;
};

FIXTURE_VARIANT(stats) {
	u32 flags;
};

FIXTURE_VARIANT_ADD(stats, plain) {
	.flags = 0,
};

FIXTURE_VARIANT_ADD(stats, counting) {
	.flags = KBLOOM_CREATE_COUNTING,
};

FIXTURE_SETUP(stats)
{
	self->fd = open(DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	destroy_quiet(self->fd, ST_F);
	ASSERT_EQ(0, kb_create_scheme(self->fd, ST_F, ST_BITS, 4,
				      variant->flags, 0, NULL));
}

FIXTURE_TEARDOWN(stats)
{
	destroy_quiet(self->fd, ST_F);
	close(self->fd);
}

struct st_adder {
	pthread_t tid;
	int fd;
	int id;
	int err;
	u32 added;
};

static int st_go;

static void *st_adder_fn(void *arg)
{
	struct st_adder *a = arg;
	char keys[ST_CHUNK * 24];
	u32 lens[ST_CHUNK], j, k, pos;
	struct kbloom_batch b;

	while (!__atomic_load_n(&st_go, __ATOMIC_ACQUIRE))
		sched_yield();
	for (j = 0; j < ST_KEYS; j += ST_CHUNK) {
		for (k = 0, pos = 0; k < ST_CHUNK; k++) {
			lens[k] = (u32)snprintf(keys + pos, 24, "st%d:%u",
						a->id, j + k);
			pos += lens[k];
		}
		a->err = kb_batch(a->fd, KBLOOM_IOC_ADD_BATCH, ST_F, keys,
				  lens, NULL, pos, ST_CHUNK, &b);
		if (a->err)
			break;
		a->added += b.done;
	}
	return NULL;
}

struct st_clearer {
	pthread_t tid;
	int fd;
	int err;
	int clears;
	u64 max_adds, max_bits;	/* the largest INFO saw */
};

static void *st_clearer_fn(void *arg)
{
	struct st_clearer *c = arg;
	struct kbloom_info info;
	int i;

	while (!__atomic_load_n(&st_go, __ATOMIC_ACQUIRE))
		sched_yield();
	for (i = 0; i < ST_CLEARS; i++) {
		c->err = kb_clear(c->fd, ST_F);
		if (c->err)
			break;
		c->clears++;
		c->err = kb_info(c->fd, ST_F, &info);
		if (c->err)
			break;
		if (info.adds > c->max_adds)
			c->max_adds = info.adds;
		if (info.bits_set > c->max_bits)
			c->max_bits = info.bits_set;
		sleep_ms(2);
	}
	return NULL;
}

TEST_F_TIMEOUT(stats, clear_during_adds, 600)
{
	struct st_adder a[ST_THREADS];
	struct st_clearer c;
	struct kbloom_info info;
	struct keys ks;
	u64 v;
	int i;
	u32 j;

	memset(a, 0, sizeof(a));
	memset(&c, 0, sizeof(c));
	__atomic_store_n(&st_go, 0, __ATOMIC_RELEASE);
	for (i = 0; i < ST_THREADS; i++) {
		a[i].id = i;
		a[i].fd = open(DEV, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, a[i].fd);
		ASSERT_EQ(0, pthread_create(&a[i].tid, NULL, st_adder_fn,
					    &a[i]));
	}
	c.fd = open(DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, c.fd);
	ASSERT_EQ(0, pthread_create(&c.tid, NULL, st_clearer_fn, &c));
	__atomic_store_n(&st_go, 1, __ATOMIC_RELEASE);
	for (i = 0; i < ST_THREADS; i++)
		pthread_join(a[i].tid, NULL);
	pthread_join(c.tid, NULL);
	for (i = 0; i < ST_THREADS; i++) {
		EXPECT_EQ(0, a[i].err);
		EXPECT_EQ(ST_KEYS, a[i].added);
		close(a[i].fd);
	}
	EXPECT_EQ(0, c.err);
	EXPECT_EQ(ST_CLEARS, c.clears);
	close(c.fd);
	/* No count ever exceeded what was really done. */
	EXPECT_GE((u64)ST_THREADS * ST_KEYS, c.max_adds) {
		TH_LOG("INFO adds %llu after a CLEAR: more than were added",
		       (unsigned long long)c.max_adds);
	}
	EXPECT_GE(ST_BITS, c.max_bits);
	/* The counters agree with the contents once all is quiet. */
	assert_counts(_metadata, self->fd, ST_F, "after the race");

	/* Quiescent: CLEAR, then exactly ST_AFTER adds. */
	ASSERT_EQ(0, kb_clear(self->fd, ST_F));
	ASSERT_EQ(0, kb_info(self->fd, ST_F, &info));
	EXPECT_EQ(0ULL, info.adds);
	EXPECT_EQ(0ULL, info.queries);
	EXPECT_EQ(0ULL, info.hits);
	EXPECT_EQ(0ULL, info.bits_set);
	assert_counts(_metadata, self->fd, ST_F, "after the last CLEAR");
	ASSERT_EQ(0, keys_make(&ks, "after", ST_AFTER));
	for (j = 0; j < 1000; j++)
		ASSERT_EQ(0, kb_key(self->fd, KBLOOM_IOC_ADD, ST_F,
				    ks.buf + ks.off[j], ks.lens[j], NULL));
	ASSERT_EQ(0, keys_apply(self->fd, KBLOOM_IOC_ADD_BATCH, ST_F, &ks,
				1000, ST_AFTER - 1000));
	ASSERT_EQ(0, kb_info(self->fd, ST_F, &info));
	EXPECT_EQ((u64)ST_AFTER, info.adds);
	EXPECT_EQ(0ULL, info.queries);
	ASSERT_EQ(0, filter_attr(ST_F, "adds", &v));
	EXPECT_EQ((u64)ST_AFTER, v);
	ASSERT_EQ(0, filter_attr(ST_F, "queries", &v));
	EXPECT_EQ(0ULL, v);
	assert_counts(_metadata, self->fd, ST_F, "after CLEAR and N adds");
	keys_free(&ks);
}

/* ================================================================== */
/* 3b. bits_set of a huge filter costs O(1)                           */
/* ================================================================== */

/*
 * Last in the file: freeing the huge filter takes long on the debug kernel
 * (vfree under KASAN, emulated), and the teardown waits for its memory.
 */

#define BIG_F		"hd_big"
#define BIG_SMALL	"hd_big_small"
#define BIG_READS	1000
#define BIG_LIMIT_NS	2000000000ULL

FIXTURE(big) {
	int fd;
	u64 saved_max_memory;
	bool saved;
	u64 avail;	/* MemAvailable before the huge filter */
};

FIXTURE_SETUP(big)
{
	self->fd = open(DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	destroy_quiet(self->fd, BIG_F);
	destroy_quiet(self->fd, BIG_SMALL);
	ASSERT_EQ(0, sysfs_read_u64(PARAMS "/max_memory",
				    &self->saved_max_memory));
	self->saved = true;
}

FIXTURE_TEARDOWN(big)
{
	u64 t0 = now_ns();

	destroy_quiet(self->fd, BIG_SMALL);
	if (!kb_destroy(self->fd, BIG_F) && self->avail) {
		/* Until the pages are back (a free behind it would wait). */
		while (mem_available() + 64 * MIB < self->avail &&
		       now_ns() - t0 < 300000000000ULL)
			sleep_ms(100);
		NOTE("big: the huge filter's memory came back in %llu ms",
		     (unsigned long long)((now_ns() - t0) / 1000000));
	}
	if (self->saved)
		sysfs_write_u64(PARAMS "/max_memory", self->saved_max_memory);
	close(self->fd);
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
		*t_small += one_read(fd_small, BIG_SMALL, info, bad);
		*t_big += one_read(fd_big, BIG_F, info, bad);
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
TEST_F_TIMEOUT(big, bits_set_read_is_constant_time, 900)
{
	u64 avail = mem_available(), size, used, budget, t_small, t_big, limit;
	int err = ENOMEM, ro, fb, fs, done = 0, bad = 0;
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
		err = kb_create_scheme(self->fd, BIG_F, size * 8, 1, 0, 0,
				       NULL);
		if (err != ENOMEM)
			break;
	}
	ASSERT_EQ(0, err);
	NOTE("big: a %llu MiB filter (MemAvailable %llu MiB)",
	     (unsigned long long)(size / MIB),
	     (unsigned long long)(avail / MIB));
	ASSERT_EQ(0, kb_create_scheme(self->fd, BIG_SMALL, 64, 1, 0, 0, NULL));
	/* One key, one hash: exactly one bit set in each. */
	ASSERT_EQ(0, kb_skey(self->fd, KBLOOM_IOC_ADD, BIG_F, "k", NULL));
	ASSERT_EQ(0, kb_skey(self->fd, KBLOOM_IOC_ADD, BIG_SMALL, "k", NULL));

	fb = open_attr(BIG_F, "bits_set");
	fs = open_attr(BIG_SMALL, "bits_set");
	ASSERT_LE(0, fb);
	ASSERT_LE(0, fs);
	done = alternate_reads(fb, fs, false, &t_big, &t_small, &bad);
	close(fb);
	close(fs);
	limit = 3 * t_small > BIG_LIMIT_NS ? 3 * t_small : BIG_LIMIT_NS;
	NOTE("big: %d reads of bits_set in %llu ms (of a 64-bit filter: %llu ms; bound %llu ms)",
	     done, (unsigned long long)(t_big / 1000000),
	     (unsigned long long)(t_small / 1000000),
	     (unsigned long long)(limit / 1000000));
	EXPECT_EQ(BIG_READS, done);
	EXPECT_EQ(0, bad);
	EXPECT_GT(limit, t_big) {
		TH_LOG("1000 reads of bits_set took %llu ms",
		       (unsigned long long)(t_big / 1000000));
	}
	ASSERT_EQ(0, filter_attr(BIG_F, "bits_set", &v));
	EXPECT_EQ(1ULL, v);

	/* INFO on a read-only fd is O(1) too. */
	ro = open(DEV, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, ro);
	done = alternate_reads(ro, ro, true, &t_big, &t_small, &bad);
	close(ro);
	limit = 3 * t_small > BIG_LIMIT_NS ? 3 * t_small : BIG_LIMIT_NS;
	NOTE("big: %d INFO calls in %llu ms (on a 64-bit filter: %llu ms; bound %llu ms)",
	     done, (unsigned long long)(t_big / 1000000),
	     (unsigned long long)(t_small / 1000000),
	     (unsigned long long)(limit / 1000000));
	EXPECT_EQ(BIG_READS, done);
	EXPECT_EQ(0, bad);
	EXPECT_GT(limit, t_big);
}

TEST_HARNESS_MAIN
