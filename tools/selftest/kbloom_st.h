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

/* The unprivileged user of the perm, image and sysfs areas' children. */
#define NOBODY		65534

/* The module's parameters: limits the create and sysfs areas change. */
#define PARAMS		"/sys/module/kbloom/parameters"
#define MIB		(1024ULL * 1024)
#define GIB		(1024 * MIB)

/* Commands by name: each that the badioctl area calls with bad arguments. */
static const struct {
	unsigned long cmd;
	const char *name;
} all_cmds[] __maybe_unused = {
	{ KBLOOM_IOC_VERSION, "VERSION" },
	{ KBLOOM_IOC_CREATE, "CREATE" },
	{ KBLOOM_IOC_DESTROY, "DESTROY" },
	{ KBLOOM_IOC_CLEAR, "CLEAR" },
	{ KBLOOM_IOC_INFO, "INFO" },
	{ KBLOOM_IOC_LIST, "LIST" },
	{ KBLOOM_IOC_OPEN, "OPEN" },
	{ KBLOOM_IOC_ADD, "ADD" },
	{ KBLOOM_IOC_QUERY, "QUERY" },
	{ KBLOOM_IOC_TEST_AND_ADD, "TEST_AND_ADD" },
	{ KBLOOM_IOC_ADD_BATCH, "ADD_BATCH" },
	{ KBLOOM_IOC_QUERY_BATCH, "QUERY_BATCH" },
	{ KBLOOM_IOC_TEST_AND_ADD_BATCH, "TEST_AND_ADD_BATCH" },
	{ KBLOOM_IOC_REMOVE, "REMOVE" },
	{ KBLOOM_IOC_REMOVE_BATCH, "REMOVE_BATCH" },
	{ KBLOOM_IOC_MERGE, "MERGE" },
	{ KBLOOM_IOC_COMPARE, "COMPARE" },
	{ KBLOOM_IOC_EXPORT, "EXPORT" },
	{ KBLOOM_IOC_IMPORT, "IMPORT" },
};

/* all_cmds' name of @cmd. */
static __maybe_unused const char *cmd_name(unsigned long cmd)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(all_cmds); i++)
		if (all_cmds[i].cmd == cmd)
			return all_cmds[i].name;
	return "?";
}

/*
 * The device, opened O_RDWR by st_open() in each fixture's setup. A file
 * scope variable is enough: the harness runs every case in a child of its
 * own, so no two cases share it.
 */
static int g_fd = -1;

/* Every fixture's setup: the device. */
static __maybe_unused void st_open(struct __test_metadata *_metadata)
{
	g_fd = open(DEV, O_RDWR);
	ASSERT_LE(0, g_fd) {
		TH_LOG("open %s O_RDWR: %s", DEV, strerror(errno));
	}
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

/* cleanup() of every name of the array @names. */
#define cleanup_all(names) do {						\
	size_t __kb_i;							\
									\
	for (__kb_i = 0; __kb_i < ARRAY_SIZE(names); __kb_i++)		\
		cleanup(_metadata, (names)[__kb_i]);			\
} while (0)

/*
 * CREATE @name: @bits, 4 hashes, @gens generations over @window_ms (0:
 * they rotate only on ROTATE), @flags. 0 or an errno.
 */
