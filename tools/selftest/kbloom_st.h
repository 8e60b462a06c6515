/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the areas of kbloom_selftest share beyond kbloom_test.h: the open
 * device, generated key sets, and checks several areas make.
 *
 * Every function is static __maybe_unused: kbloom_selftest_stress
 * includes only its own area.
 */
#ifndef KBLOOM_ST_H
#define KBLOOM_ST_H

#include "kbloom_test.h"

/* The unprivileged user of the perm and image areas' children. */
#define NOBODY		65534

/*
 * The device, opened O_RDWR by st_open() in each fixture's setup. A file
 * scope variable is enough: the harness runs every case in a child of its
 * own, so no two cases share it.
 */
static int g_fd = -1;

/*
 * The hash scheme filters get when CREATE's hash_scheme is 0: the
 * module's default, VERSION's default_hash_scheme (st_open() asks).
 */
static u32 g_scheme;

/* Every fixture's setup: the device, and the module's defaults. */
static __maybe_unused void st_open(struct __test_metadata *_metadata)
{
	struct kbloom_version v;
	int err;

	g_fd = open(DEV, O_RDWR);
	err = g_fd < 0 ? errno : 0;
	ASSERT_EQ(0, err) {
		TH_LOG("open %s O_RDWR: %s", DEV, strerror(err));
	}
	memset(&v, 0, sizeof(v));
	EXPECT_OK(ioc(g_fd, KBLOOM_IOC_VERSION, &v),
		  "VERSION: the default hash scheme");
	g_scheme = v.default_hash_scheme ? v.default_hash_scheme :
					   v.hash_scheme;
}

static __maybe_unused void st_close(void)
{
	if (g_fd >= 0)
		close(g_fd);
	g_fd = -1;
}

/*
 * Destroy a filter a case created. ENOENT is fine (a failed create, or a
 * case that already destroyed it); anything else is a failure.
 */
static __maybe_unused void cleanup(struct __test_metadata *_metadata,
				   const char *name)
{
	int err = kb_destroy(g_fd, name);

	if (err && err != ENOENT)
		EXPECT_OK(err, "cleanup: destroy %s", name);
}

/* Number of filters, or -1 (after failing the case) if LIST failed. */
static __maybe_unused long count_filters(struct __test_metadata *_metadata)
{
	long n = kb_count(g_fd);

	if (n < 0) {
		EXPECT_OK((int)-n, "LIST with count 0");
		return -1;
	}
	return n;
}

/* Is the key present, by single QUERY? -1 on error (reported). */
static __maybe_unused int query_one(struct __test_metadata *_metadata,
				    const char *name, const void *key,
				    u32 len)
{
	u32 res;
	int err = kb_key(g_fd, KBLOOM_IOC_QUERY, name, key, len, &res);

	if (err) {
		EXPECT_OK(err, "QUERY on %s", name);
		return -1;
	}
	return res == 1;
}

/* REMOVE @key @n times on @name; returns how many did not answer 1. */
static __maybe_unused u32 remove_n(const char *name, const char *key, u32 n,
				   int *first)
{
	u32 i, res, bad = 0;
	int err;

	*first = 0;
	for (i = 0; i < n; i++) {
		err = kb_skey(g_fd, KBLOOM_IOC_REMOVE, name, key, &res);
		if (err || res != 1) {
			if (!bad++)
				*first = err ? err : KB_BADRET;
		}
	}
	return bad;
}

/* ADD @key @n times on @name; returns how many did not answer 0. */
static __maybe_unused u32 add_n(const char *name, const char *key, u32 n)
{
	u32 i, res, bad = 0;

	for (i = 0; i < n; i++)
		bad += kb_skey(g_fd, KBLOOM_IOC_ADD, name, key, &res) != 0 ||
		       res != 0;
	return bad;
}

/* ------------------------------------------------------------------ */
/* Keys                                                               */
/* ------------------------------------------------------------------ */

/*
 * keys_gen() and keys_tag() of kbloom_util.h, failing the case when out
 * of memory.
 */
static __maybe_unused bool keyset_gen(struct __test_metadata *_metadata,
				      struct keyset *ks, u32 count, u64 seed,
				      unsigned int parity, u32 maxlen)
{
	return EXPECT_COND(keys_gen(ks, count, seed, parity, maxlen),
			   "out of memory", "allocate %u keys", count);
}

static __maybe_unused bool keyset_tag(struct __test_metadata *_metadata,
				      struct keyset *ks, const char *tag,
				      u32 count)
{
	return EXPECT_COND(keys_tag(ks, tag, count), "out of memory",
			   "allocate %u keys", count);
}

/* ADD_BATCH keys first .. first + n - 1 of @ks to @name; reports. */
static __maybe_unused bool ks_add(struct __test_metadata *_metadata,
				  const char *name, const struct keyset *ks,
				  u32 first, u32 n, const char *what)
{
	struct kbloom_batch out;
	int err = ks_batch(g_fd, KBLOOM_IOC_ADD_BATCH, name, ks, first, n,
			   NULL, &out);

	if (!EXPECT_OK(err, "%s: ADD_BATCH %u keys to %s", what, n, name))
		return false;
	return EXPECT_U64(out.done, n, "%s: ADD_BATCH to %s done", what, name);
}

/* How many of keys first .. first + n - 1 are present; -1 on error. */
static __maybe_unused long ks_hits(struct __test_metadata *_metadata, int fd,
				   const char *name, const struct keyset *ks,
				   u32 first, u32 n)
{
	struct kbloom_batch out;
	int err = ks_batch(fd, KBLOOM_IOC_QUERY_BATCH, name, ks, first, n,
			   NULL, &out);

	if (!EXPECT_OK(err, "QUERY_BATCH %u keys on %s", n, name) ||
	    !EXPECT_U64(out.done, n, "QUERY_BATCH on %s done", name))
		return -1;
	return out.hits;
}

static __maybe_unused u64 popcount_bytes(const unsigned char *p, u64 n)
{
	u64 i, c = 0;

	for (i = 0; i < n; i++)
		c += (u64)__builtin_popcount(p[i]);
	return c;
}

/* Are bits @from .. 8 * @len - 1 of @p (payload bit order) all zero? */
static __maybe_unused bool pad_zero(const unsigned char *p, u64 len, u64 from)
{
	u64 i;

	for (i = from; i < len * 8; i++)
		if (p[i / 8] & (1u << (i % 8)))
			return false;
	return true;
}

/* Are all @n bytes of @p equal to @v? */
static __maybe_unused bool all_bytes(const unsigned char *p, u64 n,
				     unsigned char v)
{
	u64 i;

	for (i = 0; i < n; i++)
		if (p[i] != v)
			return false;
	return true;
}

/* A page that is certainly not mapped: map one, then unmap it. */
static __maybe_unused void *unmapped_page(struct __test_metadata *_metadata)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		EXPECT_COND(false, strerror(errno), "mmap a scratch page");
		return NULL;
	}
	if (munmap(p, 4096)) {
		EXPECT_COND(false, strerror(errno), "munmap the scratch page");
		return NULL;
	}
	return p;
}

#endif /* KBLOOM_ST_H */