static __maybe_unused int win_create(const char *name, u64 bits,
				     u32 window_ms, u32 gens, u32 flags)
{
	struct kbloom_create c = { .bits = bits, .hashes = 4, .flags = flags,
				   .window_ms = window_ms,
				   .generations = gens };

	set_name(c.name, name);
	return ioc(g_fd, KBLOOM_IOC_CREATE, &c);
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

/*
 * A key command (@cmd) on @len bytes at @key in @name through @fd
 * succeeds and answers @want; @fmt says what that shows.
 */
#define EXPECT_KEY(fd, cmd, name, key, len, want, fmt, ...) ({		\
	u32 __kb_res;							\
	int __kb_e = kb_key(fd, cmd, name, key, len, &__kb_res);	\
									\
	EXPECT_OK(__kb_e, fmt, ##__VA_ARGS__) &&			\
	EXPECT_U64(__kb_res, want, fmt, ##__VA_ARGS__);			\
})

/* EXPECT_KEY() of the string @key. */
#define EXPECT_SKEY(fd, cmd, name, key, want, fmt, ...)		\
	EXPECT_KEY(fd, cmd, name, key, (u32)strlen(key), want, fmt,	\
		   ##__VA_ARGS__)

/*
 * @cmd, ADD or REMOVE, of @key @n times on @name: each answers 0 (ADD) or
 * 1 (REMOVE), or the case fails.
 */
static __maybe_unused bool key_n(struct __test_metadata *_metadata,
				 unsigned long cmd, const char *name,
				 const char *key, u32 n)
{
	u32 i, res, want = cmd == KBLOOM_IOC_REMOVE, bad = 0;

	for (i = 0; i < n; i++)
		bad += kb_skey(g_fd, cmd, name, key, &res) != 0 || res != want;
	return EXPECT_U64(bad, 0, "%s %s %u times on %s, each answering %u",
			  cmd_name(cmd), key, n, name, want);
}

#define add_n(_metadata, name, key, n) \
	key_n(_metadata, KBLOOM_IOC_ADD, name, key, n)
#define remove_n(_metadata, name, key, n) \
	key_n(_metadata, KBLOOM_IOC_REMOVE, name, key, n)

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

/*
 * A batch command (@cmd) on keys first .. first + n - 1 of @ks in @name,
 * with no results wanted; reports.
 */
static __maybe_unused bool ks_apply(struct __test_metadata *_metadata,
				    unsigned long cmd, const char *name,
				    const struct keyset *ks, u32 first, u32 n)
{
	struct kbloom_batch out;
	int err = ks_batch(g_fd, cmd, name, ks, first, n, NULL, &out);

	if (!EXPECT_OK(err, "%s of %u keys on %s", cmd_name(cmd), n, name))
		return false;
	return EXPECT_U64(out.done, n, "%s on %s done", cmd_name(cmd), name);
}

/* ADD_BATCH keys first .. first + n - 1 of @ks to @name; reports. */
#define ks_add(_metadata, name, ks, first, n) \
	ks_apply(_metadata, KBLOOM_IOC_ADD_BATCH, name, ks, first, n)

/*
 * QUERY keys first .. first + n - 1 one at a time: how many did not
 * answer @want; -1 on error (reported).
 */
static __maybe_unused long ks_query_each(struct __test_metadata *_metadata,
					 const char *name,
					 const struct keyset *ks, u32 first,
					 u32 n, u32 want)
{
	long wrong = 0;
	u32 i, res;
	int err;

	for (i = first; i < first + n; i++) {
		err = kb_key(g_fd, KBLOOM_IOC_QUERY, name,
			     ks->keys + ks->off[i], ks->lens[i], &res);
		if (!EXPECT_OK(err, "QUERY key %u on %s", i, name))
			return -1;
		wrong += res != want;
	}
	return wrong;
}

/* How many of keys first .. first + n - 1 are present; -1 on error. */
static __maybe_unused long ks_hits(struct __test_metadata *_metadata,
				   const char *name, const struct keyset *ks,
				   u32 first, u32 n)
{
	struct kbloom_batch out;
	int err = ks_batch(g_fd, KBLOOM_IOC_QUERY_BATCH, name, ks, first, n,
			   NULL, &out);

	if (!EXPECT_OK(err, "QUERY_BATCH %u keys on %s", n, name) ||
	    !EXPECT_U64(out.done, n, "QUERY_BATCH on %s done", name))
		return -1;
	return out.hits;
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

/* ------------------------------------------------------------------ */
/* Images                                                             */
/* ------------------------------------------------------------------ */

/* An export with its own buffer. */
struct img {
	struct kbloom_image im;
	unsigned char *buf;
	u64 len;
};

static __maybe_unused void img_free(struct img *g)
{
	free(g->buf);
	memset(g, 0, sizeof(*g));
}

/* EXPORT @name on @fd into @g: kb_export_all(); 0 or an errno. */
static __maybe_unused int img_get(int fd, const char *name, struct img *g)
{
	int err;

	memset(g, 0, sizeof(*g));
	err = kb_export_all(fd, name, &g->im, &g->buf);
	if (!err)
		g->len = g->im.payload_len;
	return err;
}

/* img_get() on the case's fd; reports. */
static __maybe_unused bool img_take(struct __test_metadata *_metadata,
				    const char *name, struct img *g,
				    const char *what)
{
	return EXPECT_OK(img_get(g_fd, name, g),
			 "%s: EXPORT %s (a size query, then the payload)",
			 what, name);
}

/* Same parameters, seed (both halves) and payload bytes? */
static __maybe_unused bool img_equal(const struct img *a, const struct img *b)
{
	return a->len == b->len && a->im.bits == b->im.bits &&
	       a->im.hashes == b->im.hashes && a->im.flags == b->im.flags &&
	       a->im.hash_scheme == b->im.hash_scheme &&
	       !memcmp(a->im.seed, b->im.seed, sizeof(a->im.seed)) &&
	       !memcmp(a->im.seed_hi, b->im.seed_hi, sizeof(a->im.seed_hi)) &&
	       !memcmp(a->buf, b->buf, a->len);
}

/* Is @name's current export identical to @g (parameters and bytes)? */
static __maybe_unused bool img_same(struct __test_metadata *_metadata,
				    const char *name, const struct img *g)
{
	struct img now;
	bool same;

	if (!img_take(_metadata, name, &now, "compare")) {
		img_free(&now);
		return false;
	}
	same = img_equal(&now, g);
	img_free(&now);
	return same;
}

/* A filter's export and INFO: what a refused call must leave alone. */
struct snap {
	struct img g;
	struct kbloom_info info;
};

static __maybe_unused bool snap_take(struct __test_metadata *_metadata,
				     const char *name, struct snap *s)
{
	return img_take(_metadata, name, &s->g, "snapshot") &&
	       EXPECT_OK(kb_info(g_fd, name, &s->info), "INFO %s", name);
}

/* @name's export and INFO statistics are still @s's; frees @s. */
static __maybe_unused void snap_same(struct __test_metadata *_metadata,
				     const char *name, struct snap *s)
{
	struct kbloom_info now;

	EXPECT_COND(img_same(_metadata, name, &s->g), "it changed",
		    "%s: the same export as before", name);
	if (EXPECT_OK(kb_info(g_fd, name, &now), "INFO %s", name))
		EXPECT_COND(now.adds == s->info.adds &&
			    now.queries == s->info.queries &&
			    now.hits == s->info.hits &&
			    now.bits_set == s->info.bits_set &&
			    now.saturated == s->info.saturated, "they changed",
			    "%s: the same INFO statistics as before", name);
	img_free(&s->g);
}

/* Counting payloads: counters at KBLOOM_COUNTER_MAX; 0 for plain. */
static __maybe_unused u64 img_saturated(const struct img *g)
{
	u64 i, c = 0;

	if (!(g->im.flags & KBLOOM_CREATE_COUNTING))
		return 0;
	for (i = 0; i < g->im.bits && i / 2 < g->len; i++)
		c += ((g->buf[i / 2] >> (4 * (i % 2))) & 0xf) ==
		     KBLOOM_COUNTER_MAX;
	return c;
}

/*
 * INFO's and sysfs' bits_set and saturated equal what the EXPORTed payload
 * holds (set bits, or non-zero counters; counters at 15).
 */
static __maybe_unused void check_counts(struct __test_metadata *_metadata,
					const char *name, const char *when)
{
	struct kbloom_info info;
	u64 sbits = ~0ULL, ssat = ~0ULL, nz, sat;
	struct img g;

	if (!img_take(_metadata, name, &g, when) ||
	    !EXPECT_OK(kb_info(g_fd, name, &info), "%s: INFO %s", when, name)) {
		img_free(&g);
		return;
	}
	EXPECT_OK(filter_attr(name, "bits_set", &sbits),
		  "%s: read %s's bits_set", when, name);
	EXPECT_OK(filter_attr(name, "saturated", &ssat),
		  "%s: read %s's saturated", when, name);
	nz = image_weight(&g.im, g.buf);
	sat = img_saturated(&g);
	img_free(&g);
	EXPECT_U64(info.bits_set, nz,
		   "%s: %s: INFO bits_set equals the payload's", when, name);
	EXPECT_U64(sbits, nz,
		   "%s: %s: sysfs bits_set equals the payload's", when, name);
	EXPECT_U64(info.saturated, sat,
		   "%s: %s: INFO saturated equals the payload's", when, name);
	EXPECT_U64(ssat, sat,
		   "%s: %s: sysfs saturated equals the payload's", when, name);
}

/* ------------------------------------------------------------------ */
/* Failures a thread counts                                           */
/* ------------------------------------------------------------------ */

/* How many calls failed, and the first: what it was, its errno or 0. */
struct fails {
	unsigned long n;
	const char *what;
	int err;
};

static __maybe_unused void fail_note(struct fails *f, const char *what,
				     int err)
{
	if (!f->n++) {
		f->what = what;
		f->err = err;
	}
}

/* No failure in @f; @fmt says whose calls they were. */
#define EXPECT_NO_FAILS(f, fmt, ...) ({					\
	const struct fails *__kb_f = (f);				\
	char __kb_d[160], __kb_et[96];					\
									\
	snprintf(__kb_d, sizeof(__kb_d), "%lu failed, first %s: %s",	\
		 __kb_f->n, __kb_f->what ? __kb_f->what : "?",		\
		 __kb_f->err ? errtext(__kb_f->err, __kb_et,		\
				       sizeof(__kb_et)) : "a wrong result"); \
	EXPECT_COND(__kb_f->n == 0, __kb_d, fmt, ##__VA_ARGS__);	\
})

/* ------------------------------------------------------------------ */
/* Processes and pages                                                */
/* ------------------------------------------------------------------ */

/*
 * Run @fn(@arg) in a child as user nobody, which keeps the case's fds;
 * its checks fail its own copy of the case, so it tells by its exit
 * status. false (reported) if it failed, crashed or could not drop root.
 */
static __maybe_unused bool as_nobody(struct __test_metadata *_metadata,
				     void (*fn)(struct __test_metadata *,
						const void *),
				     const void *arg, const char *what)
{
	int status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		if (EXPECT_COND(setgroups(0, NULL) == 0 &&
				setresgid(NOBODY, NOBODY, NOBODY) == 0 &&
				setresuid(NOBODY, NOBODY, NOBODY) == 0,
				strerror(errno), "%s: child drops to nobody",
				what))
			fn(_metadata, arg);
		fflush(stdout);
		_exit(_metadata->passed ? 0 : 1);
	}
	if (!EXPECT_COND(pid > 0, strerror(errno), "%s: fork", what) ||
	    !EXPECT_COND(waitpid(pid, &status, 0) == pid, strerror(errno),
			 "%s: waitpid", what))
		return false;
	return EXPECT_COND(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			   "child crashed or failed",
			   "%s: child exited cleanly", what);
}

/* @n zeroed pages, or NULL (reported); munmap(p, n * 4096) when done. */
static __maybe_unused void *map_pages(struct __test_metadata *_metadata,
				      size_t n)
{
	void *p = mmap(NULL, n * 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (!EXPECT_COND(p != MAP_FAILED, strerror(errno), "mmap %zu pages",
			 n))
		return NULL;
	return p;
}

/* Two pages, the second unmapped: memory that faults half-way. */
static __maybe_unused char *map_half(struct __test_metadata *_metadata)
{
	char *p = map_pages(_metadata, 2);

	if (p && !EXPECT_COND(munmap(p + 4096, 4096) == 0, strerror(errno),
			      "munmap the second page"))
		return NULL;
	return p;
}

/* A page that is certainly not mapped: map_half()'s second. */
static __maybe_unused void *unmapped_page(struct __test_metadata *_metadata)
{
	char *p = map_half(_metadata);

	return p ? p + 4096 : NULL;
}

#endif /* KBLOOM_ST_H */
